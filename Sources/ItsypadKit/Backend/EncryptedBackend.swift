import Synchronization

/// A `SyncBackend` that end-to-end encrypts what it hands to another one.
///
/// Every record's fields are sealed with `RecordCipher` before `inner` sees them (the
/// associated data binds them to the zone, record type and record name) and opened on the
/// way back; assets are sealed likewise. Setting records, whose names are key names, are
/// stored under a keyed hash of the name, with the name inside the sealed fields.
///
/// Every call first checks the zone's key check value: a wrong key, or a zone that is not
/// encrypted, fails with `EncryptionError` before anything is read or written. A fetched
/// record that does not open is malformed input: it is handed on with no fields (so the
/// engine skips it, yet still knows the record exists and deletes nothing for it) and
/// listed in `refused`.
public final class EncryptedBackend: SyncBackend {
    public let inner: SyncBackend
    let cipher: RecordCipher
    /// Records refused since this backend was made: what and why, for the user.
    private let refusedRecords = Mutex<[RefusedRecord]>([])
    /// Synced setting keys by their hashed record name (deletions carry only the name).
    private let settingKeys: [String: String]

    static let settingType = RecordType.setting.rawValue
    /// The field that carries a hashed record's real name inside the sealed fields.
    static let nameField = "recordName"

    public init(inner: SyncBackend, cipher: RecordCipher) {
        self.inner = inner
        self.cipher = cipher
        var keys: [String: String] = [:]
        for definition in Settings.all where definition.scope == .synced {
            keys[cipher.hashedName(definition.key, recordType: Self.settingType)] = definition.key
        }
        settingKeys = keys
    }

    /// Records that failed to open, in the order they were met.
    public var refused: [RefusedRecord] { refusedRecords.withLock { $0 } }

    // MARK: Zone

    public func createZoneIfNeeded() throws -> ZoneInfo { try checked(inner.createZoneIfNeeded()) }

    public func zone() throws -> ZoneInfo { try checked(inner.zone()) }

    private func checked(_ zone: ZoneInfo) throws -> ZoneInfo {
        guard let stored = zone.keyCheckValue else { throw EncryptionError.notEncrypted }
        guard cipher.matches(keyCheckValue: stored) else { throw EncryptionError.wrongKey }
        return zone
    }

    // MARK: Records

    public func fetchChanges(since token: ChangeToken?, limit: Int) throws -> ChangesPage {
        let zoneID = try zone().zoneID
        let page = try inner.fetchChanges(since: token, limit: limit)
        let changes: [Change] = page.changes.compactMap { change in
            switch change {
            case .saved(let record):
                return .saved(opened(record, zoneID: zoneID))
            case .deleted(let type, let name):
                guard type == Self.settingType else { return change }
                // A setting this version does not know: nothing local to delete.
                return settingKeys[name].map { .deleted(recordType: type, recordName: $0) }
            }
        }
        return ChangesPage(changes: changes, token: page.token, moreComing: page.moreComing)
    }

    public func modify(saves: [RecordSave], deletes: [RecordDelete], device: String) throws -> ModifyResult {
        let zoneID = try zone().zoneID
        var plaintextByStoredID: [RecordID: BackendRecord] = [:]
        let sealedSaves = try saves.map { save in
            let sealed = try sealed(save.record, zoneID: zoneID)
            plaintextByStoredID[RecordID(recordType: sealed.recordType, recordName: sealed.recordName)] = save.record
            return RecordSave(record: sealed)
        }
        var nameByStoredID: [RecordID: String] = [:]
        let storedDeletes = deletes.map { delete in
            let name = storedName(delete.recordName, recordType: delete.recordType)
            nameByStoredID[RecordID(recordType: delete.recordType, recordName: name)] = delete.recordName
            return RecordDelete(recordType: delete.recordType, recordName: name, ifTag: delete.ifTag)
        }
        for (id, record) in plaintextByStoredID { nameByStoredID[id] = record.recordName }
        func originalName(_ type: String, _ name: String) -> String { nameByStoredID[RecordID(recordType: type, recordName: name)] ?? name }

        let result = try inner.modify(saves: sealedSaves, deletes: storedDeletes, device: device)
        let saved = result.saved.map { stored in
            // What the engine sent, with what the backend set: the tag and stamps.
            var record = plaintextByStoredID[RecordID(recordType: stored.recordType, recordName: stored.recordName)] ?? stored
            record.recordChangeTag = stored.recordChangeTag
            record.created = stored.created
            record.modified = stored.modified
            return record
        }
        let deleted = result.deleted.map { RecordID(recordType: $0.recordType, recordName: originalName($0.recordType, $0.recordName)) }
        let failures = result.failures.map { failure in
            var error = failure.error
            if case .serverRecordChanged(let server) = failure.error {
                let opened = opened(server, zoneID: zoneID)
                // A server record that does not open cannot be merged into: the save waits, reported.
                error = opened.fields.isEmpty ? .invalid(EncryptionError.refusedServerRecord.description) : .serverRecordChanged(server: opened)
            }
            return RecordFailure(recordType: failure.recordType, recordName: originalName(failure.recordType, failure.recordName), error: error)
        }
        return ModifyResult(saved: saved, deleted: deleted, failures: failures)
    }

    /// The record as stored: fields sealed, and a setting's name hashed (the name travels sealed).
    func sealed(_ record: BackendRecord, zoneID: String) throws -> BackendRecord {
        var stored = record
        if record.recordType == Self.settingType {
            stored.recordName = storedName(record.recordName, recordType: record.recordType)
            stored.fields[Self.nameField] = .string(record.recordName)
        }
        return try cipher.seal(stored, zoneID: zoneID)
    }

    /// The record as the engine knows it, or (refused and reported) the record without fields.
    func opened(_ stored: BackendRecord, zoneID: String) -> BackendRecord {
        do {
            var record = try cipher.open(stored, zoneID: zoneID)
            guard record.recordType == Self.settingType else { return record }
            guard case .string(let name)? = record.fields.removeValue(forKey: Self.nameField),
                  cipher.hashedName(name, recordType: record.recordType) == stored.recordName else {
                throw RecordCipherError.invalidContent("the setting's name does not match its record name")
            }
            record.recordName = name
            return record
        } catch {
            refusedRecords.withLock { $0.append(RefusedRecord(id: RecordID(recordType: stored.recordType, recordName: stored.recordName), reason: "\(error)")) }
            var empty = stored
            empty.fields = [:]
            return empty
        }
    }

    private func storedName(_ name: String, recordType: String) -> String {
        recordType == Self.settingType ? cipher.hashedName(name, recordType: recordType) : name
    }

    /// Bytes the backend stores for these fields once sealed (the base64 of the sealed JSON),
    /// to decide what fits in a record.
    func storedByteCount(of fields: [String: FieldValue]) throws -> Int {
        let sealed = RecordCipher.sealedByteCount(plaintextCount: try JSONCoding.encode(fields).count)
        return (sealed + 2) / 3 * 4
    }

    // MARK: Assets

    public func putAsset(_ bytes: [UInt8]) throws -> AssetReference {
        try inner.putAsset(cipher.sealAsset(bytes, zoneID: try zone().zoneID))
    }

    public func readAsset(_ reference: AssetReference) throws -> [UInt8] {
        let zoneID = try zone().zoneID
        do {
            return try cipher.openAsset(try inner.readAsset(reference), zoneID: zoneID)
        } catch let error as RecordCipherError {
            throw BackendError.corrupt(path: "asset \(reference.fileChecksum)", reason: error.description)
        }
    }

    public func compact() throws -> CompactionReport {
        _ = try zone()
        return try inner.compact()
    }
}

/// A fetched record that was not applied because it did not open.
public struct RefusedRecord: Sendable, Equatable, CustomStringConvertible {
    /// As stored (a setting's name is its hash).
    public let id: RecordID
    public let reason: String

    public var description: String { "\(id): \(reason)" }
}

/// Why an encrypted backend cannot be used with this device's key.
public enum EncryptionError: Error, Equatable, CustomStringConvertible {
    /// The zone's key check value is not this key's.
    case wrongKey
    /// This device has a sync key but the zone is not encrypted.
    case notEncrypted
    /// The zone is encrypted but this device has no key.
    case missingKey
    /// A conflicting server record did not open.
    case refusedServerRecord

    public var description: String {
        switch self {
        case .wrongKey:
            "the sync key on this device does not open this backend (it was rotated on another device, or this is another backend); "
                + "run 'itsypad sync key show' on a device that syncs, then 'itsypad sync enable DIR --key -' here and type that recovery key"
        case .notEncrypted:
            "this device has a sync key but the backend is not encrypted (it was replaced by an unencrypted one?); "
                + "nothing was sent: move the backend aside and run 'itsypad sync' to recreate it encrypted"
        case .missingKey:
            "the backend is encrypted and this device has no sync key; "
                + "run 'itsypad sync key show' on a device that syncs, then 'itsypad sync enable DIR --key -' here and type that recovery key"
        case .refusedServerRecord:
            "the backend's version of this record does not verify (wrong key, or it was changed); the local version is kept"
        }
    }
}

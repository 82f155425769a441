import ItsypadModel
import ItsypadSupport

/// A `SyncBackend` that end-to-end encrypts what it hands to another one.
///
/// Every record's fields are sealed with `RecordCipher` before `inner` sees them (the
/// associated data binds them to the zone, record type and record name) and opened on the
/// way back; assets are sealed likewise. Setting records, whose names are key names, are
/// stored under a keyed hash of the name, with the name inside the sealed fields.
///
/// Every call first checks the zone's key check value: a wrong key, or a zone that is not
/// encrypted, fails with `EncryptionError` before anything is read or written. A fetched
/// record that does not open is malformed input: it is quarantined like any other
/// (`ChangesPage.quarantined`, and `fetchRecord` throws `.corrupt`), never handed on.
public final class EncryptedBackend: SyncBackend {
    public let inner: SyncBackend
    let cipher: RecordCipher
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
        var quarantined = page.quarantined.map { item in
            QuarantinedItem(id: item.id.flatMap(engineID), location: item.location, reason: item.reason)
        }
        let changes: [Change] = page.changes.compactMap { change in
            switch change {
            case .saved(let stored):
                do {
                    return .saved(try opened(stored, zoneID: zoneID))
                } catch {
                    quarantined.append(
                        QuarantinedItem(id: engineID(stored.id), location: inner.location(of: stored.id), reason: "\(error)"))
                    return nil
                }
            case .deleted(let type, let name):
                guard type == Self.settingType else { return change }
                // A setting this version does not know: nothing local to delete.
                return settingKeys[name].map { .deleted(recordType: type, recordName: $0) }
            }
        }
        return ChangesPage(changes: changes, token: page.token, moreComing: page.moreComing, quarantined: quarantined)
    }

    public func fetchRecord(_ id: RecordID) throws -> BackendRecord? {
        let zoneID = try zone().zoneID
        let storedID = self.storedID(id)
        guard let stored = try inner.fetchRecord(storedID) else { return nil }
        do {
            return try opened(stored, zoneID: zoneID)
        } catch {
            throw BackendError.corrupt(path: inner.location(of: storedID), reason: "\(error)")
        }
    }

    public func location(of id: RecordID) -> String { inner.location(of: storedID(id)) }

    public func modify(saves: [RecordSave], deletes: [RecordDelete], device: String) throws -> ModifyResult {
        try limits.checkRequest(saves: saves, deletes: deletes)
        let zoneID = try zone().zoneID
        // The inner backend sees sealed fields only: what it would refuse in the clear is refused here.
        let problems = saves.map { NameRules.problem(with: $0.record) }
        if problems.contains(where: { $0 != nil }) {
            let failures =
                zip(saves, problems).map { save, problem in
                    RecordFailure(
                        recordType: save.record.recordType, recordName: save.record.recordName,
                        error: problem.map { .invalid($0) } ?? .batchRequestFailed)
                } + deletes.map { RecordFailure(recordType: $0.recordType, recordName: $0.recordName, error: .batchRequestFailed) }
            return ModifyResult(saved: [], deleted: [], failures: failures)
        }
        var plaintextByStoredID: [RecordID: BackendRecord] = [:]
        let sealedSaves = try saves.map { save in
            let sealed = try sealed(save.record, zoneID: zoneID)
            plaintextByStoredID[sealed.id] = save.record
            return RecordSave(record: sealed)
        }
        var nameByStoredID: [RecordID: String] = [:]
        let storedDeletes = deletes.map { delete in
            let id = storedID(RecordID(recordType: delete.recordType, recordName: delete.recordName))
            nameByStoredID[id] = delete.recordName
            return RecordDelete(recordType: id.recordType, recordName: id.recordName, ifTag: delete.ifTag)
        }
        for (id, record) in plaintextByStoredID { nameByStoredID[id] = record.recordName }
        func originalName(_ type: String, _ name: String) -> String { nameByStoredID[RecordID(recordType: type, recordName: name)] ?? name }

        let result = try inner.modify(saves: sealedSaves, deletes: storedDeletes, device: device)
        let saved = result.saved.map { stored in
            // What the engine sent, with what the backend set: the tag and stamps.
            var record = plaintextByStoredID[stored.id] ?? stored
            record.recordChangeTag = stored.recordChangeTag
            record.created = stored.created
            record.modified = stored.modified
            return record
        }
        let deleted = result.deleted.map { RecordID(recordType: $0.recordType, recordName: originalName($0.recordType, $0.recordName)) }
        let failures = result.failures.map { failure in
            var error = failure.error
            if case .serverRecordChanged(let server) = failure.error {
                // A server version that does not open is handed on without fields: one that cannot
                // be read, which the engine replaces with this device's version.
                var readable = server
                if let opened = try? opened(server, zoneID: zoneID) { readable = opened } else { readable.fields = [:] }
                readable.recordName = originalName(server.recordType, server.recordName)
                error = .serverRecordChanged(server: readable)
            }
            return RecordFailure(
                recordType: failure.recordType, recordName: originalName(failure.recordType, failure.recordName), error: error)
        }
        return ModifyResult(saved: saved, deleted: deleted, failures: failures)
    }

    /// The record as stored: fields sealed, and a setting's name hashed (the name travels sealed).
    /// Asset references are also kept in the clear, so the inner backend checks that they were
    /// uploaded and its compaction keeps them; opening checks them against the sealed ones.
    func sealed(_ record: BackendRecord, zoneID: String) throws -> BackendRecord {
        var stored = record
        if record.recordType == Self.settingType {
            stored.recordName = storedID(record.id).recordName
            stored.fields[Self.nameField] = .string(record.recordName)
        }
        var sealed = try cipher.seal(stored, zoneID: zoneID)
        sealed.fields.merge(Self.assetFields(of: record)) { sealedField, _ in sealedField }
        return sealed
    }

    /// The record as the engine knows it; throws when it does not open, when its asset references
    /// in the clear are not the sealed ones, or when a setting's name does not match its hash.
    func opened(_ stored: BackendRecord, zoneID: String) throws(RecordCipherError) -> BackendRecord {
        var sealedOnly = stored
        sealedOnly.fields = stored.fields.filter { $0.key == RecordCipher.sealedFieldName }
        var record = try cipher.open(sealedOnly, zoneID: zoneID)
        guard Self.assetFields(of: record) == stored.fields.filter({ $0.key != RecordCipher.sealedFieldName }) else {
            throw .invalidContent("the asset references in the clear are not the encrypted ones")
        }
        guard record.recordType == Self.settingType else { return record }
        guard case .string(let name)? = record.fields.removeValue(forKey: Self.nameField),
            cipher.hashedName(name, recordType: record.recordType) == stored.recordName
        else {
            throw .invalidContent("the setting's name does not match its record name")
        }
        record.recordName = name
        return record
    }

    private static func assetFields(of record: BackendRecord) -> [String: FieldValue] {
        record.fields.filter { if case .asset = $0.value { true } else { false } }
    }

    /// The record's ID on the inner backend: a setting's name is its keyed hash.
    private func storedID(_ id: RecordID) -> RecordID {
        guard id.recordType == Self.settingType else { return id }
        return RecordID(recordType: id.recordType, recordName: cipher.hashedName(id.recordName, recordType: id.recordType))
    }

    /// The engine's ID for a stored one; nil for a hashed name this version does not know.
    private func engineID(_ stored: RecordID) -> RecordID? {
        guard stored.recordType == Self.settingType else { return stored }
        return settingKeys[stored.recordName].map { RecordID(recordType: stored.recordType, recordName: $0) }
    }

    /// Bytes the backend stores for these fields once sealed, to decide what fits in a record.
    public func sealedByteCount(of fields: [String: FieldValue]) throws -> Int? { try RecordCipher.sealedFieldByteCount(of: fields) }

    /// The inner backend's: it stores the sealed records, and refuses what is over its limits.
    public var limits: BackendLimits { inner.limits }

    // MARK: Assets

    public func putAsset(_ bytes: [UInt8]) throws -> AssetReference {
        let zoneID = try zone().zoneID
        // Refused before sealing, which is the slow part and only adds a fixed overhead.
        guard RecordCipher.sealedByteCount(plaintextCount: bytes.count) <= limits.maxAssetBytes else { throw BackendError.limitExceeded }
        return try inner.putAsset(cipher.sealAsset(bytes, zoneID: zoneID))
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

/// Why an encrypted backend cannot be used with this device's key.
public enum EncryptionError: Error, Equatable, CustomStringConvertible {
    /// The zone's key check value is not this key's.
    case wrongKey
    /// This device has a sync key but the zone is not encrypted.
    case notEncrypted
    /// The zone is encrypted but this device has no key.
    case missingKey

    public var description: String { message(naming: "DIR") }

    /// The description, its commands naming the backend as `backend` (the sync.backend setting).
    public func message(naming backend: String) -> String {
        switch self {
        case .wrongKey:
            "the sync key on this device does not open this backend (it was rotated on another device, or this is another backend); "
                + "run 'itsypad sync key show' on a device that syncs, then 'itsypad sync enable \(backend) --key -' here and type that recovery key"
        case .notEncrypted:
            "this device has a sync key but the backend is not encrypted (it was replaced by an unencrypted one?); "
                + "nothing was sent: move the backend aside and run 'itsypad sync' to recreate it encrypted"
        case .missingKey:
            "the backend is encrypted and this device has no sync key; "
                + "run 'itsypad sync key show' on a device that syncs, then 'itsypad sync enable \(backend) --key -' here and type that recovery key"
        }
    }
}

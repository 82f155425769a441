import ItsypadModel
import ItsypadSupport

/// An encrypted backend as the engine reaches it: the records whose names a person
/// chose — settings, named by their key, and the tombstones of settings — are stored under a
/// keyed hash of the name (`RecordCipher.hashedName`), so that no setting name reaches the
/// backend. Sealing the versions and assets and checking the key is the inner backend's
/// (`FolderBackend` with the same cipher); the sealed versions bind the hashed name,
/// so a version does not open under another setting's name.
///
/// A hashed name this version does not know (a setting of a newer itsypad) is not handed on:
/// it is not this device's business.
package final class EncryptedReplicatedBackend: ReplicatedBackend {
    let inner: any ReplicatedBackend
    let cipher: RecordCipher
    /// The engine's id of every record stored under a hashed name, by its stored id.
    private let engineIDs: [RecordID: RecordID]

    package init(inner: any ReplicatedBackend, cipher: RecordCipher) {
        self.inner = inner
        self.cipher = cipher
        var ids: [RecordID: RecordID] = [:]
        for definition in Settings.all where definition.scope == .synced {
            let key = RecordKey(.setting, definition.key)
            for id in [
                RecordID(recordType: key.type.rawValue, recordName: key.name),
                RecordID(recordType: RecordType.tombstone.rawValue, recordName: key.tombstoneName),
            ] {
                ids[Self.storedID(id, cipher: cipher)] = id
            }
        }
        engineIDs = ids
    }

    package var deviceID: String { inner.deviceID }
    package var limits: BackendLimits { inner.limits }

    package func createZoneIfNeeded() throws -> ZoneInfo { try inner.createZoneIfNeeded() }
    package func zone() throws -> ZoneInfo { try inner.zone() }
    package func putAsset(_ bytes: [UInt8]) throws -> AssetReference { try inner.putAsset(bytes) }
    package func readAsset(_ reference: AssetReference) throws -> [UInt8] { try inner.readAsset(reference) }
    package func finishSync(acknowledging token: ChangeToken) throws -> CompactionReport? { try inner.finishSync(acknowledging: token) }
    package func compactJournal() throws -> CompactionReport { try inner.compactJournal() }
    package func accepted(_ receipt: CommitReceipt) { inner.accepted(receipt) }
    package func finishWrites() throws { try inner.finishWrites() }
    package func location(of id: RecordID) -> String { inner.location(of: storedID(id)) }

    package func siblings(of id: RecordID) throws -> [RecordVersion] {
        try inner.siblings(of: storedID(id)).map { Self.renamed($0, to: id) }
    }

    package func readableSiblings(of ids: [RecordID]) throws -> [RecordID: [RecordVersion]] {
        let stored = Dictionary(ids.map { (storedID($0), $0) }, uniquingKeysWith: { first, _ in first })
        let read = try inner.readableSiblings(of: Array(stored.keys))
        return Dictionary(
            uniqueKeysWithValues: read.compactMap { storedID, siblings in
                stored[storedID].map { id in (id, siblings.map { Self.renamed($0, to: id) }) }
            })
    }

    package func fetchChanges(since token: ChangeToken?, limit: Int) throws -> ReplicatedChangesPage {
        let page = try inner.fetchChanges(since: token, limit: limit)
        let changes = page.changes.compactMap { change in
            engineID(change.id).map { id in ReplicatedChange(id: id, siblings: change.siblings.map { Self.renamed($0, to: id) }) }
        }
        let quarantined = page.quarantined.map { QuarantinedItem(id: $0.id.flatMap(engineID), location: $0.location, reason: $0.reason) }
        return ReplicatedChangesPage(
            changes: changes, token: page.token, moreComing: page.moreComing, waiting: page.waiting, quarantined: quarantined)
    }

    package func modify(saves: [ReplicatedSave], deletes: [ReplicatedDelete]) throws -> ReplicatedModifyResult {
        var requested: [RecordID: RecordID] = [:]
        let storedSaves = saves.map { save in
            let stored = storedID(save.record.id)
            requested[stored] = save.record.id
            var record = save.record
            record.recordName = stored.recordName
            return ReplicatedSave(record: record, basedOn: save.basedOn, isDerived: save.isDerived, base: save.base)
        }
        let storedDeletes = deletes.map { delete in
            let stored = storedID(delete.id)
            requested[stored] = delete.id
            return ReplicatedDelete(id: stored, basedOn: delete.basedOn)
        }
        func original(_ id: RecordID) -> RecordID { requested[id] ?? engineID(id) ?? id }
        let result = try inner.modify(saves: storedSaves, deletes: storedDeletes)
        let failures = result.failures.map { failure in
            var error = failure.error
            if case .concurrentVersions(let siblings) = error {
                error = .concurrentVersions(siblings.map { Self.renamed($0, to: original(failure.id)) })
            }
            return ReplicatedFailure(id: original(failure.id), error: error)
        }
        return ReplicatedModifyResult(
            written: result.written.map { Self.renamed($0, to: original($0.record.id)) }, failures: failures, receipt: result.receipt)
    }

    /// Bytes the backend stores for these fields once sealed.
    package func sealedByteCount(of fields: [String: FieldValue]) throws -> Int? { try inner.sealedByteCount(of: fields) }

    // MARK: Names

    /// The record's id in the backend: hashed for a setting and a setting's tombstone.
    private func storedID(_ id: RecordID) -> RecordID { Self.storedID(id, cipher: cipher) }

    private static func storedID(_ id: RecordID, cipher: RecordCipher) -> RecordID {
        let isSettingTombstone =
            id.recordType == RecordType.tombstone.rawValue && id.recordName.hasPrefix(RecordType.setting.rawValue + ".")
        guard id.recordType == RecordType.setting.rawValue || isSettingTombstone else { return id }
        return RecordID(recordType: id.recordType, recordName: cipher.hashedName(id.recordName, recordType: id.recordType))
    }

    /// The engine's id for a stored one; nil for a hashed name this version does not know.
    private func engineID(_ stored: RecordID) -> RecordID? {
        if let id = engineIDs[stored] { return id }
        let isHashed =
            stored.recordType == RecordType.setting.rawValue
            || (stored.recordType == RecordType.tombstone.rawValue && !stored.recordName.contains("."))
        return isHashed ? nil : stored
    }

    private static func renamed(_ version: RecordVersion, to id: RecordID) -> RecordVersion {
        var renamed = version
        renamed.record.recordName = id.recordName
        return renamed
    }
}

import ItsypadBackend
import ItsypadStore

/// The backend as a sync run sees it: every call is made with the data directory's lock
/// released, so that a slow or stalled backend (a network mount, a big first fetch) never
/// keeps `clip add` or `tab edit` waiting. When a call returns the lock is held again, and
/// everything local must be read anew: the engine reads local state only after a call, never
/// across one, and `beforeRelease` writes out what it has decided but not yet written.
///
/// Used by one sync run on one thread, like its `DataStore`.
final class LockReleasingBackend: SyncBackend, @unchecked Sendable {
    let base: SyncBackend
    private let store: DataStore
    /// Runs with the lock still held, just before each release.
    var beforeRelease: () throws -> Void = {}

    init(_ base: SyncBackend, store: DataStore) {
        self.base = base
        self.store = store
    }

    private func released<T>(_ body: () throws -> T) throws -> T {
        try beforeRelease()
        return try store.withLockReleased(body)
    }

    func createZoneIfNeeded() throws -> ZoneInfo { try released { try base.createZoneIfNeeded() } }
    func zone() throws -> ZoneInfo { try released { try base.zone() } }
    func fetchChanges(since token: ChangeToken?, limit: Int) throws -> ChangesPage {
        try released { try base.fetchChanges(since: token, limit: limit) }
    }
    func modify(saves: [RecordSave], deletes: [RecordDelete], device: String) throws -> ModifyResult {
        try released { try base.modify(saves: saves, deletes: deletes, device: device) }
    }
    func putAsset(_ bytes: [UInt8]) throws -> AssetReference { try released { try base.putAsset(bytes) } }
    func readAsset(_ reference: AssetReference) throws -> [UInt8] { try released { try base.readAsset(reference) } }
    func fetchRecord(_ id: RecordID) throws -> BackendRecord? { try released { try base.fetchRecord(id) } }
    func compact() throws -> CompactionReport { try released { try base.compact() } }
    func finishSync(acknowledging token: ChangeToken) throws { try released { try base.finishSync(acknowledging: token) } }
    func finishWrites() throws { try released { try base.finishWrites() } }
    /// Memory, not I/O: the lock stays.
    func accepted(_ receipt: CommitReceipt) { base.accepted(receipt) }
    /// Names and arithmetic, not I/O: the lock stays.
    var limits: BackendLimits { base.limits }
    var absenceProvesDeletion: Bool { base.absenceProvesDeletion }
    func sealedByteCount(of fields: [String: FieldValue]) throws -> Int? { try base.sealedByteCount(of: fields) }
    func location(of id: RecordID) -> String { base.location(of: id) }
}

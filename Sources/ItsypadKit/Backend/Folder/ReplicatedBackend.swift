/// A backend whose files each have one writer (`itsypad-backend(5)`), so that it works in
/// a folder kept in step by a replicating service as well as in a coherent shared folder.
///
/// It keeps `SyncBackend`'s shape — a zone, tokens, batches, assets — with three differences the
/// engine sees: a fetched record comes with all its concurrent versions (siblings) instead of one;
/// a save names the version it started from (a version vector, not a tag) and whether it is a
/// derived merge; and a sync ends with `finishSync`, which acknowledges what this device has read.
public protocol ReplicatedBackend: Sendable {
    /// The device this backend writes as: it writes only its own files.
    var deviceID: String { get }

    /// Creates the zone if absent; returns the winning zone (see concurrent creation in the man page).
    func createZoneIfNeeded() throws -> ZoneInfo

    /// The winning zone, which this device joins (see `createZoneIfNeeded`) but never creates.
    /// Throws `.zoneNotFound` if none was created, `.unsupportedFormat` for a format this version cannot read.
    func zone() throws -> ZoneInfo

    /// Records changed after `token`, each with its current siblings, at most `limit` per page.
    ///
    /// Journals are read only as far as they have replicated completely; what is waited for is in
    /// `waiting`, and the token keeps that device's position. Keep calling while `moreComing`.
    /// A fetch from a token passes over the changes of `accepted` commits, as `SyncBackend.fetchChanges` says.
    func fetchChanges(since token: ChangeToken?, limit: Int) throws -> ReplicatedChangesPage

    /// Writes new versions, committed as one batch in this device's journal. A save or delete whose
    /// `basedOn` does not cover every version visible in this copy fails with `.concurrentVersions`,
    /// and then nothing is written.
    func modify(saves: [ReplicatedSave], deletes: [ReplicatedDelete]) throws -> ReplicatedModifyResult

    /// What this backend accepts in one `modify` and `putAsset`; it refuses more with `.limitExceeded`.
    var limits: BackendLimits { get }

    /// Bytes this backend stores for a record's fields when it seals them; nil when it stores them as given.
    func sealedByteCount(of fields: [String: FieldValue]) throws -> Int?

    /// Stores a blob in this device's asset folder.
    func putAsset(_ bytes: [UInt8]) throws -> AssetReference

    /// Reads a blob from any device's asset folder, verifying its size and checksum.
    func readAsset(_ reference: AssetReference) throws -> [UInt8]

    /// Ends a sync: records in `device.json` how far this device has read every journal (the
    /// acknowledgement tombstones wait for), removes its own superseded versions and tombstones
    /// every device has seen, and compacts its own journal when it has grown.
    func finishSync(acknowledging token: ChangeToken) throws -> CompactionReport?

    /// Compacts this device's own journal now, whatever its size (`sync compact`): the lines of
    /// versions since replaced or removed go, and with them every copy of their contents this
    /// device wrote; abandoned temporary files go too.
    func compactJournal() throws -> CompactionReport

    /// The caller recorded what the `modify` that gave `receipt` wrote (see `SyncBackend.accepted`).
    func accepted(_ receipt: CommitReceipt)

    /// Ends a run of `modify` calls (see `SyncBackend.finishWrites`).
    func finishWrites() throws

    /// The record's current siblings in this copy (none when it has no version here).
    func siblings(of id: RecordID) throws -> [RecordVersion]

    /// The current siblings of each record, read against one view of the zone (what a fetch needs
    /// besides its changes); a record whose only versions cannot be read is left out.
    func readableSiblings(of ids: [RecordID]) throws -> [RecordID: [RecordVersion]]

    /// Where a record's versions are kept, for messages about it.
    func location(of id: RecordID) -> String
}

/// One record as a fetch sees it now.
public struct ReplicatedChange: Equatable, Sendable {
    public let id: RecordID
    /// The versions no other visible version covers, in canonical order (see `VersionHistory.siblings`).
    /// One sibling is the plain case; several are a conflict for the engine to merge.
    public let siblings: [RecordVersion]

    public init(id: RecordID, siblings: [RecordVersion]) {
        self.id = id
        self.siblings = siblings
    }

    /// Every sibling is a tombstone: the record is deleted.
    public var isDeleted: Bool { siblings.allSatisfy(\.isDeleted) }

    /// The join of the siblings' vectors: what a merge of them is based on.
    public var joinedVersion: VersionVector {
        siblings.reduce(VersionVector()) { $0.joined(with: $1.version) }
    }
}

/// A file a fetch is waiting for (not yet replicated, or half replicated). The engine remembers
/// since when, for `sync status`.
public struct ReplicationWait: Error, Equatable, Sendable {
    public let path: String
    /// Why, e.g. "the segments before 0000000000000040.log have not arrived".
    public let reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
}

/// One page of `ReplicatedBackend.fetchChanges`.
public struct ReplicatedChangesPage: Sendable {
    public let changes: [ReplicatedChange]
    public let token: ChangeToken
    public let moreComing: Bool
    /// What could not be read yet; the next sync tries again.
    public let waiting: [ReplicationWait]
    /// Journals that do not follow the format (a malformed line, an oversized segment, a symlink):
    /// each stops that device's journal where it stands, and is checked again on every fetch.
    public let quarantined: [QuarantinedItem]

    public init(
        changes: [ReplicatedChange], token: ChangeToken, moreComing: Bool, waiting: [ReplicationWait], quarantined: [QuarantinedItem] = []
    ) {
        self.changes = changes
        self.token = token
        self.moreComing = moreComing
        self.waiting = waiting
        self.quarantined = quarantined
    }
}

/// A new version of a record.
public struct ReplicatedSave: Sendable {
    /// The record to store (its tag is ignored: `basedOn` says what it started from).
    public let record: BackendRecord
    /// The version this one started from: the join of the siblings it merges, or empty for a new record.
    public let basedOn: VersionVector
    /// A merge computed from the siblings alone (no unsent local edit): written with `basedOn` as its
    /// vector and no entry of its own, so the same merge by two devices is the same version.
    public let isDerived: Bool
    /// The version it started from, kept in the new version for later three-way merges (tabs).
    public let base: RecordBase?

    public init(record: BackendRecord, basedOn: VersionVector, isDerived: Bool = false, base: RecordBase? = nil) {
        self.record = record
        self.basedOn = basedOn
        self.isDerived = isDerived
        self.base = base
    }
}

/// A tombstone for a record.
public struct ReplicatedDelete: Sendable {
    public let id: RecordID
    /// The version being deleted (the join of the siblings it saw).
    public let basedOn: VersionVector

    public init(id: RecordID, basedOn: VersionVector) {
        self.id = id
        self.basedOn = basedOn
    }
}

/// Outcome of `ReplicatedBackend.modify`.
public struct ReplicatedModifyResult: Sendable {
    /// The versions written (saves and tombstones), empty if the batch failed.
    public let written: [RecordVersion]
    /// Per-record failures; non-empty means nothing was written.
    public let failures: [ReplicatedFailure]
    /// Names the line written, for `accepted` (see `ModifyResult.receipt`).
    public let receipt: CommitReceipt?

    public init(written: [RecordVersion], failures: [ReplicatedFailure], receipt: CommitReceipt? = nil) {
        self.written = written
        self.failures = failures
        self.receipt = receipt
    }
}

/// Why one record of a `modify` call was not written.
public struct ReplicatedFailure: Equatable, Sendable {
    public let id: RecordID
    public let error: ReplicatedRecordError

    public init(id: RecordID, error: ReplicatedRecordError) {
        self.id = id
        self.error = error
    }
}

/// Per-record errors of a replicated backend.
public enum ReplicatedRecordError: Equatable, Sendable {
    /// `basedOn` does not cover these versions visible in this copy: merge them, then save again
    /// based on the join. (Replaces `serverRecordChanged`; there is no `unknownItem`: a save
    /// based on a version that is gone simply creates the record again.)
    case concurrentVersions([RecordVersion])
    /// The encoded record exceeds the backend's `limits.maxRecordBytes`.
    case limitExceeded
    /// The record is malformed; retrying will not help.
    case invalid(String)
    /// Another record of the batch failed. Send it again.
    case batchRequestFailed
}

/// Errors of a replicated backend beyond `BackendError`.
public enum ReplicationError: Error, Equatable, Sendable {
    /// Another data directory writes as this device (a cloned home directory or VM): take a new
    /// device id and send everything again. The associated value says what gave it away.
    case deviceIDInUse(String)
}

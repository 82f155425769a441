import ItsypadSupport

/// A store that several devices share, with CloudKit's semantics for one atomic record zone:
/// change tags with `ifServerRecordUnchanged` saves, all-or-nothing batches, change tokens,
/// and content-addressed assets.
public protocol SyncBackend: Sendable {
    /// Creates the zone (zone.json and its folders) if absent; returns it.
    func createZoneIfNeeded() throws -> ZoneInfo

    /// The existing zone. Throws `.zoneNotFound` if it was never created.
    func zone() throws -> ZoneInfo

    /// Changes after `token`, oldest first, at most `limit` per page.
    ///
    /// A nil token returns every current record as a save and no deletions (as CloudKit does:
    /// the caller finds deletions by comparing with what it has). Keep calling with the returned
    /// token while `moreComing` is true; each page's token stays valid on its own.
    ///
    /// A fetch from a token may leave out the changes of a `modify` whose result the caller
    /// said it recorded (`accepted`): it moves past them without returning them, while what it
    /// returns of other changes stays as it was (a concurrent version another device wrote still
    /// comes with this device's sibling). A nil token, and the pages of the fetch it starts, return
    /// them like any other record.
    func fetchChanges(since token: ChangeToken?, limit: Int) throws -> ChangesPage

    /// Saves and deletes committed as ONE all-or-nothing batch under the lock.
    /// Per-record problems are reported in `ModifyResult.failures`; when there is any,
    /// nothing was committed and every other record fails with `.batchRequestFailed`.
    func modify(saves: [RecordSave], deletes: [RecordDelete], device: String) throws -> ModifyResult

    /// What this backend accepts in one `modify` and `putAsset`; it refuses more with `.limitExceeded`.
    var limits: BackendLimits { get }

    /// Whether the backend alone decides what exists, as a CloudKit server does: a record it no
    /// longer returns once a token expired was deleted. A shared folder is not such a server
    /// (whoever can write it can remove files), so there a missing record proves nothing.
    var absenceProvesDeletion: Bool { get }

    /// Bytes this backend stores for a record's fields when that is more than their size in the
    /// clear (a backend that seals them); nil when it stores them as given.
    func sealedByteCount(of fields: [String: FieldValue]) throws -> Int?

    /// Stores a blob (up to `limits.maxAssetBytes`) under its SHA-256 and returns the reference to put in a field.
    func putAsset(_ bytes: [UInt8]) throws -> AssetReference

    /// Reads a blob back, verifying its size and checksum.
    func readAsset(_ reference: AssetReference) throws -> [UInt8]

    /// The current version of one record (nil if there is none). Throws `.corrupt` when it is malformed:
    /// how a device checks again a record it quarantined.
    func fetchRecord(_ id: RecordID) throws -> BackendRecord?

    /// Where a record is kept, for messages about it.
    func location(of id: RecordID) -> String

    /// Drops journal entries already applied to the record files (the records stay).
    /// Tokens older than the compaction point then fail with `.tokenExpired`.
    /// Also removes unreferenced assets and abandoned temporary files.
    func compact() throws -> CompactionReport

    /// Ends a sync that read as far as `token`: a backend that keeps per-device acknowledgements
    /// (a backend directory) records it and collects what nobody needs any more. Does nothing by default.
    func finishSync(acknowledging token: ChangeToken) throws

    /// The caller recorded everything the `modify` that gave `receipt` reported (the saved records
    /// with their tags, the deletions): a backend may then leave those changes out of a later fetch
    /// from a token (see `fetchChanges`). Called only once that is durable; never for a result the
    /// caller did not take in whole. Does nothing by default.
    func accepted(_ receipt: CommitReceipt)

    /// Ends a run of `modify` calls (a push, the merges a fetch wrote back, a purge): a backend
    /// that put off recording something once a call records it now (a backend directory: how far
    /// its record files go, in `device.json`). Does nothing by default.
    func finishWrites() throws
}

extension SyncBackend {
    public func finishSync(acknowledging _: ChangeToken) throws {}
    public func accepted(_: CommitReceipt) {}
    public func finishWrites() throws {}
}

/// What a backend gives back with a committed `modify` (`ModifyResult.receipt`) to know that commit
/// again when the caller says it recorded it (`SyncBackend.accepted`): for a backend directory,
/// where the journal line it appended ends. Opaque to the caller.
public struct CommitReceipt: Sendable, Equatable {
    /// The zone the line was written in.
    let zone: String
    /// The journal's last sequence number before the line, and the line's last.
    let after: Int64
    let through: Int64
    /// Where reading goes on after the line.
    let resume: JournalPosition
}

/// What a backend accepts: each implementation states its own (`SyncBackend.limits`), refuses more
/// with `.limitExceeded`, and the engine sizes its batches and decides what travels as an asset by them.
/// The static members are the backend directory's own bounds on what it reads.
public struct BackendLimits: Sendable, Equatable {
    /// Saves plus deletes in one `modify` call.
    public var maxRecordsPerRequest: Int
    /// Total encoded size of the saved records in one `modify` call.
    public var maxRequestBytes: Int
    /// Encoded size of one record, assets excluded.
    public var maxRecordBytes: Int
    /// Size of one asset.
    public var maxAssetBytes: Int
    /// The largest field value kept inline in a record (measured as the backend stores it, see
    /// `SyncBackend.sealedByteCount`): a record with one such value and a few small fields fits
    /// `maxRecordBytes`. Larger content travels as an asset.
    public var maxInlineValueBytes: Int

    public init(maxRecordsPerRequest: Int, maxRequestBytes: Int, maxRecordBytes: Int, maxAssetBytes: Int, maxInlineValueBytes: Int) {
        self.maxRecordsPerRequest = maxRecordsPerRequest
        self.maxRequestBytes = maxRequestBytes
        self.maxRecordBytes = maxRecordBytes
        self.maxAssetBytes = maxAssetBytes
        self.maxInlineValueBytes = maxInlineValueBytes
    }

    /// CloudKit's practical request limits.
    public static let cloudKit = BackendLimits(
        maxRecordsPerRequest: 400, maxRequestBytes: 2 * 1024 * 1024, maxRecordBytes: 1024 * 1024, maxAssetBytes: 50 * 1024 * 1024,
        maxInlineValueBytes: 900_000)

    /// A backend directory's: CloudKit's sizes, so that a record fits wherever it is sent, but a
    /// batch is one journal line whose record files are made durable together, bound by its bytes
    /// rather than by a count of 400.
    public static let folder = BackendLimits(
        maxRecordsPerRequest: 2000, maxRequestBytes: cloudKit.maxRequestBytes, maxRecordBytes: cloudKit.maxRecordBytes,
        maxAssetBytes: cloudKit.maxAssetBytes, maxInlineValueBytes: cloudKit.maxInlineValueBytes)

    /// Request-wide limits, checked before anything is read or written so the engine can split and retry.
    public func checkRequest(saves: [RecordSave], deletes: [RecordDelete]) throws {
        try checkRequest(count: saves.count + deletes.count, bytes: nil)
        try checkRequest(
            count: saves.count + deletes.count, bytes: saves.reduce(0) { $0 + ((try? $1.record.encodedJSON().count) ?? 0) })
    }

    /// The same for a request of `count` records whose saved records encode to `bytes` in all (nil:
    /// not known yet, and only the count is checked), for a backend that encodes each record anyway.
    public func checkRequest(count: Int, bytes: Int?) throws {
        guard count <= maxRecordsPerRequest else { throw BackendError.limitExceeded }
        // One oversized record gets the per-record error instead: splitting cannot help it.
        guard count > 1, let bytes else { return }
        guard bytes <= maxRequestBytes else { throw BackendError.limitExceeded }
    }

    /// Largest sequence number (and so change tag) a backend may hold: far beyond any real journal,
    /// and small enough that arithmetic on it never overflows.
    public static let maxSeq: Int64 = 1 << 53
    /// zone.json and state.json.
    public static let maxSmallFileBytes = 64 * 1024
}

/// Something read from the backend that does not follow the format (a bad name, number, size or
/// file type, a record that does not parse) and so was skipped: the rest of the sync goes on.
public struct QuarantinedItem: Sendable, Equatable {
    /// The record, when its type and name are valid (so it can be checked again later); nil for a
    /// journal line or a file name that cannot be attributed to a record.
    public let id: RecordID?
    /// Where it was found: a record file, or a journal segment and the line's byte offset.
    public let location: String
    public let reason: String

    public init(id: RecordID?, location: String, reason: String) {
        self.id = id
        self.location = location
        self.reason = reason
    }
}

/// The backend's single record zone.
public struct ZoneInfo: Equatable, Sendable {
    /// Random identity of the zone; a different one means the backend was replaced.
    public let zoneID: String
    /// On-disk format version.
    public let format: Int
    /// Creation time, milliseconds since 1970.
    public let created: Int64
    /// Set when the zone's records are end-to-end encrypted: the key check value
    /// (`RecordCipher.keyCheckValue`) that tells a wrong key before anything is written.
    public let keyCheckValue: String?

    public init(zoneID: String, format: Int, created: Int64, keyCheckValue: String? = nil) {
        self.zoneID = zoneID
        self.format = format
        self.created = created
        self.keyCheckValue = keyCheckValue
    }

    /// Whether the zone's records are end-to-end encrypted.
    public var isEncrypted: Bool { keyCheckValue != nil }
}

/// An opaque position in the zone's change history. Store it and pass it back; do not parse it.
public struct ChangeToken: Hashable, Sendable, Codable {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Encoded as a plain JSON string.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// One page of `fetchChanges`.
public struct ChangesPage: Sendable {
    /// Changes in commit order. A record may appear more than once; the later change wins.
    public let changes: [Change]
    /// Token to fetch the next page (or, when `moreComing` is false, later changes).
    public let token: ChangeToken
    /// True if more changes are available right now.
    public let moreComing: Bool
    /// Malformed records and journal entries met on this page, which were skipped.
    public let quarantined: [QuarantinedItem]
    /// Files not replicated completely yet, whose changes a later fetch brings: while any is
    /// waited for, a record absent from a full fetch may simply not have arrived.
    public let waiting: [ReplicationWait]

    public init(
        changes: [Change], token: ChangeToken, moreComing: Bool, quarantined: [QuarantinedItem] = [], waiting: [ReplicationWait] = []
    ) {
        self.changes = changes
        self.token = token
        self.moreComing = moreComing
        self.quarantined = quarantined
        self.waiting = waiting
    }
}

/// One change reported by `fetchChanges`.
public enum Change: Sendable, Equatable {
    /// The record as that change wrote it (a later change in the same fetch may supersede it).
    case saved(BackendRecord)
    /// The record was deleted. Not reported by a full fetch (nil token).
    case deleted(recordType: String, recordName: String)
}

/// Identifies a record within the zone.
public struct RecordID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// e.g. "ScratchTab".
    public let recordType: String
    /// Unique within the type.
    public let recordName: String

    public init(recordType: String, recordName: String) {
        self.recordType = recordType
        self.recordName = recordName
    }

    public static func < (lhs: RecordID, rhs: RecordID) -> Bool {
        (lhs.recordType, lhs.recordName) < (rhs.recordType, rhs.recordName)
    }

    public var description: String { "\(recordType)/\(recordName)" }
}

/// A record to save. `record.recordChangeTag` is the tag this device last saw, nil to create.
public struct RecordSave: Sendable {
    /// The record to store; the backend sets its tag and stamps.
    public let record: BackendRecord

    public init(record: BackendRecord) {
        self.record = record
    }
}

/// A record to delete. With `ifTag` set, the delete only succeeds if the record still has that tag.
public struct RecordDelete: Sendable {
    /// Type of the record to delete.
    public let recordType: String
    /// Name of the record to delete.
    public let recordName: String
    /// nil deletes unconditionally.
    public let ifTag: String?

    public init(recordType: String, recordName: String, ifTag: String? = nil) {
        self.recordType = recordType
        self.recordName = recordName
        self.ifTag = ifTag
    }
}

/// Outcome of `modify`.
public struct ModifyResult: Sendable {
    /// Saved records as stored, with their new change tags (empty if the batch failed).
    public let saved: [BackendRecord]
    /// Deleted records, including ones that were already gone (empty if the batch failed).
    public let deleted: [RecordID]
    /// Per-record failures; non-empty means nothing was committed.
    public let failures: [RecordFailure]
    /// What names the commit to `SyncBackend.accepted`; nil when the backend needs no word of it.
    public let receipt: CommitReceipt?

    public init(saved: [BackendRecord], deleted: [RecordID], failures: [RecordFailure], receipt: CommitReceipt? = nil) {
        self.saved = saved
        self.deleted = deleted
        self.failures = failures
        self.receipt = receipt
    }
}

/// Why one record of a `modify` call was not committed.
public struct RecordFailure: Sendable, Equatable {
    /// Type of the failed record.
    public let recordType: String
    /// Name of the failed record.
    public let recordName: String
    /// What went wrong.
    public let error: RecordError

    public init(recordType: String, recordName: String, error: RecordError) {
        self.recordType = recordType
        self.recordName = recordName
        self.error = error
    }
}

/// Per-record errors, named after their CloudKit counterparts.
public enum RecordError: Sendable, Equatable {
    /// The record's tag does not match the stored one (or it exists but the save meant to create it).
    /// Merge into `server`, which carries the current tag, and save that.
    case serverRecordChanged(server: BackendRecord)
    /// The save carried a tag but the record no longer exists. Clear the tag and save again to re-create it.
    case unknownItem
    /// The encoded record exceeds `BackendLimits.maxRecordBytes`.
    case limitExceeded
    /// The record is malformed (bad name, field, number or asset reference); retrying will not help.
    case invalid(String)
    /// This record was fine, but another record in the same atomic batch failed. Send it again.
    case batchRequestFailed
}

/// Errors that fail a whole call.
public enum BackendError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The backend directory cannot be reached (unmounted disk, broken share, a host down). Retry later.
    case unavailable(String)
    /// Another writer held the lock for longer than the lock time-out. Retry later.
    case locked
    /// zone.json does not exist, or the directory is missing: an unmounted disk, or a backend deleted
    /// on purpose. Only `createZoneIfNeeded()` (what `sync enable` calls) makes a new one.
    case zoneNotFound
    /// The token belongs to a different zone: the backend was replaced. Drop sync state and fetch from nil.
    case zoneChanged
    /// `zone.json` says something else about the zone (its format, creation or key) than when
    /// this device joined it under the same zone id: refused, nothing is read or written.
    case zoneIdentityChanged(String)
    /// The token points before the last compaction (or cannot be used). Fetch from nil.
    case tokenExpired
    /// The backend directory at `path` holds a backend of another format (an older itsypad's, or a
    /// newer one's), or an encrypted one whose files are of another format; nothing is written to it.
    case unsupportedFormat(path: String, format: Int, filesFormat: Int?)
    /// A file does not follow the format (does not parse, a bad name, number or size, a symlink or
    /// FIFO where a file belongs). It is left untouched; retrying cannot help.
    case corrupt(path: String, reason: String)
    /// The request has too many records or bytes: split it and send the halves.
    case limitExceeded
    /// The disk or quota is full.
    case quotaExceeded(String)
    /// An asset with this checksum is not stored.
    case assetNotFound(String)
    /// Any other I/O failure (EIO, EACCES, EROFS): the backend is there but cannot be used until someone acts.
    case io(String)

    /// Whether a later sync may succeed unchanged (exit 75): the backend was busy, or not there or
    /// not reachable now. An I/O error, a refused permission, a full disk or a damaged file wait for
    /// someone to act (exit 1), even when a sync retries them a few times first.
    public var passesWithTime: Bool {
        switch self {
        case .locked, .unavailable: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .unavailable(let reason): "sync backend unavailable: \(reason)"
        case .locked: "sync backend is locked by another writer"
        case .zoneNotFound: "sync backend has no zone (zone.json is missing)"
        case .zoneChanged: "sync backend was replaced (different zone ID)"
        case .zoneIdentityChanged(let changes):
            "the sync backend's zone.json no longer describes the zone this device joined (\(changes)): someone who can "
                + "write the backend but is not one of your devices may have changed it. Nothing was synced; local data is kept. "
                + "To start afresh, move the backend aside and run 'itsypad sync enable DIR' (every device then sends all its data again)"
        case .tokenExpired: "change token expired; a full fetch is needed"
        case .unsupportedFormat(let path, let format, let filesFormat):
            "\(path) holds an itsypad backend "
                + (filesFormat.map { "encrypted in format \($0)'s layout" } ?? "in format \(format)")
                + ((filesFormat ?? format) > ZoneDocument.plainFormat
                    ? ", newer than this version understands" : ", from an earlier version, which this version does not open")
                + "; nothing was written to it"
        case .corrupt(let path, let reason): "corrupt file \(path): \(reason)"
        case .limitExceeded: "request exceeds the backend's limits (records per request, bytes per request or record, asset size)"
        case .quotaExceeded(let reason): "sync backend is full: \(reason)"
        case .assetNotFound(let checksum): "asset \(checksum) not found"
        case .io(let reason): "sync backend I/O error: \(reason)"
        }
    }
}

/// What `compact()` removed.
public struct CompactionReport: Sendable, Equatable {
    /// Tokens for changes before this seq now fail with `.tokenExpired`.
    public let compactedThrough: Int64
    /// Journal segment files deleted.
    public let segmentsRemoved: Int
    /// Their total size.
    public let journalBytesRemoved: Int
    /// Unreferenced assets deleted (only those older than an hour).
    public let assetsRemoved: Int
    /// Abandoned temporary files deleted (only those older than a day).
    public internal(set) var temporaryFilesRemoved: Int

    /// Nothing removed, unless said.
    public init(
        compactedThrough: Int64 = 0, segmentsRemoved: Int = 0, journalBytesRemoved: Int = 0, assetsRemoved: Int = 0,
        temporaryFilesRemoved: Int = 0
    ) {
        self.compactedThrough = compactedThrough
        self.segmentsRemoved = segmentsRemoved
        self.journalBytesRemoved = journalBytesRemoved
        self.assetsRemoved = assetsRemoved
        self.temporaryFilesRemoved = temporaryFilesRemoved
    }
}

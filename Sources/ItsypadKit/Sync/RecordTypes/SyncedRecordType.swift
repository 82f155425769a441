import ItsypadBackend
import ItsypadModel
import ItsypadStore

/// One type of synced record: how its records are read and checked, and how the engine applies,
/// sends, accepts and reconciles them. The engine knows record types only through the list of
/// these it is given (`SyncedTypes.standard` unless told otherwise) and has no type names of its
/// own: adding a type is writing one conformance, in its own file, and adding it to that list.
///
/// Handlers are made fresh for each engine (`SyncedTypes.standard` is computed), so one may keep
/// what a run stages (the tab handler keeps fetched tabs to write together).
protocol SyncedRecordType {
    /// The local item a record of this type holds.
    associatedtype Item

    var recordType: RecordType { get }
    /// What a person calls one record of this type ("2 tabs").
    var noun: String { get }
    /// A record name in the form local keys use (ids are compared in lowercase).
    func canonicalName(_ recordName: String) -> String

    // MARK: Mapping

    /// Why a record of this type cannot become a local item, or nil when it can (or is simply not
    /// for this device). A record with a problem is quarantined, not applied.
    func problem(with record: BackendRecord) -> String?
    /// The item a record holds; nil when it cannot be read. Throws when the backend cannot give
    /// what the record refers to (a content asset).
    func item(from record: BackendRecord, backend: SyncBackend) throws -> Item?

    // MARK: Fetching

    /// Applies fetched changes of this type, in the order given (each record at most once).
    func apply(_ changes: [FetchedChange], engine: SyncEngine) throws
    /// Applies the backend's version met by a conflict, as if fetched; false when it cannot be read.
    func applyServerVersion(_ record: BackendRecord, engine: SyncEngine) throws -> Bool
    /// Writes what `apply` staged: after each page, every `durableStepSize` changes, and before
    /// the lock is let go for a backend call.
    func writeStaged(engine: SyncEngine) throws
    /// Applies what `apply` held back to apply together: at the end of each page (and of a
    /// quarantined record's second look), with the lock held, before `writeStaged`.
    func applyHeld(engine: SyncEngine) throws
    /// Whether `apply` decided items that `writeDecided` writes.
    var hasDecided: Bool { get }
    /// Writes what `apply` decided into files only this sync touches (a stage), with the data
    /// directory's lock let go between steps; `durably`: made durable too, so that `writeStaged`
    /// (under the lock) has only to check them and put them in place.
    func writeDecided(durably: Bool, engine: SyncEngine) throws
    /// Local policy that must hold once a pull has merged everything (a size limit).
    func finishPull(engine: SyncEngine) throws

    // MARK: Sending

    /// What the queued `changes` of this type send, built one at a time by the returned function
    /// (nil: nothing to send, the change is obsolete). The changes are those a batch may take,
    /// for a handler that reads its items in bulk.
    func sender(for changes: [PendingChange], engine: SyncEngine) throws -> (PendingChange) throws -> SyncEngine.Outgoing?
    /// Records what the backend stored for sent items (their new change tags), durably by the next `finishAccept`.
    func accept(_ items: [SyncEngine.Outgoing], saved: [RecordID: BackendRecord], engine: SyncEngine) throws
    /// Makes what `accept` recorded since the last call durable, before the items leave the queue.
    func finishAccept(engine: SyncEngine) throws
    /// Whether what `accept` recorded since the last `finishAccept` includes files to put in place
    /// (renames, a hold that grows with them): a step of those stays within `durableStepSize`.
    var hasAcceptedFiles: Bool { get }
    /// Tidies what acceptances recorded once it has grown large, between two steps of a push (a
    /// handler that does hands the lock over to a waiting command first: a hold of its own).
    func tidyAccepted(engine: SyncEngine) throws
    /// Tidies what the push's acceptances recorded, once its last batch is accepted.
    func finishPush(engine: SyncEngine) throws
    /// A save carrying a tag met no record; returns whether the change may be sent again in this run.
    func wasRemoved(_ name: String, engine: SyncEngine) throws -> Bool
    /// The backend holds a version that cannot be read: take its tag so that this device's version
    /// replaces it. Returns whether there is something to send that way.
    func replaceUnreadable(_ name: String, tag: String, engine: SyncEngine) throws -> Bool

    // MARK: Bookkeeping

    /// Changes a lost or damaged queue may have held: items that differ from their synced version.
    func unsentChanges(engine: SyncEngine) throws -> [UnsentChange]
    /// After a full fetch that found the token expired, on a backend where absence proves a
    /// deletion: local records it no longer holds (neither the record nor its tombstone is in
    /// `accounted`) were deleted there.
    func applyDeletionsMissing(from accounted: Set<RecordKey>, engine: SyncEngine) throws
    /// The backend does not hold what it was known to hold: forget that for every item whose key
    /// is not in `accounted` (every item, when nil: a replaced backend) and queue those again.
    /// Nothing is deleted for being missing: only a deletion the backend holds deletes.
    func forgetSynced(except accounted: Set<RecordKey>?, engine: SyncEngine) throws

    // MARK: Concurrent versions

    /// How a removal meets a concurrent edit.
    var removal: RemovalRule { get }
    /// Whether a version keeps the version it was based on, for later three-way merges.
    var mergesAgainstAncestor: Bool { get }
    /// The merge of two or more live concurrent versions, made from them alone so that every
    /// device merging the same versions writes the same record.
    func merge(_ live: [RecordVersion], backend: SyncBackend) throws -> SiblingMerge.Outcome
}

/// A fetched change, for the record type's handler.
enum FetchedChange {
    case saved(BackendRecord)
    /// `history`: what the deleter's tombstone says it had seen; nil when nothing says (a purge).
    case deleted(name: String, history: EditHistory?)
}

/// A change to queue again when the queue is rebuilt.
struct UnsentChange {
    let operation: PendingChange.Operation
    let key: RecordKey
    var tag: String? = nil
}

/// How a removal and a concurrent edit of one record resolve.
enum RemovalRule {
    /// An edit the removal had not seen wins; the record's tombstone is read together with it,
    /// so that every device decides the same whatever order their journals come in.
    case editBeatsUnseenRemoval
    /// An edit of a concurrent version beats a removal; no tombstone is consulted.
    case editBeatsRemoval
    /// A removal always wins: an edit never brings the record back.
    case removalWins
}

extension SyncedRecordType {
    func canonicalName(_ recordName: String) -> String { recordName.lowercased() }
    func applyDeletionsMissing(from _: Set<RecordKey>, engine _: SyncEngine) throws {}
    func writeStaged(engine _: SyncEngine) throws {}
    func applyHeld(engine _: SyncEngine) throws {}
    var hasDecided: Bool { false }
    func writeDecided(durably _: Bool, engine _: SyncEngine) throws {}
    func finishPull(engine _: SyncEngine) throws {}
    func finishAccept(engine _: SyncEngine) throws {}
    var hasAcceptedFiles: Bool { false }
    func tidyAccepted(engine _: SyncEngine) throws {}
    func finishPush(engine _: SyncEngine) throws {}
    func replaceUnreadable(_: String, tag _: String, engine _: SyncEngine) throws -> Bool { false }
    var mergesAgainstAncestor: Bool { false }

    func key(_ recordName: String) -> RecordKey { RecordKey(recordType, canonicalName(recordName)) }
}

/// The record types this version syncs, in the order the engine handles them.
package enum SyncedTypes {
    /// The registration list: every synced type, each handler made fresh.
    static var standard: [any SyncedRecordType] { [TabRecords(), ClipRecords(), SettingRecords()] }

    /// Each synced type's record type and the noun that counts its records, in the same order.
    package static var nouns: [(type: RecordType, noun: String)] { standard.map { ($0.recordType, $0.noun) } }
}

/// A list of handlers by record type.
struct SyncedTypeTable {
    let all: [any SyncedRecordType]
    private let byType: [RecordType: any SyncedRecordType]

    init(_ handlers: [any SyncedRecordType]) {
        all = handlers
        byType = Dictionary(handlers.map { ($0.recordType, $0) }, uniquingKeysWith: { first, _ in first })
    }

    subscript(type: RecordType) -> (any SyncedRecordType)? { byType[type] }

    func handler(for recordType: String) -> (any SyncedRecordType)? {
        RecordType(rawValue: recordType).flatMap { byType[$0] }
    }

    /// The key of a backend record of a type this list syncs (its name in canonical form).
    func key(of id: RecordID) -> RecordKey? {
        handler(for: id.recordType)?.key(id.recordName)
    }

    /// The deletion a tombstone records, if it is a well-formed one of a type this list syncs.
    func tombstone(from record: BackendRecord) -> (key: RecordKey, history: EditHistory)? {
        guard let (deleted, history) = RecordMapping.tombstone(from: record), let type = self[deleted.type] else { return nil }
        return (type.key(deleted.name), history)
    }
}

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport
@testable import ItsypadSync

/// A note: text, and a counter that orders its versions.
struct Note: Equatable {
    var text: String
    var clock: Int64
}

/// A device's notes, kept in memory: the local store of the test-only record type.
final class NoteShelf {
    var notes: [String: Note] = [:]
    /// The change tag of the version each note was last synced at.
    var tags: [String: String] = [:]
    /// Acceptances of sent notes still to fail (as a full disk fails one), before they record anything.
    var failingAcceptances = 0

    /// Writes a note here and queues it for sending, as a store's mutation does.
    func write(_ id: String, _ text: String, clock: Int64, store: DataStore) throws {
        notes[id] = Note(text: text, clock: clock)
        try store.pending().enqueue(.save, NoteRecords.key(id))
    }

    func remove(_ id: String, store: DataStore) throws {
        notes[id] = nil
        try store.pending().enqueue(.delete, NoteRecords.key(id))
    }
}

/// A record type that exists only in the tests, registered only in their engines' lists: the
/// engine, the backends and the sibling merges know nothing of it. The newer version (by clock,
/// then by text) wins a conflict; a removal wins over an edit.
struct NoteRecords: SyncedRecordType {
    typealias Item = Note

    static let type = RecordType(rawValue: "Note")!
    static func key(_ id: String) -> RecordKey { RecordKey(type, id) }

    let shelf: NoteShelf
    let recordType = NoteRecords.type
    let noun = "note"
    let removal = RemovalRule.removalWins

    static func record(_ id: String, _ note: Note, tag: String?) -> BackendRecord {
        BackendRecord(
            recordName: id, recordType: type.rawValue, recordChangeTag: tag,
            fields: ["text": .string(note.text), "clock": .int64(note.clock)], created: nil, modified: nil)
    }

    static func newer(_ a: Note, than b: Note) -> Bool { (a.clock, a.text) > (b.clock, b.text) }

    func problem(with record: BackendRecord) -> String? {
        note(from: record) == nil ? "not a note" : nil
    }

    func item(from record: BackendRecord, backend _: SyncBackend) -> Note? { note(from: record) }

    private func note(from record: BackendRecord) -> Note? {
        guard case .string(let text)? = record.fields["text"], case .int64(let clock)? = record.fields["clock"] else { return nil }
        return Note(text: text, clock: clock)
    }

    func apply(_ changes: [FetchedChange], engine: SyncEngine) throws {
        for change in changes {
            switch change {
            case .saved(let record):
                _ = try applyServerVersion(record, engine: engine)
            case .deleted(let id, _):
                shelf.notes[id] = nil
                shelf.tags[id] = nil
                try engine.confirmPending(NoteRecords.key(id))
            }
        }
    }

    func applyServerVersion(_ record: BackendRecord, engine: SyncEngine) throws -> Bool {
        guard let remote = note(from: record) else { return false }
        let id = canonicalName(record.recordName)
        let pending = try engine.pendingChange(NoteRecords.key(id))
        if pending?.operation == .delete { return true }
        if let local = shelf.notes[id], pending != nil, local != remote {
            engine.report.conflicts += 1
            if NoteRecords.newer(local, than: remote) {
                // Ours is newer: it goes over theirs.
                shelf.tags[id] = record.recordChangeTag
                return true
            }
        }
        shelf.notes[id] = remote
        shelf.tags[id] = record.recordChangeTag
        try engine.confirmPending(NoteRecords.key(id))
        engine.report.pulled += 1
        return true
    }

    func sender(for _: [PendingChange], engine: SyncEngine) throws -> (PendingChange) throws -> SyncEngine.Outgoing? {
        { change in
            let id = change.key.name
            switch change.operation {
            case .save:
                guard let note = shelf.notes[id] else { return nil }
                return SyncEngine.Outgoing(change: change, saves: [NoteRecords.record(id, note, tag: shelf.tags[id])])
            case .delete:
                return engine.outgoingDeletion(change, ifTag: nil, history: EditHistory())
            }
        }
    }

    func accept(_ items: [SyncEngine.Outgoing], saved: [RecordID: BackendRecord], engine _: SyncEngine) throws {
        if shelf.failingAcceptances > 0 {
            shelf.failingAcceptances -= 1
            throw ItsypadError.failure("the acceptance of \(items.count) notes failed")
        }
        for item in items {
            let id = item.change.key.name
            switch item.change.operation {
            case .save: shelf.tags[id] = item.saves.first.flatMap { saved[$0.id]?.recordChangeTag }
            case .delete: shelf.tags[id] = nil
            }
        }
    }

    func wasRemoved(_ id: String, engine: SyncEngine) throws -> Bool {
        shelf.notes[id] = nil
        shelf.tags[id] = nil
        try engine.confirmPending(NoteRecords.key(id))
        return true
    }

    func unsentChanges(engine _: SyncEngine) throws -> [UnsentChange] {
        shelf.notes.keys.filter { shelf.tags[$0] == nil }.sorted().map { UnsentChange(operation: .save, key: NoteRecords.key($0)) }
    }

    func forgetSynced(except accounted: Set<RecordKey>?, engine: SyncEngine) throws {
        let missing = shelf.notes.keys.filter { id in accounted.map { shelf.tags[id] != nil && !$0.contains(NoteRecords.key(id)) } ?? true }
        for id in missing { shelf.tags[id] = nil }
        try engine.store.pending().enqueue(.save, missing.sorted().map(NoteRecords.key))
    }

    func merge(_ live: [RecordVersion], backend _: SyncBackend) throws -> SiblingMerge.Outcome {
        let newest = live.max { a, b in
            switch (note(from: a.record), note(from: b.record)) {
            case let (x?, y?): return NoteRecords.newer(y, than: x)
            case (nil, _?): return true
            default: return false
            }
        }!
        var record = newest.record
        record.recordChangeTag = nil
        return SiblingMerge.Outcome(record: record)
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// The record types that sync, named as on the backend.
public enum RecordType: String, Sendable, CaseIterable {
    case tab = "ScratchTab"
    case clip = "ClipboardEntry"
    case setting = "Setting"
}

extension RecordType {
    /// What a person calls a record of this type ("2 tabs").
    public var noun: String {
        switch self {
        case .tab: return "tab"
        case .clip: return "clip"
        case .setting: return "setting"
        }
    }
}

/// Identifies one synced record.
public struct RecordKey: Hashable, Sendable {
    public let type: RecordType
    public let name: String

    public init(_ type: RecordType, _ name: String) {
        self.type = type
        self.name = name
    }
}

/// A change waiting to be sent.
public struct PendingChange: Equatable, Sendable {
    public enum Operation: String, Sendable { case save, delete }

    public let key: RecordKey
    public var operation: Operation
    /// Grows with every enqueue of this record: a send confirms only the version it sent.
    public var version: Int
    /// For a delete: the change tag last seen, so the delete fails if someone edited the record since.
    public var tag: String? = nil
    /// For a delete: remove the record without leaving a tombstone. Used for removals a
    /// policy makes (eviction past the limit, pruning), which any device would make again.
    public var hard = false

    var line: JSONValue {
        PendingChange.line(operation.rawValue, key, tag: tag, hard: hard, version: version)
    }

    static func line(_ op: String, _ key: RecordKey, tag: String? = nil, hard: Bool = false, version: Int? = nil) -> JSONValue {
        var members: [(String, JSONValue)] = [("op", .string(op)), ("type", .string(key.type.rawValue)), ("id", .string(key.name))]
        if let version { members.append(("v", .integer(Int64(version)))) }
        if let tag { members.append(("tag", .string(tag))) }
        if hard { members.append(("hard", .bool(true))) }
        return .object(members)
    }
}

/// The durable, ordered, de-duplicated queue of changes to send, with
/// CKSyncEngine's rules: save A, save B, save A → [A, B]; save A, delete A →
/// [delete A]. Every local mutation of a syncable item appends here, whether
/// sync is enabled or not, so a deletion made while sync was off is still sent
/// later. Stored as an append-only log (`sync/pending.log`), one JSON object a
/// line; `confirm` appends a confirmation rather than rewriting, and the log is
/// compacted when it grows.
///
/// Compaction writes a first line naming the queue (`identity`): the sync
/// engine remembers it, so a log that was lost or replaced is noticed. A line
/// that does not parse but is followed by others is damage (`damage`); a torn
/// last line is not (it was never committed).
public final class PendingQueue {
    public let path: String
    private let tree: FileTree
    private var file: AppendFile?
    private var loaded: [PendingChange]?
    /// Why the log cannot be trusted to hold every change, found while reading it.
    public private(set) var damage: String?

    /// Compact once the log passes this many bytes.
    static let compactionThreshold = 4 << 20

    init(path: String, tree: FileTree? = nil) throws {
        self.path = path
        self.tree = tree ?? .containing(path)
    }

    private func appendFile() throws -> AppendFile {
        if let file { return file }
        let opened = try storeOperation { try AppendFile(path: path, in: tree) }
        file = opened
        return opened
    }

    /// Records that `keys` must be saved or deleted on the backend (`hard`: see ``PendingChange/hard``).
    public func enqueue(_ operation: PendingChange.Operation, _ keys: [RecordKey], tag: String? = nil, hard: Bool = false) throws {
        guard !keys.isEmpty else { return }
        var lines: [UInt8] = []
        for key in keys {
            lines += (PendingChange.line(operation.rawValue, key, tag: tag, hard: hard && operation == .delete).serialized() + "\n").utf8
        }
        let file = try appendFile()
        try storeOperation { try file.append(lines) }
        loaded = nil
        byKey = nil
    }

    public func enqueue(_ operation: PendingChange.Operation, _ key: RecordKey, tag: String? = nil, hard: Bool = false) throws {
        try enqueue(operation, [key], tag: tag, hard: hard)
    }

    /// The queue in order.
    public func changes() throws -> [PendingChange] {
        if let loaded { return loaded }
        let ordered = try replayLog().ordered
        loaded = ordered
        return ordered
    }

    /// The records with a waiting change, without ordering them (cheaper for listings).
    public func keys() throws -> Set<RecordKey> {
        if let loaded { return Set(loaded.map(\.key)) }
        return try replayLog().keys
    }

    private func replayLog() throws -> Replay {
        // About 80 bytes a line: reserving avoids doubling a large queue's storage while it grows.
        var replay = Replay(expectedLines: (tree.fileSize(path) ?? 0) / 80)
        var lineNumber = 0
        var unreadable: [Int] = []
        try storeOperation { try tree.forEachLine(path) { _, line in
            lineNumber += 1
            guard let json = try? JSONValue.parse(line), let op = json["op"]?.stringValue else {
                unreadable.append(lineNumber)
                return
            }
            guard let type = json["type"]?.stringValue.flatMap(RecordType.init(rawValue:)), let id = json["id"]?.stringValue else { return }
            let key = RecordKey(type, id)
            // Versions count enqueues: anything beyond 2^53 is damage, and would overflow.
            let version = json["v"]?.int64Value.flatMap { (0...(1 << 53)).contains($0) ? Int($0) : nil }
            if op == "done", let sent = version {
                replay.confirm(key, version: sent)
            } else if let operation = PendingChange.Operation(rawValue: op) {
                replay.apply(operation, key, version: version, tag: json["tag"]?.stringValue, hard: json["hard"]?.boolValue == true)
            }
        } }
        // Only the last line may be torn by a crash; an unreadable line before it is damage.
        if unreadable.last == lineNumber { unreadable.removeLast() }
        damage = unreadable.isEmpty ? nil
            : "\(path) has \(unreadable.count) unreadable line(s) (line \(unreadable.map(String.init).joined(separator: ", ")) of \(lineNumber))"
        return replay
    }

    private var byKey: [RecordKey: PendingChange]?

    /// The waiting change for one record, if any (indexed: sync asks for every record it touches).
    public func change(for key: RecordKey) throws -> PendingChange? {
        if loaded == nil || byKey == nil {
            byKey = Dictionary(try changes().map { ($0.key, $0) }, uniquingKeysWith: { $1 })
        }
        return byKey?[key]
    }

    /// Folds log lines into the queue in one pass: a dictionary from record to
    /// its slot in an ordered array, so replay is linear and compact.
    struct Replay {
        private var slots: [PendingChange?] = []
        private var index: [RecordKey: Int] = [:]
        var version = 0

        init(expectedLines: Int = 0) {
            slots.reserveCapacity(expectedLines)
            index.reserveCapacity(expectedLines)
        }

        /// Compaction writes each change's version so that numbering survives it.
        mutating func apply(_ operation: PendingChange.Operation, _ key: RecordKey, version explicit: Int?, tag: String?, hard: Bool) {
            version = max(version + 1, explicit ?? 0)
            if let slot = index[key], slots[slot] != nil {
                slots[slot]!.operation = operation
                slots[slot]!.version = version
                slots[slot]!.tag = tag
                slots[slot]!.hard = hard
            } else {
                // A record confirmed earlier and changed again goes to the back of the queue.
                index[key] = slots.count
                slots.append(PendingChange(key: key, operation: operation, version: version, tag: tag, hard: hard))
            }
        }

        mutating func confirm(_ key: RecordKey, version sent: Int) {
            if let slot = index[key], let change = slots[slot], change.version <= sent { slots[slot] = nil }
        }

        var ordered: [PendingChange] {
            var result: [PendingChange] = []
            result.reserveCapacity(index.count)
            for case let change? in slots { result.append(change) }
            return result
        }
        var keys: Set<RecordKey> { Set(slots.lazy.compactMap { $0?.key }) }
    }

    /// Marks the given versions as sent. A change re-enqueued after its batch
    /// was built has a higher version and stays pending.
    public func confirm(_ sent: [PendingChange]) throws {
        guard !sent.isEmpty else { return }
        _ = try changes()
        var lines = ""
        for change in sent {
            lines += PendingChange.line("done", change.key, version: change.version).serialized() + "\n"
        }
        let file = try appendFile()
        try storeOperation { try file.append(Array(lines.utf8)) }
        let confirmed = Dictionary(sent.map { ($0.key, $0.version) }, uniquingKeysWith: max)
        loaded?.removeAll { change in confirmed[change.key].map { $0 >= change.version } ?? false }
        byKey = nil
    }

    /// Forgets the waiting changes of `keys`, as if sent: for records no backend
    /// can have, whose deletion there is nothing to send.
    public func discard(_ keys: [RecordKey]) throws {
        try confirm(try keys.compactMap { try change(for: $0) })
    }

    /// Rewrites the log as the current queue, dropping deletions of records the
    /// backend never had (nothing to delete there). The queue keeps its identity
    /// unless a new one is given.
    public func compact(identity newIdentity: String? = nil, knownToBackend: (RecordKey) -> Bool) throws {
        var changes = try changes()
        let identity = newIdentity ?? self.identity
        changes.removeAll { $0.operation == .delete && !knownToBackend($0.key) }
        // Lines are serialized twice (to size the header, then to write) rather than held in memory.
        func line(_ change: PendingChange) -> String { change.line.serialized() + "\n" }
        let size = changes.reduce(0) { $0 + line($1).utf8.count }
        // The first line records the compacted size, so the log is compacted again only once it has doubled.
        var base: [(String, JSONValue)] = [("op", .string("base")), ("bytes", .integer(Int64(size)))]
        if let identity { base.append(("queue", .string(identity))) }
        let header = JSONValue.object(base).serialized() + "\n"
        try storeOperation {
            try tree.writeAtomically(path) { write in
                var chunk = Array(header.utf8)
                for change in changes {
                    chunk += line(change).utf8
                    if chunk.count >= 1 << 16 { try write(chunk); chunk.removeAll(keepingCapacity: true) }
                }
                try write(chunk)
            }
        }
        file = nil
        loaded = nil
        byKey = nil
        damage = nil
        _ = try self.changes()
    }

    /// The name compaction gave this log (its first line), nil when it has none:
    /// a log created from scratch after the old one was lost has none.
    public var identity: String? { header()?["queue"]?.stringValue }

    private func header() -> JSONValue? { PendingQueue.baseLine(of: path, in: tree) }

    /// The `{"op":"base",…}` first line a compacted log starts with, if it has one.
    static func baseLine(of path: String, in tree: FileTree? = nil) -> JSONValue? {
        guard let fd = (try? (tree ?? .containing(path)).openFile(path, flags: O_RDONLY)) ?? nil else { return nil }
        defer { close(fd) }
        let head = (try? FileSystem.read(fd: fd, offset: 0, count: 160, path: path)) ?? []
        guard let firstLine = head.split(separator: 0x0A, omittingEmptySubsequences: false).first,
              let json = try? JSONValue.parse(Array(firstLine)), json["op"]?.stringValue == "base" else { return nil }
        return json
    }

    /// Whether the log has grown enough to be worth compacting: past the
    /// threshold and twice its size after the last compaction (a long queue of
    /// real changes is not rewritten on every append).
    public var needsCompaction: Bool {
        let size = tree.fileSize(path) ?? 0
        guard size > PendingQueue.compactionThreshold else { return false }
        let base = header()?["bytes"]?.int64Value ?? 0
        return base < Int64(size) / 2
    }
}

import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

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

    /// Its line in the log, with its version (compaction keeps the numbering).
    var line: [UInt8] {
        var bytes: [UInt8] = []
        PendingQueue.appendLine(operation.rawValue, key, version: version, tag: tag, hard: hard, to: &bytes)
        return bytes
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
    /// The last replay, kept until the queue changes (confirmations reach it): sync asks for every record it touches.
    private var loaded: PendingSnapshot?
    /// Why the log cannot be trusted to hold every change, found while reading it.
    public private(set) var damage: String?
    /// `keys()`, kept until the queue changes (export asks for tabs and clips).
    private var waiting: RecordKeySet?

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
        for key in keys { PendingQueue.appendLine(operation.rawValue, key, tag: tag, hard: hard && operation == .delete, to: &lines) }
        let file = try appendFile()
        try storeOperation { try file.append(lines) }
        loaded = nil
        waiting = nil
    }

    /// A change's line in the form `PendingLogLine` defines, `{"op":…,"type":…,"id":…[,"v":N][,"tag":…][,"hard":true]}`,
    /// written from bytes (an import queues 100,000 changes, a clear confirms as many).
    package static func appendLine(
        _ op: String, _ key: RecordKey, version: Int? = nil, tag: String? = nil, hard: Bool = false,
        to lines: inout [UInt8]
    ) {
        var name = key.name
        appendLine(
            op, type: key.type, name: { lines in name.withUTF8 { JSONString.appendEscaped($0, to: &lines) } }, version: version,
            tag: tag, hard: hard, to: &lines)
    }

    /// `appendLine` for a clip, its id written from its packed form.
    package static func appendLine(_ op: String, clip id: PackedID, to lines: inout [UInt8]) {
        appendLine(op, type: .clip, name: { id.appendText(to: &$0) }, version: nil, tag: nil, hard: false, to: &lines)
    }

    /// The line's form; `name` writes the record name's escaped bytes.
    private static func appendLine(
        _ op: String, type: RecordType, name: (inout [UInt8]) -> Void, version: Int?, tag: String?, hard: Bool,
        to lines: inout [UInt8]
    ) {
        func string(_ value: String) {
            var value = value
            lines.append(0x22)
            value.withUTF8 { JSONString.appendEscaped($0, to: &lines) }
            lines.append(0x22)
        }
        lines.append(literal: #"{"op":"#)
        string(op)
        lines.append(literal: #","type":"#)
        string(type.rawValue)
        lines.append(literal: #","id":""#)
        name(&lines)
        lines.append(0x22)
        if let version {
            lines.append(literal: #","v":"#)
            lines += String(version).utf8
        }
        if let tag {
            lines.append(literal: #","tag":"#)
            string(tag)
        }
        if hard { lines.append(literal: #","hard":true"#) }
        lines.append(literal: "}\n")
    }

    /// A first line that records `bytes` as the size after the last compaction,
    /// so that a queue written in bulk is not compacted again until it doubles.
    /// It names the queue (`identity`). Padded to a fixed length, so that it can be written before the size is known.
    package static func baseLine(bytes: Int, identity: String?) -> [UInt8] {
        var line = Array(#"{"op":"base","#.utf8)
        if let identity {
            line += #""queue":""#.utf8
            var identity = identity
            identity.withUTF8 { JSONString.appendEscaped($0, to: &line) }
            line += #"","#.utf8
        }
        let size = String(bytes)
        line += #""bytes":"#.utf8
        line += size.utf8
        line += repeatElement(UInt8(ascii: " "), count: max(0, 20 - size.utf8.count))
        line += "}\n".utf8
        return line
    }

    public func enqueue(_ operation: PendingChange.Operation, _ key: RecordKey, tag: String? = nil, hard: Bool = false) throws {
        try enqueue(operation, [key], tag: tag, hard: hard)
    }

    /// Cuts a torn last line, as opening for an append does: before the log is copied elsewhere.
    package func cutTornTail() throws { _ = try appendFile() }

    /// The queue in order.
    public func changes() throws -> [PendingChange] { try loadedSnapshot().all }

    /// The queue in order as a new replay of the log finds it, kept compact (see `PendingSnapshot`).
    /// The replay kept before is let go first, so that a long queue is never held twice.
    public func snapshot() throws -> PendingSnapshot {
        loaded = nil
        let snapshot = try replayLog().snapshot()
        loaded = snapshot
        return snapshot
    }

    private func loadedSnapshot() throws -> PendingSnapshot { try loaded ?? snapshot() }

    /// The records with a waiting change, without ordering them (cheaper than `changes()`).
    public func keys() throws -> RecordKeySet {
        if let waiting { return waiting }
        let keys = try loaded?.waiting ?? waitingRecords().all() ?? waitingRecords(summarized: false).all()!
        waiting = keys
        return keys
    }

    private var summaryPath: String { PendingSummary.path(forLog: path) }

    /// The records with a waiting change, asked for one at a time (a listing of 20 entries asks for
    /// 20). A long queue is not replayed whole: its summary (`PendingSummary`) answers as far as it
    /// covers the log, and only the lines after that are replayed. Whoever replays many lines writes
    /// the summary again (without the lock: a failure, in a read-only directory, only costs speed).
    package func waitingRecords(summarized: Bool = true) throws -> WaitingRecords {
        try storeOperation {
            guard let fd = try tree.openFile(path, flags: O_RDONLY) else { return WaitingRecords(summary: nil, recent: Replay()) }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw FileSystem.fail("read", path) }
            let (size, inode) = (Int(info.st_size), UInt64(info.st_ino))
            let summary = summarized ? PendingSummary.load(summaryPath, in: tree, log: fd, inode: inode, size: size, logPath: path) : nil
            var recent = Replay(after: summary)
            let start = summary?.coveredBytes ?? 0
            let end = try recent.read(fd: fd, from: start, size: size, path: path).end
            let records = WaitingRecords(summary: summary, recent: recent)
            if end - start >= PendingSummary.rewriteAfter {
                try? records.writeSummary(to: summaryPath, in: tree, log: fd, inode: inode, logPath: path, covering: end)
            }
            return records
        }
    }

    private func replayLog() throws -> Replay {
        var replay = Replay(expectedLines: (tree.fileSize(path) ?? 0) / 80)
        let result = try storeOperation { () -> (end: Int, lines: Int, unreadable: [Int]) in
            guard let fd = try tree.openFile(path, flags: O_RDONLY) else { return (0, 0, []) }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw FileSystem.fail("read", path) }
            return try replay.read(fd: fd, from: 0, size: Int(info.st_size), path: path)
        }
        var unreadable = result.unreadable
        // Only the last line may be torn by a crash; an unreadable line before it is damage.
        if unreadable.last == result.lines { unreadable.removeLast() }
        damage =
            unreadable.isEmpty
            ? nil
            : "\(path) has \(unreadable.count) unreadable line(s) (line \(unreadable.map(String.init).joined(separator: ", ")) of \(result.lines))"
        return replay
    }

    /// The waiting change for one record, if any.
    public func change(for key: RecordKey) throws -> PendingChange? { try loadedSnapshot().change(for: key) }

    /// Starts watching the log from where it ends now (see `PendingWatch`).
    public func watch() throws -> PendingWatch {
        let file = try appendFile()
        return PendingWatch(file: file, tree: tree, end: file.size)
    }

    /// Marks the given versions as sent. A change re-enqueued after its batch
    /// was built has a higher version and stays pending. Appends only: a queue
    /// not read yet is not replayed for it (a push confirms 100,000 changes a step at a time).
    public func confirm(_ sent: [PendingChange]) throws {
        guard !sent.isEmpty else { return }
        var lines: [UInt8] = []
        for change in sent { PendingQueue.appendLine("done", change.key, version: change.version, to: &lines) }
        let file = try appendFile()
        try storeOperation { try file.append(lines) }
        if let loaded { for change in sent { loaded.confirm(change.key, version: change.version) } }
        waiting = nil
    }

    /// Forgets the waiting changes of `keys`, as if sent: for records no backend
    /// can have, whose deletion there is nothing to send. Each key's confirmation
    /// covers every version (the highest a line may carry), so the log is not replayed to find
    /// them: an eviction at `clipboard.maxEntries` costs the same at any queue length.
    public func discard(_ keys: [RecordKey]) throws {
        guard !keys.isEmpty else { return }
        let file = try appendFile()
        var lines: [UInt8] = []
        for (position, key) in keys.enumerated() {
            PendingQueue.appendLine("done", key, version: PendingLine.versions.upperBound, to: &lines)
            // Appended a piece at a time: each confirmation stands on its own.
            if lines.count >= 1 << 20 || position == keys.count - 1 {
                try storeOperation { try file.append(lines) }
                lines.removeAll(keepingCapacity: true)
            }
        }
        loaded = nil
        waiting = nil
    }

    /// Rewrites the log as the current queue, dropping deletions of records the
    /// backend never had (nothing to delete there). The queue keeps its identity
    /// unless a new one is given.
    public func compact(identity newIdentity: String? = nil, knownToBackend: (RecordKey) -> Bool) throws {
        let queue = try snapshot()
        let identity = newIdentity ?? self.identity
        // The lines a piece at a time, serialized twice (to size the header, then to write) rather
        // than held in memory: a first sync compacts a queue of every clip.
        func forEachPiece(_ body: ([UInt8]) throws -> Void) rethrows {
            for start in stride(from: 0, to: queue.count, by: 4096) {
                var piece: [UInt8] = []
                for change in queue.changes(start..<min(start + 4096, queue.count))
                where change.operation != .delete || knownToBackend(change.key) {
                    piece += change.line
                }
                try body(piece)
            }
        }
        var size = 0
        forEachPiece { size += $0.count }
        // The first line records the compacted size, so the log is compacted again only once it has doubled.
        let header = PendingQueue.baseLine(bytes: size, identity: identity)
        try storeOperation {
            try tree.writeAtomically(path) { write in
                try write(header)
                try forEachPiece(write)
            }
        }
        file = nil
        loaded = nil
        damage = nil
        waiting = nil
    }

    /// The name compaction gave this log (its first line), nil when it has none:
    /// a log created from scratch after the old one was lost has none.
    public var identity: String? { header()?.queue }

    private func header() -> PendingLogLine? { PendingQueue.baseLine(of: path, in: tree) }

    /// The `{"op":"base",…}` first line a compacted log starts with, if it has one.
    static func baseLine(of path: String, in tree: FileTree? = nil) -> PendingLogLine? {
        guard let fd = (try? (tree ?? .containing(path)).openFile(path, flags: O_RDONLY)) ?? nil else { return nil }
        defer { close(fd) }
        return baseLine(fd: fd, path: path)
    }

    private static func baseLine(fd: Int32, path: String) -> PendingLogLine? {
        let head = (try? FileSystem.read(fd: fd, offset: 0, count: 160, path: path)) ?? []
        guard let firstLine = head.split(separator: 0x0A, omittingEmptySubsequences: false).first,
            let json = try? JSONValue.parse(firstLine), let line = try? JSONCoding.decode(PendingLogLine.self, from: json),
            line.op == "base"
        else { return nil }
        return line
    }

    /// Whether the log has grown enough to be worth compacting: past the
    /// threshold and twice its size after the last compaction (a long queue of
    /// real changes is not rewritten on every append).
    public var needsCompaction: Bool {
        // Asked after each append (`clip add`): the log this run appended to is read through its open descriptor.
        let size = file?.size ?? tree.fileSize(path) ?? 0
        guard size > PendingQueue.compactionThreshold else { return false }
        let base = (file.map { PendingQueue.baseLine(fd: $0.fd, path: path) } ?? header())?.bytes ?? 0
        return base < Int64(size) / 2
    }
}

/// A record key as replay keeps it: clip ids packed.
enum ReplayKey: Hashable {
    case clip(PackedID)
    case other(RecordKey)

    init(_ key: RecordKey) {
        if key.type == .clip, let packed = PackedID(canonical: key.name) { self = .clip(packed) } else { self = .other(key) }
    }

    var recordKey: RecordKey {
        switch self {
        case .clip(let id): return RecordKey(.clip, id.string)
        case .other(let key): return key
        }
    }
}

/// A set of record keys with clip ids packed (a queue may hold 100,000 of them).
public struct RecordKeySet {
    var clips = PackedIDSet()
    var others = Set<RecordKey>()

    init() {}

    init(_ keys: [RecordKey]) {
        for key in keys { insert(ReplayKey(key)) }
    }

    mutating func insert(_ key: ReplayKey) {
        switch key {
        case .clip(let id): clips.insert(id)
        case .other(let key): others.insert(key)
        }
    }

    public func contains(_ key: RecordKey) -> Bool {
        switch ReplayKey(key) {
        case .clip(let id): return clips.contains(id)
        case .other(let key): return others.contains(key)
        }
    }

    func contains(clip id: PackedID) -> Bool { clips.contains(id) }
}

/// One line of the pending log. The form itsypad writes,
/// `{"op":"…","type":"…","id":"…"[,"v":N][,"tag":"…"][,"hard":true]}`, is read
/// from its bytes; anything else goes through `PendingLogLine`. nil for a line
/// that is not of that type (damage, or a torn tail).
struct PendingLine: Equatable {
    var op: String
    /// nil for a line that names no record (the base line).
    var key: ReplayKey?
    var version: Int?
    var tag: String?
    var hard = false

    /// Versions count enqueues: anything beyond 2^53 is damage, and would overflow.
    static let versions = 0...(1 << 53)

    init?(_ line: ArraySlice<UInt8>) {
        if let fast = line.withUnsafeBufferPointer(PendingLine.canonical) {
            self = fast
            return
        }
        self.init(decoding: line)
    }

    /// The line read by the Codable type only (the fast reader's reference).
    init?(decoding line: ArraySlice<UInt8>) {
        guard let json = try? JSONValue.parse(line), let parsed = try? JSONCoding.decode(PendingLogLine.self, from: json) else {
            return nil
        }
        op = parsed.op
        if let type = parsed.type.flatMap(RecordType.init(rawValue:)), let id = parsed.id {
            key = ReplayKey(RecordKey(type, id))
        }
        version = parsed.v.flatMap { PendingLine.versions.contains(Int($0)) ? Int($0) : nil }
        tag = parsed.tag
        hard = parsed.hard == true
    }

    private init(op: String, key: ReplayKey, version: Int?, tag: String?, hard: Bool) {
        self.op = op
        self.key = key
        self.version = version
        self.tag = tag
        self.hard = hard
    }

    private static func canonical(_ line: UnsafeBufferPointer<UInt8>) -> PendingLine? {
        var reader = FixedFormReader(line)
        func text(_ bytes: UnsafeBufferPointer<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }
        guard reader.skip(#"{"op":""#), let opName = reader.plainString(), let op = operation(opName),
            reader.skip(#"","type":""#), let typeName = reader.plainString(), let type = recordType(typeName),
            reader.skip(#"","id":""#), let id = reader.plainString()
        else { return nil }
        reader.position += 1
        var version: Int?
        if reader.skip(#","v":"#) {
            guard let value = reader.integer(), versions.contains(Int(value)) else { return nil }
            version = Int(value)
        }
        var tag: String?
        if reader.skip(#","tag":""#) {
            guard let bytes = reader.plainString() else { return nil }
            tag = text(bytes)
            reader.position += 1
        }
        let hard = reader.skip(#","hard":true"#)
        guard reader.position + 1 == line.count, reader.current == UInt8(ascii: "}") else { return nil }
        let key: ReplayKey
        if type == .clip, let packed = PackedID(canonicalUTF8: id) {
            key = .clip(packed)
        } else {
            key = .other(RecordKey(type, text(id)))
        }
        return PendingLine(op: op, key: key, version: version, tag: tag, hard: hard)
    }

    /// The type a name spells. The clip type is compared as bytes first: a queue of 100,000 clips names it 100,000 times.
    private static func recordType(_ name: UnsafeBufferPointer<UInt8>) -> RecordType? {
        var clip = RecordType.clip.rawValue
        let isClip = clip.withUTF8 { $0.count == name.count && memcmp($0.baseAddress!, name.baseAddress!, name.count) == 0 }
        return isClip ? .clip : RecordType(rawValue: String(decoding: name, as: UTF8.self))
    }

    private static func operation(_ name: UnsafeBufferPointer<UInt8>) -> String? {
        for operation: StaticString in ["save", "delete", "done", "base"]
        where operation.utf8CodeUnitCount == name.count && memcmp(operation.utf8Start, name.baseAddress!, name.count) == 0 {
            return operation.description
        }
        return nil
    }
}

/// The records queued in the log after a moment: a run that lets go of the lock (a sync, around
/// backend calls and between steps) learns which records other commands changed meanwhile without
/// reading them, since every local change queues its record before it is stored. The log stays
/// open, so a log put in its place (a compaction, an import) is told from it by its inode, which
/// cannot be reused while open; lines are only ever appended to the same file.
public final class PendingWatch {
    private let file: AppendFile
    private let tree: FileTree
    /// Where the lines read so far end (a line boundary).
    private var end: Int
    private var queued = Set<RecordKey>()
    private var replaced = false

    init(file: AppendFile, tree: FileTree, end: Int) {
        self.file = file
        self.tree = tree
        self.end = end
    }

    /// The records saved or deleted in lines appended since the watch began; nil when the log was
    /// replaced since, or holds a line that cannot be read, either of which could hide one.
    public func queuedSince() throws -> Set<RecordKey>? {
        guard !replaced else { return nil }
        let path = file.path
        let size = file.size
        guard try storeOperation({ try tree.status(path) })?.inode == file.inode, size >= end else {
            replaced = true
            return nil
        }
        try storeOperation {
            try FileSystem.forEachLine(fd: file.fd, from: end, size: size, path: path) { offset, line in
                end = offset + line.count + 1
                guard let parsed = PendingLine(line) else { return replaced = true }
                if parsed.op != "done", let key = parsed.key { queued.insert(key.recordKey) }
            }
        }
        return replaced ? nil : queued
    }
}

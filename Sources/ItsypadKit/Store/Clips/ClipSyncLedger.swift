import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// What this device knows about each clip's version on the backend
/// (`sync/clips.log`): its change tag, pinned state and pin history, and a pin
/// change made here that is still to be sent. Kept apart from the clipboard
/// history because the history is the user's data and this is sync bookkeeping;
/// an entry outlives a local removal until the deletion has been sent, so that a
/// lost queue can still be rebuilt.
///
/// An append-only log of JSON lines, each starting with the clip's id so that
/// looking up a few clips reads the file without decoding every line; the last
/// line for an id wins. Rewritten once it has doubled since the last rewrite, if at least half
/// its lines are superseded.
public final class ClipSyncLedger {
    public struct Entry: Equatable, Sendable {
        /// The synced version's change tag; nil when never synced.
        public var tag: String?
        /// The synced version's pinned state; nil when never synced.
        public var pinned: Bool?
        /// The pin changes the synced version includes.
        public var history = EditHistory()
        /// A pin change made here and not sent yet.
        public var change: HybridTimestamp?

        public init(tag: String? = nil, pinned: Bool? = nil, history: EditHistory = EditHistory(), change: HybridTimestamp? = nil) {
            self.tag = tag
            self.pinned = pinned
            self.history = history
            self.change = change
        }

        /// The pin changes the local version includes: the synced ones and the one waiting.
        /// A change stamped by a clock that went back is placed just after this device's
        /// previous one, the same way on every run.
        public var localHistory: EditHistory {
            guard let change else { return history }
            if let previous = history.clock(of: change.device), previous >= change {
                return history.recording(HybridTimestamp(physical: previous.physical, counter: previous.counter + 1, device: change.device))
            }
            return history.recording(change)
        }
    }

    public let path: String
    /// The data directory the ledger lives in (see `FileTree`).
    private let tree: FileTree
    private var file: AppendFile?
    /// The size at which `compactIfGrown` last found the log not worth rewriting.
    private var keptAt: Int64 = 0
    /// The clips the log names, as far as it was read (see `NamedClips`).
    private(set) var named: NamedClips?

    /// The clips the log's lines name, in a filter (`PackedIDFilter`), and where its reading
    /// stopped: lines appended since, by this run or another, are read on from there. A push asks
    /// for the entries of each batch, and a first push's clips have none: the log is not read for them.
    package struct NamedClips {
        var ids: PackedIDFilter
        var lines = 0
        var end = 0
        let inode: UInt64
    }

    /// `named`: what a ledger opened before on the same file read of it.
    init(path: String, tree: FileTree? = nil, named: NamedClips? = nil) {
        self.path = path
        self.tree = tree ?? .containing(path)
        self.named = named
    }

    // MARK: Reading

    /// Every entry (a full read: for rebuilding the queue and finding deletions after a full fetch).
    public func all() throws -> [String: Entry] {
        try read(wanted: nil)
    }

    /// The entries of the given clips, reading the file without decoding other lines: a push asks
    /// for every batch, so a line of another clip costs its id's packing and one lookup.
    public func entries(_ ids: Set<String>) throws -> [String: Entry] {
        guard !ids.isEmpty else { return [:] }
        let named = try namedClips().ids
        var wanted = PackedIDSet(minimumCapacity: ids.count)
        for id in ids { if let packed = PackedID(id), named.mayContain(packed) { wanted.insert(packed) } }
        guard !wanted.isEmpty else { return [:] }
        return try read(wanted: wanted)
    }

    /// `named`, brought up to date: read on from where it stopped, or anew when the log was replaced
    /// or the filter is full.
    private func namedClips() throws -> NamedClips {
        try storeOperation {
            guard let fd = try tree.openFile(path, flags: O_RDONLY) else {
                named = nil
                return NamedClips(ids: PackedIDFilter(capacity: 0), inode: 0)
            }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw FileSystem.fail("read", path) }
            let (size, inode) = (Int(info.st_size), UInt64(info.st_ino))
            var clips = named ?? NamedClips(ids: PackedIDFilter(capacity: 0), inode: inode)
            // Let go here, so that the filter is changed in place and a full one is not held beside the next.
            named = nil
            if clips.inode != inode || clips.end > size || clips.ids.isFull {
                // Room for the lines there are (about 100 bytes each), twice over: a growing log is read whole again rarely.
                let capacity = 2 * max(clips.ids.count, size / 100)
                // The full filter goes before the larger one is made, so that the two are never held together.
                clips = NamedClips(ids: PackedIDFilter(capacity: 0), inode: inode)
                clips.ids = PackedIDFilter(capacity: capacity)
            }
            try FileSystem.forEachLine(fd: fd, from: clips.end, size: size, path: path) { offset, line in
                clips.lines += 1
                clips.end = offset + line.count + 1
                if let id = Self.idBytes(of: line)?.withUnsafeBufferPointer(PackedID.init(canonicalUTF8:)) { clips.ids.insert(id) }
            }
            named = clips
            return clips
        }
    }

    private static let idPrefix = Array("{\"id\":\"".utf8)
    private static let idLength = 36

    private func read(wanted: PackedIDSet?) throws -> [String: Entry] {
        var entries: [String: Entry] = [:]
        try storeOperation {
            try tree.forEachLine(path) { _, line in
                guard let idBytes = Self.idBytes(of: line) else { return }
                if let wanted {
                    guard let packed = idBytes.withUnsafeBufferPointer(PackedID.init(canonicalUTF8:)), wanted.contains(packed) else {
                        return
                    }
                }
                let id = String(decoding: idBytes, as: UTF8.self)
                // A line that does not parse is skipped: at worst a clip is sent again without its tag,
                // which the backend answers with its version.
                guard let parsed = try? JSONCoding.decode(ClipLedgerLine.self, from: Array(line)) else { return }
                Self.apply(parsed, id: id, to: &entries)
            }
        }
        return entries
    }

    /// The bytes of the id a line starts with; nil for a line that names none (the base line).
    private static func idBytes(of line: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard line.count > idPrefix.count + idLength, line.starts(with: idPrefix) else { return nil }
        return line[(line.startIndex + idPrefix.count)...].prefix(idLength)
    }

    private static func apply(_ line: ClipLedgerLine, id: String, to entries: inout [String: Entry]) {
        switch line.op {
        case "set":
            entries[id] = Entry(
                tag: line.tag, pinned: line.pinned, history: line.history.flatMap(EditHistory.init(strings:)) ?? EditHistory(),
                change: line.change.flatMap(HybridTimestamp.init))
        case "change":
            guard let clock = line.change.flatMap(HybridTimestamp.init) else { return }
            entries[id, default: Entry()].change = clock
        case "rm":
            entries[id] = nil
        default:
            return
        }
    }

    // MARK: Writing

    /// Stores entries as they are.
    public func set(_ entries: [(id: String, entry: Entry)]) throws {
        try append(entries.map { Self.line(id: $0.id, $0.entry) })
    }

    /// Records pin changes made here, to be sent.
    public func recordChange(ids: [String], clock: HybridTimestamp) throws {
        try append(ids.map { ClipLedgerLine(id: $0, op: "change", change: clock.description) })
    }

    /// Forgets clips the backend no longer has.
    public func forget(_ ids: [String]) throws {
        try append(ids.map { ClipLedgerLine(id: $0, op: "rm") })
    }

    /// Forgets everything (the backend was replaced).
    public func reset() throws {
        try storeOperation {
            try tree.remove(path)
            file = nil
        }
    }

    private static func line(id: String, _ entry: Entry) -> ClipLedgerLine {
        ClipLedgerLine(
            id: id, op: "set", tag: entry.tag, pinned: entry.pinned, history: entry.history.strings, change: entry.change?.description)
    }

    /// The lines as the log holds them, one JSON object each.
    static func serialized(_ lines: [ClipLedgerLine]) throws -> [UInt8] {
        var bytes: [UInt8] = []
        for line in lines {
            bytes += try JSONCoding.encodeValue(line, keys: .asEncoded).serializedBytes()
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }

    private func append(_ lines: [ClipLedgerLine]) throws {
        guard !lines.isEmpty else { return }
        let bytes = try Self.serialized(lines)
        try storeOperation {
            if file == nil { file = try AppendFile(path: path, in: tree) }
            try file!.append(bytes)
        }
        try compactIfGrown()
    }

    // MARK: Compaction

    /// Rewrites the log once it has doubled since the last rewrite (whose size its first line
    /// records) or since this ledger last found it not worth rewriting: when at least half its lines
    /// are superseded. A first sync writes one line a clip, which a rewrite would only copy, holding
    /// every entry in memory to do it.
    private func compactIfGrown() throws {
        let size = Int64(tree.fileSize(path) ?? 0)
        guard size > 1 << 20 else { return }
        let base = max(PendingQueue.baseLine(of: path, in: tree)?.bytes ?? 0, keptAt)
        guard base < size / 2 else { return }
        guard try mostlySuperseded() else {
            keptAt = size
            return
        }
        let lines = try Self.serialized(try all().sorted { $0.key < $1.key }.map { Self.line(id: $0.key, $0.value) })
        let header = try Self.serialized([ClipLedgerLine(op: "base", bytes: Int64(lines.count))])
        try storeOperation {
            try tree.writeAtomically(path, header + lines)
            file = nil
        }
    }

    /// Whether the log names at most half as many clips as it has lines.
    private func mostlySuperseded() throws -> Bool {
        let named = try namedClips()
        return 2 * named.ids.count <= named.lines
    }
}

import ItsypadModel
import ItsypadSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The name of one write of a tab file (its `stamp` key): random for the process, then a count, so
/// that no two writes, here or in any other process, share one (two `getrandom` calls a process, not a write).
enum TabStamp {
    private static let state = Mutex<(seed: String, count: UInt64)?>(nil)

    static func make() -> String {
        state.withLock { state in
            if state == nil {
                var generator = SystemRandomNumberGenerator()
                var bytes: [UInt8] = []
                for _ in 0..<2 { withUnsafeBytes(of: generator.next() as UInt64) { bytes += $0 } }
                state = (Hex.encode(Array(bytes.prefix(12))), 0)
            }
            state!.count += 1
            return state!.seed + String(state!.count, radix: 16)
        }
    }
}

/// The tags this device's pushes were accepted with, kept out of the tab files (`sync/tab-tags`
/// and `sync/tab-tags.log`): acceptance appends an entry a tab, `{"id","stamp","tag","clock"}`
/// (and `ancestor` when the file holds another content than the version sent), and writes no tab file.
/// An entry is the tab's `sync` only while its stamp is the one its file holds (see ``TabStamp``):
/// a tab written again carries its own `sync`, and the entry is dead.
///
/// The log takes a step's entries with one `fdatasync`; once a push finishes, or the log outgrows
/// its bound, it is merged into the table (one line an id, sorted by id, replaced atomically), where
/// one tab's entry is found by binary search. Both are JSON lines starting with the tab's id. A line
/// that does not parse, a torn or missing file, a table out of order: at worst a tab looks never
/// synced, is sent again without its tag, and comes back as the backend's own version.
package final class TabTagStore {
    package struct Entry: Equatable, Sendable {
        package var stamp: String
        package var tag: String
        /// The version sent's content, when the file holds another (an edit made while it was on its way).
        package var ancestor: String?
        package var clock: String?

        package init(stamp: String, tag: String, ancestor: String? = nil, clock: String?) {
            self.stamp = stamp
            self.tag = tag
            self.ancestor = ancestor
            self.clock = clock
        }
    }

    /// One line of the store: the Codable type is its definition and its reader.
    struct Line: Codable, Equatable {
        var id: String
        var stamp: String
        var tag: String
        var clock: String?
        var ancestor: String?

        /// `JSONCoding.encodeValue(self, keys: .asEncoded).serializedBytes()`, written by hand: a push
        /// appends one a tab, and the encoder cost about 30,000 instructions each.
        func append(to bytes: inout [UInt8]) {
            bytes += #"{"id":"#.utf8
            JSONValue.writeString(id, to: &bytes)
            bytes += #","stamp":"#.utf8
            JSONValue.writeString(stamp, to: &bytes)
            bytes += #","tag":"#.utf8
            JSONValue.writeString(tag, to: &bytes)
            if let clock {
                bytes += #","clock":"#.utf8
                JSONValue.writeString(clock, to: &bytes)
            }
            if let ancestor {
                bytes += #","ancestor":"#.utf8
                JSONValue.writeString(ancestor, to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// The sorted table, and the log of entries appended since it was written.
    package let table: String
    package let log: String
    private let tree: FileTree
    private var file: AppendFile?
    /// Reads of the log stop at this many bytes (nil: at its end).
    private let logLimit: Int?

    package init(table: String, log: String, tree: FileTree, logLimit: Int? = nil) {
        self.table = table
        self.log = log
        self.tree = tree
        self.logLimit = logLimit
    }

    /// The same store, its log read only up to `bytes`: a push looks up none of the tabs whose
    /// entries it appended itself (see `TabRecords.sender`).
    package func readingLog(upTo bytes: Int) -> TabTagStore {
        TabTagStore(table: table, log: log, tree: tree, logLimit: bytes)
    }

    /// The log's size in bytes (0 when there is none).
    package var logSize: Int { tree.fileSize(log) ?? 0 }

    // MARK: Reading

    /// The entries of `ids` (tab ids, lowercase): the log read through, the table searched for each
    /// id the log lacks. A log line's id is compared packed (no `String` a line: a push reads the log
    /// for every group of tabs it sends).
    package func entries(_ ids: some Collection<String>) -> [String: Entry] {
        guard !ids.isEmpty else { return [:] }
        let wanted = Set(ids)
        let packed = Set(ids.compactMap(PackedID.init(canonical:)))
        var found: [String: Entry] = [:]
        // The log first, then the table: a merge between the two reads moves the log's entries into
        // the table before removing the log, so they are seen in one or the other.
        forEachLine(log) { idBytes, line in
            guard let key = PackedID(canonicalUTF8: UnsafeBufferPointer(rebasing: idBytes)), packed.contains(key) else { return }
            let id = String(decoding: idBytes, as: UTF8.self)
            if wanted.contains(id), let entry = Self.entry(line) { found[id] = entry }
        }
        withTable { bytes in
            for id in wanted where found[id] == nil {
                if let line = Self.search(bytes, for: Array(id.utf8)), let entry = Self.entry(line) { found[id] = entry }
            }
        }
        return found
    }

    /// Every entry (for reading every tab).
    package func all() -> [String: Entry] {
        var found: [String: Entry] = [:]
        var fromLog: Set<String> = []
        forEachLine(log) { idBytes, line in
            let id = String(decoding: idBytes, as: UTF8.self)
            if let entry = Self.entry(line) {
                found[id] = entry
                fromLog.insert(id)
            }
        }
        forEachLine(table) { idBytes, line in
            let id = String(decoding: idBytes, as: UTF8.self)
            if !fromLog.contains(id), let entry = Self.entry(line) { found[id] = entry }
        }
        return found
    }

    private static let idPrefix = Array("{\"id\":\"".utf8)
    private static let idLength = 36

    /// The id a line starts with; nil for a line that names none.
    private static func idBytes(_ line: UnsafeBufferPointer<UInt8>.SubSequence) -> UnsafeBufferPointer<UInt8>.SubSequence? {
        guard line.count > idPrefix.count + idLength, line.starts(with: idPrefix) else { return nil }
        return line[(line.startIndex + idPrefix.count)...].prefix(idLength)
    }

    private static func entry(_ line: some Collection<UInt8>) -> Entry? {
        guard let parsed = try? JSONCoding.decode(Line.self, from: Array(line)) else { return nil }
        return Entry(stamp: parsed.stamp, tag: parsed.tag, ancestor: parsed.ancestor, clock: parsed.clock)
    }

    /// Each complete line that names an id, with the id's bytes; nothing for a file that cannot be
    /// read. The log is read, not mapped: its writer cuts a torn tail (`AppendFile`), which would
    /// fault a mapping.
    private func forEachLine(
        _ path: String, _ body: (UnsafeBufferPointer<UInt8>.SubSequence, UnsafeBufferPointer<UInt8>.SubSequence) -> Void
    ) {
        func lines(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let base = bytes.baseAddress else { return }
            var start = 0
            while let found = memchr(base + start, 0x0A, bytes.count - start) {
                let newline = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                let line = bytes[start..<newline]
                if let id = Self.idBytes(line) { body(id, line) }
                start = newline + 1
            }
        }
        if path == table { return withTable(lines) }
        guard let bytes = logLimit.map(readLog(upTo:)) ?? (try? tree.read(path)) ?? nil else { return }
        bytes.withUnsafeBufferPointer(lines)
    }

    /// The log's first `count` bytes (fewer when it is shorter); nil when it cannot be read.
    private func readLog(upTo count: Int) -> [UInt8]? {
        guard count > 0, let fd = (try? tree.openFile(log, flags: O_RDONLY)) ?? nil else { return nil }
        defer { close(fd) }
        return try? FileSystem.read(fd: fd, offset: 0, count: count, path: log)
    }

    /// The table's bytes, mapped (itsypad only replaces it whole, by a rename; a file cut short by
    /// anything else reads as zeros past its end, see `MappedFile`); nothing for a missing, empty or
    /// unreadable file.
    private func withTable(_ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        guard let fd = (try? tree.openFile(table, flags: O_RDONLY)) ?? nil else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, let mapped = MappedFile.map(fd: fd, count: Int(info.st_size)) else { return }
        withExtendedLifetime(mapped) { body(mapped.bytes) }
    }

    /// The table's line for `id`, by binary search over its lines (sorted by id). Lines are found
    /// with pointers and `memchr`, ids compared with `memcmp`: a push looks up every tab it sends.
    private static func search(_ bytes: UnsafeBufferPointer<UInt8>, for id: [UInt8]) -> UnsafeBufferPointer<UInt8>.SubSequence? {
        guard let base = bytes.baseAddress, !id.isEmpty else { return nil }
        // Lines starting in lower..<upper are still to be searched; `lower` is always a line's start.
        var lower = 0
        var upper = bytes.count
        while lower < upper {
            var start = (lower + upper) / 2
            while start > lower, base[start - 1] != 0x0A { start -= 1 }
            guard let newline = memchr(base + start, 0x0A, bytes.count - start) else { return nil }
            let end = base.distance(to: newline.assumingMemoryBound(to: UInt8.self))
            let line = bytes[start..<end]
            guard let found = idBytes(line) else { return nil }
            let order = id.withUnsafeBytes { wanted in
                let common = memcmp(base + found.startIndex, wanted.baseAddress!, min(found.count, wanted.count))
                return common != 0 ? Int(common) : found.count - wanted.count
            }
            if order == 0 { return line }
            if order < 0 { lower = end + 1 } else { upper = start }
        }
        return nil
    }

    // MARK: Writing

    /// Appends entries, durable when it returns (one write and one `fdatasync`).
    package func append(_ entries: [(id: String, entry: Entry)]) throws {
        guard !entries.isEmpty else { return }
        var bytes: [UInt8] = []
        for (id, entry) in entries {
            Line(id: id.lowercased(), stamp: entry.stamp, tag: entry.tag, clock: entry.clock, ancestor: entry.ancestor).append(to: &bytes)
            bytes.append(0x0A)
        }
        try storeOperation {
            if file == nil {
                let created = !tree.exists(log)
                file = try AppendFile(path: log, in: tree)
                // The log's name must outlive a crash as its lines do.
                if created { try tree.syncDirectory(FileSystem.directoryName(log)) }
            }
            try file!.append(bytes)
        }
    }

    /// Whether the log has outgrown its bound while a push accepts: the table's size, at least
    /// 256 KiB (a reader of a few tabs reads it through; a merge rewrites the table, so the table
    /// at least doubles between two merges, and a push of n tabs rewrites about 2n entries in all).
    package var logIsLarge: Bool {
        let size = tree.fileSize(log) ?? 0
        return size > max(256 << 10, tree.fileSize(table) ?? 0)
    }

    /// Whether the log is worth merging once a push ends: more than about a hundred entries. A push of a
    /// few edited tabs leaves them in the log rather than rewriting a table of every tab.
    package var logIsWorthMerging: Bool { (tree.fileSize(log) ?? 0) > 16 << 10 }

    /// Merges the log into the table: one line an id (the last), sorted, entries of tabs without a
    /// file (`live` false) dropped; the table replaced atomically, then the log removed.
    package func merge(keeping live: (String) -> Bool) throws {
        guard tree.fileSize(log) != nil else { return }
        var lines: [String: [UInt8]] = [:]
        forEachLine(table) { id, line in lines[String(decoding: id, as: UTF8.self)] = Array(line) }
        forEachLine(log) { id, line in lines[String(decoding: id, as: UTF8.self)] = Array(line) }
        var bytes: [UInt8] = []
        for (id, line) in lines.sorted(by: { $0.key < $1.key }) where live(id) {
            bytes += line
            bytes.append(0x0A)
        }
        try storeOperation {
            try tree.writeAtomically(table, bytes)
            file = nil
            try tree.remove(log)
        }
    }

    /// Forgets every entry (the backend was replaced).
    package func reset() throws {
        try storeOperation {
            file = nil
            try tree.remove(log)
            try tree.remove(table)
        }
    }
}

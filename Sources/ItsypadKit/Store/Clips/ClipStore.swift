import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A live entry without its text.
public struct ClipSummary: Equatable, Sendable {
    public let id: String
    public let timestamp: Milliseconds
    public let pinned: Bool
    /// Kept on this device: its removal is not sent either.
    public let localOnly: Bool

    init(_ slot: ClipSlot) {
        id = slot.idString
        timestamp = slot.timestamp
        pinned = slot.isPinned
        localOnly = slot.flags & ClipSlot.localOnly != 0
    }
}

/// The clipboard history.
///
/// `clips/log` is the source of truth: an append-only log, one JSON object a
/// line (`add` with the entry, `rm`, `pin`), each change committed by append +
/// fdatasync. `clips/index` is a derived cache of fixed-size slots sorted by
/// time, so that `clip add` and `clip ls --limit N` touch a few slots instead of
/// the whole history: their cost stays flat as the history grows. The log is
/// compacted (rewritten atomically with only live entries) once dead lines
/// outnumber live ones, which keeps the amortised cost per change constant.
///
/// A binary entry's bytes are the file `blobs/<id>`, written (atomically, 0600) before the
/// line that adds the entry and removed once the line that removes it is durable; its add line
/// describes them (type, size, digest, an image's pixels), so that listing never opens it. A file
/// there that no live entry owns (what a crash between the two left) is removed whenever the
/// index is rebuilt or the log compacted.
///
/// A change is committed by its log line. What follows (erasing a removed text, the index, compaction)
/// is redone from the log by the next open when it fails: such a failure is a warning, the change stands,
/// and the store is `unfinished` (its owner opens it again).
public final class ClipStore {
    public let directory: String
    /// The data directory the history lives in (see `FileTree`).
    let tree: FileTree
    private(set) var log: AppendFile
    private(set) var index: ClipIndexFile
    /// Where a failure after a committed change is reported.
    private let warn: (String) -> Void
    /// Set when the work after a committed change failed: this instance must not be used again.
    public private(set) var unfinished = false
    /// The slots where the last `live(ids:)` found its entries: the next one reads outward from them.
    package var lookupStart = 0..<0

    var logPath: String { DataDirectoryLayout.clipLog(in: directory) }
    var indexPath: String { DataDirectoryLayout.clipIndex(in: directory) }
    var blobDirectory: String { DataDirectoryLayout.clipBlobs(in: directory) }
    func blobPath(_ id: String) -> String { blobDirectory + "/" + id }

    init(directory: String, tree: FileTree? = nil, warn: @escaping (String) -> Void = { _ in }) throws {
        let tree = tree ?? FileTree(root: directory)
        self.directory = directory
        self.tree = tree
        self.warn = warn
        try storeOperation { try tree.makeDirectory(directory) }
        let log = try storeOperation { try AppendFile(path: DataDirectoryLayout.clipLog(in: directory), in: tree) }
        self.log = log
        var erased = true
        var rebuilt = false
        index = try storeOperation {
            let current = try ClipIndexFile.open(path: DataDirectoryLayout.clipIndex(in: directory), in: tree)
            if let current, current.header.logSize == UInt64(log.size), current.header.logInode == ClipStore.inode(of: log) {
                return current
            }
            let built = try ClipStore.buildIndex(log: log, directory: directory, in: tree)
            rebuilt = true
            erased = built.erased
            return built.index
        }
        if !erased { try storeOperation { try compact() } } else if rebuilt { try storeOperation { try removeOrphanedBlobs() } }
    }

    /// Runs `body` over the index; when a slot turns out not to describe an entry of the log,
    /// the index (a cache) is rebuilt from the log and `body` runs again.
    func checkingIndex<T>(_ body: () throws -> T) throws -> T {
        do {
            return try storeOperation(body)
        } catch is ClipIndexFile.Damaged {
            try storeOperation { try rebuildIndex() }
            return try storeOperation(body)
        }
    }

    static func inode(of file: AppendFile) -> UInt64 {
        var info = stat()
        return fstat(file.fd, &info) == 0 ? UInt64(info.st_ino) : 0
    }

    private func logInode() -> UInt64 { ClipStore.inode(of: log) }

    /// Runs the work that follows a change committed to the log. The next open redoes it (the index
    /// no longer matches the log), so its failure is reported as a warning and the change stands.
    private func finishCommitted(_ body: () throws -> Void) {
        do { try body() } catch {
            unfinished = true
            // The error's own words: a full disk's "nothing was changed" does not hold here.
            let reason = (error as? FileSystemError)?.description ?? ItsypadError.wrapping(error).message
            warn("the change was made, but \(reason); the next command finishes that")
        }
    }

    // MARK: Reading

    public var count: Int { Int(index.header.liveCount) }

    /// The live local-only entries (found through the index; only they are read).
    public func localOnlyEntries() throws -> [ClipEntry] {
        try checkingIndex {
            var entries: [ClipEntry] = []
            try forEachSlot { _, slot in if slot.isLive && slot.flags & ClipSlot.localOnly != 0 { entries.append(try entry(slot)) } }
            return entries
        }
    }

    /// Live entries, newest first, stopping after `limit` matches.
    public func entries(limit: Int? = nil, pinnedOnly: Bool = false, matching: ((ClipEntry) -> Bool)? = nil) throws -> [ClipEntry] {
        var result: [ClipEntry] = []
        try forEachEntry(limit: limit, pinnedOnly: pinnedOnly, matching: matching) { result.append($0) }
        return result
    }

    /// Streams live entries newest first, so that listing 100,000 of them needs no list in memory.
    public func forEachEntry(
        limit: Int? = nil, pinnedOnly: Bool = false, matching: ((ClipEntry) -> Bool)? = nil,
        _ body: (ClipEntry) throws -> Void
    ) throws {
        try checkingIndex {
            var count = 0
            try forEachSlotNewestFirst { _, slot in
                guard slot.isLive, !pinnedOnly || slot.isPinned else { return true }
                let entry = try self.entry(slot)
                if matching?(entry) ?? true {
                    try body(entry)
                    count += 1
                }
                return limit.map { count < $0 } ?? true
            }
        }
    }

    /// Walks slots from the newest, reading the index in small chunks.
    private func forEachSlotNewestFirst(_ body: (Int, ClipSlot) throws -> Bool) throws {
        var end = Int(index.header.slotCount)
        var chunk = 64
        while end > 0 {
            let start = max(0, end - chunk)
            for (offset, slot) in try index.slots(start..<end).enumerated().reversed() {
                if try !body(start + offset, slot) { return }
            }
            end = start
            chunk = min(chunk * 4, 16384)
        }
    }

    func entry(_ slot: ClipSlot) throws -> ClipEntry { try ClipStore.entry(slot, logFD: log.fd, logPath: logPath) }

    /// The entry a slot points to. A slot that does not point to its own add line is a damaged index.
    static func entry(_ slot: ClipSlot, logFD: Int32, logPath: String) throws -> ClipEntry {
        let bytes = try FileSystem.read(fd: logFD, offset: Int(slot.offset), count: Int(slot.length), path: logPath)
        guard let json = try? JSONValue.parse(bytes), json["op"]?.stringValue == "add",
            json["id"]?.stringValue.flatMap { PackedID($0) } == slot.id,
            let text = json["text"]?.stringValue, case let binary = binary(in: json), binary != nil || json["type"] == nil
        else {
            throw ClipIndexFile.Damaged()
        }
        let local = json["local"]?.stringValue.map { LocalOnlyReason(rawValue: $0) ?? .requested }
        return ClipEntry(
            id: slot.idString, text: text, timestamp: slot.timestamp, pinned: slot.isPinned, localOnly: local, binary: binary)
    }

    /// The binary entry an add line describes (parsed whole); nil when it describes none, or does not say all of it.
    static func binary(in line: JSONValue) -> ClipBinary? {
        guard let type = line["type"]?.stringValue, let size = line["size"]?.int64Value, let sha256 = line["sha256"]?.stringValue
        else { return nil }
        return ClipBinary(
            type: type, size: Int(size), sha256: sha256, width: line["width"]?.int64Value.map(Int.init),
            height: line["height"]?.int64Value.map(Int.init))
    }

    /// The bytes of `entry`: a text's UTF-8, or a binary entry's file, checked against its line.
    public func bytes(of entry: ClipEntry) throws -> [UInt8] {
        guard let binary = entry.binary else { return Array(entry.text.utf8) }
        var bytes: [UInt8] = []
        do {
            try blobReader().read(id: entry.id, size: binary.size, digest: binary.sha256.utf8, into: &bytes)
        } catch let error as UnreadableClipBytes {
            throw ItsypadError.failure(error.message)
        }
        return bytes
    }

    /// A reader of binary entries' bytes, `blobs/` opened once (an export reads every image's).
    /// A directory that cannot be opened leaves each read to fail on its own.
    package func blobReader() -> BlobReader {
        do { return BlobReader(directory: try tree.directory(blobDirectory), failure: nil) } catch {
            return BlobReader(directory: nil, failure: error)
        }
    }

    /// Reads binary entries' files from `blobs/` (see `blobReader`).
    package struct BlobReader {
        fileprivate let directory: FileTree.OpenDirectory?
        /// Why `blobs/` could not be opened.
        fileprivate let failure: (any Error)?

        /// Reads the bytes of the entry `id` into `buffer` (replacing what it held), checked against
        /// the `size` and SHA-256 `digest` (lowercase hex) that its line gives; throws
        /// `UnreadableClipBytes` when its file is missing, cannot be read or holds other bytes.
        package func read(id: String, size: Int, digest: some Sequence<UInt8>, into buffer: inout [UInt8]) throws {
            guard let directory else { throw UnreadableClipBytes(id: id, reason: "cannot be read: \(failure!)") }
            let path = directory.path + "/" + id
            do {
                guard try directory.read(id, into: &buffer, limit: size) else {
                    throw UnreadableClipBytes(id: id, reason: "are missing: there is no file \(path)")
                }
            } catch let error as FileSystemError {
                if error.code == FileSystemError.tooLarge { throw UnreadableClipBytes.damaged(id: id, path: path, size: size) }
                throw UnreadableClipBytes(id: id, reason: "cannot be read: \(error)")
            }
            guard buffer.count == size, SHA256.hexDigest(of: buffer).utf8.elementsEqual(digest) else {
                throw UnreadableClipBytes.damaged(id: id, path: path, size: size)
            }
        }

        /// `read` of the entry a listing holds.
        package func read(_ clip: ListedClip, into buffer: inout [UInt8]) throws {
            guard let binary = clip.binary else { preconditionFailure("only a binary entry has a file") }
            try read(id: String(decoding: clip.idText, as: UTF8.self), size: binary.size, digest: binary.digest, into: &buffer)
        }
    }

    /// The newest live entry when it holds what `entry` holds (its add line is `line`): the same
    /// text, byte for byte, or bytes of the same type and digest. Only a text of the same length
    /// is read: a big clip added after another is not read back.
    private func newestRepeat(of entry: ClipEntry, line: [UInt8]) throws -> ClipEntry? {
        var newest: ClipSlot?
        try forEachSlotNewestFirst { _, slot in
            if slot.isLive { newest = slot }
            return newest == nil
        }
        guard let newest, newest.isBinary == (entry.binary != nil) else { return nil }
        if let binary = entry.binary {
            let stored = try self.entry(newest)
            return stored.binary?.sha256 == binary.sha256 && stored.binary?.type == binary.type ? stored : nil
        }
        let text = entry.text
        let head = try FileSystem.read(
            fd: log.fd, offset: Int(newest.offset), count: min(Int(newest.length), ClipStore.headerAllowance),
            path: logPath)
        guard let newestStart = head.withUnsafeBufferPointer(ClipLineHeader.init)?.textStart,
            let start = line.withUnsafeBufferPointer(ClipLineHeader.init)?.textStart
        else {
            // A line in another form: compare the parsed texts.
            let stored = try self.entry(newest)
            return stored.text.utf8.elementsEqual(text.utf8) ? stored : nil
        }
        let textLength = line.count - 3 - start
        guard Int(newest.length) - 2 - newestStart == textLength else { return nil }
        let stored = try FileSystem.read(fd: log.fd, offset: Int(newest.offset) + newestStart, count: textLength, path: logPath)
        return stored.elementsEqual(line[start..<start + textLength]) ? try self.entry(newest) : nil
    }

    /// The newest live entry, if any.
    public func newest() throws -> ClipEntry? { try entries(limit: 1).first }

    /// Finds the entry for a full id or a unique prefix of 4+ characters.
    public func resolve(_ reference: String) throws -> Resolution<ClipEntry> {
        let wanted = reference.lowercased().filter { $0 != "-" }
        guard Identifier.isPrefixCandidate(reference), wanted.allSatisfy(\.isHexDigit) else { return .notFound }
        let nibbles = wanted.map { UInt8($0.hexDigitValue!) }
        return try checkingIndex {
            var matches: [ClipSlot] = []
            try forEachSlot { _, slot in
                let matching =
                    slot.isLive
                    && nibbles.enumerated().allSatisfy { i, nibble in
                        let byte = slot.id.byte(at: i / 2)
                        return (i % 2 == 0 ? byte >> 4 : byte & 0x0F) == nibble
                    }
                if matching { matches.append(slot) }
            }
            switch matches.count {
            case 0: return .notFound
            case 1: return .found(try entry(matches[0]))
            default: return .ambiguous(try matches.prefix(10).map(entry))
            }
        }
    }

    /// The live entries among `ids`, reading the index in chunks outward from the slots where the
    /// last call found its entries (the first chunks as large as `ids`), until every id is found. A
    /// push asks for each batch of a queue that follows the history (oldest or newest first): the
    /// whole push reads the index about once.
    public func live(ids: Set<String>) throws -> [String: ClipEntry] {
        var wanted = PackedIDSet(minimumCapacity: ids.count)
        for id in ids { if let packed = PackedID(id) { wanted.insert(packed) } }
        guard !wanted.isEmpty else { return [:] }
        return try checkingIndex {
            var result: [String: ClipEntry] = [:]
            var found: ClosedRange<Int>?
            try forEachSlot(outwardFrom: lookupStart, firstChunk: wanted.count) { position, slot in
                guard slot.isLive, wanted.contains(slot.id) else { return true }
                let entry = try entry(slot)
                result[entry.id] = entry
                found = found.map { min($0.lowerBound, position)...max($0.upperBound, position) } ?? position...position
                return result.count < wanted.count
            }
            if let found { lookupStart = found.lowerBound..<found.upperBound + 1 }
            return result
        }
    }

    // MARK: Writing

    /// What `add` did.
    public struct AddOutcome: Equatable {
        public var entry: ClipEntry
        /// True when the text repeated the newest entry and nothing was added.
        public var duplicate: Bool
        /// Entries removed to stay within the limit.
        public var evicted: [String]
    }

    /// Adds an entry (unless it repeats the newest one) and evicts the oldest
    /// unpinned entries beyond `maxEntries`: one log append covers both. A binary entry's
    /// `bytes` are written first; `beforeCommit` is told what the append will evict.
    public func add(
        _ entry: ClipEntry, bytes: [UInt8]? = nil, maxEntries: Int, beforeCommit: ([ClipSummary]) throws -> Void = { _ in }
    ) throws -> AddOutcome {
        try checkingIndex {
            var lines = try ClipStore.addLine(entry)
            if let newest = try newestRepeat(of: entry, line: lines) {
                return AddOutcome(entry: newest, duplicate: true, evicted: [])
            }
            if entry.binary != nil {
                guard let bytes else { preconditionFailure("a binary entry is added with its bytes") }
                try tree.writeAtomically(blobPath(entry.id), bytes)
            }
            let length = lines.count - 1
            let evictions = try evictionCandidates(keeping: maxEntries - 1)
            try beforeCommit(evictions.slots.map { ClipSummary($0.slot) })
            for victim in evictions.slots { ClipStore.appendRemoveLine(victim.slot.id, to: &lines) }
            let offset = try log.append(lines)
            lines = []
            finishCommitted {
                let erased = try erase(evictions.slots.map(\.slot))
                let slot = ClipSlot(
                    id: PackedID(entry.id)!, timestamp: entry.timestamp, offset: UInt64(offset),
                    length: UInt32(length), flags: ClipStore.flags(for: entry))
                var header = index.header
                try markEvicted(evictions, in: &header)
                try insert([slot], header: header)
                try erased ? compactIfNeeded() : compact()
            }
            return AddOutcome(entry: entry, duplicate: false, evicted: evictions.slots.map(\.slot.idString))
        }
    }

    /// Removes the oldest unpinned entries beyond `maxEntries`, as `add` does
    /// (for histories that grew by other means: a sync's merge); returns their ids. `beforeCommit` is told what goes.
    public func evict(keeping maxEntries: Int, beforeCommit: ([ClipSummary]) throws -> Void = { _ in }) throws -> [String] {
        try checkingIndex {
            let evictions = try evictionCandidates(keeping: maxEntries)
            guard !evictions.slots.isEmpty else { return [] }
            try beforeCommit(evictions.slots.map { ClipSummary($0.slot) })
            var lines: [UInt8] = []
            for victim in evictions.slots { ClipStore.appendRemoveLine(victim.slot.id, to: &lines) }
            try log.append(lines)
            finishCommitted {
                let erased = try erase(evictions.slots.map(\.slot))
                var header = index.header
                try markEvicted(evictions, in: &header)
                header.logSize = UInt64(log.size)
                index.header = header
                try index.writeHeader()
                try erased ? compactIfNeeded() : compact()
            }
            return evictions.slots.map(\.slot.idString)
        }
    }

    /// Marks evicted slots removed (their remove lines are in the log already) and moves the cursor past them.
    private func markEvicted(_ evictions: (slots: [(index: Int, slot: ClipSlot)], cursor: Int), in header: inout ClipIndexHeader) throws {
        for victim in evictions.slots {
            try index.writeFlags(victim.slot.flags | ClipSlot.deleted, at: victim.index)
        }
        header.evictCursor = UInt64(evictions.cursor)
        header.liveCount -= min(header.liveCount, UInt64(evictions.slots.count))
        header.deadLines += UInt64(evictions.slots.count * 2)
    }

    /// Adds entries that came from elsewhere (sync, import), skipping ids already
    /// present. A removed entry's id is not present: the entry can come back. A binary entry
    /// comes with its bytes in `bytes` (by id), which must be the ones it describes; one
    /// without them is skipped.
    public func insert(_ entries: [ClipEntry], bytes: [String: [UInt8]] = [:]) throws -> [ClipEntry] {
        guard !entries.isEmpty else { return [] }
        return try checkingIndex {
            // Only the offered ids are looked for: a pull inserts a page at a time into a long history.
            var offered = PackedIDSet(minimumCapacity: entries.count)
            for entry in entries { if let id = PackedID(entry.id) { offered.insert(id) } }
            var known = PackedIDSet()
            try forEachSlot { _, slot in if slot.isLive, offered.contains(slot.id) { known.insert(slot.id) } }
            var fresh = entries.filter { entry in
                guard entry.binary.map({ bytes[entry.id].map($0.describes) ?? false }) ?? true else { return false }
                return PackedID(entry.id).map { known.insert($0) } ?? false
            }
            guard !fresh.isEmpty else { return [] }
            let blobs = fresh.filter { $0.binary != nil }.map { (name: $0.id, bytes: bytes[$0.id]!) }
            if !blobs.isEmpty { try tree.writeAtomically(blobs, in: blobDirectory) }
            fresh.sort { ($0.timestamp, $0.id) < ($1.timestamp, $1.id) }
            var lines: [UInt8] = []
            lines.reserveCapacity(fresh.reduce(0) { $0 + $1.text.utf8.count + 160 })
            var slots: [ClipSlot] = []
            slots.reserveCapacity(fresh.count)
            let base = log.size
            for entry in fresh {
                let line = try ClipStore.addLine(entry)
                slots.append(
                    ClipSlot(
                        id: PackedID(entry.id)!, timestamp: entry.timestamp,
                        offset: UInt64(base + lines.count), length: UInt32(line.count - 1),
                        flags: ClipStore.flags(for: entry)))
                lines += line
            }
            try log.append(lines)
            finishCommitted { try insert(slots, header: index.header) }
            return fresh
        }
    }

    /// Puts new slots (in index order) into the index: appended when they are the newest (the
    /// usual case, O(1)), otherwise merged into it in time order.
    private func insert(_ slots: [ClipSlot], header: ClipIndexHeader) throws {
        var header = header
        let count = Int(header.slotCount)
        let last: ClipSlot?
        do {
            last = count > 0 ? try index.slots(count - 1..<count).first : nil
        } catch is ClipIndexFile.Damaged {
            // The log was appended already: the index is rebuilt from it rather than the change retried.
            try rebuildIndex()
            return
        }
        header.logSize = UInt64(log.size)
        header.logInode = logInode()
        header.slotCount += UInt64(slots.count)
        header.liveCount += UInt64(slots.filter(\.isLive).count)
        if let last, let first = slots.first, first.sortsBefore(last) {
            // Where eviction starts is found again from the oldest.
            header.evictCursor = 0
            index = try index.merging(slots, header: header, in: tree)
            return
        }
        try index.write(slots[...], at: count)
        index.header = header
        try index.writeHeader()
    }

    /// Removes entries by id; returns the ids that were present. `beforeCommit` is told which they are.
    @discardableResult
    public func remove(ids: [String], beforeCommit: ([ClipSummary]) throws -> Void = { _ in }) throws -> [String] {
        let wanted = Set(ids.compactMap { PackedID($0) })
        return try removeSelected({ { wanted.contains($0.id) } }, beforeCommit: beforeCommit)
    }

    /// Removes every unpinned entry (every entry, `includingPinned`); returns their ids.
    @discardableResult
    public func clear(includingPinned: Bool, beforeCommit: ([ClipSummary]) throws -> Void = { _ in }) throws -> [String] {
        try removeSelected({ { includingPinned || !$0.isPinned } }, beforeCommit: beforeCommit)
    }

    /// Removes the unpinned entries older than `cutoff` and the oldest beyond `keep`; pinned entries never go.
    @discardableResult
    public func prune(before cutoff: Milliseconds?, keep: Int, beforeCommit: ([ClipSummary]) throws -> Void = { _ in }) throws -> [String] {
        try removeSelected(
            {
                // Oldest first: the entries past the age come first, then those beyond `keep`.
                var remaining = self.count
                return { slot in
                    guard !slot.isPinned, cutoff.map({ slot.timestamp < $0 }) ?? false || remaining > keep else { return false }
                    remaining -= 1
                    return true
                }
            }, beforeCommit: beforeCommit)
    }

    /// Removes the live entries that a selection made by `makeSelection` picks (asked once for each,
    /// oldest first; made again when the index is rebuilt), reading the index a chunk at a time:
    /// only what is removed is held. Returns their ids.
    private func removeSelected(
        _ makeSelection: () -> (ClipSlot) -> Bool, beforeCommit: ([ClipSummary]) throws -> Void
    ) throws -> [String] {
        try checkingIndex {
            let selecting = makeSelection()
            let removal = try self.removal { selecting($1) }
            guard !removal.slots.isEmpty else { return [] }
            try beforeCommit(removal.slots.map(ClipSummary.init))
            try log.append(removal.lines)
            finishCommitted {
                let erased = try erase(removal.slots)
                try markDeleted(at: removal.positions)
                var header = index.header
                header.liveCount -= min(header.liveCount, UInt64(removal.slots.count))
                header.deadLines += UInt64(removal.slots.count * 2)
                header.logSize = UInt64(log.size)
                index.header = header
                try index.writeHeader()
                try erased ? compactIfNeeded() : compact()
            }
            return removal.slots.map(\.idString)
        }
    }

    /// Live entries a removal takes away, oldest first: their positions in the index, their slots,
    /// and the log lines that record it.
    struct Removal {
        var positions: [Int] = []
        var slots: [ClipSlot] = []
        var lines: [UInt8] = []
    }

    /// The live slots `selecting` picks, asked once for each, oldest first, with its position.
    func removal(selecting: (Int, ClipSlot) throws -> Bool) throws -> Removal {
        var removal = Removal()
        try forEachSlot { position, slot in
            guard slot.isLive, try selecting(position, slot) else { return }
            removal.positions.append(position)
            removal.slots.append(slot)
            ClipStore.appendRemoveLine(slot.id, to: &removal.lines)
        }
        return removal
    }

    /// Marks the slots at `positions` (ascending) deleted, a chunk of the index at a time.
    private func markDeleted(at positions: [Int]) throws {
        var (slots, bytes) = ([ClipSlot](), [UInt8]())
        var next = 0
        while next < positions.count {
            let start = positions[next]
            let end = min(Int(index.header.slotCount), start + ClipStore.slotChunk)
            try index.slots(start..<end, into: &slots, reading: &bytes)
            while next < positions.count, positions[next] < end {
                slots[positions[next] - start].flags |= ClipSlot.deleted
                next += 1
            }
            try index.write(slots[...], at: start)
        }
    }

    /// Walks the slots oldest first, reading the index a chunk at a time (a history of 1,000,000 is never held).
    func forEachSlot(_ body: (Int, ClipSlot) throws -> Void) throws {
        try forEachSlot(outwardFrom: 0..<0) { position, slot in
            try body(position, slot)
            return true
        }
    }

    /// Walks the slots after and before `start` a chunk at a time in turn, the chunks growing from
    /// `firstChunk`, then those of `start`, while `body` returns true; each slot once.
    private func forEachSlot(outwardFrom start: Range<Int>, firstChunk: Int = 64, _ body: (Int, ClipSlot) throws -> Bool) throws {
        var (slots, bytes) = ([ClipSlot](), [UInt8]())
        let total = Int(index.header.slotCount)
        func walk(_ chunk: Range<Int>) throws -> Bool {
            try index.slots(chunk, into: &slots, reading: &bytes)
            for (offset, slot) in slots.enumerated() where try !body(chunk.lowerBound + offset, slot) { return false }
            return true
        }
        let start = start.clamped(to: 0..<total)
        var (below, above) = (start.lowerBound, start.upperBound)
        var chunk = min(max(firstChunk, 64), ClipStore.slotChunk)
        while below > 0 || above < total {
            if above < total {
                let after = above..<min(total, above + chunk)
                guard try walk(after) else { return }
                above = after.upperBound
            }
            if below > 0 {
                let before = max(0, below - chunk)..<below
                guard try walk(before) else { return }
                below = before.lowerBound
            }
            chunk = min(2 * chunk, ClipStore.slotChunk)
        }
        for first in stride(from: start.lowerBound, to: start.upperBound, by: ClipStore.slotChunk) {
            guard try walk(first..<min(start.upperBound, first + ClipStore.slotChunk)) else { return }
        }
    }

    /// Slots read from the index at once by a walk over all of them: 192 KiB.
    static let slotChunk = 4096

    /// Pins or unpins an entry; returns false when it already was (`beforeCommit` runs only when it changes).
    @discardableResult
    public func setPinned(id: String, _ pinned: Bool, beforeCommit: () throws -> Void = {}) throws -> Bool {
        try checkingIndex {
            guard let packed = PackedID(id) else { return false }
            var found: (position: Int, slot: ClipSlot)?
            try forEachSlot { position, slot in if found == nil, slot.id == packed, slot.isLive { found = (position, slot) } }
            guard let (position, slot) = found else { return false }
            if slot.isPinned == pinned { return false }
            try beforeCommit()
            try log.append(try ClipStore.pinLine(id: id, pinned))
            finishCommitted {
                try index.writeFlags(pinned ? slot.flags | ClipSlot.pinned : slot.flags & ~ClipSlot.pinned, at: position)
                var header = index.header
                // An unpinned entry before the cursor must become evictable again.
                if !pinned { header.evictCursor = min(header.evictCursor, UInt64(position)) }
                header.deadLines += 1
                header.logSize = UInt64(log.size)
                index.header = header
                try index.writeHeader()
            }
            return true
        }
    }

    /// The oldest unpinned live slots to remove so that at most `keeping` remain,
    /// found by walking forward from the eviction cursor.
    private func evictionCandidates(keeping: Int) throws -> (slots: [(index: Int, slot: ClipSlot)], cursor: Int) {
        let excess = Int(index.header.liveCount) - max(keeping, 0)
        var cursor = Int(index.header.evictCursor)
        guard excess > 0 else { return ([], cursor) }
        var victims: [(index: Int, slot: ClipSlot)] = []
        var position = cursor
        var advancing = true
        let total = Int(index.header.slotCount)
        while position < total, victims.count < excess {
            let chunk = try index.slots(position..<min(total, position + 256))
            for slot in chunk {
                if slot.isLive && !slot.isPinned {
                    victims.append((position, slot))
                    if victims.count == excess { break }
                } else if slot.isLive {
                    advancing = false
                }
                position += 1
                if advancing { cursor = position }
            }
        }
        if advancing { cursor = position }
        return (victims, cursor)
    }

    // MARK: Log format

    /// `{"op":"add","id":…,"ts":…,"pinned":…[,"local":…],"text":…}` and a newline: the form
    /// `ClipLineHeader` reads back.
    static func addLine(_ entry: ClipEntry) throws -> [UInt8] {
        var line = try JSONCoding.encodeValue(ClipLogLine(adding: entry), keys: .asEncoded).serializedBytes()
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// `addLine` of an entry whose text is escaped already, appended to `line` (an import writes
    /// its clips' texts as the export holds them, never decoded).
    static func appendAddLine(_ clip: EscapedClip, to line: inout [UInt8]) {
        line.append(literal: #"{"op":"add","id":""#)
        clip.id.appendText(to: &line)
        line.append(literal: #"","ts":"#)
        line += String(clip.timestamp).utf8
        line.append(literal: clip.pinned ? #","pinned":true"# : #","pinned":false"#)
        if let localOnly = clip.localOnly {
            line.append(literal: #","local":""#)
            line += localOnly.rawValue.utf8
            line.append(0x22)
        }
        if let binary = clip.binary {
            // A valid MIME type and a hex digest need no escapes.
            line.append(literal: #","type":""#)
            line += binary.type.utf8
            line.append(literal: #"","size":"#)
            line += String(binary.size).utf8
            line.append(literal: #","sha256":""#)
            line += binary.sha256.utf8
            line.append(0x22)
            if let width = binary.width, let height = binary.height {
                line.append(literal: #","width":"#)
                line += String(width).utf8
                line.append(literal: #","height":"#)
                line += String(height).utf8
            }
        }
        line.append(literal: #","text":""#)
        line += clip.escapedText
        line.append(literal: "\"}\n")
    }

    /// `{"op":"pin","id":…,"pinned":…}` and a newline.
    static func pinLine(id: String, _ pinned: Bool) throws -> [UInt8] {
        var line = try JSONCoding.encodeValue(ClipLogLine(op: "pin", id: id, pinned: pinned), keys: .asEncoded).serializedBytes()
        line.append(UInt8(ascii: "\n"))
        return line
    }

    /// `{"op":"rm","id":…}` and a newline, written from bytes (a clear removes 100,000 entries).
    static func appendRemoveLine(_ id: PackedID, to lines: inout [UInt8]) {
        lines += #"{"op":"rm","id":""#.utf8
        id.appendText(to: &lines)
        lines += "\"}\n".utf8
    }

    static func flags(for entry: ClipEntry) -> UInt8 {
        flags(
            pinned: entry.pinned, localOnly: entry.localOnly, binary: entry.binary != nil,
            comparesAsBytes: entry.binary == nil && TextQuery.comparesAsBytes(text: entry.text),
            isOwnPreview: entry.binary == nil && PreviewBuilder.isOwnPreview(text: entry.text))
    }

    static func flags(pinned: Bool, localOnly: LocalOnlyReason?, binary: Bool, comparesAsBytes: Bool, isOwnPreview: Bool) -> UInt8 {
        (pinned ? ClipSlot.pinned : 0) | (localOnly != nil ? ClipSlot.localOnly : 0) | (binary ? ClipSlot.binary : 0)
            | (comparesAsBytes ? ClipSlot.comparesAsBytes : 0) | (isOwnPreview ? ClipSlot.ownPreview : 0)
    }

    // MARK: Rebuild and compaction

    /// Replays the whole log into a fresh index. Runs after a crash left the
    /// index behind the log.
    private func rebuildIndex() throws {
        let built = try ClipStore.buildIndex(log: log, directory: directory, in: tree)
        index = built.index
        try built.erased ? removeOrphanedBlobs() : compact()
    }

    /// Removes the files of `blobs/` that no live binary entry owns, temporary files included.
    private func removeOrphanedBlobs() throws {
        guard let names = try tree.list(blobDirectory, includingHidden: true), !names.isEmpty else { return }
        var owned = Set<String>()
        try forEachSlot { _, slot in if slot.isLive && slot.isBinary { owned.insert(slot.idString) } }
        var removed = false
        for name in names where !owned.contains(name) {
            // Anything else planted there (a directory) is left alone rather than failing every command.
            if (try? tree.remove(blobDirectory + "/" + name)) == true { removed = true }
        }
        if removed { try tree.syncDirectory(blobDirectory) }
    }

    private func compactIfNeeded() throws {
        let header = index.header
        guard header.deadLines > max(1024, header.liveCount) else { return }
        try compact()
    }

    /// Rewrites the log with only live entries (current pins folded in), then the index.
    func compact() throws {
        let slots: [ClipSlot]
        do {
            slots = try writeCompactedLog()
        } catch is ClipIndexFile.Damaged {
            // Called after a change was committed: repaired here rather than by running that change again.
            try rebuildIndex()
            slots = try writeCompactedLog()
        }
        log = try AppendFile(path: DataDirectoryLayout.clipLog(in: directory), in: tree)
        var header = ClipIndexHeader()
        header.logSize = UInt64(log.size)
        header.logInode = logInode()
        header.slotCount = UInt64(slots.count)
        header.liveCount = UInt64(slots.count)
        index = try ClipIndexFile.create(path: indexPath, in: tree, header: header, slots: slots)
        try removeOrphanedBlobs()
    }

    /// Writes the new log; returns its slots, known as it is written (no replay to index it).
    private func writeCompactedLog() throws -> [ClipSlot] {
        var slots: [ClipSlot] = []
        var written = 0
        try tree.writeAtomically(logPath) { write in
            var buffer: [UInt8] = []
            func flush(over size: Int) throws {
                guard buffer.count > size else { return }
                try write(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
            for slot in try index.allSlots() where slot.isLive {
                // Lines are copied as they are, with the current pin, a piece at a time: a big text is never held whole.
                let head = try FileSystem.read(
                    fd: log.fd, offset: Int(slot.offset), count: min(Int(slot.length), ClipStore.headerAllowance),
                    path: logPath)
                let start = written
                guard let header = head.withUnsafeBufferPointer(ClipLineHeader.init),
                    head.withUnsafeBufferPointer(ClipLineHeader.id) == slot.id,
                    try FileSystem.read(fd: log.fd, offset: Int(slot.offset) + Int(slot.length) - 1, count: 2, path: logPath) == [
                        0x7D, 0x0A,
                    ]
                else {
                    // Another form of the line (or a slot that does not describe one: `entry` tells).
                    let line = try ClipStore.addLine(try entry(slot))
                    buffer += line
                    written += line.count
                    slots.append(
                        ClipSlot(
                            id: slot.id, timestamp: slot.timestamp, offset: UInt64(start), length: UInt32(line.count - 1),
                            flags: slot.flags))
                    try flush(over: 1 << 20)
                    continue
                }
                let lineStart = ClipLineHeader.start(id: slot.id, timestamp: slot.timestamp, pinned: slot.isPinned)
                buffer += lineStart
                written += lineStart.count
                var done = header.pinnedEnd
                while done < Int(slot.length) {
                    let count = min(1 << 20, Int(slot.length) - done)
                    buffer += try FileSystem.read(fd: log.fd, offset: Int(slot.offset) + done, count: count, path: logPath)
                    done += count
                    written += count
                    try flush(over: 1 << 20)
                }
                buffer.append(0x0A)
                written += 1
                slots.append(
                    ClipSlot(
                        id: slot.id, timestamp: slot.timestamp, offset: UInt64(start), length: UInt32(written - 1 - start),
                        flags: slot.flags))
                try flush(over: 1 << 20)
            }
            try flush(over: 0)
        }
        return slots
    }
}

/// A binary entry whose bytes cannot be had: its file in `blobs/` is missing, cannot be read, or
/// holds other bytes than its entry describes. The rest of the history is unharmed.
package struct UnreadableClipBytes: Error {
    package let id: String
    /// What is wrong, naming the file.
    let reason: String

    /// What is wrong and what to do about it.
    package var message: String {
        "the bytes of entry \(Identifier.short(id)) \(reason); put the file back, or remove the entry with "
            + "'itsypad clip rm \(Identifier.short(id))'"
    }

    static func damaged(id: String, path: String, size: Int) -> UnreadableClipBytes {
        UnreadableClipBytes(id: id, reason: "are damaged: \(path) is not the \(Text.counted(size, "byte")) its entry describes")
    }
}

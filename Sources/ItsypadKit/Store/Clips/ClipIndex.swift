import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// One entry's place in the clipboard log, as the index keeps it: 48 bytes on
/// disk (id 16, timestamp 8, offset 8, length 8, flags 1, padding 7).
package struct ClipSlot: Equatable {
    static let size = 48
    static let deleted: UInt8 = 1
    static let pinned: UInt8 = 2
    static let localOnly: UInt8 = 4
    /// A binary entry: its bytes are a file of their own (`ClipStore.blobPath`).
    static let binary: UInt8 = 8
    /// A text the anchored search answers for without lowercasing it (`TextQuery.comparesAsBytes`).
    static let comparesAsBytes: UInt8 = 16
    /// A text whose listing preview is its escaped bytes as they are (`PreviewBuilder.isOwnPreview`).
    static let ownPreview: UInt8 = 32

    package var id: PackedID  // 16 bytes
    package var timestamp: Int64
    var offset: UInt64  // where the add line starts in the log
    var length: UInt32  // its length without the newline
    var flags: UInt8

    var isDeleted: Bool { flags & ClipSlot.deleted != 0 }
    package var isPinned: Bool { flags & ClipSlot.pinned != 0 }
    var isLive: Bool { !isDeleted }
    package var isBinary: Bool { flags & ClipSlot.binary != 0 }
    package var comparesAsBytes: Bool { flags & ClipSlot.comparesAsBytes != 0 }
    package var isOwnPreview: Bool { flags & ClipSlot.ownPreview != 0 }
    package var idString: String { id.string }

    /// The index order: by time, ties (entries added within one millisecond) by arrival.
    func sortsBefore(_ other: ClipSlot) -> Bool {
        timestamp != other.timestamp ? timestamp < other.timestamp : offset < other.offset
    }

    /// The form `init(decoding:at:)` reads (an import encodes 100,000 slots).
    func encoded(into bytes: inout [UInt8]) {
        bytes.appendWritten(count: ClipSlot.size) { slot in
            let raw = UnsafeMutableRawPointer(slot)
            raw.storeBytes(of: id.high.bigEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: id.low.bigEndian, toByteOffset: 8, as: UInt64.self)
            raw.storeBytes(of: UInt64(bitPattern: timestamp).littleEndian, toByteOffset: 16, as: UInt64.self)
            raw.storeBytes(of: offset.littleEndian, toByteOffset: 24, as: UInt64.self)
            raw.storeBytes(of: UInt64(length).littleEndian, toByteOffset: 32, as: UInt64.self)
            raw.storeBytes(of: UInt64(flags).littleEndian, toByteOffset: 40, as: UInt64.self)
        }
    }

    init(id: PackedID, timestamp: Int64, offset: UInt64, length: UInt32, flags: UInt8) {
        self.id = id
        self.timestamp = timestamp
        self.offset = offset
        self.length = length
        self.flags = flags
    }

    init(decoding bytes: UnsafeRawBufferPointer, at base: Int) {
        id = PackedID(
            high: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: base, as: UInt64.self)),
            low: UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: base + 8, as: UInt64.self)))
        timestamp = Int64(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: base + 16, as: UInt64.self)))
        offset = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: base + 24, as: UInt64.self))
        length = UInt32(truncatingIfNeeded: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: base + 32, as: UInt64.self)))
        flags = bytes[base + 40]
    }
}

/// Little-endian integers and a checksum for the binary index.
enum Binary {
    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    static func read(_ bytes: ArraySlice<UInt8>, at index: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in (0..<8).reversed() { value = value << 8 | UInt64(bytes[index + i]) }
        return value
    }

    /// FNV-1a, 64 bit: enough to detect a torn or stale header.
    static func checksum<C: Collection>(_ bytes: C) -> UInt64 where C.Element == UInt8 {
        checksum(bytes, continuing: checksumSeed)
    }

    /// The checksum of bytes given in pieces: `checksumSeed`, then each piece in turn.
    static func checksum<C: Collection>(_ bytes: C, continuing hash: UInt64) -> UInt64 where C.Element == UInt8 {
        var hash = hash
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0100_0000_01b3 }
        return hash
    }

    static let checksumSeed: UInt64 = 0xcbf2_9ce4_8422_2325
}

/// The index header: what part of the log the index covers, and counts that
/// let `clip add` work without reading the whole history.
struct ClipIndexHeader: Equatable {
    static let size = 64
    static let magic: [UInt8] = Array("ITSYIDX1".utf8)

    var logSize: UInt64 = 0
    var logInode: UInt64 = 0
    var slotCount: UInt64 = 0
    var liveCount: UInt64 = 0
    /// Every slot before it is deleted or pinned: eviction starts here.
    var evictCursor: UInt64 = 0
    /// Log lines that are not live adds (rm, pin, deleted adds): drives compaction.
    var deadLines: UInt64 = 0

    func encoded() -> [UInt8] {
        var bytes = ClipIndexHeader.magic
        for value in [logSize, logInode, slotCount, liveCount, evictCursor, deadLines] { Binary.append(value, to: &bytes) }
        Binary.append(Binary.checksum(bytes), to: &bytes)
        return bytes
    }

    init() {}

    /// nil when the bytes are not a valid header (torn, foreign or damaged).
    init?(decoding bytes: [UInt8]) {
        guard bytes.count >= ClipIndexHeader.size, Array(bytes[0..<8]) == ClipIndexHeader.magic,
            Binary.checksum(bytes[0..<56]) == Binary.read(bytes[...], at: 56)
        else { return nil }
        let slice = bytes[...]
        logSize = Binary.read(slice, at: 8)
        logInode = Binary.read(slice, at: 16)
        slotCount = Binary.read(slice, at: 24)
        liveCount = Binary.read(slice, at: 32)
        evictCursor = Binary.read(slice, at: 40)
        deadLines = Binary.read(slice, at: 48)
    }
}

/// The index file: a header and fixed-size slots sorted by (timestamp, id).
/// It is a cache derived from the log: written without fsync, validated
/// against the log's size and inode on open, and rebuilt when it does not match.
/// It is never trusted: a count that does not fit the file refuses it on open, and a
/// slot pointing outside the log throws `Damaged` when read, so that it is rebuilt.
final class ClipIndexFile {
    let path: String
    let fd: Int32
    var header: ClipIndexHeader

    /// A slot that cannot describe an entry of the log: the index must be rebuilt.
    struct Damaged: Error {}

    init(path: String, header: ClipIndexHeader, fd: Int32) {
        self.path = path
        self.header = header
        self.fd = fd
    }

    deinit { close(fd) }

    /// Opens an existing index; nil when missing or invalid (a symlink or FIFO in its place included:
    /// the index is rebuilt, by renaming a new file over whatever is there).
    static func open(path: String, in tree: FileTree) throws -> ClipIndexFile? {
        let opened: Int32?
        do { opened = try tree.openFile(path, flags: O_RDWR) } catch let error as FileSystemError where error.isMalformed { return nil }
        guard let fd = opened else { return nil }
        var info = stat()
        let size = fstat(fd, &info) == 0 ? UInt64(info.st_size) : 0
        let bytes = try FileSystem.read(fd: fd, offset: 0, count: ClipIndexHeader.size, path: path)
        guard let header = ClipIndexHeader(decoding: bytes), size >= UInt64(ClipIndexHeader.size),
            header.slotCount <= (size - UInt64(ClipIndexHeader.size)) / UInt64(ClipSlot.size),
            header.liveCount <= header.slotCount, header.evictCursor <= header.slotCount, header.deadLines <= 1 << 53
        else {
            close(fd)
            return nil
        }
        return ClipIndexFile(path: path, header: header, fd: fd)
    }

    /// Writes a complete index (header + slots) by atomic replacement.
    static func create(path: String, in tree: FileTree, header: ClipIndexHeader, slots: [ClipSlot]) throws -> ClipIndexFile {
        try create(path: path, in: tree, header: header) { body in for slot in slots { try body(slot) } }
    }

    /// `create` of slots that `forEachSlot` hands over in index order, written a chunk at a time.
    static func create(
        path: String, in tree: FileTree, header: ClipIndexHeader, forEachSlot: (_ body: (ClipSlot) throws -> Void) throws -> Void
    ) throws -> ClipIndexFile {
        try tree.writeAtomically(path) { write in
            try write(header.encoded())
            var bytes: [UInt8] = []
            try withoutActuallyEscaping(write) { write in
                try forEachSlot { slot in
                    slot.encoded(into: &bytes)
                    guard bytes.count >= 4096 * ClipSlot.size else { return }
                    try write(bytes)
                    bytes.removeAll(keepingCapacity: true)
                }
            }
            try write(bytes)
        }
        guard let file = try open(path: path, in: tree) else { throw FileSystemError(path: path, code: EIO, operation: "reopen") }
        return file
    }

    /// A new index of this one's slots and `added` (in index order, newer than nothing in particular)
    /// merged in index order, under `header`: written by atomic replacement a chunk at a time, so that
    /// clips a first sync brings, of any age, join a long history without replaying its log.
    func merging(_ added: [ClipSlot], header: ClipIndexHeader, in tree: FileTree) throws -> ClipIndexFile {
        let count = Int(self.header.slotCount)
        try tree.writeAtomically(path) { write in
            try write(header.encoded())
            var (chunk, bytes, merged, next) = ([ClipSlot](), [UInt8](), [ClipSlot](), 0)
            for start in stride(from: 0, to: count, by: 16384) {
                try slots(start..<min(start + 16384, count), into: &chunk, reading: &bytes)
                for slot in chunk {
                    while next < added.count, added[next].sortsBefore(slot) {
                        merged.append(added[next])
                        next += 1
                    }
                    merged.append(slot)
                }
                try ClipIndexFile.encode(merged[...], write)
                merged.removeAll(keepingCapacity: true)
            }
            try ClipIndexFile.encode(added[next...], write)
        }
        guard let file = try ClipIndexFile.open(path: path, in: tree) else {
            throw FileSystemError(path: path, code: EIO, operation: "reopen")
        }
        return file
    }

    /// Slots' bytes in pieces of at most 4,096 slots (an index of 100,000 is never encoded whole).
    private static func encode(_ slots: ArraySlice<ClipSlot>, _ write: ([UInt8]) throws -> Void) throws {
        var bytes: [UInt8] = []
        var start = slots.startIndex
        while start < slots.endIndex {
            let end = min(start + 4096, slots.endIndex)
            bytes.removeAll(keepingCapacity: true)
            for slot in slots[start..<end] { slot.encoded(into: &bytes) }
            try write(bytes)
            start = end
        }
    }

    /// Slots in `range`, each checked to lie within the log and to carry a valid time.
    func slots(_ range: Range<Int>) throws -> [ClipSlot] {
        var slots: [ClipSlot] = []
        var bytes: [UInt8] = []
        try self.slots(range, into: &slots, reading: &bytes)
        return slots
    }

    /// `slots(_:)` into `slots` (what it held is replaced), read through `bytes`: buffers a caller
    /// keeps from one range to the next, so that the pages of a listing's chunks are faulted in once
    /// rather than once per chunk.
    func slots(_ range: Range<Int>, into slots: inout [ClipSlot], reading bytes: inout [UInt8]) throws {
        slots.removeAll(keepingCapacity: true)
        guard !range.isEmpty else { return }
        let count = range.count * ClipSlot.size
        // Not zeroed first: only the bytes read are decoded.
        if bytes.count < count { bytes = [UInt8](unsafeUninitializedCapacity: count) { $1 = $0.count } }
        let read = try bytes.withUnsafeMutableBytes { buffer in
            try FileSystem.read(
                fd: fd, offset: ClipIndexHeader.size + range.lowerBound * ClipSlot.size,
                into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<count]), path: path)
        }
        slots.reserveCapacity(range.count)
        bytes.withUnsafeBytes { raw in
            for offset in stride(from: 0, to: read - ClipSlot.size + 1, by: ClipSlot.size) {
                slots.append(ClipSlot(decoding: raw, at: offset))
            }
        }
        let logSize = header.logSize
        guard slots.count == range.count,
            slots.allSatisfy({ slot in
                slot.offset < logSize && UInt64(slot.length) <= logSize - slot.offset && slot.length > 0
                    && Time.validRange.contains(slot.timestamp)
            })
        else { throw Damaged() }
    }

    func allSlots() throws -> [ClipSlot] { try slots(0..<Int(header.slotCount)) }

    func write(_ slots: ArraySlice<ClipSlot>, at index: Int) throws {
        var offset = ClipIndexHeader.size + index * ClipSlot.size
        try ClipIndexFile.encode(slots) { bytes in
            try pwriteAll(bytes, at: offset)
            offset += bytes.count
        }
    }

    func writeFlags(_ flags: UInt8, at index: Int) throws {
        try pwriteAll([flags], at: ClipIndexHeader.size + index * ClipSlot.size + 40)
    }

    func writeHeader() throws { try pwriteAll(header.encoded(), at: 0) }

    private func pwriteAll(_ bytes: [UInt8], at offset: Int) throws {
        try FileSystem.writeAll(fd: fd, bytes, at: offset, path: path)
    }
}

import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// What a listing needs of a long pending queue without replaying it: the
/// records with a waiting change and their versions, as the log's first
/// `coveredBytes` bytes leave them (`sync/pending.keys`). The clips are sorted
/// by id and the file is mapped, so that a listing of 20 entries asks for 20
/// ids (`clipVersion`, a few probes each) and reads nothing else of it; the
/// lines appended since are replayed over it (`PendingQueue.waitingRecords`).
///
/// A cache derived from the log, as the clip index is, and never trusted: its
/// trailer is checksummed and range-checked, and it is used only while the log
/// is the file it was made from (same inode, at least as long, the same first
/// and last 4 KiB of what it covers, a line ending where it stops). A reader of
/// every clip checks the clips' checksum (`forEachClip`); a lookup checks only
/// the entry it reads, so a damaged body at worst mislabels a listing's sync
/// state until the summary is written again. Written atomically, without the
/// data directory's lock: whatever a crash or a race leaves is either a whole
/// summary or one that fails its checks.
final class PendingSummary {
    /// How much of the log this summarizes: whole lines only.
    let coveredBytes: Int
    let version: Int
    let clipCount: Int
    /// The other waiting records (tabs, settings: few) and their versions.
    let others: [RecordKey: Int]
    /// The clips' entries, mapped; nil when there are none.
    private let clips: MappedFile?
    private let clipChecksum: UInt64

    static let magic: [UInt8] = Array("ITSYPKS2".utf8)
    /// Magic, inode, covered bytes, head and tail checksums, version, clip count, other bytes,
    /// clips' checksum, others' checksum, trailer checksum: eight bytes each, little-endian.
    static let trailerSize = 88
    static let entrySize = 24
    /// Bytes of the log checksummed at each end of what a summary covers.
    static let window = 4096
    /// A summary is written again once this many bytes of lines follow what it covers.
    static let rewriteAfter = 64 << 10

    private init(coveredBytes: Int, version: Int, clipCount: Int, others: [RecordKey: Int], clips: MappedFile?, clipChecksum: UInt64) {
        (self.coveredBytes, self.version, self.clipCount, self.others) = (coveredBytes, version, clipCount, others)
        (self.clips, self.clipChecksum) = (clips, clipChecksum)
    }

    /// `sync/pending.keys` for `sync/pending.log`.
    static func path(forLog log: String) -> String {
        (log.hasSuffix(".log") ? String(log.dropLast(4)) : log) + ".keys"
    }

    /// Where the log's bytes are checked, and what they must hold.
    private struct LogMark: Equatable {
        var inode: UInt64
        var head: UInt64
        var tail: UInt64

        /// nil when the log cannot be read there, or does not end a line at `covered`.
        init?(fd: Int32, inode: UInt64, covered: Int, path: String) {
            let window = PendingSummary.window
            guard covered > 0, let first = try? FileSystem.read(fd: fd, offset: 0, count: min(covered, window), path: path),
                let last = try? FileSystem.read(fd: fd, offset: max(0, covered - window), count: min(covered, window), path: path),
                first.count == min(covered, window), last.count == min(covered, window), last.last == 0x0A
            else { return nil }
            (self.inode, head, tail) = (inode, Binary.checksum(first), Binary.checksum(last))
        }

        init(inode: UInt64, head: UInt64, tail: UInt64) {
            (self.inode, self.head, self.tail) = (inode, head, tail)
        }
    }

    // MARK: Reading

    /// The summary at `path` if it is whole and still describes the open log `fd` (of `inode` and `size` bytes).
    static func load(_ path: String, in tree: FileTree, log fd: Int32, inode: UInt64, size: Int, logPath: String) -> PendingSummary? {
        guard let summaryFD = (try? tree.openFile(path, flags: O_RDONLY)) ?? nil else { return nil }
        defer { close(summaryFD) }
        var info = stat()
        let versions = UInt64(PendingLine.versions.lowerBound)...UInt64(PendingLine.versions.upperBound)
        // Each waiting record takes a line of the log, over 24 bytes: a larger summary is not one of this log.
        guard fstat(summaryFD, &info) == 0, Int(info.st_size) >= trailerSize, Int(info.st_size) <= trailerSize + 2 * size + 64,
            let trailer = try? FileSystem.read(fd: summaryFD, offset: Int(info.st_size) - trailerSize, count: trailerSize, path: path),
            trailer.count == trailerSize, Array(trailer[0..<8]) == magic,
            Binary.checksum(trailer[0..<trailerSize - 8]) == Binary.read(trailer[...], at: trailerSize - 8)
        else { return nil }
        let field = { (index: Int) in Binary.read(trailer[...], at: 8 + 8 * index) }
        let (covered, version, clipCount, otherBytes) = (field(1), field(4), field(5), field(6))
        let bodySize = UInt64(info.st_size) - UInt64(trailerSize)
        guard covered <= UInt64(size), versions.contains(version), clipCount <= bodySize / UInt64(entrySize),
            otherBytes == bodySize - clipCount * UInt64(entrySize),
            LogMark(fd: fd, inode: inode, covered: Int(covered), path: logPath) == LogMark(inode: field(0), head: field(2), tail: field(3)),
            let otherBody = try? FileSystem.read(fd: summaryFD, offset: Int(clipCount) * entrySize, count: Int(otherBytes), path: path),
            otherBody.count == Int(otherBytes), Binary.checksum(otherBody) == field(8), let others = decodeOthers(otherBody)
        else { return nil }
        let clips = clipCount == 0 ? nil : MappedFile.map(fd: summaryFD, count: Int(clipCount) * entrySize)
        guard clipCount == 0 || clips != nil else { return nil }
        return PendingSummary(
            coveredBytes: Int(covered), version: Int(version), clipCount: Int(clipCount), others: others, clips: clips,
            clipChecksum: field(7))
    }

    private static func decodeOthers(_ bytes: [UInt8]) -> [RecordKey: Int]? {
        var others: [RecordKey: Int] = [:]
        var at = 0
        func integer() -> UInt64? {
            guard at + 8 <= bytes.count else { return nil }
            defer { at += 8 }
            return Binary.read(bytes[...], at: at)
        }
        func text() -> String? {
            guard let length = integer(), length <= UInt64(bytes.count - at) else { return nil }
            defer { at += Int(length) }
            return bytes[at..<at + Int(length)].withUnsafeBufferPointer(Text.decodeUTF8)
        }
        while at < bytes.count {
            guard let typeName = text(), let type = RecordType(rawValue: typeName), let name = text(), let version = integer(),
                PendingLine.versions.contains(Int(clamping: version))
            else { return nil }
            others[RecordKey(type, name)] = Int(version)
        }
        return others
    }

    /// The bytes of the clip entry at `index` (< `clipCount`).
    private func entryBytes(_ index: Int) -> UnsafeRawBufferPointer {
        let at = index * PendingSummary.entrySize
        return UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(clips!.bytes)[at..<at + PendingSummary.entrySize])
    }

    private func entry(_ index: Int) -> (id: PackedID, version: UInt64) {
        let raw = entryBytes(index)
        let at = 0
        func integer(_ offset: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at + offset, as: UInt64.self)) }
        return (PackedID(high: integer(0), low: integer(8)), integer(16))
    }

    /// The version of the waiting clip `id`, nil when it is not one. The ids are random (UUIDs): a
    /// few guesses from where `id` falls between the ends of the range find it, and halving the
    /// range then bounds the probes of ids that are not.
    func clipVersion(_ id: PackedID) -> Int? {
        var (low, high) = (0, clipCount)
        var guesses = 0
        while low < high {
            var middle = low + (high - low) / 2
            if guesses < 6, high - low > 16 {
                guesses += 1
                let (first, last) = (entry(low).id.high, entry(high - 1).id.high)
                if first < last, first <= id.high, id.high <= last {
                    let fraction = Double(id.high - first) / Double(last - first)
                    middle = low + min(high - low - 1, Int(fraction * Double(high - low - 1)))
                }
            }
            let found = entry(middle)
            if found.id == id {
                return PendingLine.versions.contains(Int(clamping: found.version)) ? Int(found.version) : nil
            }
            if (found.id.high, found.id.low) < (id.high, id.low) { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// Every waiting clip in the order of their ids; false when the clips' bytes fail their checksum
    /// (before any call) or are not in order (after some): the summary is then not to be used.
    func forEachClip(_ body: (PackedID, Int) throws -> Void) rethrows -> Bool {
        guard let clips, Binary.checksum(UnsafeRawBufferPointer(clips.bytes)) == clipChecksum else { return clipCount == 0 }
        var previous: PackedID?
        for index in 0..<clipCount {
            let (id, version) = entry(index)
            guard PendingLine.versions.contains(Int(clamping: version)), previous.map({ ($0.high, $0.low) < (id.high, id.low) }) ?? true
            else { return false }
            previous = id
            try body(id, Int(version))
            clips.release(before: index * PendingSummary.entrySize)
        }
        return true
    }

    // MARK: Writing

    /// Writes the summary of the log `fd`'s first `covered` bytes: `clips` hands each waiting clip to
    /// its argument in the order of their ids. Nothing when the log cannot be read back to check it.
    static func write(
        to path: String, in tree: FileTree, log fd: Int32, inode: UInt64, logPath: String, covered: Int, version: Int,
        others: [RecordKey: Int], clips: ((PackedID, Int) throws -> Void) throws -> Void
    ) throws {
        guard let mark = LogMark(fd: fd, inode: inode, covered: covered, path: logPath) else { return }
        try tree.writeAtomically(path, syncingDirectory: false) { writePiece in
            // Handed to `clips`, which calls it back: never kept past this write.
            try withoutActuallyEscaping(writePiece) { write in
                var bytes: [UInt8] = []
                bytes.reserveCapacity(1 << 16)
                var (count, checksum) = (0, Binary.checksumSeed)
                try clips { id, version in
                    for value in [id.high, id.low, UInt64(version)] { Binary.append(value, to: &bytes) }
                    count += 1
                    if bytes.count >= 1 << 16 {
                        checksum = Binary.checksum(bytes, continuing: checksum)
                        try write(bytes)
                        bytes.removeAll(keepingCapacity: true)
                    }
                }
                checksum = Binary.checksum(bytes, continuing: checksum)
                try write(bytes)
                var otherBody: [UInt8] = []
                for (key, version) in others.sorted(by: { ($0.key.type.rawValue, $0.key.name) < ($1.key.type.rawValue, $1.key.name) }) {
                    for text in [key.type.rawValue, key.name] {
                        Binary.append(UInt64(text.utf8.count), to: &otherBody)
                        otherBody += text.utf8
                    }
                    Binary.append(UInt64(version), to: &otherBody)
                }
                try write(otherBody)
                var trailer = magic
                for value in [
                    mark.inode, UInt64(covered), mark.head, mark.tail, UInt64(version), UInt64(count), UInt64(otherBody.count),
                    checksum, Binary.checksum(otherBody),
                ] {
                    Binary.append(value, to: &trailer)
                }
                Binary.append(Binary.checksum(trailer), to: &trailer)
                try write(trailer)
            }
        }
    }
}

import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// What a listing needs of a long pending queue without replaying it: the
/// records with a waiting change and their versions, as the log's first
/// `coveredBytes` bytes leave them (`sync/pending.keys`). `PendingQueue.keys()`
/// then replays only the lines appended since, and writes a new summary once
/// those are many.
///
/// A cache derived from the log, as the clip index is, and never trusted: it is
/// checksummed, range-checked, and used only while the log is the file it was
/// made from (same inode, at least as long, the same first and last 4 KiB of
/// what it covers, a line ending where it stops). Otherwise it is ignored and
/// written again. Written atomically, without holding the data directory's
/// lock: whatever a crash or a race leaves is either a whole summary or one
/// that fails its checks.
struct PendingSummary {
    /// How much of the log this summarizes: whole lines only.
    var coveredBytes: Int
    var version: Int
    var clips: [(id: PackedID, version: Int)]
    var others: [(key: RecordKey, version: Int)]

    /// The records it names: the waiting ones when nothing follows what it covers.
    var waiting: RecordKeySet {
        var keys = RecordKeySet()
        keys.clips.reserveCapacity(clips.count)
        for clip in clips { keys.clips.insert(clip.id) }
        for other in others { keys.others.insert(other.key) }
        return keys
    }

    static let magic: [UInt8] = Array("ITSYPKS1".utf8)
    static let headerSize = 80
    /// Bytes of the log checksummed at each end of what a summary covers.
    static let window = 4096
    /// A summary is written again once this many bytes of lines follow what it covers.
    static let rewriteAfter = 64 << 10

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

    /// The summary at `path` if it is whole and still describes the open log `fd` (of `inode` and `size` bytes).
    static func load(_ path: String, in tree: FileTree, log fd: Int32, inode: UInt64, size: Int, logPath: String) -> PendingSummary? {
        // Each waiting record takes a line of the log, over 24 bytes: a larger summary is not one of this log.
        guard let bytes = (try? tree.read(path, limit: headerSize + 2 * size + 64)) ?? nil,
            let (summary, mark) = decode(bytes), summary.coveredBytes <= size,
            LogMark(fd: fd, inode: inode, covered: summary.coveredBytes, path: logPath) == mark
        else { return nil }
        return summary
    }

    /// Writes this summary of the open log `fd`; nothing when the log cannot be read back to check it.
    func write(to path: String, in tree: FileTree, log fd: Int32, inode: UInt64, logPath: String) throws {
        guard let mark = LogMark(fd: fd, inode: inode, covered: coveredBytes, path: logPath) else { return }
        try tree.writeAtomically(path, encoded(mark), syncingDirectory: false)
    }

    // MARK: Bytes

    /// Header: magic, inode, covered bytes, head and tail checksums, version, clip count,
    /// size of the other keys, body checksum, header checksum (eight bytes each, little-endian).
    /// Body: per clip its id (16 bytes) and version; then per other key the lengths and bytes
    /// of its type and name, and its version.
    private func encoded(_ mark: LogMark) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(clips.count * 24)
        for clip in clips {
            Binary.append(clip.id.high, to: &body)
            Binary.append(clip.id.low, to: &body)
            Binary.append(UInt64(clip.version), to: &body)
        }
        let clipBytes = body.count
        for other in others {
            for text in [other.key.type.rawValue, other.key.name] {
                Binary.append(UInt64(text.utf8.count), to: &body)
                body += text.utf8
            }
            Binary.append(UInt64(other.version), to: &body)
        }
        var bytes = PendingSummary.magic
        for value in [
            mark.inode, UInt64(coveredBytes), mark.head, mark.tail, UInt64(version), UInt64(clips.count),
            UInt64(body.count - clipBytes), Binary.checksum(body),
        ] {
            Binary.append(value, to: &bytes)
        }
        Binary.append(Binary.checksum(bytes), to: &bytes)
        return bytes + body
    }

    private static func decode(_ bytes: [UInt8]) -> (PendingSummary, LogMark)? {
        guard bytes.count >= headerSize, Array(bytes[0..<8]) == magic,
            Binary.checksum(bytes[0..<headerSize - 8]) == Binary.read(bytes[...], at: headerSize - 8)
        else { return nil }
        let field = { (index: Int) in Binary.read(bytes[...], at: 8 + 8 * index) }
        let (covered, version, clipCount, otherBytes) = (field(1), field(4), field(5), field(6))
        let versions = UInt64(PendingLine.versions.lowerBound)...UInt64(PendingLine.versions.upperBound)
        guard covered <= UInt64(Int.max), versions.contains(version), clipCount <= UInt64(bytes.count / 24),
            otherBytes <= UInt64(bytes.count), headerSize + Int(clipCount) * 24 + Int(otherBytes) == bytes.count,
            Binary.checksum(bytes[headerSize...]) == field(7)
        else { return nil }
        var summary = PendingSummary(coveredBytes: Int(covered), version: Int(version), clips: [], others: [])
        let valid = bytes.withUnsafeBytes { raw -> Bool in
            func integer(_ at: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
            summary.clips.reserveCapacity(Int(clipCount))
            var at = headerSize
            for _ in 0..<Int(clipCount) {
                let id = PackedID(high: integer(at), low: integer(at + 8))
                guard versions.contains(integer(at + 16)) else { return false }
                summary.clips.append((id, Int(integer(at + 16))))
                at += 24
            }
            func text() -> String? {
                guard at + 8 <= raw.count else { return nil }
                let length = integer(at)
                guard length <= UInt64(raw.count - at - 8) else { return nil }
                defer { at += 8 + Int(length) }
                return Text.decodeUTF8(UnsafeBufferPointer(rebasing: raw.bindMemory(to: UInt8.self)[at + 8..<at + 8 + Int(length)]))
            }
            while at < raw.count {
                guard let typeName = text(), let type = RecordType(rawValue: typeName), let name = text(),
                    at + 8 <= raw.count, versions.contains(integer(at))
                else { return false }
                summary.others.append((RecordKey(type, name), Int(integer(at))))
                at += 8
            }
            return true
        }
        guard valid else { return nil }
        return (summary, LogMark(inode: field(0), head: field(2), tail: field(3)))
    }
}

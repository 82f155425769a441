import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A removed entry's text does not stay on disk: once its `rm` line is durable, the text between
/// the quotes of its add line is overwritten with spaces in place (pwrite, then fdatasync), which
/// costs the size of that text, not of the log. A crash in the middle leaves a line that still
/// starts and ends as an add line, whose entry the durable `rm` line removes: nothing reads its
/// text again, whatever mix of text and spaces it holds. Opening the log after a crash (an index
/// rebuild) erases what such a crash left. The spaces go with the next compaction, which the
/// dead lines already drive (amortised O(1) per change). An add line in another form than
/// `addLine`'s cannot be erased in place: the log is compacted at once instead, which drops it.
extension ClipStore {
    /// Where the escaped text of `slot`'s add line lies in the file, or nil when the line is not in
    /// `addLine`'s form (or not the slot's line).
    static func textRange(of slot: ClipSlot, fd: Int32, path: String) throws -> Range<Int>? {
        let offset = Int(slot.offset)
        let length = Int(slot.length)
        let head = try FileSystem.read(fd: fd, offset: offset, count: min(length, headerAllowance), path: path)
        guard let textStart = head.withUnsafeBufferPointer(ClipLineHeader.init)?.textStart,
            head.withUnsafeBufferPointer({ ClipLineHeader.hasID(slot.id, $0) }), textStart <= length - 2,
            try FileSystem.read(fd: fd, offset: offset + length - 2, count: 2, path: path) == [0x22, 0x7D]
        else { return nil }
        return (offset + textStart)..<(offset + length - 2)
    }

    /// Overwrites the texts of `slots` (removed entries) with spaces through `write`, reading them
    /// from `fd` first so that a text erased already is not written again. Returns the ranges
    /// written, and whether every slot's line could be erased in place.
    static func eraseTexts(
        of slots: some Sequence<ClipSlot>, fd: Int32, path: String, write: ([UInt8], Int) throws -> Void
    ) throws -> (wrote: Bool, complete: Bool) {
        var wrote = false
        var complete = true
        var spaces: [UInt8] = []
        for slot in slots {
            guard let range = try textRange(of: slot, fd: fd, path: path) else {
                complete = false
                continue
            }
            var start = range.lowerBound
            while start < range.upperBound {
                let count = min(1 << 20, range.upperBound - start)
                if try FileSystem.read(fd: fd, offset: start, count: count, path: path).contains(where: { $0 != 0x20 }) {
                    if spaces.count < count { spaces = [UInt8](repeating: 0x20, count: count) }
                    try write(Array(spaces[..<count]), start)
                    wrote = true
                }
                start += count
            }
        }
        return (wrote, complete)
    }

    /// Erases the texts of removed entries in `log` and makes that durable; false when a line
    /// cannot be erased in place (the caller compacts the log, which leaves it out). Called once
    /// their `rm` lines are durable, and before an index that covers those lines is written.
    static func erase(_ removed: some Sequence<ClipSlot>, in log: AppendFile) throws -> Bool {
        let outcome = try eraseTexts(of: removed, fd: log.fd, path: log.path) { bytes, offset in
            try FileSystem.writeAll(fd: log.fd, bytes, at: offset, path: log.path)
        }
        if outcome.wrote, fdatasync(log.fd) != 0 { throw FileSystem.fail("sync", log.path) }
        return outcome.complete
    }

    /// Erases the texts of removed entries (see `erase(_:in:)`) and removes the files of the
    /// binary ones, durably: once a removal returns, their bytes are gone.
    func erase(_ removed: [ClipSlot]) throws -> Bool {
        let complete = try ClipStore.erase(removed, in: log)
        var unlinked = false
        for slot in removed where slot.isBinary {
            if try tree.remove(blobPath(slot.idString)) { unlinked = true }
        }
        if unlinked { try tree.syncDirectory(blobDirectory) }
        return complete
    }
}

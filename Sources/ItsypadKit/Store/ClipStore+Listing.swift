import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A live entry as a listing reads it: its slot, and its text still escaped
/// as the log holds it — all of it, or only its first bytes when a preview is
/// all that is printed. Valid only inside the `forEachListed` callback.
package struct ListedClip {
    package let slot: ClipSlot
    package let localOnly: LocalOnlyReason?
    /// The escaped text read so far.
    package let head: UnsafeBufferPointer<UInt8>
    /// The whole escaped text's length, and where it starts in the log.
    let textLength: Int
    let textOffset: Int

    package var isWhole: Bool { head.count == textLength }
}

/// Listing: entries are read straight from the log's bytes, many lines per
/// system call, and only as much of each line as the listing needs. Lines are
/// in the form `addLine` writes; any other form falls back to the JSON parser.
extension ClipStore {
    /// Bytes of a line before its text: `{"op":"add","id":…,"ts":…,"pinned":…,"local":…,"text":"`.
    static let headerAllowance = 160
    /// Most bytes read at once for a batch of lines.
    private static let batchBytes = 1 << 21

    /// Streams live entries newest first, reading up to `textHead` bytes of
    /// each escaped text (nil: all of it), until `body` returns false.
    package func forEachListed(pinnedOnly: Bool = false, textHead: Int?, _ body: (ListedClip) throws -> Bool) throws {
        try checkingIndex {
            var buffer: [UInt8] = []
            var end = Int(index.header.slotCount)
            var chunk = 64
            while end > 0 {
                let start = max(0, end - chunk)
                let slots = try index.slots(start..<end).reversed().filter { $0.isLive && (!pinnedOnly || $0.isPinned) }
                var batchStart = 0
                while batchStart < slots.count {
                    var batchEnd = batchStart
                    var bytes = 0
                    while batchEnd < slots.count, bytes < ClipStore.batchBytes {
                        bytes += ClipStore.need(slots[batchEnd], textHead: textHead)
                        batchEnd += 1
                    }
                    if try !readLines(slots[batchStart..<batchEnd], textHead: textHead, into: &buffer, body) { return }
                    batchStart = batchEnd
                }
                end = start
                chunk = min(chunk * 4, 16384)
            }
        }
    }

    private static func need(_ slot: ClipSlot, textHead: Int?) -> Int {
        let length = Int(slot.length)
        guard let textHead else { return length }
        return min(length, headerAllowance + textHead)
    }

    /// Reads the lines of `slots` with one pread per cluster of nearby lines, then hands them over in order.
    private func readLines(
        _ slots: ArraySlice<ClipSlot>, textHead: Int?, into buffer: inout [UInt8],
        _ body: (ListedClip) throws -> Bool
    ) throws -> Bool {
        // Newest first is usually the log backwards: then no sort is needed.
        // (By index: see `FileTree.openDirectory` on `zip`.)
        let backwards = slots.indices.dropLast().allSatisfy { slots[$0].offset > slots[$0 + 1].offset }
        let order = backwards ? Array(slots.indices.reversed()) : slots.indices.sorted { slots[$0].offset < slots[$1].offset }
        var positions = [Int](repeating: 0, count: slots.count)
        var clusters: [(start: Int, end: Int, at: Int)] = []
        var size = 0
        for member in order {
            let start = Int(slots[member].offset)
            let end = start + ClipStore.need(slots[member], textHead: textHead)
            // Lines closer than a page or two share a read; a long text's unread tail never joins one.
            if let last = clusters.last, start <= last.end + 8192 {
                size += max(0, end - last.end)
                clusters[clusters.count - 1].end = max(last.end, end)
            } else {
                clusters.append((start, end, size))
                size += end - start
            }
            let cluster = clusters[clusters.count - 1]
            positions[member - slots.startIndex] = cluster.at + start - cluster.start
        }
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: repeatElement(0, count: size))
        try buffer.withUnsafeMutableBytes { bytes in
            for cluster in clusters {
                let target = UnsafeMutableRawBufferPointer(rebasing: bytes[cluster.at..<cluster.at + cluster.end - cluster.start])
                guard try FileSystem.read(fd: log.fd, offset: cluster.start, into: target, path: logPath) == target.count else {
                    throw ItsypadError.corrupt(logPath, "shorter than its index says")
                }
            }
        }
        return try buffer.withUnsafeBufferPointer { bytes in
            for member in slots.indices {
                let slot = slots[member]
                let start = positions[member - slots.startIndex]
                let count = ClipStore.need(slot, textHead: textHead)
                if try !listed(slot, line: UnsafeBufferPointer(rebasing: bytes[start..<start + count]), body) { return false }
            }
            return true
        }
    }

    /// Hands over one entry from its line (or the start of it).
    private func listed(_ slot: ClipSlot, line: UnsafeBufferPointer<UInt8>, _ body: (ListedClip) throws -> Bool) throws -> Bool {
        let length = Int(slot.length)
        if let header = ClipLineHeader(line), header.textStart <= length - 2, ClipLineHeader.hasID(slot.id, line),
            line.count < length || (line[length - 2] == 0x22 && line[length - 1] == 0x7D)
        {
            let textEnd = min(line.count, length - 2)
            return try body(
                ListedClip(
                    slot: slot, localOnly: header.localOnly,
                    head: UnsafeBufferPointer(rebasing: line[header.textStart..<max(header.textStart, textEnd)]),
                    textLength: length - 2 - header.textStart, textOffset: Int(slot.offset) + header.textStart))
        }
        // Another form of the same JSON: parse the whole line and hand over its text as addLine would escape it
        // (a slot that does not point to its own add line is a damaged index: `entry` throws).
        let entry = try self.entry(slot)
        var text = entry.text
        var escaped: [UInt8] = []
        text.withUTF8 { JSONString.appendEscaped($0, to: &escaped) }
        return try escaped.withUnsafeBufferPointer {
            try body(ListedClip(slot: slot, localOnly: entry.localOnly, head: $0, textLength: $0.count, textOffset: 0))
        }
    }

    /// Streams the escaped text of `clip` after its head, in pieces of at most
    /// `piece` bytes; the flag tells the last piece.
    func forEachTextPiece(
        of clip: ListedClip, piece: Int = 1 << 20,
        _ body: (UnsafeBufferPointer<UInt8>, Bool) throws -> Bool
    ) throws {
        var done = clip.head.count
        while done < clip.textLength {
            let count = min(piece, clip.textLength - done)
            let bytes = try storeOperation {
                try FileSystem.read(fd: log.fd, offset: clip.textOffset + done, count: count, path: logPath)
            }
            guard bytes.count == count else { throw ItsypadError.corrupt(logPath, "entry at byte \(clip.slot.offset) ends early") }
            done += count
            if try !bytes.withUnsafeBufferPointer({ try body($0, done == clip.textLength) }) { return }
        }
    }

    /// Streams the text of `clip` decoded to UTF-8 (or, `reescaping`, escaped
    /// as `addLine` escapes it), head first, until `body` returns false; the flag
    /// tells the last piece. `decoded` is scratch space the caller may reuse.
    package func forEachDecodedPiece(
        of clip: ListedClip, reescaping: Bool = false, scratch decoded: inout [UInt8],
        _ body: (UnsafeBufferPointer<UInt8>, Bool) throws -> Bool
    ) throws {
        // Most texts need no decoding at all, read whole: plain ASCII without escapes, or, to be escaped
        // again, already in the form `appendEscaped` writes.
        if clip.isWhole && (reescaping ? JSONString.isCanonicallyEscaped(clip.head) : JSONString.isPlainASCII(clip.head)) {
            _ = try body(clip.head, true)
            return
        }
        try decodePieces(of: clip, reescaping: reescaping, scratch: &decoded, body)
    }

    private func decodePieces(
        of clip: ListedClip, reescaping: Bool, scratch decoded: inout [UInt8],
        _ body: (UnsafeBufferPointer<UInt8>, Bool) throws -> Bool
    ) throws {
        var leftover: [UInt8] = []
        func feed(_ raw: UnsafeBufferPointer<UInt8>, final: Bool) throws -> Bool {
            // Most texts need no decoding at all: plain ASCII without escapes.
            if leftover.isEmpty && JSONString.isPlainASCII(raw) {
                return try body(raw, final)
            }
            decoded.removeAll(keepingCapacity: true)
            do {
                if leftover.isEmpty {
                    let consumed = try JSONString.unescape(raw, final: final, reescaping: reescaping, into: &decoded)
                    leftover = Array(raw[consumed...])
                } else {
                    // An escape or a character cut by the previous piece's end.
                    let joined = leftover + Array(raw)
                    let consumed = try joined.withUnsafeBufferPointer {
                        try JSONString.unescape($0, final: final, reescaping: reescaping, into: &decoded)
                    }
                    leftover = Array(joined[consumed...])
                }
            } catch let error as JSONString.Malformed {
                throw corrupt(clip, error)
            }
            return try decoded.withUnsafeBufferPointer { try body($0, final) }
        }
        guard try feed(clip.head, final: clip.isWhole), !clip.isWhole else { return }
        try forEachTextPiece(of: clip) { try feed($0, final: $1) }
    }

    /// The whole text of `clip` as UTF-8.
    package func wholeText<Result>(
        of clip: ListedClip, scratch: inout [UInt8], _ body: (UnsafeBufferPointer<UInt8>) throws -> Result
    ) throws -> Result {
        var whole: [UInt8] = []
        var result: Result?
        try forEachDecodedPiece(of: clip, scratch: &scratch) { piece, last in
            if last && whole.isEmpty {
                result = try body(piece)
            } else {
                if whole.isEmpty { whole.reserveCapacity(clip.textLength) }
                whole += piece
                if last { result = try whole.withUnsafeBufferPointer(body) }
            }
            return true
        }
        return result!
    }

    /// The error for a text that does not decode.
    func corrupt(_ clip: ListedClip, _ reason: JSONString.Malformed) -> ItsypadError {
        ItsypadError.corrupt(logPath, "unreadable entry at byte \(clip.slot.offset) (\(reason.message))")
    }
}

/// The start of an add line in the form `ClipStore.addLine` writes:
/// `{"op":"add","id":"<uuid>","ts":<int>,"pinned":<bool>[,"local":"<reason>"],"text":"`.
struct ClipLineHeader {
    let timestamp: Int64
    let pinned: Bool
    /// Where the bytes after the pinned value start (`,"local"…` or `,"text"…`).
    let pinnedEnd: Int
    let textStart: Int
    let localOnly: LocalOnlyReason?

    private static var opAndID: StaticString { #"{"op":"add","id":""# }
    private static var idStart: Int { opAndID.utf8CodeUnitCount }

    /// nil when the line does not start in that form.
    init?(_ line: UnsafeBufferPointer<UInt8>) {
        var reader = FixedFormReader(line)
        guard reader.skip(ClipLineHeader.opAndID), line.count >= ClipLineHeader.idStart + 36 else { return nil }
        reader.position += 36
        guard reader.skip(#"","ts":"#), let timestamp = reader.integer(), reader.skip(#","pinned":"#) else { return nil }
        let pinned = reader.skip("true")
        guard pinned || reader.skip("false") else { return nil }
        pinnedEnd = reader.position
        var reason: LocalOnlyReason?
        if reader.skip(#","local":""#) {
            let start = reader.position
            while let byte = reader.current, byte != 0x22, reader.position - start < 32 { reader.position += 1 }
            guard reader.current == 0x22 else { return nil }
            let name = String(decoding: UnsafeBufferPointer(rebasing: line[start..<reader.position]), as: UTF8.self)
            reason = LocalOnlyReason(rawValue: name) ?? .requested
            reader.position += 1
        }
        guard reader.skip(#","text":""#) else { return nil }
        self.timestamp = timestamp
        self.pinned = pinned
        textStart = reader.position
        localOnly = reason
    }

    /// The id of the line this header was read from.
    static func id(of line: UnsafeBufferPointer<UInt8>) -> PackedID? {
        PackedID(canonicalUTF8: UnsafeBufferPointer(rebasing: line[idStart..<idStart + 36]))
    }

    /// Whether the line this header was read from holds `id` (the same as comparing `id(of:)`, without decoding it).
    static func hasID(_ id: PackedID, _ line: UnsafeBufferPointer<UInt8>) -> Bool {
        id.isText(UnsafeBufferPointer(rebasing: line[idStart..<idStart + 36]))
    }

    /// The line's start with another pin: `{"op":"add","id":…,"ts":…,"pinned":<pinned>`.
    static func start(id: PackedID, timestamp: Int64, pinned: Bool) -> [UInt8] {
        var bytes: [UInt8] = []
        func append(_ literal: StaticString) { literal.withUTF8Buffer { bytes += $0 } }
        append(opAndID)
        id.appendText(to: &bytes)
        append(#"","ts":"#)
        bytes += String(timestamp).utf8
        append(#","pinned":"#)
        append(pinned ? "true" : "false")
        return bytes
    }
}

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
    /// What a binary entry's line says of it; nil for text.
    package let binary: ListedBinary?
    /// The id's text form, as the line holds it (the slot's id: the listing checked).
    package let idText: UnsafeBufferPointer<UInt8>
    /// The escaped text read so far.
    package let head: UnsafeBufferPointer<UInt8>
    /// The whole escaped text's length, and where it starts in the log.
    let textLength: Int
    let textOffset: Int

    package var isWhole: Bool { head.count == textLength }
}

/// A binary entry as its line describes it, for a listing (valid only inside its callback).
package struct ListedBinary {
    /// The MIME type's bytes.
    package let type: UnsafeBufferPointer<UInt8>
    package let size: Int
    package let width: Int?
    package let height: Int?
    /// The SHA-256 of the bytes, as the line holds it (64 lowercase hex digits).
    let digest: UnsafeBufferPointer<UInt8>
}

/// Listing: entries are read straight from the log's bytes, many lines per
/// system call, and only as much of each line as the listing needs. Lines are
/// in the form `addLine` writes; any other form falls back to the JSON parser.
extension ClipStore {
    /// Bytes of a line before its text: `{"op":"add","id":…,"ts":…,"pinned":…,"local":…,"text":"`,
    /// with a binary entry's type (up to `MediaType.maxLength`), size, digest and pixels.
    static let headerAllowance = 448

    /// Streams live entries newest first, reading up to `textHead` bytes of
    /// each escaped text (nil: all of it), until `body` returns false. An entry
    /// that `skipping` rules out, given its slot and its line from where its text
    /// may start, is passed over unread (a search that can tell from those bytes
    /// that a text that compares as bytes does not match).
    package func forEachListed(
        pinnedOnly: Bool = false, textHead: Int?, skipping: ((ClipSlot, UnsafeBufferPointer<UInt8>) -> Bool)? = nil,
        _ body: (ListedClip) throws -> Bool
    ) throws {
        try checkingIndex {
            var end = Int(index.header.slotCount)
            guard end > 0 else { return }
            // The log is read where it lies in the page cache, mapped: no copy of it, and of a
            // preview's long text only the pages of its head are read.
            let logSize = log.size
            guard logSize > 0 else { throw ItsypadError.corrupt(logPath, "empty, though its index lists entries") }
            guard let mapped = MappedFile.map(fd: log.fd, count: logSize) else { throw FileSystem.fail("map", logPath) }
            // The pages from here on have been given back (they are read again if a line there is).
            var resident = logSize
            // The index is read in chunks, small first (`clip ls -n 20` reads 64 slots), into buffers
            // kept from one chunk to the next: their pages are faulted in once.
            var indexBytes: [UInt8] = []
            var chunkSlots: [ClipSlot] = []
            var chunk = 64
            while end > 0 {
                let start = max(0, end - chunk)
                try index.slots(start..<end, into: &chunkSlots, reading: &indexBytes)
                for slot in chunkSlots.reversed() where slot.isLive && (!pinnedOnly || slot.isPinned) {
                    let offset = Int(slot.offset), count = ClipStore.need(slot, textHead: textHead)
                    guard offset + count <= logSize else { throw ItsypadError.corrupt(logPath, "shorter than its index says") }
                    // Newest first is mostly the log backwards: what lies well after this line is done with.
                    if resident - offset > 4 << 20 {
                        mapped.release(offset + (2 << 20)..<resident)
                        resident = offset + (2 << 20)
                    }
                    let line = UnsafeBufferPointer(rebasing: mapped.bytes[offset..<offset + count])
                    // A text that compares as bytes is in a line of `addLine`'s form: it starts after the id.
                    if count == Int(slot.length), count > ClipLineHeader.earliestText, let skipping,
                        skipping(slot, UnsafeBufferPointer(rebasing: line[ClipLineHeader.earliestText...]))
                    {
                        continue
                    }
                    if try !listed(slot, line: line, body) { return }
                }
                end = start
                chunk = min(chunk * 4, ClipStore.slotChunk)
            }
        }
    }

    private static func need(_ slot: ClipSlot, textHead: Int?) -> Int {
        let length = Int(slot.length)
        guard let textHead else { return length }
        return min(length, headerAllowance + textHead)
    }

    /// Hands over one entry from its line (or the start of it).
    private func listed(_ slot: ClipSlot, line: UnsafeBufferPointer<UInt8>, _ body: (ListedClip) throws -> Bool) throws -> Bool {
        let length = Int(slot.length)
        if let header = ClipLineHeader(line), header.textStart <= length - 2, ClipLineHeader.hasID(slot.id, line),
            line.count < length || (line[length - 2] == 0x22 && line[length - 1] == 0x7D)
        {
            let textEnd = min(line.count, length - 2)
            let binary = header.binary.map {
                ListedBinary(
                    type: UnsafeBufferPointer(rebasing: line[$0.type]), size: $0.size, width: $0.width, height: $0.height,
                    digest: UnsafeBufferPointer(rebasing: line[$0.digest]))
            }
            return try body(
                ListedClip(
                    slot: slot, localOnly: header.localOnly, binary: binary, idText: ClipLineHeader.idText(line),
                    head: UnsafeBufferPointer(rebasing: line[header.textStart..<max(header.textStart, textEnd)]),
                    textLength: length - 2 - header.textStart, textOffset: Int(slot.offset) + header.textStart))
        }
        // Another form of the same JSON: parse the whole line and hand over its text as addLine would escape it
        // (a slot that does not point to its own add line is a damaged index: `entry` throws).
        let entry = try self.entry(slot)
        var text = entry.text
        var escaped: [UInt8] = []
        text.withUTF8 { JSONString.appendEscaped($0, to: &escaped) }
        var idText: [UInt8] = []
        slot.id.appendText(to: &idText)
        let type = Array((entry.binary?.type ?? "").utf8)
        let digest = Array((entry.binary?.sha256 ?? "").utf8)
        return try escaped.withUnsafeBufferPointer { head in
            try idText.withUnsafeBufferPointer { idText in
                try type.withUnsafeBufferPointer { type in
                    try digest.withUnsafeBufferPointer { digest in
                        let binary = entry.binary.map {
                            ListedBinary(type: type, size: $0.size, width: $0.width, height: $0.height, digest: digest)
                        }
                        return try body(
                            ListedClip(
                                slot: slot, localOnly: entry.localOnly, binary: binary, idText: idText, head: head,
                                textLength: head.count, textOffset: 0))
                    }
                }
            }
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
        // Most texts need no decoding at all, read whole: valid UTF-8 without escapes, or, to be
        // escaped again, already in the form `appendEscaped` writes.
        if clip.isWhole && (reescaping ? JSONString.isCanonicallyEscaped(clip.head) : JSONString.isUnescapedUTF8(clip.head)) {
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

    /// Whether `body` holds for the whole text of `clip` as UTF-8. (Not generic: a search calls
    /// it for every candidate, and a generic call from another module looked its types up each time.)
    package func wholeText(
        of clip: ListedClip, scratch: inout [UInt8], _ body: (UnsafeBufferPointer<UInt8>) throws -> Bool
    ) throws -> Bool {
        var whole: [UInt8] = []
        var result: Bool?
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
/// `{"op":"add","id":"<uuid>","ts":<int>,"pinned":<bool>[,"local":"<reason>"]`, for a binary
/// entry `,"type":"<mime>","size":<int>,"sha256":"<hex>"[,"width":<int>,"height":<int>]`, then `,"text":"`.
struct ClipLineHeader {
    /// Where the timestamp's digits stand in the line, after its sign: its value is read only when
    /// asked (`timestamp(of:)`), as a listing takes it from the index.
    private let timestampDigits: Range<Int>
    private let timestampIsNegative: Bool
    let pinned: Bool
    /// Where the bytes after the pinned value start (`,"local"…` or `,"text"…`).
    let pinnedEnd: Int
    let textStart: Int
    let localOnly: LocalOnlyReason?
    let binary: Binary?

    /// A binary entry's fields: where its type and digest stand in the line, and its numbers.
    struct Binary {
        let type: Range<Int>
        let size: Int
        let digest: Range<Int>
        let width: Int?
        let height: Int?
    }

    private static var opAndID: StaticString { #"{"op":"add","id":""# }
    private static var idStart: Int { opAndID.utf8CodeUnitCount }
    /// Where a text may start at the earliest in a line of this form: after its id and `","ts":`.
    static var earliestText: Int { idStart + 36 + 7 }

    /// nil when the line does not start in that form. (Read here rather than with
    /// `FixedFormReader`, whose calls into another module cost more than the
    /// comparisons: a listing reads 100,000 headers.)
    init?(_ line: UnsafeBufferPointer<UInt8>) {
        guard let base = line.baseAddress else { return nil }
        var position = 0
        guard Self.skip(ClipLineHeader.opAndID, in: line, at: &position), line.count >= ClipLineHeader.idStart + 36 else { return nil }
        position += 36
        guard Self.skip(#"","ts":"#, in: line, at: &position) else { return nil }
        // An integer of up to 18 digits, optionally negative, as `FixedFormReader.integer` reads it.
        let negative = position < line.count && base[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        let digitsStart = position
        position += Self.digitCount(in: line, from: position, limit: 18)
        let digitsEnd = position
        guard digitsEnd > digitsStart, Self.skip(#","pinned":"#, in: line, at: &position) else { return nil }
        let pinned = Self.skip("true", in: line, at: &position)
        guard pinned || Self.skip("false", in: line, at: &position) else { return nil }
        pinnedEnd = position
        var reason: LocalOnlyReason?
        if Self.skip(#","local":""#, in: line, at: &position) {
            let start = position
            while position < line.count, base[position] != 0x22, position - start < 32 { position += 1 }
            guard position < line.count, base[position] == 0x22 else { return nil }
            let name = String(decoding: UnsafeBufferPointer(rebasing: line[start..<position]), as: UTF8.self)
            reason = LocalOnlyReason(rawValue: name) ?? .requested
            position += 1
        }
        var binary: Binary?
        if Self.skip(#","type":""#, in: line, at: &position) {
            let typeStart = position
            while position < line.count, base[position] != 0x22, position - typeStart <= MediaType.maxLength { position += 1 }
            guard position < line.count, base[position] == 0x22 else { return nil }
            let type = typeStart..<position
            position += 1
            guard Self.skip(#","size":"#, in: line, at: &position), let size = Self.integer(in: line, at: &position),
                Self.skip(#","sha256":""#, in: line, at: &position), position + 64 < line.count, base[position + 64] == 0x22
            else { return nil }
            let digest = position..<position + 64
            position += 65
            var width: Int?
            var height: Int?
            if Self.skip(#","width":"#, in: line, at: &position) {
                guard let w = Self.integer(in: line, at: &position), Self.skip(#","height":"#, in: line, at: &position),
                    let h = Self.integer(in: line, at: &position)
                else { return nil }
                (width, height) = (w, h)
            }
            binary = Binary(type: type, size: size, digest: digest, width: width, height: height)
        }
        guard Self.skip(#","text":""#, in: line, at: &position) else { return nil }
        timestampDigits = digitsStart..<digitsEnd
        timestampIsNegative = negative
        self.pinned = pinned
        textStart = position
        localOnly = reason
        self.binary = binary
    }

    /// A non-negative integer of up to 18 digits at `position`, which moves past it.
    private static func integer(in line: UnsafeBufferPointer<UInt8>, at position: inout Int) -> Int? {
        let count = digitCount(in: line, from: position, limit: 18)
        guard count > 0 else { return nil }
        let value = line[position..<position + count].reduce(0) { $0 &* 10 &+ Int($1 &- 0x30) }
        position += count
        return value
    }

    /// The timestamp of the line this header was read from.
    func timestamp(of line: UnsafeBufferPointer<UInt8>) -> Int64 {
        let magnitude = line[timestampDigits].reduce(0) { $0 &* 10 &+ Int64($1 &- 0x30) }
        return timestampIsNegative ? -magnitude : magnitude
    }

    /// How many decimal digits stand from `start` in `line`, up to `limit`. Eight bytes at a time where
    /// the line holds eight more, as a line of this form does after its timestamp.
    @inline(__always)
    private static func digitCount(in line: UnsafeBufferPointer<UInt8>, from start: Int, limit: Int) -> Int {
        let base = line.baseAddress!
        var count = 0
        while count < limit && start + count + 8 <= line.count {
            // A byte that is a digit becomes its value; the high bits of the others (values of 10 or
            // more) are set, exactly: no carries cross bytes. The first byte is the lowest.
            let values =
                UInt64(littleEndian: UnsafeRawPointer(base + start + count).loadUnaligned(as: UInt64.self)) ^ 0x3030_3030_3030_3030
            let lows: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
            let run = (((values & lows) &+ 0x7676_7676_7676_7676 | values) & ~lows).trailingZeroBitCount / 8
            count += run
            if run < 8 { return min(count, limit) }
        }
        while count < limit && start + count < line.count && base[start + count] &- 0x30 < 10 { count += 1 }
        return min(count, limit)
    }

    /// Whether `literal` stands at `position` in `line`; if it does, `position` moves past it.
    @inline(__always)
    private static func skip(_ literal: StaticString, in line: UnsafeBufferPointer<UInt8>, at position: inout Int) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard position + count <= line.count, equal(line.baseAddress! + position, literal.utf8Start, count) else { return false }
        position += count
        return true
    }

    /// `memcmp(a, b, count) == 0` for a literal's few bytes, a word at a time
    /// (where the literal's length is known, the comparisons are all that is left).
    @inline(__always)
    private static func equal(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        let (a, b) = (UnsafeRawPointer(a), UnsafeRawPointer(b))
        func same<Word: FixedWidthInteger>(_: Word.Type, at offset: Int) -> Bool {
            a.loadUnaligned(fromByteOffset: offset, as: Word.self) == b.loadUnaligned(fromByteOffset: offset, as: Word.self)
        }
        switch count {
        case 4..<8: return same(UInt32.self, at: 0) && same(UInt32.self, at: count - 4)
        case 8...24:
            // Words from the start, and one that ends at the last byte (it may overlap the one before).
            var offset = 0
            while offset + 8 < count {
                guard same(UInt64.self, at: offset) else { return false }
                offset += 8
            }
            return same(UInt64.self, at: count - 8)
        default: return memcmp(a, b, count) == 0
        }
    }

    /// The id of the line this header was read from.
    static func id(of line: UnsafeBufferPointer<UInt8>) -> PackedID? {
        PackedID(canonicalUTF8: UnsafeBufferPointer(rebasing: line[idStart..<idStart + 36]))
    }

    /// The id's text in the line this header was read from.
    static func idText(_ line: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: line[idStart..<idStart + 36])
    }

    /// Whether the line this header was read from holds `id` (the same as comparing `id(of:)`, without decoding it).
    static func hasID(_ id: PackedID, _ line: UnsafeBufferPointer<UInt8>) -> Bool {
        id.isText(idText(line))
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

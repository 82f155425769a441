#if canImport(Glibc)
import Glibc
#endif

/// Small text utilities shared by the commands.
public enum Text {
    /// Decodes bytes as UTF-8, refusing invalid sequences instead of repairing them.
    public static func decodeUTF8(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBufferPointer(decodeUTF8)
    }

    /// `decodeUTF8` of bytes in place.
    package static func decodeUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        String(validating: bytes, as: UTF8.self)
    }

    /// "1 tab", "2 tabs", "0 tabs": a count with its noun (regular plurals only).
    public static func counted(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }

    public static func isBlank(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0.properties.isWhitespace }
    }

    /// One line: whitespace runs collapsed to a space, cut at `limit` characters with "…".
    public static func preview(_ text: String, limit: Int) -> String {
        var text = text
        return text.withUTF8 { utf8 in
            var output: [UInt8] = []
            if !PreviewBuilder.append(utf8: utf8, limit: limit, to: &output) {
                var builder = PreviewBuilder(limit: limit)
                _ = builder.feed(utf8, isLast: true)
                output = builder.output
            }
            return String(decoding: output, as: UTF8.self)
        }
    }

    /// Makes a listing line safe to print on a terminal: control characters
    /// (C0 but the tab that separates columns, and newlines if asked; DEL; C1) and the bidirectional
    /// embeddings, overrides and isolates become U+FFFD, so text from
    /// elsewhere can neither drive the terminal (`ESC ]52;…`, `ESC [2J`, CSI)
    /// nor reorder what the line shows.
    package static func makeTerminalSafe(_ line: inout [UInt8], keepingNewlines: Bool = false) {
        func isControl(_ byte: UInt8) -> Bool { byte < 0x20 && byte != 0x09 && !(keepingNewlines && byte == 0x0A) || byte == 0x7F }
        guard line.contains(where: { isControl($0) || $0 == 0xC2 || $0 == 0xE2 || $0 == 0xD8 }) else { return }
        let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]
        var safe: [UInt8] = []
        safe.reserveCapacity(line.count + 16)
        var index = 0
        while index < line.count {
            let byte = line[index]
            let next = index + 1 < line.count ? line[index + 1] : 0
            let third = index + 2 < line.count ? line[index + 2] : 0
            if isControl(byte) {
                safe += replacement
                index += 1
            } else if byte == 0xC2, (0x80...0x9F).contains(next) {
                safe += replacement
                index += 2
            } else if byte == 0xD8 && next == 0x9C  // U+061C ARABIC LETTER MARK
                || byte == 0xE2 && next == 0x80 && (0xAA...0xAE).contains(third)  // U+202A–U+202E
                || byte == 0xE2 && next == 0x81 && (0xA6...0xA9).contains(third)
            {  // U+2066–U+2069
                safe += replacement
                index += byte == 0xD8 ? 2 : 3
            } else {
                safe.append(byte)
                index += 1
            }
        }
        line = safe
    }

    /// `word` as a POSIX shell reads it back: as it is when it holds only safe characters, else in single quotes.
    public static func shellQuoted(_ word: String) -> String {
        let safe = word.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || "/._-+,:@%=".utf8.contains(byte)
        }
        return safe && !word.isEmpty
            ? word : "'" + word.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }

    /// A name read from a file, as an error message quotes it (see `escapingControls`).
    public static func quoted(_ name: String, limit: Int = 80) -> String {
        "'" + escapingControls(name, limit: limit) + "'"
    }

    /// Text a peer controls, made safe for a message: control characters (NUL, ESC, newlines) shown
    /// as `\u{…}` escapes, cut at `limit` characters with "…".
    public static func escapingControls(_ text: String, limit: Int) -> String {
        var result = ""
        for (count, scalar) in text.unicodeScalars.enumerated() {
            if count == limit { return result + "…" }
            if scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The first line, trimmed, cut to `limit` characters: Itsypad's tab title rule.
    public static func firstLineTitle(_ text: String, limit: Int = 30) -> String? {
        let line = text.split(whereSeparator: \.isNewline).first { !isBlank(String($0)) }
        guard let line else { return nil }
        let trimmed = trim(String(line))
        return trimmed.isEmpty ? nil : String(trimmed.prefix(limit))
    }

    public static func trim(_ text: String) -> String {
        var scalars = Substring(text)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }

    /// Edit distance, for "Did you mean …?" suggestions.
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.lowercased()), b = Array(b.lowercased())
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// The closest candidate within a small distance, or one that starts with `word`.
    public static func suggestion(for word: String, among candidates: [String]) -> String? {
        let scored = candidates.map { ($0, distance(word, $0)) }.sorted { $0.1 < $1.1 }
        if let best = scored.first, best.1 <= max(2, word.count / 3) { return best.0 }
        return candidates.first { $0.hasPrefix(word) && !word.isEmpty }
    }

    /// Lines wrapped at `width` columns, each prefixed by `indent`.
    public static func wrap(_ text: String, width: Int, indent: Int = 0, firstIndent: Int? = nil) -> String {
        var lines: [String] = []
        var line = String(repeating: " ", count: firstIndent ?? indent)
        var lineHasWord = false
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            if lineHasWord, line.count + 1 + word.count > width {
                lines.append(line)
                line = String(repeating: " ", count: indent)
                lineHasWord = false
            }
            line += (lineHasWord ? " " : "") + word
            lineHasWord = true
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}

/// Builds `Text.preview` from UTF-8 fed a piece at a time, whole characters
/// as Swift segments them: the general path, for text the byte path
/// (`append(escaped:…)`) leaves, read only as far as its preview shows.
package struct PreviewBuilder {
    let limit: Int
    /// The preview, complete once `feed` has returned true or been given the last piece.
    package private(set) var output: [UInt8] = []
    private var count = 0
    private var pendingSpace = false
    private(set) var isComplete = false
    /// The start of a character the next piece may continue.
    private var carry: [UInt8] = []

    package init(limit: Int) {
        self.limit = limit
    }

    /// Feeds the next whole scalars of the text. Returns true once the preview
    /// is complete: no more of the text can change it.
    package mutating func feed(_ piece: UnsafeBufferPointer<UInt8>, isLast: Bool) -> Bool {
        guard !isComplete else { return true }
        if carry.isEmpty { return feedCharacters(piece, isLast: isLast) }
        let joined = carry + Array(piece)
        carry = []
        return joined.withUnsafeBufferPointer { feedCharacters($0, isLast: isLast) }
    }

    /// The general path: whole characters as Swift segments them; the last one
    /// waits for the next piece unless this is the last.
    private mutating func feedCharacters(_ bytes: UnsafeBufferPointer<UInt8>, isLast: Bool) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        var start = text.startIndex
        while start < text.endIndex {
            let end = text.index(after: start)
            if end == text.endIndex && !isLast {
                carry = Array(text[start...].utf8)
                return false
            }
            let piece = text[start..<end]
            if character(isWhitespace: piece.first!.isWhitespace, { $0 += piece.utf8 }) { return true }
            start = end
        }
        isComplete = true
        return true
    }

    /// The preview rule for one character: a whitespace run becomes one space
    /// between words; the limit counts characters and ends the preview with "…".
    private mutating func character(isWhitespace: Bool, _ write: (inout [UInt8]) -> Void) -> Bool {
        if isWhitespace {
            pendingSpace = count > 0
            return false
        }
        if pendingSpace {
            if count + 1 >= limit { return finishWithEllipsis() }
            output.append(0x20)
            count += 1
            pendingSpace = false
        }
        if count >= limit - 1 { return finishWithEllipsis() }
        write(&output)
        count += 1
        return false
    }

    private mutating func finishWithEllipsis() -> Bool {
        output += [0xE2, 0x80, 0xA6]
        isComplete = true
        return true
    }
}

extension PreviewBuilder {
    /// The preview of a text given as a JSON string body (escaped as the clip
    /// log holds it), appended to `out` straight from those bytes, in any
    /// script: characters are found from `ScalarKind`s, a scalar that joins the
    /// one before it (combining marks, ZWJ, variation selectors, skin tones,
    /// the second of a flag's pair) written with it. Returns false, with `out`
    /// as it was, where that cannot answer (a scalar of unknown kind, an emoji
    /// joined by ZWJ to one whose kind is not known, an escape but `\"` `\\`
    /// `\/` `\b` `\f` `\n` `\r` `\t`, malformed bytes, or `escaped` ending before
    /// the preview does while `isWhole` is false): then `feed` on the decoded text decides.
    package static func append(escaped: UnsafeBufferPointer<UInt8>, isWhole: Bool, limit: Int, to out: inout [UInt8]) -> Bool {
        append(escaped, isEscaped: true, isWhole: isWhole, limit: limit, to: &out)
    }

    /// The limit of `clip ls`'s previews.
    package static let listingLimit = 100

    /// Whether the preview of a text (given as the log holds it) at `listingLimit` is those bytes as
    /// they are, as it is for most short texts in any script: then a listing copies them. Worked out
    /// by the byte path itself, once, when the text is added (`ClipSlot.isOwnPreview`): a change to
    /// the preview rule must change `ClipIndexHeader.magic`, so that every index is rebuilt with it.
    package static func isOwnPreview(escaped: UnsafeBufferPointer<UInt8>) -> Bool {
        // Fewer characters than the limit take at most this many bytes of written preview.
        guard escaped.count <= 16 * listingLimit else { return false }
        return write(escaped, isEscaped: true, isWhole: true, limit: listingLimit) { preview in
            guard let preview, preview.count == escaped.count else { return false }
            return preview.isEmpty || memcmp(preview.baseAddress!, escaped.baseAddress!, preview.count) == 0
        }
    }

    /// `isOwnPreview(escaped:)` for a text, escaped only when it is short enough to be its own preview.
    package static func isOwnPreview(text: String) -> Bool {
        guard text.utf8.count <= 16 * listingLimit else { return false }
        var escaped: [UInt8] = []
        var text = text
        text.withUTF8 { JSONString.appendEscaped($0, to: &escaped) }
        return escaped.withUnsafeBufferPointer(isOwnPreview(escaped:))
    }

    /// `append(escaped:…)` for a whole text given as UTF-8.
    static func append(utf8: UnsafeBufferPointer<UInt8>, limit: Int, to out: inout [UInt8]) -> Bool {
        append(utf8, isEscaped: false, isWhole: true, limit: limit, to: &out)
    }

    private static func append(
        _ escaped: UnsafeBufferPointer<UInt8>, isEscaped: Bool, isWhole: Bool, limit: Int, to out: inout [UInt8]
    ) -> Bool {
        write(escaped, isEscaped: isEscaped, isWhole: isWhole, limit: limit) { written in
            guard let written else { return false }
            out.append(contentsOf: written)
            return true
        }
    }

    /// Hands `body` the preview written on the stack, or nil where the byte path cannot answer.
    private static func write<Result>(
        _ escaped: UnsafeBufferPointer<UInt8>, isEscaped: Bool, isWhole: Bool, limit: Int,
        _ body: (UnsafeBufferPointer<UInt8>?) -> Result
    ) -> Result {
        // No more bytes than were read, a space and the ellipsis, up to a bound well above what
        // `limit` characters take (past it, the general path writes).
        let capacity = min(escaped.count, 16 * max(limit, 1) + 64) + 16
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
            var writer = EscapedPreview(out: buffer.baseAddress!, capacity: capacity - 8, limit: limit)
            return body(writer.write(escaped, isEscaped: isEscaped, isWhole: isWhole).map { UnsafeBufferPointer(rebasing: buffer[..<$0]) })
        }
    }
}

/// The state of `PreviewBuilder.append(escaped:…)` as it walks a text.
private struct EscapedPreview {
    let out: UnsafeMutablePointer<UInt8>
    /// Bytes `out` may take, besides eight for a word stored whole.
    let capacity: Int
    let limit: Int
    private let kinds = ScalarKindTable.shared
    private var written = 0
    /// Characters written (and the pending space, once written).
    private var count = 0
    private var pendingSpace = false
    /// What decides whether the next scalar joins the character before it.
    private var afterControl = true
    private var inWhitespace = false
    private var openFlag = false
    /// 1 after an emoji (and any joiners), 2 after one and a ZWJ: the next emoji joins it.
    private var emoji = 0

    init(out: UnsafeMutablePointer<UInt8>, capacity: Int, limit: Int) {
        self.out = out
        self.capacity = capacity
        self.limit = limit
    }

    /// How many bytes the preview of `escaped` (or, unless `isEscaped`, of UTF-8) took, or nil.
    mutating func write(_ escaped: UnsafeBufferPointer<UInt8>, isEscaped: Bool, isWhole: Bool) -> Int? {
        var index = 0
        let end = escaped.count
        while index < end {
            // Most text is words of printable ASCII between single spaces, each byte a character of the
            // preview as it is: up to eight at once, as many as the limit leaves. Unless the limit came,
            // the byte after them, if any, is one of the others.
            if !pendingSpace && count + 1 < limit && written + 8 <= capacity {
                // The last few bytes of the text are read with zeros after them (a control: the end of a run).
                var word: UInt64 = 0
                if index + 8 <= end {
                    word = UnsafeRawPointer(escaped.baseAddress! + index).loadUnaligned(as: UInt64.self)
                } else {
                    withUnsafeMutableBytes(of: &word) {
                        $0.copyMemory(from: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: escaped[index...])))
                    }
                }
                let bytes = UInt64(littleEndian: word)
                // A space last among the eight is as it is when a word character follows it.
                let following = index + 8 < end ? escaped[index + 8] : 0
                let asIs = min(
                    limit - 1 - count,
                    PreviewBuilder.asIsPrefix(
                        bytes, afterCharacter: count > 0,
                        nextIsWord: following > 0x20 && following < 0x80 && following != 0x22 && following != 0x5C))
                // All eight bytes are stored (the buffer has room): those after the prefix are written over.
                UnsafeMutableRawPointer(out + written).storeBytes(of: word, as: UInt64.self)
                if asIs > 0 {
                    written += asIs
                    count += asIs
                    index += asIs
                    // The last is a word character; DEL, the one control among them, joins nothing after it.
                    // (Told from `bytes`: read back from `out`, it waited for the store.)
                    let last = UInt8(truncatingIfNeeded: bytes &>> (8 * (asIs - 1)))
                    (afterControl, afterCR, inWhitespace, openFlag, emoji) = (last == 0x7F, false, false, false, 0)
                    if asIs == 8 || index == end { continue }
                }
            }
            let byte = escaped[index]
            if byte >= 0x80 || byte == 0x20, case let next = copyCharacters(escaped, from: index), next > index {
                index = next
                continue
            }
            if byte >= 0x80 {
                guard let (value, length) = ScalarKind.decode(escaped, at: index) else { return nil }
                guard scalar(value, bytes: escaped.baseAddress! + index, length: length) else { return nil }
                if isDone { return written }
                index += length
                continue
            }
            var value = byte
            if !isEscaped {
                index += 1
            } else if byte == 0x5C {
                guard index + 1 < end, let short = JSONString.shortEscape(escaped[index + 1]) else { return nil }
                value = short
                index += 2
            } else if byte == 0x22 || (byte < 0x20) {
                return nil
            } else {
                index += 1
            }
            var single = value
            guard withUnsafeMutablePointer(to: &single, { scalar(UInt32(value), bytes: $0, length: 1) }) else { return nil }
            if isDone { return written }
        }
        // Unless the whole text was read, what follows could still join the last character or add more.
        return isWhole ? written : nil
    }

    /// Set once the ellipsis is written.
    private var isDone = false

    /// Copies, from `start`, a run of non-ASCII characters that go into the preview as they are:
    /// scalars of kind `other`, each after a single space or none. Stops before anything else, and
    /// before a character the limit leaves to the ellipsis; returns where it stopped.
    @inline(__always)
    private mutating func copyCharacters(_ text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard !pendingSpace else { return start }
        // Held in locals: a store through `out` could otherwise be taken to change them.
        var (index, written, count) = (start, self.written, self.count)
        let (out, capacity, limit, kinds, end) = (self.out, self.capacity, self.limit, self.kinds, text.count)
        // Room for a space and a scalar; a scalar is stored as four bytes (`out` has room past `capacity`).
        while written + 5 <= capacity {
            // Most runs are two- and three-byte scalars: four bytes read, checked and stored at once. The
            // length is told from the lead's bits and every scalar is looked up: no branch on whether the
            // lead alone tells the kind (mispredicted in text that mixes blocks, as Japanese does).
            while index + 4 <= end && written + 4 <= capacity && count + 1 < limit {
                let word = UInt32(littleEndian: UnsafeRawPointer(text.baseAddress! + index).loadUnaligned(as: UInt32.self))
                let lead = UInt8(truncatingIfNeeded: word)
                let isThree = lead >= 0xE0
                let length = isThree ? 3 : 2
                let (mask, continuations): (UInt32, UInt32) = isThree ? (0xC0_C000, 0x80_8000) : (0xC000, 0x8000)
                let value =
                    isThree
                    ? UInt32(lead & 0x0F) << 12 | (word >> 2 & 0xFC0) | (word >> 16 & 0x3F)
                    : UInt32(lead & 0x1F) << 6 | (word >> 8 & 0x3F)
                // C2-EF leads; three bytes of a value below 0x800 are an overlong form, of D800-DFFF a surrogate.
                let wellFormed =
                    lead &- 0xC2 < 0x2E && word & mask == continuations && (value >= 0x800 || !isThree) && value & 0xF800 != 0xD800
                guard wellFormed && kinds.kind(of: value) == .other else { break }
                UnsafeMutableRawPointer(out + written).storeBytes(of: word.littleEndian, as: UInt32.self)
                written += length
                count += 1
                index += length
            }
            guard index < end, written + 5 <= capacity else { break }
            var at = index
            let space = text[at] == 0x20
            if space {
                at += 1
                guard count > 0, at < end else { break }
            }
            // Most scalars are told from their lead byte; the others are decoded and looked up.
            var length = kinds.otherLeadLength(text[at])
            if length == 0 || at + length > end || text[at + 1] & 0xC0 != 0x80 || (length == 3 && text[at + 2] & 0xC0 != 0x80) {
                guard text[at] >= 0xC2, let (value, decoded) = ScalarKind.decode(text, at: at), kinds.kind(of: value) == .other else {
                    break
                }
                length = decoded
            }
            guard count + (space ? 2 : 1) < limit else { break }
            if space {
                out[written] = 0x20
                written += 1
                count += 1
            }
            if at + 4 <= end {
                UnsafeMutableRawPointer(out + written).storeBytes(
                    of: UnsafeRawPointer(text.baseAddress! + at).loadUnaligned(as: UInt32.self), as: UInt32.self)
            } else {
                for offset in 0..<length { out[written + offset] = text[at + offset] }
            }
            written += length
            count += 1
            index = at + length
            guard index < end else { break }
        }
        guard index > start else { return start }
        (self.written, self.count) = (written, count)
        (afterControl, afterCR, inWhitespace, openFlag, emoji) = (false, false, false, false, 0)
        return index
    }

    /// Takes one scalar: joins it to the character before or starts a character with it. False
    /// where its kind is unknown or the buffer is full.
    @inline(__always)
    private mutating func scalar(_ value: UInt32, bytes: UnsafePointer<UInt8>, length: Int) -> Bool {
        if value == 0x0A && afterCR {
            // The LF of a CR LF, one whitespace character.
            afterCR = false
            return true
        }
        afterCR = value == 0x0D
        let kind = kinds.kind(ofAny: value)
        switch kind {
        case .unknown: return false
        case .joiner, .mark:
            emoji = emoji == 1 ? (value == 0x200D ? 2 : 1) : 0
            openFlag = false
            guard afterControl else { return inWhitespace || put(bytes, length) }
            return startCharacter(bytes, length, whitespace: false, control: false)
        case .pictographic where emoji == 2, .regional where openFlag:
            emoji = kind == .pictographic ? 1 : 0
            openFlag = false
            return inWhitespace || put(bytes, length)
        default:
            emoji = kind == .pictographic ? 1 : 0
            openFlag = kind == .regional
            let whitespace = kind == .space || kind == .controlSpace
            return startCharacter(bytes, length, whitespace: whitespace, control: kind == .control || kind == .controlSpace)
        }
    }

    private var afterCR = false

    /// The preview rule for a new character: a whitespace run becomes one space between words;
    /// the limit counts characters and ends the preview with "…".
    @inline(__always)
    private mutating func startCharacter(_ bytes: UnsafePointer<UInt8>, _ length: Int, whitespace: Bool, control: Bool) -> Bool {
        afterControl = control
        inWhitespace = whitespace
        if whitespace {
            pendingSpace = count > 0
            return true
        }
        if pendingSpace {
            if count + 1 >= limit { return ellipsis() }
            guard written + 1 <= capacity else { return false }
            out[written] = 0x20
            written += 1
            count += 1
            pendingSpace = false
        }
        if count >= limit - 1 { return ellipsis() }
        count += 1
        return put(bytes, length)
    }

    @inline(__always)
    private mutating func put(_ bytes: UnsafePointer<UInt8>, _ length: Int) -> Bool {
        guard written + length <= capacity else { return false }
        for offset in 0..<length { out[written + offset] = bytes[offset] }
        written += length
        return true
    }

    private mutating func ellipsis() -> Bool {
        (out[written], out[written + 1], out[written + 2]) = (0xE2, 0x80, 0xA6)
        written += 3
        isDone = true
        return true
    }
}

extension PreviewBuilder {
    /// How many of eight escaped bytes (the first in the lowest byte of `word`) are, from the first,
    /// characters of the preview as they are: printable ASCII but a quote or backslash (no escape),
    /// and spaces followed by such a character (the last byte's follower is one when `nextIsWord`; a
    /// space before other whitespace, or at the text's end, is not written; a leading one is written
    /// only `afterCharacter`).
    @inline(__always)
    fileprivate static func asIsPrefix(_ word: UInt64, afterCharacter: Bool, nextIsWord: Bool) -> Int {
        let lows: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        // High bits: `special` exact for its lowest byte (only bytes above one may be marked wrongly),
        // `isSpace` exact for every byte (no carries cross bytes).
        let special = JSONString.specialBytes(word)
        let spaces = word ^ 0x2020_2020_2020_2020
        let isSpace = ~((spaces & lows) &+ lows | spaces) & ~lows
        let isWord = ~(special | isSpace) & ~lows
        // A space is as it is when a word character follows it (the last byte's is told by `nextIsWord`).
        let lonelySpace = isSpace & ~(isWord >> 8 | (nextIsWord ? 1 << 63 : 0))
        let leadingSpace = afterCharacter ? 0 : isSpace & 0x80
        return (special | lonelySpace | leadingSpace).trailingZeroBitCount / 8
    }
}

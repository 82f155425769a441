/// Small text utilities shared by the commands.
public enum Text {
    /// Decodes bytes as UTF-8, refusing invalid sequences instead of repairing them.
    public static func decodeUTF8(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBufferPointer(decodeUTF8)
    }

    /// `decodeUTF8` of bytes in place. Checked by `UTF8Check`, then decoded without repairs: the
    /// standard library's generic `String(validating:as:)` costs over a thousand instructions a
    /// string, and a JSON document of 100,000 clips holds half a million strings.
    package static func decodeUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        UTF8Check.isValid(bytes) ? String(decoding: bytes, as: UTF8.self) : nil
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
        var builder = PreviewBuilder(limit: limit)
        var text = text
        text.withUTF8 { _ = builder.feed($0, isLast: true) }
        return String(decoding: builder.output, as: UTF8.self)
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

/// Builds `Text.preview` from UTF-8 fed a piece at a time, so that a listing
/// reads only as much of a long text as its preview shows. Characters are
/// Swift's (grapheme clusters): scalars below U+0300 never join their
/// neighbours except CR LF, so those are handled byte by byte and only other
/// text goes through `Character`.
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
        if carry.isEmpty { return feedJoined(piece, isLast: isLast) }
        let joined = carry + Array(piece)
        carry = []
        return joined.withUnsafeBufferPointer { feedJoined($0, isLast: isLast) }
    }

    private mutating func feedJoined(_ bytes: UnsafeBufferPointer<UInt8>, isLast: Bool) -> Bool {
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            // Printable ASCII other than space, the usual text, goes a run at a time.
            if lead > 0x20 && lead < 0x7F {
                var end = index + 1
                while end < bytes.count, bytes[end] > 0x20 && bytes[end] < 0x7F { end += 1 }
                // The run's last character waits if the piece ends there or a combining scalar may follow.
                let runEnd = (end == bytes.count && !isLast) || (end < bytes.count && bytes[end] >= 0xCC) ? end - 1 : end
                if runEnd > index {
                    if word(UnsafeBufferPointer(rebasing: bytes[index..<runEnd])) { return true }
                    index = runEnd
                    continue
                }
            }
            let length = lead < 0x80 ? 1 : (0xC2...0xCB).contains(lead) ? 2 : 0
            guard length > 0 else { return feedCharacters(UnsafeBufferPointer(rebasing: bytes[index...]), isLast: isLast) }
            let next = index + length
            if next == bytes.count {
                if !isLast {
                    carry = Array(bytes[index...])
                    return false
                }
            } else if lead == 0x0D && bytes[next] == 0x0A {
                if character(isWhitespace: true, { _ in }) { return true }
                index = next + 1
                continue
            } else if bytes[next] >= 0xCC {
                // A scalar from U+0300 on may join this one into one character.
                return feedCharacters(UnsafeBufferPointer(rebasing: bytes[index...]), isLast: isLast)
            }
            let isWhitespace =
                length == 1
                ? lead == 0x20 || (0x09...0x0D).contains(lead)
                : lead == 0xC2 && (bytes[index + 1] == 0x85 || bytes[index + 1] == 0xA0)
            let done = character(isWhitespace: isWhitespace) { output in
                output.append(lead)
                if length == 2 { output.append(bytes[index + 1]) }
            }
            if done { return true }
            index = next
        }
        if isLast { isComplete = true }
        return isComplete
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
    @inline(__always)
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

    /// `character` for each byte of a run of printable ASCII, at once.
    private mutating func word(_ run: UnsafeBufferPointer<UInt8>) -> Bool {
        if pendingSpace {
            if count + 1 >= limit { return finishWithEllipsis() }
            output.append(0x20)
            count += 1
            pendingSpace = false
        }
        let room = limit - 1 - count
        if room <= 0 { return finishWithEllipsis() }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: run.prefix(room)))
        count += min(room, run.count)
        return run.count > room ? finishWithEllipsis() : false
    }

    private mutating func finishWithEllipsis() -> Bool {
        output += [0xE2, 0x80, 0xA6]
        isComplete = true
        return true
    }
}

extension PreviewBuilder {
    /// The preview of a text given as a JSON string body (escaped as the clip
    /// log holds it), appended to `out` straight from those bytes: the rule of
    /// `feed` for the usual text — printable ASCII, the escapes `\"` `\\` `\/`
    /// `\b` `\f` `\n` `\r` `\t`, and two-byte characters (U+0080–U+02FF) that
    /// nothing combines with. Returns false, with `out` as it was, on anything
    /// else (other escapes, longer characters, what may combine, malformed
    /// bytes, or `escaped` ending before the preview does while `isWhole` is
    /// false): then `feed` on the decoded text decides.
    package static func append(escaped: UnsafeBufferPointer<UInt8>, isWhole: Bool, limit: Int, to out: inout [UInt8]) -> Bool {
        // Written on the stack, then appended: at most two bytes a character, and the ellipsis.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * max(limit, 1) + 3) { buffer in
            guard let written = preview(escaped: escaped, isWhole: isWhole, limit: limit, into: buffer.baseAddress!) else { return false }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<written]))
            return true
        }
    }

    /// `append(escaped:…)` into `out`: how many bytes it wrote, or nil.
    private static func preview(
        escaped: UnsafeBufferPointer<UInt8>, isWhole: Bool, limit: Int, into out: UnsafeMutablePointer<UInt8>
    ) -> Int? {
        var written = 0
        var count = 0
        var pendingSpace = false
        var index = 0
        let end = escaped.count
        while index < end {
            // Most text is words of printable ASCII between single spaces, each byte a character of the
            // preview as it is: up to eight at once, unless the limit is near. The byte after them, if
            // any, is one of the others.
            if !pendingSpace && index + 8 <= end && count + 8 < limit {
                let word = UnsafeRawPointer(escaped.baseAddress! + index).loadUnaligned(as: UInt64.self)
                let asIs = asIsPrefix(UInt64(littleEndian: word), afterCharacter: count > 0)
                // All eight bytes are stored (the buffer has room): those after the prefix are written over.
                UnsafeMutableRawPointer(out + written).storeBytes(of: word, as: UInt64.self)
                written += asIs
                count += asIs
                index += asIs
                if asIs == 8 { continue }
            }
            let byte = escaped[index]
            // One character: `first` and, for a two-byte one, `second` (0 otherwise).
            var first = byte
            var second: UInt8 = 0
            if byte > 0x20 && byte < 0x80 && byte != 0x5C && byte != 0x22 {
                index += 1
            } else if byte == 0x20 {
                index += 1
                pendingSpace = count > 0
                continue
            } else if byte == 0x5C {
                guard index + 1 < end else { return nil }
                index += 2
                switch escaped[index - 1] {
                case UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"), UInt8(ascii: "f"):
                    pendingSpace = count > 0
                    continue
                case UInt8(ascii: "\""): first = 0x22
                case UInt8(ascii: "\\"): first = 0x5C
                case UInt8(ascii: "/"): first = 0x2F
                case UInt8(ascii: "b"): first = 0x08
                default: return nil
                }
            } else if byte >= 0xC2 && byte <= 0xCB && index + 1 < end && escaped[index + 1] & 0xC0 == 0x80 {
                second = escaped[index + 1]
                index += 2
                if byte == 0xC2 && (second == 0x85 || second == 0xA0) {
                    pendingSpace = count > 0
                    continue
                }
            } else {
                // Other escapes and characters, what may combine with the one before (U+0300 on), malformed bytes.
                return nil
            }
            if pendingSpace {
                if count + 1 >= limit { return ellipsis(out, at: written) }
                out[written] = 0x20
                written += 1
                count += 1
                pendingSpace = false
            }
            if count >= limit - 1 { return ellipsis(out, at: written) }
            out[written] = first
            written += 1
            if second != 0 {
                out[written] = second
                written += 1
            }
            count += 1
        }
        // Unless the whole text was read, what follows could still combine with the last character or add more.
        return isWhole ? written : nil
    }

    /// How many of eight escaped bytes (the first in the lowest byte of `word`) are, from the first,
    /// characters of the preview as they are: printable ASCII but a quote or backslash (no escape),
    /// and spaces followed by such a character (a space before other whitespace, or at the text's
    /// end, is not written; a leading one is written only `afterCharacter`).
    @inline(__always)
    private static func asIsPrefix(_ word: UInt64, afterCharacter: Bool) -> Int {
        let lows: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        // High bits: `special` exact for its lowest byte (only bytes above one may be marked wrongly),
        // `isSpace` exact for every byte (no carries cross bytes).
        let special = JSONString.specialBytes(word)
        let spaces = word ^ 0x2020_2020_2020_2020
        let isSpace = ~((spaces & lows) &+ lows | spaces) & ~lows
        let isWord = ~(special | isSpace) & ~lows
        // A space is as it is when a word character follows it in `word` (the last byte has none).
        let lonelySpace = isSpace & ~(isWord >> 8)
        let leadingSpace = afterCharacter ? 0 : isSpace & 0x80
        return (special | lonelySpace | leadingSpace).trailingZeroBitCount / 8
    }

    private static func ellipsis(_ out: UnsafeMutablePointer<UInt8>, at written: Int) -> Int {
        (out[written], out[written + 1], out[written + 2]) = (0xE2, 0x80, 0xA6)
        return written + 3
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Itsypad's case-insensitive search: `text.lowercased().contains(query.lowercased())`
/// with Swift's meaning (whole characters, canonical equivalence), answered
/// from UTF-8 bytes where Unicode allows it. With an ASCII query (the usual
/// case) a text is decided by an ASCII-case-folded byte search, and only a
/// text that may match through non-ASCII characters goes through Swift's rule.
package struct TextQuery {
    /// The query lowercased, as the rule compares it.
    let folded: String
    /// `folded` as bytes when it is ASCII.
    private let ascii: [UInt8]?
    /// An ASCII query with CR or LF: a byte match may split a CR LF character, so it is checked.
    private let asciiNeedsCheck: Bool
    /// Whether a text of ASCII only can match a non-ASCII query (its characters all equal ASCII ones, like U+037E and ";").
    private let asciiTextCanMatch: Bool
    /// Whether the query holds a character that a non-ASCII one lowercases or normalises to (see `mayFoldToASCII`).
    private let hasFoldTarget: Bool
    /// Whether the query reads the same in a JSON-escaped text: ASCII without a quote, backslash or control character.
    private let survivesEscaping: Bool

    package init(_ query: String) {
        folded = query.lowercased()
        let bytes = Array(folded.utf8)
        ascii = bytes.allSatisfy { $0 < 0x80 } ? bytes : nil
        asciiNeedsCheck = bytes.contains(0x0A) || bytes.contains(0x0D)
        asciiTextCanMatch = folded.allSatisfy { character in
            (0..<128).contains { Character(Unicode.Scalar(UInt8($0))) == character }
        }
        hasFoldTarget = bytes.contains { $0 == UInt8(ascii: "k") || $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: "`") }
        survivesEscaping = ascii != nil && !bytes.contains { JSONString.needsEscape($0) }
    }

    /// What a text's JSON-escaped body tells of a match, without decoding it: most texts of a
    /// search over 100,000 clips are decided here.
    package enum EscapedVerdict {
        /// The text does not match.
        case noMatch
        /// The text matches.
        case match
        /// The decoded text decides (by `matches(utf8:)`).
        case undecided
    }

    /// Where the query reads the same in a JSON-escaped text, a match in the text is a match in
    /// the escaped body too, unless the body spells characters as `\u` or `\/` escapes: then a body
    /// without one rules the text out. A body without escapes that is valid UTF-8 is the text
    /// itself: then a match found in it decides as `matches(utf8:)` would.
    package func verdict(escaped: UnsafeBufferPointer<UInt8>) -> EscapedVerdict {
        guard survivesEscaping, let ascii, !folded.isEmpty else { return .undecided }
        guard let found = ascii.withUnsafeBufferPointer({ TextQuery.firstFoldedASCII($0, in: escaped, from: 0) }) else {
            let mayMatch = (hasFoldTarget && TextQuery.mayFoldToASCII(escaped)) || TextQuery.spellsCharactersAsEscapes(escaped)
            return mayMatch ? .undecided : .noMatch
        }
        // Between ASCII neighbours the bytes are whole characters (the query, escaped as it is, holds no CR or LF).
        let end = found + ascii.count
        let betweenASCII = (found == 0 || escaped[found - 1] < 0x80) && (end == escaped.count || escaped[end] < 0x80)
        return betweenASCII && JSONString.isUnescapedUTF8(escaped) ? .match : .undecided
    }

    /// Whether `escaped` holds a `\u` or `\/` escape (itsypad writes `\u` only for control characters, never `\/`).
    private static func spellsCharactersAsEscapes(_ escaped: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = escaped.baseAddress else { return false }
        var index = 0
        while index < escaped.count, let found = memchr(base + index, 0x5C, escaped.count - index) {
            let at = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            guard at + 1 < escaped.count else { return false }
            switch escaped[at + 1] {
            case UInt8(ascii: "/"): return true
            case UInt8(ascii: "u"):
                // `\u0000`–`\u001f` are control characters, which the query holds none of.
                let control =
                    at + 6 <= escaped.count && escaped[at + 2] == 0x30 && escaped[at + 3] == 0x30
                    && (escaped[at + 4] == 0x30 || escaped[at + 4] == 0x31)
                if !control { return true }
            default: break
            }
            index = at + 2
        }
        return false
    }

    /// The rule, on a whole string.
    func matches(_ text: String) -> Bool {
        folded.isEmpty || text.lowercased().contains(folded)
    }

    /// The rule, on valid UTF-8.
    package func matches(utf8 text: UnsafeBufferPointer<UInt8>) -> Bool {
        if folded.isEmpty { return true }
        let textIsASCII = UTF8Check.isASCII(text)
        guard let ascii else {
            return (textIsASCII && !asciiTextCanMatch) ? false : matches(String(decoding: text, as: UTF8.self))
        }
        // An exact match implies this byte match unless the text holds one of the few
        // non-ASCII scalars that lowercase or normalise to ASCII (see `mayFoldToASCII`).
        return ascii.withUnsafeBufferPointer { needle in
            if let found = TextQuery.firstFoldedASCII(needle, in: text, from: 0) {
                if textIsASCII && !asciiNeedsCheck { return true }
                // Between ASCII neighbours (no CR LF involved) the bytes are whole characters: a match by the rule too.
                let end = found + needle.count
                if asciiNeedsCheck || (found > 0 && text[found - 1] >= 0x80) || (end < text.count && text[end] >= 0x80) {
                    return matches(String(decoding: text, as: UTF8.self))
                }
                return true
            }
            return !textIsASCII && hasFoldTarget && TextQuery.mayFoldToASCII(text) && matches(String(decoding: text, as: UTF8.self))
        }
    }

    /// Where `needle` (lowercase ASCII) first occurs in `text` at or after
    /// `start` with ASCII letters lowercased; candidates for its first byte
    /// are found sixteen bytes at a time.
    static func firstFoldedASCII(_ needle: UnsafeBufferPointer<UInt8>, in text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        let count = needle.count
        guard count > 0 else { return start }
        guard let base = text.baseAddress, text.count - start >= count else { return nil }
        let first = needle[0]
        let last = text.count - count
        func matches(at index: Int) -> Bool {
            var offset = 1
            while offset < count, lowercaseASCII(text[index + offset]) == needle[offset] { offset += 1 }
            return offset == count
        }
        var index = start
        guard text.count >= 16 else {
            while index <= last {
                if lowercaseASCII(text[index]) == first && matches(at: index) { return index }
                index += 1
            }
            return nil
        }
        // Setting 0x20 lowercases the letters; it maps nothing else onto a lowercase letter.
        let fold = SIMD16<UInt8>(repeating: first >= 0x61 && first <= 0x7A ? 0x20 : 0)
        let pattern = SIMD16<UInt8>(repeating: first)
        let ones = SIMD16<UInt8>(repeating: 1), highs = SIMD16<UInt8>(repeating: 0x80)
        while index <= last {
            // The last sixteen bytes overlap those before them, whose candidates were checked already.
            let chunk = min(index, text.count - 16)
            let differences = (UnsafeRawPointer(base + chunk).loadUnaligned(as: SIMD16<UInt8>.self) | fold) ^ pattern
            // The high bit of each byte equal to `first`, exactly: a lane borrows from no other.
            let marks = unsafeBitCast((differences &- ones) & ~differences & highs, to: SIMD2<UInt64>.self)
            for half in 0..<2 {
                var candidates = UInt64(littleEndian: marks[half])
                while candidates != 0 {
                    let candidate = chunk + 8 * half + candidates.trailingZeroBitCount / 8
                    candidates &= candidates &- 1
                    if candidate < index { continue }
                    if candidate > last { return nil }
                    if matches(at: candidate) { return candidate }
                }
            }
            index = chunk + 16
        }
        return nil
    }

    @inline(__always)
    static func lowercaseASCII(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }

    /// Whether `text` holds a non-ASCII scalar whose lowercase, or the
    /// character it forms, equals an ASCII character: U+037E GREEK QUESTION MARK
    /// (";"), U+1FEF GREEK VARIA ("`") and U+212A KELVIN SIGN ("k"). An
    /// exhaustive test over every scalar keeps this list complete.
    static func mayFoldToASCII(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index + 1 < text.count {
            switch text[index] {
            case 0xCD where text[index + 1] == 0xBE: return true
            case 0xE1 where text[index + 1] == 0xBF && index + 2 < text.count && text[index + 2] == 0xAF: return true
            case 0xE2 where text[index + 1] == 0x84 && index + 2 < text.count && text[index + 2] == 0xAA: return true
            default: index += 1
            }
        }
        return false
    }
}

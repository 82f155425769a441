#if canImport(Glibc)
import Glibc
#endif

/// Itsypad's case-insensitive search: `text.lowercased().contains(query.lowercased())`
/// with Swift's meaning (whole characters, canonical equivalence), answered
/// from UTF-8 bytes in whatever script. A text is lowercased a scalar at a
/// time into a scratch buffer and the lowercased query is searched in it as
/// bytes; a match counts where it starts and ends between characters. That is
/// the rule exactly as long as every scalar is one whose bytes compare as its
/// character does (`ScalarKind`): a text or query with any other, and a match
/// whose ends need more context than two scalars (flags, emoji joined by ZWJ),
/// go to the rule on Swift strings.
package struct TextQuery {
    /// The query lowercased, as the rule compares it.
    let folded: String
    /// `folded`'s bytes, when the byte search can answer for it; nil sends every text to the rule.
    private let needle: [UInt8]?

    package init(_ query: String) {
        folded = query.lowercased()
        let bytes = Array(folded.utf8)
        needle = bytes.withUnsafeBufferPointer(TextQuery.comparesAsBytes) ? bytes : nil
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

    /// The rule on a text given as its JSON-escaped body, as itsypad writes it: the escapes
    /// `\"` `\\` `\n` `\r` `\t` and `\u00xx` for other control characters are read, any other
    /// escape, and bytes no such body holds (invalid UTF-8, a raw quote or control character),
    /// leave it to the decoder.
    package func verdict(escaped: UnsafeBufferPointer<UInt8>) -> EscapedVerdict {
        switch search(escaped, escaped: true) {
        case true?: return .match
        case false?: return .noMatch
        case nil: return .undecided
        }
    }

    /// The rule, on a whole string.
    func matches(_ text: String) -> Bool {
        folded.isEmpty || text.lowercased().contains(folded)
    }

    /// The rule, on valid UTF-8.
    package func matches(utf8 text: UnsafeBufferPointer<UInt8>) -> Bool {
        search(text, escaped: false) ?? matches(String(decoding: text, as: UTF8.self))
    }

    /// The byte search: nil where it cannot answer for the rule.
    private func search(_ text: UnsafeBufferPointer<UInt8>, escaped: Bool) -> Bool? {
        guard let needle else { return nil }
        if needle.isEmpty { return true }
        // Lowercasing makes at most three bytes of two; escapes only shrink.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 2 * text.count + 8) { buffer -> Bool? in
            guard let count = TextQuery.lowercase(text, escaped: escaped, into: buffer.baseAddress!) else { return nil }
            let haystack = UnsafeBufferPointer(rebasing: buffer[..<count])
            return needle.withUnsafeBufferPointer { needle in
                var from = 0
                while let found = TextQuery.firstOccurrence(of: needle, in: haystack, from: from) {
                    switch (TextQuery.isBoundary(haystack, at: found), TextQuery.isBoundary(haystack, at: found + needle.count)) {
                    case (true?, true?): return true
                    case (nil, _), (_, nil): return nil
                    default: from = found + 1
                    }
                }
                return false
            }
        }
    }

    /// Whether every scalar of `bytes` (valid UTF-8) compares as its character does.
    private static func comparesAsBytes(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let kinds = ScalarKindTable.shared
        var index = 0
        while index < bytes.count {
            guard let (value, length) = ScalarKind.decode(bytes, at: index) else { return false }
            if value >= 0x80 {
                switch kinds.kind(of: value) {
                case .mark, .unsearchable, .unknown: return false
                default: break
                }
            }
            index += length
        }
        return true
    }

    /// Writes `text` lowercased at `out`, decoding a JSON body's escapes if `escaped`; returns
    /// its length, or nil at a scalar, escape or byte the byte search cannot answer for.
    private static func lowercase(_ text: UnsafeBufferPointer<UInt8>, escaped: Bool, into out: UnsafeMutablePointer<UInt8>) -> Int? {
        let kinds = ScalarKindTable.shared
        let count = text.count
        var index = 0
        var written = 0
        while index < count {
            // Eight ASCII bytes at once (in a JSON body: none a quote, backslash or control character).
            if index + 8 <= count {
                let word = UInt64(littleEndian: UnsafeRawPointer(text.baseAddress! + index).loadUnaligned(as: UInt64.self))
                let special = escaped ? JSONString.specialBytes(word) : word & 0x8080_8080_8080_8080
                UnsafeMutableRawPointer(out + written).storeBytes(of: lowercaseASCII(word).littleEndian, as: UInt64.self)
                let plain = special.trailingZeroBitCount / 8
                index += plain
                written += plain
                if plain == 8 { continue }
            }
            let byte = text[index]
            if byte < 0x80 {
                var value = byte
                var length = 1
                if escaped && JSONString.needsEscape(byte) {
                    guard byte == 0x5C, let (decoded, escapeLength) = escape(text, at: index) else { return nil }
                    (value, length) = (decoded, escapeLength)
                }
                out[written] = (0x41...0x5A).contains(value) ? value | 0x20 : value
                written += 1
                index += length
                continue
            }
            guard let (value, length) = ScalarKind.decode(text, at: index) else { return nil }
            switch kinds.kind(of: value) {
            case .mark, .unsearchable, .unknown: return nil
            case .other: written += ScalarKind.encode(kinds.lowercase(value), to: out + written)
            default:
                for offset in 0..<length { out[written + offset] = text[index + offset] }
                written += length
            }
            index += length
        }
        return written
    }

    /// The byte an escape of a JSON body itsypad writes stands for, and the escape's length.
    private static func escape(_ text: UnsafeBufferPointer<UInt8>, at index: Int) -> (UInt8, Int)? {
        guard index + 1 < text.count else { return nil }
        switch text[index + 1] {
        case UInt8(ascii: "\""): return (0x22, 2)
        case UInt8(ascii: "\\"): return (0x5C, 2)
        case UInt8(ascii: "n"): return (0x0A, 2)
        case UInt8(ascii: "r"): return (0x0D, 2)
        case UInt8(ascii: "t"): return (0x09, 2)
        case UInt8(ascii: "u"):
            guard index + 6 <= text.count, text[index + 2] == 0x30, text[index + 3] == 0x30,
                let high = Hex.value(text[index + 4]), high < 2, let low = Hex.value(text[index + 5])
            else { return nil }
            return (high << 4 | low, 6)
        default: return nil
        }
    }

    /// Eight ASCII bytes with their capital letters lowercased (other bytes as they are).
    @inline(__always)
    static func lowercaseASCII(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let low = word & 0x7F7F_7F7F_7F7F_7F7F
        // High bits: at least "A", above "Z" (no carry leaves a byte), of an ASCII byte.
        let atLeastA = low &+ (0x80 - 0x41) &* ones, aboveZ = low &+ (0x80 - 0x5B) &* ones
        let capital = atLeastA & ~aboveZ & ~word & 0x8080_8080_8080_8080
        return word | capital >> 2
    }

    /// Whether `index` of lowercased text lies between two characters; nil when more than the
    /// two scalars around it would decide (regional indicators, an emoji after ZWJ).
    private static func isBoundary(_ text: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool? {
        if index == 0 || index == text.count { return true }
        var start = index - 1
        while text[start] & 0xC0 == 0x80 { start -= 1 }
        let before = ScalarKind.decode(text, at: start)!.value, after = ScalarKind.decode(text, at: index)!.value
        if before == 0x0D { return after != 0x0A }
        let kinds = ScalarKindTable.shared
        let beforeKind = kinds.kind(ofAny: before), afterKind = kinds.kind(ofAny: after)
        switch (beforeKind, afterKind) {
        case (.control, _), (.controlSpace, _), (_, .control), (_, .controlSpace): return true
        case (_, .joiner): return false
        case (.regional, .regional): return nil
        case (_, .pictographic) where before == 0x200D: return nil
        default: return true
        }
    }

    /// Where `needle` first occurs in `text` at or after `start`. Candidates are where both its
    /// first and its last byte stand, sixteen places at a time.
    static func firstOccurrence(of needle: UnsafeBufferPointer<UInt8>, in text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        let count = needle.count
        guard let base = text.baseAddress, text.count - start >= count else { return nil }
        let last = text.count - count
        func matches(at index: Int) -> Bool { memcmp(base + index, needle.baseAddress!, count) == 0 }
        var index = start
        guard last - start >= 16 else {
            while index <= last {
                if text[index] == needle[0] && matches(at: index) { return index }
                index += 1
            }
            return nil
        }
        let first = SIMD16<UInt8>(repeating: needle[0]), final = SIMD16<UInt8>(repeating: needle[count - 1])
        let ones = SIMD16<UInt8>(repeating: 1), highs = SIMD16<UInt8>(repeating: 0x80)
        while index <= last {
            // The last sixteen places overlap those before them, whose candidates were checked already.
            let chunk = min(index, last - 15)
            let heads = UnsafeRawPointer(base + chunk).loadUnaligned(as: SIMD16<UInt8>.self) ^ first
            let tails = UnsafeRawPointer(base + chunk + count - 1).loadUnaligned(as: SIMD16<UInt8>.self) ^ final
            // The high bit of each lane where both are zero: a lane borrows from no other.
            let marks = unsafeBitCast((heads &- ones) & ~heads & (tails &- ones) & ~tails & highs, to: SIMD2<UInt64>.self)
            for half in 0..<2 {
                var candidates = UInt64(littleEndian: marks[half])
                while candidates != 0 {
                    let candidate = chunk + 8 * half + candidates.trailingZeroBitCount / 8
                    candidates &= candidates &- 1
                    if candidate >= index && matches(at: candidate) { return candidate }
                }
            }
            index = chunk + 16
        }
        return nil
    }
}

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
///
/// A text known to compare as bytes (`comparesAsBytes(escaped:)`, worked out
/// when it is stored) is not lowercased: the query's `Anchor` finds the few
/// places where it may stand, and only those are lowercased and compared.
package struct TextQuery {
    /// The query lowercased, as the rule compares it.
    let folded: String
    /// `folded`'s bytes, when the byte search can answer for it; nil sends every text to the rule.
    private let needle: [UInt8]?
    private let anchor: Anchor?

    package init(_ query: String) {
        folded = query.lowercased()
        let bytes = Array(folded.utf8)
        needle = bytes.withUnsafeBufferPointer(TextQuery.scalarsCompareAsBytes) ? bytes : nil
        anchor = needle.flatMap(Anchor.init)
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
    /// `comparesAsBytes` says the text is one `comparesAsBytes(escaped:)` holds for.
    package func verdict(escaped: UnsafeBufferPointer<UInt8>, comparesAsBytes: Bool = false) -> EscapedVerdict {
        let found = comparesAsBytes && anchor != nil ? anchoredSearch(escaped) : search(escaped, escaped: true)
        switch found {
        case true?: return .match
        case false?: return .noMatch
        case nil: return .undecided
        }
    }

    /// Whether bytes that hold a text that compares as bytes (its whole log line, say) show no
    /// place where the query could stand: then the text does not match, without being read.
    package func cannotMatch(anywhereIn bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let anchor, let needle, !needle.isEmpty else { return false }
        return TextQuery.firstCandidate(anchor.ends, length: needle.count, in: bytes, from: 0) == nil
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
        // Lowercasing makes at most three bytes of two; escapes only shrink. Four bytes are stored at once.
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

    /// Whether a text, as its JSON-escaped body, is one the anchored search answers for: valid
    /// UTF-8 whose every scalar compares as its character does, and no control character but tab,
    /// LF and CR (its only escapes are then two bytes long, none a piece of a match).
    package static func comparesAsBytes(escaped text: UnsafeBufferPointer<UInt8>) -> Bool {
        comparesAsBytes(text, escaped: true)
    }

    /// `comparesAsBytes(escaped:)` for a text as UTF-8 (its escaped form, without writing it).
    package static func comparesAsBytes(text: String) -> Bool {
        var text = text
        return text.withUTF8 { comparesAsBytes($0, escaped: false) }
    }

    private static func comparesAsBytes(_ text: UnsafeBufferPointer<UInt8>, escaped: Bool) -> Bool {
        let kinds = ScalarKindTable.shared
        var index = 0
        while index < text.count {
            if index + 8 <= text.count {
                let word = UInt64(littleEndian: UnsafeRawPointer(text.baseAddress! + index).loadUnaligned(as: UInt64.self))
                let plain = JSONString.specialBytes(word).trailingZeroBitCount / 8
                index += plain
                if plain == 8 { continue }
            }
            let byte = text[index]
            if byte == 0x5C && escaped {
                guard index + 1 < text.count, [0x22, 0x5C, 0x2F, 0x6E, 0x72, 0x74].contains(text[index + 1]) else { return false }
                index += 2
            } else if byte < 0x80 {
                // Unescaped, tab, LF and CR are the controls whose escapes are two bytes long.
                guard escaped ? byte >= 0x20 && byte != 0x22 : byte >= 0x20 || [0x09, 0x0A, 0x0D].contains(byte) else { return false }
                index += 1
            } else {
                guard let (value, length) = ScalarKind.decode(text, at: index) else { return false }
                switch kinds.kind(of: value) {
                case .mark, .unsearchable, .unknown: return false
                default: index += length
                }
            }
        }
        return true
    }

    /// Whether every scalar of `bytes` (valid UTF-8) compares as its character does.
    private static func scalarsCompareAsBytes(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
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
        let kinds = ScalarKindTable.shared, lowercases = ScalarLowercases.shared
        let count = text.count
        var index = 0
        var written = 0
        while index < count {
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
            // A run of non-ASCII scalars. Of kind other, only those below U+0800, in Latin Extended
            // Additional and fullwidth letters have lowercases of their own; the rest are copied.
            repeat {
                guard let (value, length) = ScalarKind.decode(text, at: index) else { return nil }
                switch kinds.kind(of: value) {
                case .mark, .unsearchable, .unknown: return nil
                case .other where length == 2 || value & ~0xFF == 0x1E00 || value & ~0x1F == 0xFF20:
                    written += ScalarKind.encode(lowercases.lowercase(value), to: out + written)
                default:
                    if index + 4 <= count {
                        UnsafeMutableRawPointer(out + written).storeBytes(
                            of: UnsafeRawPointer(text.baseAddress! + index).loadUnaligned(as: UInt32.self), as: UInt32.self)
                    } else {
                        for offset in 0..<length { out[written + offset] = text[index + offset] }
                    }
                    written += length
                }
                index += length
            } while index < count && text[index] >= 0x80
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

    /// The search in an escaped text that compares as bytes: at each place where the anchor's end
    /// bytes stand, the window between them is lowercased and compared. nil where the ends of a
    /// match need more context than two scalars.
    private func anchoredSearch(_ text: UnsafeBufferPointer<UInt8>) -> Bool? {
        guard let anchor, let needle else { return nil }
        let kinds = ScalarKindTable.shared, lowercases = ScalarLowercases.shared
        return needle.withUnsafeBufferPointer { needle -> Bool? in
            var from = 0
            var undecided = false
            while let found = TextQuery.firstCandidate(anchor.ends, length: needle.count, in: text, from: from) {
                from = found + 1
                guard anchor.lowercases(text, at: found, to: needle, kinds, lowercases), !TextQuery.isEscaped(text, at: found) else {
                    continue
                }
                switch (TextQuery.isBoundary(text, at: found), TextQuery.isBoundary(text, at: found + needle.count)) {
                case (true?, true?): return true
                case (nil, _), (_, nil): undecided = true
                default: break
                }
            }
            return undecided ? nil : false
        }
    }

    /// Whether the byte at `index` of an escaped text is the second of an escape.
    private static func isEscaped(_ text: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
        var start = index
        while start > 0 && text[start - 1] == 0x5C { start -= 1 }
        return (index - start) % 2 == 1
    }

    /// What `anchoredSearch` looks for: two places of a window of text as long as the needle and
    /// the bytes each may hold for the window to lowercase to the needle: the last byte of the
    /// first scalar (a continuation byte, rarer than a lead byte; the first byte for ASCII) and the
    /// needle's last byte. Made for a needle of printable ASCII (no quote or backslash) and scalars
    /// that start a character of their own, where every scalar that lowercases to one of the
    /// needle's is as long as it and each place has at most two such bytes.
    struct Anchor {
        let ends: WindowEnds

        init?(_ needle: [UInt8]) {
            let kinds = ScalarKindTable.shared, lowercases = ScalarLowercases.shared
            var scalars: [UInt32] = []
            let valid = needle.withUnsafeBufferPointer { bytes -> Bool in
                var index = 0
                while index < bytes.count {
                    guard let (value, length) = ScalarKind.decode(bytes, at: index) else { return false }
                    switch kinds.kind(ofAny: value) {
                    case .other, .pictographic, .space:
                        guard value >= 0x80 || (value != 0x22 && value != 0x5C), lowercases.lowercase(value) == value else { return false }
                    default: return false
                    }
                    scalars.append(value)
                    index += length
                }
                return true
            }
            guard valid, let head = scalars.first, let tail = scalars.last else { return nil }
            // The scalars whose lowercase is another: ASCII capitals, and of kind other those below U+0800,
            // in Latin Extended Additional and the fullwidth capitals.
            let wanted = Set(scalars)
            var capitals: [UInt32: [UInt32]] = [:]
            for value in Array(0x41...0x5A) + Array(0x80..<0x800) + Array(0x1E00..<0x1F00) + Array(0xFF21...0xFF3A) {
                let value = UInt32(value)
                guard value < 0x80 || kinds.kind(of: value) == .other else { continue }
                let lower = lowercases.lowercase(value)
                if lower != value, wanted.contains(lower) { capitals[lower, default: []].append(value) }
            }
            func length(_ value: UInt32) -> Int { value < 0x80 ? 1 : value < 0x800 ? 2 : value < 0x1_0000 ? 3 : 4 }
            for (lower, uppers) in capitals where uppers.contains(where: { length($0) != length(lower) }) { return nil }
            func encoded(_ value: UInt32) -> [UInt8] {
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4) { Array($0[..<ScalarKind.encode(value, to: $0.baseAddress!)]) }
            }
            // A needle of one scalar is anchored at its first and last bytes.
            let headOffset = scalars.count == 1 ? 0 : length(head) - 1
            let firsts = Set(([head] + capitals[head, default: []]).map { encoded($0)[headOffset] })
            let lasts = Set(([tail] + capitals[tail, default: []]).map { encoded($0).last! })
            guard firsts.count <= 2, lasts.count <= 2 else { return nil }
            ends = WindowEnds(
                first: (firsts.min()!, firsts.max()!), firstOffset: headOffset, last: (lasts.min()!, lasts.max()!),
                lastOffset: needle.count - 1)
        }

        /// Whether the window of `text` at `index`, as long as `needle`, lowercases to it.
        func lowercases(
            _ text: UnsafeBufferPointer<UInt8>, at index: Int, to needle: UnsafeBufferPointer<UInt8>, _ kinds: ScalarKindTable,
            _ lowercases: ScalarLowercases
        ) -> Bool {
            var offset = 0
            while offset < needle.count {
                guard let (value, length) = ScalarKind.decode(text, at: index + offset),
                    let (wanted, _) = ScalarKind.decode(needle, at: offset)
                else { return false }
                let lower = value < 0x80 || kinds.kind(of: value) == .other ? lowercases.lowercase(value) : value
                guard lower == wanted else { return false }
                offset += length
            }
            return offset == needle.count
        }
    }

    /// Where `needle` first occurs in `text` at or after `start`.
    static func firstOccurrence(of needle: UnsafeBufferPointer<UInt8>, in text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        let first = needle[0], last = needle[needle.count - 1]
        let ends = WindowEnds(first: (first, first), firstOffset: 0, last: (last, last), lastOffset: needle.count - 1)
        var from = start
        while let candidate = firstCandidate(ends, length: needle.count, in: text, from: from) {
            if memcmp(text.baseAddress! + candidate, needle.baseAddress!, needle.count) == 0 { return candidate }
            from = candidate + 1
        }
        return nil
    }

    /// Two bytes of a window: at `firstOffset` one of `first`, at `lastOffset` one of `last`.
    struct WindowEnds {
        let first: (UInt8, UInt8)
        let firstOffset: Int
        let last: (UInt8, UInt8)
        let lastOffset: Int
    }

    /// The first place at or after `start` where a window of `length` bytes has the bytes `ends`
    /// says, sixteen places at a time.
    static func firstCandidate(_ ends: WindowEnds, length count: Int, in text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = text.baseAddress, text.count - start >= count else { return nil }
        let end = text.count - count
        let (first, last) = (ends.first, ends.last)
        var index = start
        guard end - start >= 16 else {
            while index <= end {
                let head = text[index + ends.firstOffset], tail = text[index + ends.lastOffset]
                if (head == first.0 || head == first.1) && (tail == last.0 || tail == last.1) { return index }
                index += 1
            }
            return nil
        }
        let firsts = (SIMD16<UInt8>(repeating: first.0), SIMD16<UInt8>(repeating: first.1))
        let lasts = (SIMD16<UInt8>(repeating: last.0), SIMD16<UInt8>(repeating: last.1))
        let highs = SIMD16<UInt8>(repeating: 0x80), none = SIMD16<UInt8>(repeating: 0)
        while index <= end {
            // The last sixteen places overlap those before them, whose candidates were checked already.
            let chunk = min(index, end - 15)
            let heads = UnsafeRawPointer(base + chunk + ends.firstOffset).loadUnaligned(as: SIMD16<UInt8>.self)
            let tails = UnsafeRawPointer(base + chunk + ends.lastOffset).loadUnaligned(as: SIMD16<UInt8>.self)
            let found = (heads .== firsts.0 .| heads .== firsts.1) .& (tails .== lasts.0 .| tails .== lasts.1)
            if any(found) {
                // The high bit of each lane where both bytes stand.
                let marks = unsafeBitCast(none.replacing(with: highs, where: found), to: SIMD2<UInt64>.self)
                for half in 0..<2 {
                    var candidates = UInt64(littleEndian: marks[half])
                    while candidates != 0 {
                        let candidate = chunk + 8 * half + candidates.trailingZeroBitCount / 8
                        candidates &= candidates &- 1
                        if candidate >= index { return candidate }
                    }
                }
            }
            index = chunk + 16
        }
        return nil
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// The body of a JSON string (what sits between the quotes) as bytes: the one
/// escaping rule every writer uses, and a decoder that also accepts a prefix
/// cut anywhere, so that a listing can work on a long text's first bytes.
package enum JSONString {
    /// Why an escaped body cannot be decoded (the JSON parser's wording).
    package struct Malformed: Error, Equatable {
        package let message: String
        /// Byte offset into the escaped body.
        let offset: Int
    }

    /// Quote, backslash and control characters are escaped; everything else is copied.
    @inline(__always)
    package static func needsEscape(_ byte: UInt8) -> Bool { byte == 0x22 || byte == 0x5C || byte < 0x20 }

    /// Whether `bytes` is ASCII that needs no escaping: then escaped and
    /// decoded forms are the same bytes. Sixteen bytes at a time.
    package static func isPlainASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index + 16 <= bytes.count {
            if !isPlainASCII(sixteenAt: UnsafeRawPointer(bytes.baseAddress! + index)) { return false }
            index += 16
        }
        while index + 8 <= bytes.count {
            if !isPlainASCII(word: UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)) { return false }
            index += 8
        }
        while index < bytes.count {
            if bytes[index] >= 0x80 || needsEscape(bytes[index]) { return false }
            index += 1
        }
        return true
    }

    /// Whether `escaped` holds no escape and no raw quote or control character, and is valid
    /// UTF-8: then it decodes to itself.
    package static func isUnescapedUTF8(_ escaped: UnsafeBufferPointer<UInt8>) -> Bool {
        isValidBody(escaped, allowingEscapes: false)
    }

    /// `isPlainASCII` for the sixteen bytes at `bytes`: two words, one test.
    @inline(__always)
    private static func isPlainASCII(sixteenAt bytes: UnsafeRawPointer) -> Bool {
        specialBytes(bytes.loadUnaligned(as: UInt64.self)) | specialBytes(bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) == 0
    }

    /// `isPlainASCII` for eight bytes at once.
    @inline(__always)
    private static func isPlainASCII(word: UInt64) -> Bool { specialBytes(word) == 0 }

    /// Nonzero when a byte of `word` is not plain ASCII (0x80 or more, below
    /// 0x20, a quote or a backslash), without a branch: each term sets the high
    /// bit of such a byte (exactly for the lowest one; borrows only mark bytes above it).
    @inline(__always)
    static func specialBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quotes = word ^ (0x22 &* ones), backslashes = word ^ (0x5C &* ones)
        return (word | (word &- 0x20 &* ones) & ~word | (quotes &- ones) & ~quotes | (backslashes &- ones) & ~backslashes) & highs
    }

    /// Nonzero when a byte of `word` is a quote, a backslash or below 0x20 (what ends a run of a
    /// string body that is copied as it is); the lowest such byte's mark is exact, as in `specialBytes`.
    @inline(__always)
    private static func escapeBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let quotes = word ^ (0x22 &* ones), backslashes = word ^ (0x5C &* ones)
        return ((word &- 0x20 &* ones) & ~word | (quotes &- ones) & ~quotes | (backslashes &- ones) & ~backslashes) & highs
    }

    /// The index of the first quote, backslash or control character at or after `start`, or
    /// `bytes.count`; eight bytes at a time.
    package static func nextEscapeByte(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        while index + 8 <= bytes.count {
            let found = escapeBytes(UInt64(littleEndian: UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self)))
            if found != 0 { return index + found.trailingZeroBitCount / 8 }
            index += 8
        }
        while index < bytes.count, !needsEscape(bytes[index]) { index += 1 }
        return index
    }

    /// Whether `escaped` is exactly what `appendEscaped` writes for some valid
    /// UTF-8: then decoding it and escaping it again gives the same bytes, and
    /// a JSON listing copies it as it is.
    package static func isCanonicallyEscaped(_ escaped: UnsafeBufferPointer<UInt8>) -> Bool {
        isValidBody(escaped, allowingEscapes: true)
    }

    /// Whether `escaped` is valid UTF-8 without a raw quote or control character, and holds no
    /// escape or, `allowingEscapes`, only those `appendEscaped` writes. One pass, plain ASCII
    /// eight bytes at a time.
    private static func isValidBody(_ escaped: UnsafeBufferPointer<UInt8>, allowingEscapes: Bool) -> Bool {
        let count = escaped.count
        var index = 0
        while index < count {
            if index + 8 <= count {
                let special = specialBytes(
                    UInt64(littleEndian: UnsafeRawPointer(escaped.baseAddress! + index).loadUnaligned(as: UInt64.self)))
                if special == 0 {
                    index += 8
                    continue
                }
                // Straight to the first byte that is not plain (its mark is exact).
                index += special.trailingZeroBitCount / 8
            }
            let byte = escaped[index]
            if byte >= 0x80 {
                guard let (_, length) = ScalarKind.decode(escaped, at: index) else { return false }
                index += length
            } else if byte == 0x5C {
                guard allowingEscapes, index + 1 < count else { return false }
                switch escaped[index + 1] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 2
                case UInt8(ascii: "u"):
                    // `\u00xx` (lowercase hex) for the control characters without a short escape.
                    guard index + 6 <= count, escaped[index + 2] == 0x30, escaped[index + 3] == 0x30,
                        escaped[index + 4] == 0x30 || escaped[index + 4] == 0x31,
                        let low = Hex.digits.firstIndex(of: escaped[index + 5])
                    else { return false }
                    let value = (escaped[index + 4] - 0x30) << 4 | UInt8(low)
                    guard value != 0x09 && value != 0x0A && value != 0x0D else { return false }
                    index += 6
                default:
                    return false
                }
            } else if needsEscape(byte) {
                return false
            } else {
                index += 1
            }
        }
        return true
    }

    /// Appends `utf8` escaped: `\"`, `\\`, `\n`, `\r`, `\t`, other control characters as `\u00xx`.
    package static func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        // A large text is sized first: growing by doubling would hold two buffers of it at once
        // (a 16 MiB clip's log line peaked at 29 MiB).
        if utf8.count >= 1 << 16 { out.reserveCapacity(out.count + escapedCount(utf8) + 64) }
        var plainStart = 0
        while true {
            let index = nextEscapeByte(in: utf8, from: plainStart)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainStart..<index]))
            guard index < utf8.count else { return }
            appendEscape(of: utf8[index], to: &out)
            plainStart = index + 1
        }
    }

    /// How many bytes `appendEscaped` writes for `utf8`: a buffer sized by it never grows.
    package static func escapedCount(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
        var count = utf8.count
        for byte in utf8 where needsEscape(byte) {
            switch byte {
            case 0x22, 0x5C, 0x0A, 0x0D, 0x09: count += 1
            default: count += 5
            }
        }
        return count
    }

    /// How many bytes of UTF-8 `escaped` (in `appendEscaped`'s form, whole escapes only) decodes to:
    /// each escape is one byte, `\u00XX` as much as `\n`.
    package static func unescapedCount(ofCanonical escaped: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = escaped.baseAddress else { return 0 }
        var count = escaped.count
        var position = 0
        while position < escaped.count,
            let found = memchr(base + position, 0x5C, escaped.count - position)?.assumingMemoryBound(to: UInt8.self)
        {
            let at = UnsafePointer(found) - base
            let isUnicode = at + 1 < escaped.count && base[at + 1] == UInt8(ascii: "u")
            count -= isUnicode ? 5 : 1
            position = at + (isUnicode ? 6 : 2)
        }
        return count
    }

    private static func appendEscape(of byte: UInt8, to out: inout [UInt8]) {
        switch byte {
        case 0x22: out += [0x5C, 0x22]
        case 0x5C: out += [0x5C, 0x5C]
        case 0x0A: out += [0x5C, UInt8(ascii: "n")]
        case 0x0D: out += [0x5C, UInt8(ascii: "r")]
        case 0x09: out += [0x5C, UInt8(ascii: "t")]
        default: out += [0x5C, UInt8(ascii: "u"), 0x30, 0x30, Hex.digits[Int(byte >> 4)], Hex.digits[Int(byte & 0x0F)]]
        }
    }

    /// Decodes an escaped body into UTF-8 appended to `out`, checking escapes
    /// and UTF-8; with `reescaping`, appends it escaped again by `appendEscaped`
    /// instead (a body some other writer escaped differently comes out as
    /// itsypad writes it). Unless `final`, the input may end anywhere: an escape
    /// or a UTF-8 sequence cut by its end is left for the next call. Returns how
    /// many input bytes were consumed. A raw quote ends nothing here: it is malformed.
    package static func unescape(
        _ raw: UnsafeBufferPointer<UInt8>, final: Bool, reescaping: Bool = false,
        into out: inout [UInt8]
    ) throws(Malformed) -> Int {
        var position = 0
        var plainStart = 0
        func flushPlain(upTo end: Int) throws(Malformed) {
            guard end > plainStart else { return }
            let plain = UnsafeBufferPointer(rebasing: raw[plainStart..<end])
            let valid = UTF8Check.validPrefix(plain)
            if valid.length < plain.count && (valid.invalid || final || end < raw.count) {
                throw Malformed(message: "invalid UTF-8 in string", offset: plainStart + valid.length)
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: plain[..<valid.length]))
            plainStart += valid.length
        }
        while position < raw.count {
            let byte = raw[position]
            if byte >= 0x20 && byte != 0x5C && byte != 0x22 { position += 1; continue }
            if byte != 0x5C {
                throw Malformed(message: byte == 0x22 ? "unescaped quote in string" : "control character in string", offset: position)
            }
            try flushPlain(upTo: position)
            let mark = out.count
            guard let length = try decodeEscape(raw, at: position, into: &out) else {
                if final { throw Malformed(message: "truncated escape", offset: position) }
                return position
            }
            // Only a one-byte character can need escaping again.
            if reescaping, out.count == mark + 1, needsEscape(out[mark]) { appendEscape(of: out.removeLast(), to: &out) }
            position += length
            plainStart = position
        }
        try flushPlain(upTo: raw.count)
        return plainStart
    }

    /// Appends the UTF-8 of the escape at `start` to `out` and returns the escape's length; nil
    /// (and nothing appended) when the input ends inside it.
    static func decodeEscape(_ raw: UnsafeBufferPointer<UInt8>, at start: Int, into out: inout [UInt8]) throws(Malformed) -> Int? {
        guard start + 1 < raw.count else { return nil }
        if let short = shortEscape(raw[start + 1]) {
            out.append(short)
            return 2
        }
        switch raw[start + 1] {
        case UInt8(ascii: "u"):
            guard let high = try hex4(raw, at: start + 2) else { return nil }
            var code = high
            var length = 6
            if (0xD800...0xDBFF).contains(high) {
                guard start + 7 < raw.count else { return nil }
                guard raw[start + 6] == 0x5C, raw[start + 7] == UInt8(ascii: "u") else {
                    throw Malformed(message: "unpaired surrogate", offset: start)
                }
                guard let low = try hex4(raw, at: start + 8) else { return nil }
                guard (0xDC00...0xDFFF).contains(low) else { throw Malformed(message: "unpaired surrogate", offset: start) }
                code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                length = 12
            } else if (0xDC00...0xDFFF).contains(high) {
                throw Malformed(message: "unpaired surrogate", offset: start)
            }
            guard let scalar = Unicode.Scalar(code) else { throw Malformed(message: "invalid \\u escape", offset: start) }
            out.append(contentsOf: UTF8.encode(scalar)!)
            return length
        default:
            throw Malformed(message: "invalid escape", offset: start)
        }
    }

    /// The byte a two-character escape `\\x` stands for (x is `letter`); nil for `u` and anything else.
    package static func shortEscape(_ letter: UInt8) -> UInt8? {
        switch letter {
        case UInt8(ascii: "\""): 0x22
        case UInt8(ascii: "\\"): 0x5C
        case UInt8(ascii: "/"): 0x2F
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
    }

    private static func hex4(_ raw: UnsafeBufferPointer<UInt8>, at start: Int) throws(Malformed) -> UInt32? {
        guard start + 4 <= raw.count else {
            for index in start..<raw.count where Hex.value(raw[index]) == nil {
                throw Malformed(message: "invalid \\u escape", offset: start)
            }
            return nil
        }
        var value: UInt32 = 0
        for index in start..<start + 4 {
            guard let digit = Hex.value(raw[index]) else { throw Malformed(message: "invalid \\u escape", offset: start) }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}

/// UTF-8 validation without building a String (the stdlib offers none on bytes).
package enum UTF8Check {
    /// The length of the longest prefix made of whole valid sequences, and
    /// whether what follows it is invalid (rather than a sequence cut by the end).
    static func validPrefix(_ bytes: UnsafeBufferPointer<UInt8>) -> (length: Int, invalid: Bool) {
        var index = 0
        let count = bytes.count
        while index < count {
            // ASCII runs go eight bytes at a time.
            while index + 8 <= count,
                UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0
            {
                index += 8
            }
            guard index < count else { break }
            let lead = bytes[index]
            if lead < 0x80 { index += 1; continue }
            let length: Int
            var lower: UInt8 = 0x80, upper: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; upper = 0x9F
            case 0xF0: length = 4; lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; upper = 0x8F
            default: return (index, true)
            }
            for offset in 1..<length {
                guard index + offset < count else { return (index, false) }
                let byte = bytes[index + offset]
                let (low, high) = offset == 1 ? (lower, upper) : (0x80, 0xBF)
                guard byte >= low && byte <= high else { return (index, true) }
            }
            index += length
        }
        return (count, false)
    }

    package static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool { validPrefix(bytes).length == bytes.count }

    /// Whether every byte is below 0x80.
    package static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index + 8 <= bytes.count {
            if UnsafeRawPointer(bytes.baseAddress! + index).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            index += 8
        }
        while index < bytes.count {
            if bytes[index] >= 0x80 { return false }
            index += 1
        }
        return true
    }
}

/// Reads a line in one of the fixed forms itsypad writes, a field at a time.
/// A struct rather than local functions over a captured position: those cost
/// a runtime exclusivity check per call, and a listing reads 100,000 lines.
package struct FixedFormReader {
    let line: UnsafeBufferPointer<UInt8>
    package var position = 0

    package init(_ line: UnsafeBufferPointer<UInt8>) { self.line = line }

    var isAtEnd: Bool { position >= line.count }
    package var current: UInt8? { position < line.count ? line[position] : nil }

    /// Whether `literal` stands at the position; if it does, the position moves past it.
    package mutating func skip(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard position + count <= line.count, memcmp(line.baseAddress! + position, literal.utf8Start, count) == 0 else { return false }
        position += count
        return true
    }

    /// A string body without escapes or non-ASCII, up to (not past) its closing quote.
    package mutating func plainString() -> UnsafeBufferPointer<UInt8>? {
        let start = position
        while position < line.count, line[position] != 0x22 {
            if line[position] == 0x5C || line[position] < 0x20 || line[position] >= 0x80 { return nil }
            position += 1
        }
        return position < line.count ? UnsafeBufferPointer(rebasing: line[start..<position]) : nil
    }

    /// An integer of up to 18 digits, optionally negative; nil when there is no digit.
    package mutating func integer() -> Int64? {
        let negative = current == UInt8(ascii: "-")
        if negative { position += 1 }
        var magnitude: Int64 = 0
        let digitsStart = position
        while position < line.count, (0x30...0x39).contains(line[position]), position - digitsStart < 18 {
            magnitude = magnitude * 10 + Int64(line[position] - 0x30)
            position += 1
        }
        guard position > digitsStart else { return nil }
        return negative ? -magnitude : magnitude
    }
}

/// Byte vocabulary for code that reads raw UTF-8 instead of `Character`s (the
/// language and secret detectors): named ASCII bytes, ASCII character classes,
/// and searches for short static needles in byte slices.

package extension UInt8 {
    static let tab = UInt8(ascii: "\t")
    static let newline = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
    static let space = UInt8(ascii: " ")
    static let bang = UInt8(ascii: "!")
    static let quote = UInt8(ascii: "\"")
    static let hash = UInt8(ascii: "#")
    static let dollar = UInt8(ascii: "$")
    static let openParen = UInt8(ascii: "(")
    static let comma = UInt8(ascii: ",")
    static let dash = UInt8(ascii: "-")
    static let dot = UInt8(ascii: ".")
    static let slash = UInt8(ascii: "/")
    static let colon = UInt8(ascii: ":")
    static let semicolon = UInt8(ascii: ";")
    static let lessThan = UInt8(ascii: "<")
    static let equals = UInt8(ascii: "=")
    static let openBracket = UInt8(ascii: "[")
    static let backslash = UInt8(ascii: "\\")
    static let closeBracket = UInt8(ascii: "]")
    static let underscore = UInt8(ascii: "_")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
}

package extension UInt8 {
    var isASCIIWhitespace: Bool {
        self == .space || self == .tab || self == .newline || self == .carriageReturn
    }

    var isASCIIUppercase: Bool { self >= UInt8(ascii: "A") && self <= UInt8(ascii: "Z") }
    var isASCIILowercase: Bool { self >= UInt8(ascii: "a") && self <= UInt8(ascii: "z") }
    var isASCIILetter: Bool { isASCIIUppercase || isASCIILowercase }
    var isASCIIDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
    var isASCIIAlphanumeric: Bool { isASCIILetter || isASCIIDigit }
    var isIdentifierByte: Bool { isASCIIAlphanumeric || self == .underscore }
    var asciiLowercased: UInt8 { isASCIIUppercase ? self + 32 : self }
    var asciiUppercased: UInt8 { isASCIILowercase ? self - 32 : self }
}

package extension Collection where Element == UInt8 {
    func trimmingASCIIWhitespace() -> SubSequence {
        let start = drop(while: \.isASCIIWhitespace)
        var end = start.endIndex
        while end > start.startIndex {
            let before = start.index(end, offsetBy: -1)
            guard start[before].isASCIIWhitespace else { break }
            end = before
        }
        return start[..<end]
    }
}

package extension ArraySlice where Element == UInt8 {
    func hasPrefix(_ s: StaticString) -> Bool {
        hasBytes(s, at: startIndex)
    }

    func hasSuffix(_ s: StaticString) -> Bool {
        hasBytes(s, at: endIndex - s.utf8CodeUnitCount)
    }

    /// Whether `s` occurs starting at index `i`. Written as a plain loop:
    /// it runs for almost every rule on every line.
    func hasBytes(_ s: StaticString, at i: Int) -> Bool {
        guard i >= startIndex, i + s.utf8CodeUnitCount <= endIndex else { return false }
        return s.withUTF8Buffer { needle in
            for k in 0..<needle.count where self[i + k] != needle[k] { return false }
            return true
        }
    }

    func contains(_ needle: StaticString) -> Bool {
        firstIndex(of: needle) != nil
    }

    /// Plain first-byte-then-compare search: needles are a few bytes long,
    /// and the generic `firstRange(of:)` costs more in setup than it saves.
    func firstIndex(of needle: StaticString) -> Int? {
        let n = needle.utf8CodeUnitCount
        guard n > 0 else { return startIndex }
        guard count >= n else { return nil }
        return needle.withUTF8Buffer { p in
            let first = p[0]
            var i = startIndex
            while i <= endIndex - n {
                if self[i] == first, hasBytes(needle, at: i) { return i }
                i += 1
            }
            return nil
        }
    }

    /// Whether the bytes spell exactly one of the given words.
    func isOneOf(_ words: StaticString...) -> Bool {
        words.contains { word in count == word.utf8CodeUnitCount && hasPrefix(word) }
    }
}

package extension Array where Element == UInt8 {
    /// Appends a literal's bytes in one copy (`+= "…".utf8` goes through the string's view).
    @inline(__always)
    mutating func append(literal: StaticString) {
        literal.withUTF8Buffer { append(contentsOf: $0) }
    }

    /// Appends `count` bytes that `write` fills in on the stack: one capacity
    /// check for the lot instead of one per byte (listings write 100,000 ids and dates).
    @inline(__always)
    mutating func appendWritten(count: Int, _ write: (UnsafeMutablePointer<UInt8>) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count) { buffer in
            write(buffer.baseAddress!)
            append(contentsOf: UnsafeBufferPointer(buffer))
        }
    }
}

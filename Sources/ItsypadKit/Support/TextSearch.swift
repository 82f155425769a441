/// Itsypad's case-insensitive search: `text.lowercased().contains(query.lowercased())`
/// with Swift's meaning (whole characters, canonical equivalence), answered
/// from UTF-8 bytes where Unicode allows it. With an ASCII query (the usual
/// case) a text is decided by an ASCII-case-folded byte search, and only a
/// text that may match through non-ASCII characters goes through Swift's rule.
struct TextQuery {
    /// The query lowercased, as the rule compares it.
    let folded: String
    /// `folded` as bytes when it is ASCII.
    private let ascii: [UInt8]?
    /// An ASCII query with CR or LF: a byte match may split a CR LF character, so it is checked.
    private let asciiNeedsCheck: Bool
    /// Whether a text of ASCII only can match a non-ASCII query (its characters all equal ASCII ones, like U+037E and ";").
    private let asciiTextCanMatch: Bool

    init(_ query: String) {
        folded = query.lowercased()
        let bytes = Array(folded.utf8)
        ascii = bytes.allSatisfy { $0 < 0x80 } ? bytes : nil
        asciiNeedsCheck = bytes.contains(0x0A) || bytes.contains(0x0D)
        asciiTextCanMatch = folded.allSatisfy { character in
            (0..<128).contains { Character(Unicode.Scalar(UInt8($0))) == character }
        }
    }

    /// The rule, on a whole string.
    func matches(_ text: String) -> Bool {
        folded.isEmpty || text.lowercased().contains(folded)
    }

    /// The rule, on valid UTF-8.
    func matches(utf8 text: UnsafeBufferPointer<UInt8>) -> Bool {
        if folded.isEmpty { return true }
        let textIsASCII = UTF8Check.isASCII(text)
        guard let ascii else {
            return (textIsASCII && !asciiTextCanMatch) ? false : matches(String(decoding: text, as: UTF8.self))
        }
        // An exact match implies this byte match unless the text holds one of the few
        // non-ASCII scalars that lowercase or normalise to ASCII (see `mayFoldToASCII`).
        let found = TextQuery.containsFoldedASCII(text, ascii)
        if textIsASCII && !asciiNeedsCheck { return found }
        if found || (!textIsASCII && TextQuery.mayFoldToASCII(text)) { return matches(String(decoding: text, as: UTF8.self)) }
        return false
    }

    /// ASCII letters of `text` lowercased, searched for `needle` (lowercase ASCII).
    static func containsFoldedASCII(_ text: UnsafeBufferPointer<UInt8>, _ needle: [UInt8]) -> Bool {
        let count = needle.count
        guard count > 0, text.count >= count else { return count == 0 }
        return needle.withUnsafeBufferPointer { needle in
            let first = needle[0]
            let firstUpper = (0x61...0x7A).contains(first) ? first - 0x20 : first
            var index = 0
            let last = text.count - count
            while index <= last {
                let byte = text[index]
                if byte == first || byte == firstUpper {
                    var offset = 1
                    while offset < count, lowercaseASCII(text[index + offset]) == needle[offset] { offset += 1 }
                    if offset == count { return true }
                }
                index += 1
            }
            return false
        }
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

// Byte classes only the language detector needs; the shared ones are in
// Support/Bytes.swift.

extension LanguageDetector {
    /// A set of ASCII bytes as a bitmask, so membership tests in hot loops
    /// neither allocate nor search.
    struct ByteSet: Sendable {
        private var low: UInt64 = 0
        private var high: UInt64 = 0

        init(_ members: StaticString) {
            members.withUTF8Buffer { buffer in
                for byte in buffer where byte < 128 {
                    if byte < 64 { low |= 1 << UInt64(byte) } else { high |= 1 << UInt64(byte - 64) }
                }
            }
        }

        /// The set of bytes occurring in `bytes`.
        init(_ bytes: ArraySlice<UInt8>) {
            for byte in bytes where byte < 128 {
                if byte < 64 { low |= 1 << UInt64(byte) } else { high |= 1 << UInt64(byte - 64) }
            }
        }

        func contains(_ byte: UInt8) -> Bool {
            if byte < 64 { return low & (1 << UInt64(byte)) != 0 }
            if byte < 128 { return high & (1 << UInt64(byte - 64)) != 0 }
            return false
        }

        static let cssSelectorStart = ByteSet(".#:*[")
        static let codePunctuation = ByteSet("(=;\"")
        static let statementEnd = ByteSet(";{,(")
        static let tomlValueStart = ByteSet("\"'[{")
        static let makeTargetPunctuation = ByteSet(".-/%$() ")
        static let shellSpecialParameter = ByteSet("{@#?")
    }
}

extension UInt8 {
    /// Bytes of a bare config key (`runs-on`, `tool.poetry`).
    var isKeyByte: Bool { isIdentifierByte || self == .dash || self == .dot }
    /// Bytes that can continue a JSON number after its first digit or sign.
    var isNumberByte: Bool {
        isASCIIDigit || self == .dot || self == .dash || self == UInt8(ascii: "+")
            || self == UInt8(ascii: "e") || self == UInt8(ascii: "E")
    }
}

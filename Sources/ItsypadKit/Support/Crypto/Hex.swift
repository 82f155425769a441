/// Lowercase hexadecimal text of bytes (digests, key check values, hashed record names).
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `text` is `count` lowercase hex digits, as `encode` writes them.
    static func isEncoded(_ text: String, count: Int) -> Bool {
        text.utf8.count == count && text.utf8.allSatisfy(digits.contains)
    }
}

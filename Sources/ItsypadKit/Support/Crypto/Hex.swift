/// Lowercase hexadecimal text of bytes (digests, key check values, hashed record names, ids, JSON escapes).
enum Hex {
    static let digits = Array("0123456789abcdef".utf8)

    /// The value of one hexadecimal digit (either case).
    static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }

    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// Lowercase hexadecimal text of bytes (digests, key check values, hashed record names, ids, JSON escapes).
package enum Hex {
    static let digits = Array("0123456789abcdef".utf8)

    /// The value of one hexadecimal digit (either case).
    package static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }

    package static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes of lowercase hexadecimal text, or nil for anything else.
    package static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count / 2)
        for index in stride(from: 0, to: utf8.count, by: 2) {
            guard let high = digits.firstIndex(of: utf8[index]), let low = digits.firstIndex(of: utf8[index + 1]) else { return nil }
            bytes.append(UInt8(high << 4 | low))
        }
        return bytes
    }
}

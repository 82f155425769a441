/// Base64 (RFC 4648 §4: standard alphabet, `=` padding) for ciphertext in JSON fields.
/// Decoding is strict: one canonical text per byte string, so a sealed field cannot be
/// rewritten into another spelling of the same bytes. (Ciphertext is public: the table
/// lookups here reveal nothing.)
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values: [UInt8] = {
        var values = [UInt8](repeating: 0xff, count: 256)
        for (index, character) in alphabet.enumerated() { values[Int(character)] = UInt8(index) }
        return values
    }()

    static func encode(_ bytes: [UInt8]) -> String {
        var text = [UInt8]()
        text.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var chunk = UInt32(bytes[index]) << 16
            if count > 1 { chunk |= UInt32(bytes[index + 1]) << 8 }
            if count > 2 { chunk |= UInt32(bytes[index + 2]) }
            for position in 0..<4 {
                text.append(position <= count ? alphabet[Int(chunk >> (18 - 6 * UInt32(position)) & 0x3f)] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes, or nil unless `text` is exactly what `encode` would produce for them.
    static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 == 0 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(characters.count / 4 * 3)
        for start in stride(from: 0, to: characters.count, by: 4) {
            let isLast = start + 4 == characters.count
            let padding = isLast ? characters[start..<(start + 4)].reversed().prefix { $0 == UInt8(ascii: "=") }.count : 0
            guard padding <= 2 else { return nil }
            var chunk: UInt32 = 0
            for character in characters[start..<(start + 4 - padding)] {
                let value = values[Int(character)]
                guard value != 0xff else { return nil }
                chunk = chunk << 6 | UInt32(value)
            }
            chunk <<= 6 * UInt32(padding)
            // Bits beyond the last byte must be zero, or two texts would decode alike.
            guard chunk & ((1 << (8 * UInt32(padding))) - 1) == 0 else { return nil }
            for position in 0..<(3 - padding) { bytes.append(UInt8(truncatingIfNeeded: chunk >> (16 - 8 * UInt32(position)))) }
        }
        return bytes
    }
}

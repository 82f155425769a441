/// Base64 (RFC 4648 §4: standard alphabet, `=` padding) for ciphertext in JSON fields.
/// Decoding is strict: one canonical text per byte string, so a sealed field cannot be
/// rewritten into another spelling of the same bytes. (Ciphertext is public: the table
/// lookups here reveal nothing.) Every sealed record passes through here, hence the
/// unsafe buffers: no per-character bounds checks or allocations.
package enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let invalid: UInt8 = 0xff
    private static let values: [UInt8] = {
        var values = [UInt8](repeating: invalid, count: 256)
        for (index, character) in alphabet.enumerated() { values[Int(character)] = UInt8(index) }
        return values
    }()
    private static let padding = UInt8(ascii: "=")

    package static func encode(_ bytes: [UInt8]) -> String {
        let length = encodedCount(bytes.count)
        return String(unsafeUninitializedCapacity: length) { text in
            bytes.withUnsafeBytes { encode($0, into: text.baseAddress!) }
            return length
        }
    }

    /// The length of the text that encodes `count` bytes.
    package static func encodedCount(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    /// Writes the text of `bytes`, `encodedCount(bytes.count)` characters, at `text` (an export
    /// writes an image's straight into its output).
    package static func encode(_ bytes: UnsafeRawBufferPointer, into text: UnsafeMutablePointer<UInt8>) {
        alphabet.withUnsafeBufferPointer { alphabet in
            var out = 0
            for start in stride(from: 0, to: bytes.count, by: 3) {
                let count = min(3, bytes.count - start)
                var chunk = UInt32(bytes[start]) << 16
                if count > 1 { chunk |= UInt32(bytes[start + 1]) << 8 }
                if count > 2 { chunk |= UInt32(bytes[start + 2]) }
                text[out] = alphabet[Int(chunk >> 18)]
                text[out + 1] = alphabet[Int(chunk >> 12 & 0x3f)]
                text[out + 2] = count > 1 ? alphabet[Int(chunk >> 6 & 0x3f)] : padding
                text[out + 3] = count > 2 ? alphabet[Int(chunk & 0x3f)] : padding
                out += 4
            }
        }
    }

    /// The bytes, or nil unless `text` is exactly what `encode` would produce for them.
    package static func decode(_ text: String) -> [UInt8]? {
        var text = text
        var bytes: [UInt8] = []
        return text.withUTF8 { decode($0, into: &bytes) } ? bytes : nil
    }

    /// Replaces the contents of `bytes` (its capacity reused: an import decodes 10,000 images)
    /// with the bytes `characters` encode; false unless they are exactly what `encode` would
    /// produce for them.
    package static func decode(_ characters: UnsafeBufferPointer<UInt8>, into bytes: inout [UInt8]) -> Bool {
        bytes.removeAll(keepingCapacity: true)
        guard characters.count % 4 == 0 else { return false }
        guard let last = characters.last else { return true }
        let paddingCount = last != padding ? 0 : characters[characters.count - 2] == padding ? 2 : 1
        let length = characters.count / 4 * 3 - paddingCount
        let fullGroups = characters.count / 4 - (paddingCount > 0 ? 1 : 0)
        var invalid: UInt8 = 0
        bytes.append(contentsOf: repeatElement(0, count: length))
        bytes.withUnsafeMutableBufferPointer { bytes in
            values.withUnsafeBufferPointer { values in
                // Every value is 0…63, or 0xff for a character outside the alphabet: OR-ing
                // them all and testing the top bit once checks the whole text.
                func value(_ index: Int) -> UInt32 {
                    let value = values[Int(characters[index])]
                    invalid |= value
                    return UInt32(value & 0x3f)
                }
                for group in 0..<fullGroups {
                    let at = group * 4
                    let chunk = value(at) << 18 | value(at + 1) << 12 | value(at + 2) << 6 | value(at + 3)
                    bytes[group * 3] = UInt8(truncatingIfNeeded: chunk >> 16)
                    bytes[group * 3 + 1] = UInt8(truncatingIfNeeded: chunk >> 8)
                    bytes[group * 3 + 2] = UInt8(truncatingIfNeeded: chunk)
                }
                if paddingCount > 0 {
                    let at = fullGroups * 4
                    var chunk = value(at) << 18 | value(at + 1) << 12
                    if paddingCount == 1 { chunk |= value(at + 2) << 6 }
                    // Bits beyond the last byte must be zero, or two texts would decode alike.
                    if chunk & (paddingCount == 1 ? 0xff : 0xffff) != 0 { invalid = 0xff }
                    bytes[fullGroups * 3] = UInt8(truncatingIfNeeded: chunk >> 16)
                    if paddingCount == 1 { bytes[fullGroups * 3 + 1] = UInt8(truncatingIfNeeded: chunk >> 8) }
                }
            }
        }
        guard invalid & 0x80 == 0 else {
            bytes.removeAll(keepingCapacity: true)
            return false
        }
        return true
    }
}

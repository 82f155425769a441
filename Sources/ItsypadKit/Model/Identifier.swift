/// Random (version 4) UUIDs as lowercase strings: record names on the backend
/// and ids on the command line.
public enum Identifier {
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return format(bytes)
    }

    static func format(_ bytes: [UInt8]) -> String {
        let hex = Array("0123456789abcdef")
        var text = ""
        text.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text.append("-") }
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return text
    }

    /// True for a canonical UUID string (any case).
    public static func isValid(_ text: String) -> Bool { bytes(text) != nil }

    /// The 16 bytes of a UUID string, nil when it is not one.
    public static func bytes(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count == 36 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(16)
        var index = 0
        while index < 36 {
            if [8, 13, 18, 23].contains(index) {
                guard utf8[index] == 0x2D else { return nil }
                index += 1
                continue
            }
            guard let high = hexValue(utf8[index]), let low = hexValue(utf8[index + 1]) else { return nil }
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }

    /// Short form shown in listings: enough to be a unique 4+ character prefix.
    public static func short(_ id: String) -> String { String(id.prefix(8)) }

    /// A prefix a user may type: at least 4 hex digits (dashes allowed).
    public static func isPrefixCandidate(_ text: String) -> Bool {
        text.count >= 4 && text.count <= 36 && text.allSatisfy { $0.isHexDigit || $0 == "-" }
    }
}

/// Resolving what the user typed (a full id, a 4+ character prefix or, for tabs,
/// a name) to exactly one item.
public enum Resolution<Item> {
    case found(Item)
    case ambiguous([Item])
    case notFound
}

/// Hexadecimal digits, for ids and JSON escapes.
enum Hex {
    static let digits = Array("0123456789abcdef".utf8)

    static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }
}

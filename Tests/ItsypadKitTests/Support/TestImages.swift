/// Images of each format a binary clip is sniffed as, built byte by byte: a header that says
/// `width`×`height`, then `payload` bytes of seeded noise (which no other file of a test holds).
enum TestImages {
    static func noise(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    static func bigEndian(_ value: Int, _ count: Int) -> [UInt8] {
        (0..<count).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }
    static func littleEndian(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }

    static func png(width: Int, height: Int, payload: Int = 64, seed: UInt64 = 1) -> [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + bigEndian(13, 4) + Array("IHDR".utf8) + bigEndian(width, 4)
            + bigEndian(height, 4) + [8, 2, 0, 0, 0] + [0, 0, 0, 0] + bigEndian(payload, 4) + Array("IDAT".utf8)
            + noise(payload, seed: seed)
    }

    static func jpeg(width: Int, height: Int, payload: Int = 64, seed: UInt64 = 2) -> [UInt8] {
        // SOI, an APP0 segment, then SOF0 with the size.
        [0xFF, 0xD8, 0xFF, 0xE0] + bigEndian(16, 2) + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
            + [0xFF, 0xC0] + bigEndian(17, 2) + [8] + bigEndian(height, 2) + bigEndian(width, 2) + [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
            + noise(payload, seed: seed)
    }

    static func gif(width: Int, height: Int, payload: Int = 64, seed: UInt64 = 3) -> [UInt8] {
        Array("GIF89a".utf8) + littleEndian(width, 2) + littleEndian(height, 2) + [0xF7, 0, 0] + noise(payload, seed: seed)
    }

    static func bmp(width: Int, height: Int, payload: Int = 64, seed: UInt64 = 4) -> [UInt8] {
        Array("BM".utf8) + littleEndian(54 + payload, 4) + [0, 0, 0, 0] + littleEndian(54, 4) + littleEndian(40, 4)
            + littleEndian(width, 4) + littleEndian(height, 4) + [1, 0, 24, 0] + [UInt8](repeating: 0, count: 24)
            + noise(payload, seed: seed)
    }

    static func webp(width: Int, height: Int, payload: Int = 64, seed: UInt64 = 5) -> [UInt8] {
        Array("RIFF".utf8) + littleEndian(22 + payload, 4) + Array("WEBPVP8X".utf8) + littleEndian(10, 4) + [0, 0, 0, 0]
            + littleEndian(width - 1, 3) + littleEndian(height - 1, 3) + noise(payload, seed: seed)
    }

    static func tiff(width: Int, height: Int, payload: Int = 64, seed: UInt64 = 6) -> [UInt8] {
        // Little-endian: the first directory at 8, with ImageWidth (SHORT) and ImageLength (LONG).
        [0x49, 0x49, 0x2A, 0x00] + littleEndian(8, 4) + littleEndian(2, 2)
            + littleEndian(256, 2) + littleEndian(3, 2) + littleEndian(1, 4) + littleEndian(width, 2) + [0, 0]
            + littleEndian(257, 2) + littleEndian(4, 2) + littleEndian(1, 4) + littleEndian(height, 4)
            + [0, 0, 0, 0] + noise(payload, seed: seed)
    }

    static func pdf(payload: Int = 64, seed: UInt64 = 7) -> [UInt8] {
        Array("%PDF-1.7\n".utf8) + [0x25, 0xE2, 0xE3, 0xCF, 0xD3, 0x0A] + noise(payload, seed: seed) + Array("\n%%EOF\n".utf8)
    }

    /// Each format: its type, an image of 640×480 (nil pixels for PDF) and the pixels its header says.
    static let all: [(type: String, bytes: [UInt8], width: Int?, height: Int?)] = [
        ("image/png", png(width: 640, height: 480), 640, 480),
        ("image/jpeg", jpeg(width: 640, height: 480), 640, 480),
        ("image/gif", gif(width: 640, height: 480), 640, 480),
        ("image/bmp", bmp(width: 640, height: 480), 640, 480),
        ("image/webp", webp(width: 640, height: 480), 640, 480),
        ("image/tiff", tiff(width: 640, height: 480), 640, 480),
        ("application/pdf", pdf(), nil, nil),
    ]
}

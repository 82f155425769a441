import ItsypadSupport

/// MIME types of clipboard entries: which are text, which are well formed, and which a
/// content's first bytes say it is.
public enum MediaType {
    /// The type of every text entry.
    public static let text = "text/plain"
    /// The type of bytes that are neither text nor of a known format.
    public static let octetStream = "application/octet-stream"
    /// Longest type accepted: a line of the history describes the entry in a bounded number of bytes.
    public static let maxLength = 100

    /// Whether `type` is `type/subtype`, each an RFC 6838 name (letters, digits and `!#$&-^_.+`),
    /// optionally followed by parameters of token characters (`text/plain;charset=utf-8`).
    public static func isValid(_ type: String) -> Bool {
        let bytes = Array(type.utf8)
        guard bytes.count <= maxLength, let slash = bytes.firstIndex(of: 0x2F) else { return false }
        let parameters = bytes.firstIndex(of: 0x3B) ?? bytes.count
        guard slash < parameters else { return false }
        func isName(_ part: ArraySlice<UInt8>) -> Bool {
            guard let first = part.first, isAlphanumeric(first) else { return false }
            return part.allSatisfy { isAlphanumeric($0) || Array("!#$&-^_.+".utf8).contains($0) }
        }
        guard isName(bytes[..<slash]), isName(bytes[(slash + 1)..<parameters]) else { return false }
        // Parameters: `;name=value` of token characters (no spaces, quotes or controls).
        return bytes[parameters...].allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    /// Whether entries of `type` are kept as text: `text/plain`, with or without a charset.
    public static func isText(_ type: String) -> Bool {
        var type = type
        return type.withUTF8(isText(utf8:))
    }

    /// `isText` of a type's bytes: in any case, spaces aside. (No string is made: an import asks for every clip.)
    public static func isText(utf8 type: UnsafeBufferPointer<UInt8>) -> Bool {
        var matched = 0
        for byte in type where byte != 0x20 {
            let lower = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
            guard matched < textWithCharset.count, textWithCharset[matched] == lower else { return false }
            matched += 1
        }
        return matched == text.utf8.count || matched == textWithCharset.count
    }

    private static let textWithCharset = Array((text + ";charset=utf-8").utf8)

    /// The type `bytes` start like, or nil when they start like none of the formats known here.
    public static func sniff(_ bytes: [UInt8]) -> String? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && bytes[offset..<offset + prefix.count].elementsEqual(prefix)
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return "image/gif" }
        if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) { return "image/webp" }
        if starts(Array("BM".utf8)), bytes.count >= 14 { return "image/bmp" }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return "image/tiff" }
        if starts(Array("%PDF-".utf8)) { return "application/pdf" }
        return nil
    }

    /// How `bytes` given without a type are kept: as text (nil) when they are UTF-8 text, else
    /// with the type they start like, or `application/octet-stream`. Valid UTF-8 that starts like
    /// a known format and holds a NUL byte is that format: text copied from anywhere never holds
    /// a NUL, and the headers of GIF, BMP, TIFF and WebP images (whose signatures are ASCII) do.
    public static func binaryType(of bytes: [UInt8]) -> String? {
        let sniffed = sniff(bytes)
        if bytes.withUnsafeBufferPointer(UTF8Check.isValid) && (sniffed == nil || !bytes.contains(0)) { return nil }
        return sniffed ?? octetStream
    }
}

/// An image's width and height, read from its header; nil when the header is cut short,
/// malformed, or of a format not read here. Reads only the header's bytes, bounds checked.
public enum ImageHeader {
    public static func dimensions(of bytes: [UInt8], type: String) -> (width: Int, height: Int)? {
        let reader = ByteReader(bytes: bytes)
        let size: (Int, Int)?
        switch type {
        case "image/png": size = png(reader)
        case "image/gif": size = reader.uint16LE(6).flatMap { w in reader.uint16LE(8).map { (w, $0) } }
        case "image/bmp": size = bmp(reader)
        case "image/jpeg": size = jpeg(reader)
        case "image/webp": size = webp(reader)
        case "image/tiff": size = tiff(reader)
        default: size = nil
        }
        guard let size, size.0 > 0, size.1 > 0 else { return nil }
        return size
    }

    private static func png(_ reader: ByteReader) -> (Int, Int)? {
        // The IHDR chunk comes first: length, "IHDR", width, height (big-endian).
        guard reader.matches(Array("IHDR".utf8), at: 12), let width = reader.uint32BE(16), let height = reader.uint32BE(20) else {
            return nil
        }
        return (width, height)
    }

    private static func bmp(_ reader: ByteReader) -> (Int, Int)? {
        guard let headerSize = reader.uint32LE(14) else { return nil }
        if headerSize == 12 {
            guard let width = reader.uint16LE(18), let height = reader.uint16LE(20) else { return nil }
            return (width, height)
        }
        // A negative height is a top-down bitmap.
        guard headerSize >= 40, let width = reader.uint32LE(18), let height = reader.uint32LE(22) else { return nil }
        return (Int(Int32(truncatingIfNeeded: width)), abs(Int(Int32(truncatingIfNeeded: height))))
    }

    private static func jpeg(_ reader: ByteReader) -> (Int, Int)? {
        // Segments from after SOI until a start-of-frame marker (C0–CF but C4, C8 and CC), which holds the size.
        var offset = 2
        while let marker = reader.byte(offset), marker == 0xFF, let kind = reader.byte(offset + 1) {
            if kind == 0xFF {
                offset += 1
                continue
            }
            if kind == 0xD8 || (0xD0...0xD7).contains(kind) || kind == 0x01 {
                offset += 2
                continue
            }
            guard let length = reader.uint16BE(offset + 2), length >= 2 else { return nil }
            if (0xC0...0xCF).contains(kind), ![0xC4, 0xC8, 0xCC].contains(kind) {
                guard let height = reader.uint16BE(offset + 5), let width = reader.uint16BE(offset + 7) else { return nil }
                return (width, height)
            }
            offset += 2 + length
        }
        return nil
    }

    private static func webp(_ reader: ByteReader) -> (Int, Int)? {
        if reader.matches(Array("VP8X".utf8), at: 12) {
            guard let width = reader.uint24LE(24), let height = reader.uint24LE(27) else { return nil }
            return (width + 1, height + 1)
        }
        if reader.matches(Array("VP8 ".utf8), at: 12) {
            guard reader.matches([0x9D, 0x01, 0x2A], at: 23), let width = reader.uint16LE(26), let height = reader.uint16LE(28) else {
                return nil
            }
            return (width & 0x3FFF, height & 0x3FFF)
        }
        if reader.matches(Array("VP8L".utf8), at: 12) {
            guard reader.byte(20) == 0x2F, let bits = reader.uint32LE(21) else { return nil }
            return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        }
        return nil
    }

    private static func tiff(_ reader: ByteReader) -> (Int, Int)? {
        let little = reader.byte(0) == 0x49
        func u16(_ offset: Int) -> Int? { little ? reader.uint16LE(offset) : reader.uint16BE(offset) }
        func u32(_ offset: Int) -> Int? { little ? reader.uint32LE(offset) : reader.uint32BE(offset) }
        guard let first = u32(4), let count = u16(first) else { return nil }
        var width: Int?
        var height: Int?
        for entry in 0..<min(count, 512) {
            let at = first + 2 + entry * 12
            guard let tag = u16(at), let kind = u16(at + 2) else { return nil }
            // SHORT (3) or LONG (4) values, held in the entry itself.
            let value = kind == 3 ? u16(at + 8) : kind == 4 ? u32(at + 8) : nil
            if tag == 256 { width = value }
            if tag == 257 { height = value }
            if let width, let height { return (width, height) }
        }
        return nil
    }
}

/// Bounds-checked reads of fixed-width integers; nil past the end.
private struct ByteReader {
    let bytes: [UInt8]

    func byte(_ offset: Int) -> UInt8? { offset >= 0 && offset < bytes.count ? bytes[offset] : nil }

    func matches(_ expected: [UInt8], at offset: Int) -> Bool {
        offset + expected.count <= bytes.count && bytes[offset..<offset + expected.count].elementsEqual(expected)
    }

    private func value(_ offset: Int, _ count: Int, bigEndian: Bool) -> Int? {
        guard offset >= 0, offset + count <= bytes.count else { return nil }
        let range = offset..<offset + count
        let ordered = bigEndian ? Array(bytes[range]) : bytes[range].reversed()
        return ordered.reduce(0) { $0 << 8 | Int($1) }
    }

    func uint16BE(_ offset: Int) -> Int? { value(offset, 2, bigEndian: true) }
    func uint16LE(_ offset: Int) -> Int? { value(offset, 2, bigEndian: false) }
    func uint24LE(_ offset: Int) -> Int? { value(offset, 3, bigEndian: false) }
    func uint32BE(_ offset: Int) -> Int? { value(offset, 4, bigEndian: true) }
    func uint32LE(_ offset: Int) -> Int? { value(offset, 4, bigEndian: false) }
}

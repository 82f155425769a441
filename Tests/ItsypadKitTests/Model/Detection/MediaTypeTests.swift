import Testing

@testable import ItsypadModel

/// What a binary clip is taken for: its type from its first bytes, its pixels from its header,
/// and which bytes stay text.
@Suite struct MediaTypeTests {
    @Test("each known format is sniffed from its first bytes", arguments: TestImages.all.map { ($0.type, $0.bytes) })
    func sniffs(_ image: (type: String, bytes: [UInt8])) {
        #expect(MediaType.sniff(image.bytes) == image.type)
        #expect(MediaType.binaryType(of: image.bytes) == image.type)
    }

    @Test("an image's pixels are read from its header", arguments: TestImages.all.map { ($0.type, $0.bytes, $0.width, $0.height) })
    func readsPixels(_ image: (type: String, bytes: [UInt8], width: Int?, height: Int?)) {
        let dimensions = ImageHeader.dimensions(of: image.bytes, type: image.type)
        #expect(dimensions?.width == image.width && dimensions?.height == image.height)
    }

    @Test("a header cut anywhere never crashes and never gives wrong pixels", arguments: TestImages.all.map { ($0.type, $0.bytes) })
    func truncatedHeaders(_ image: (type: String, bytes: [UInt8])) {
        let whole = ImageHeader.dimensions(of: image.bytes, type: image.type)
        for length in 0..<image.bytes.count {
            let cut = ImageHeader.dimensions(of: Array(image.bytes.prefix(length)), type: image.type)
            #expect(cut == nil || (cut?.width == whole?.width && cut?.height == whole?.height), "cut at \(length)")
        }
        #expect(ImageHeader.dimensions(of: Array(image.bytes.prefix(9)), type: image.type) == nil)
    }

    @Test func hostileHeadersGiveNoPixels() {
        // A JPEG whose segments point past the end or loop on zero lengths, a TIFF pointing far away.
        #expect(ImageHeader.dimensions(of: [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x00], type: "image/jpeg") == nil)
        #expect(ImageHeader.dimensions(of: [0xFF, 0xD8, 0xFF, 0xE0, 0xFF, 0xFF, 0x00], type: "image/jpeg") == nil)
        #expect(ImageHeader.dimensions(of: [0x49, 0x49, 0x2A, 0x00, 0xFF, 0xFF, 0xFF, 0x7F], type: "image/tiff") == nil)
        #expect(ImageHeader.dimensions(of: TestImages.png(width: 0, height: 10), type: "image/png") == nil)
    }

    @Test(
        "text stays text; bytes that are not are binary, typed by their signature",
        arguments: [
            (Array("hello\n".utf8), nil),
            (Array("GIF89a is a format".utf8), nil),
            (Array("%PDF-1.4 all ASCII, no NUL".utf8), nil),
            (Array("é😀".utf8), nil),
            ([0x00, 0x01, 0xFF], "application/octet-stream"),
            ([0xC3], "application/octet-stream"),
            // Valid UTF-8 by chance: a GIF and a BMP of ASCII bytes with NULs in their headers.
            (Array("GIF89a".utf8) + [0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00], "image/gif"),
            (Array("BM".utf8) + [UInt8](repeating: 0, count: 20), "image/bmp"),
            // A NUL alone does not make text binary.
            (Array("a\u{0}b".utf8), nil),
        ] as [([UInt8], String?)])
    func binaryType(_ example: (bytes: [UInt8], type: String?)) {
        #expect(MediaType.binaryType(of: example.bytes) == example.type)
    }

    @Test(
        "a MIME type is type/subtype of token characters",
        arguments: [
            ("image/png", true), ("application/vnd.oasis.opendocument.text", true), ("image/svg+xml", true),
            ("text/plain;charset=utf-8", true), ("x-kde-passwordManagerHint", false), ("image", false), ("image/", false),
            ("/png", false), ("image/png\n", false), ("image/png\nx: y", false), ("ima ge/png", false), ("image/p\"ng", false),
            ("image/png; charset=x", false), ("", false), ("é/png", false), (String(repeating: "a", count: 99) + "/b", false),
        ])
    func validTypes(_ example: (type: String, valid: Bool)) {
        #expect(MediaType.isValid(example.type) == example.valid)
    }

    /// `text/plain` with or without `;charset=utf-8`, in any case and with spaces anywhere; nothing else.
    @Test(
        arguments: [
            ("text/plain", true), ("TEXT/PLAIN;charset=UTF-8", true), ("Text/Plain ; Charset = utf-8", true), (" text/plain ", true),
            ("text/html", false), ("image/png", false), ("text/plai", false), ("text/plainx", false), ("text/plain;", false),
            ("text/plain;charset=utf-8x", false), ("text/plain;charset=latin1", false), ("", false), ("\u{212A}ext/plain", false),
            ("te\u{301}xt/plain", false), ("text/plaın", false),
        ])
    func textTypes(_ example: (type: String, isText: Bool)) {
        #expect(MediaType.isText(example.type) == example.isText)
    }

    @Test(
        "a listing describes a binary entry in one line",
        arguments: [
            (ClipBinary(type: "image/png", size: 24 * 1024, sha256: "", width: 640, height: 480), "[[ image/png 640×480 24 KiB ]]"),
            (ClipBinary(type: "application/pdf", size: 512, sha256: ""), "[[ application/pdf 512 B ]]"),
            (ClipBinary(type: "image/jpeg", size: 3 << 19, sha256: "", width: 1, height: 2), "[[ image/jpeg 1×2 1.5 MiB ]]"),
        ])
    func summaries(_ example: (binary: ClipBinary, summary: String)) {
        #expect(example.binary.summary == example.summary)
    }
}

import Testing

@testable import ItsypadSupport

/// `UTF8Check`, which goes through ASCII eight bytes at a time, says what the standard library's
/// validating decoder says, byte by byte.
@Suite struct UTF8CheckTests {
    @Test func agreesWithTheStandardLibraryOnRandomBytes() {
        var random = SeededGenerator(seed: 40)
        let pieces: [[UInt8]] = [
            Array("plain ascii text".utf8), Array("é".utf8), Array("日本".utf8), Array("👍".utf8), [0x80], [0xC0, 0xAF],
            [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0xF0, 0x9F],
        ]
        for _ in 0..<2000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...6, using: &random) { bytes += pieces.randomElement(using: &random)! }
            let longest = (0...bytes.count).last { String(validating: bytes[..<$0], as: UTF8.self) != nil } ?? 0
            bytes.withUnsafeBufferPointer { buffer in
                #expect(UTF8Check.validPrefix(buffer).length == longest, "\(bytes)")
                #expect(UTF8Check.isValid(buffer) == (String(validating: bytes, as: UTF8.self) != nil), "\(bytes)")
                #expect(UTF8Check.isASCII(buffer) == bytes.allSatisfy { $0 < 0x80 }, "\(bytes)")
            }
        }
    }
}

import Testing

@testable import ItsypadSupport

/// `ScalarKind`'s table against Swift itself, scalar by scalar: how each joins
/// its neighbours into `Character`s, whether it is whitespace, its combining
/// class and its lowercase.
@Suite struct ScalarKindTests {
    static func count(_ scalars: [Unicode.Scalar]) -> Int {
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars)
        return text.count
    }

    @Test func everyScalarOfTheTableIsWhatSwiftSays() {
        let a: Unicode.Scalar = "a", acute: Unicode.Scalar = "\u{301}", thumb: Unicode.Scalar = "👍", zwj: Unicode.Scalar = "\u{200D}"
        var checked = 0
        for value in UInt32(0x80)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let kind = ScalarKind.of(value)
            if kind == .unknown { continue }
            checked += 1
            let properties = scalar.properties
            let name = "U+\(String(value, radix: 16)) \(kind)"
            switch kind {
            case .unsearchable:
                #expect(
                    Self.count([a, scalar, a]) == 3 && Self.count([scalar, acute]) == 1 && Self.count([scalar, scalar]) == 2, "\(name)")
                #expect(!properties.isWhitespace && Self.count([thumb, zwj, scalar]) == 2, "\(name)")
            case .other, .pictographic, .space:
                #expect(
                    Self.count([a, scalar, a]) == 3 && Self.count([scalar, acute]) == 1 && Self.count([scalar, scalar]) == 2, "\(name)")
                #expect(properties.canonicalCombiningClass.rawValue == 0 && properties.isWhitespace == (kind == .space), "\(name)")
                #expect((Self.count([thumb, zwj, scalar]) == 1) == (kind == .pictographic), "\(name)")
                let lower = Array(properties.lowercaseMapping.unicodeScalars)
                #expect(lower.map(\.value) == [ScalarLowercases.shared.lowercase(value)], "\(name)")
                #expect(
                    lower.count == 1 && ScalarKindTable.shared.kind(ofAny: lower[0].value) == kind, "\(name) lowercases to another kind")
            case .control, .controlSpace:
                #expect(Self.count([scalar, acute]) == 2 && Self.count([a, scalar]) == 2, "\(name)")
                #expect(properties.isWhitespace == (kind == .controlSpace), "\(name)")
            case .joiner, .mark:
                #expect(Self.count([a, scalar]) == 1 && Self.count(["\n", scalar]) == 2, "\(name)")
                #expect((properties.canonicalCombiningClass.rawValue == 0) == (kind == .joiner), "\(name)")
            case .regional:
                #expect(Self.count([scalar, scalar]) == 1 && Self.count([scalar, scalar, scalar]) == 2, "\(name)")
            case .unknown:
                break
            }
        }
        #expect(checked > 90000)
    }

    /// Scalars whose character equals another spelling (NFC changes them), that lowercase to
    /// several scalars, that join with the scalar after them, or of scripts the table leaves out.
    @Test(
        arguments: [
            0x130, 0x23A, 0x374, 0x37E, 0x387, 0x2000, 0x2001, 0x2126, 0x212A, 0x212B, 0x2329, 0x232A, 0x2ADC, 0xF900, 0xFB01, 0x600,
            0x1100, 0x1161, 0x11A8, 0xE01, 0x915, 0x10400,
        ] as [UInt32])
    func scalarsWhoseBytesDoNotCompareAsCharactersAreLeftToTheRule(_ value: UInt32) {
        #expect([.unknown, .unsearchable].contains(ScalarKind.of(value)), "U+\(String(value, radix: 16))")
    }

    @Test func decodesWhatTheStandardLibraryDecodes() {
        var generator = SeededGenerator(seed: 5)
        for _ in 0..<20000 {
            let bytes = (0..<Int(generator.next() % 5) + 1).map { _ in
                generator.chance(0.5) ? UInt8(0x80 + generator.next() % 0x40) : UInt8(truncatingIfNeeded: generator.next())
            }
            let decoded = bytes.withUnsafeBufferPointer { ScalarKind.decode($0, at: 0) }
            var iterator = bytes.makeIterator()
            var utf8 = UTF8()
            let expected: (UInt32, Int)?
            switch utf8.decode(&iterator) {
            case .scalarValue(let scalar): expected = (scalar.value, UTF8.width(scalar))
            default: expected = nil
            }
            #expect(decoded?.value == expected?.0 && decoded?.length == expected?.1, "\(bytes)")
            if let decoded {
                var out = [UInt8](repeating: 0, count: 4)
                let length = out.withUnsafeMutableBufferPointer { ScalarKind.encode(decoded.value, to: $0.baseAddress!) }
                #expect(Array(out[..<length]) == Array(bytes[..<decoded.length]))
            }
        }
    }
}

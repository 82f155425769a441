import Testing

@testable import ItsypadSupport

/// `TextQuery` answers from bytes what Itsypad's rule answers from whole
/// strings: `text.lowercased().contains(query.lowercased())`.
@Suite struct TextSearchTests {
    static func rule(_ text: String, _ query: String) -> Bool {
        query.isEmpty || text.lowercased().contains(query.lowercased())
    }

    static func matches(_ query: String, _ text: String) -> Bool {
        var text = text
        return text.withUTF8 { TextQuery(query).matches(utf8: $0) }
    }

    static let alphabet: [String] = [
        "a", "B", "k", "K", "i", "I", "s", "S", ";", "`", "9", " ", "\r", "\n", "\r\n", "\t", "\"", "\\",
        "\u{212A}", "\u{37E}", "\u{1FEF}", "\u{130}", "\u{131}", "é", "É", "e\u{301}", "\u{301}", "ß", "ẞ", "Σ", "ς",
        "日", "👍", "\u{1F3FD}", "\u{200D}", "ﬁ", "\u{1B}",
    ]

    @Test func matchesTheRuleOnRandomTextsAndQueries() {
        var generator = SeededGenerator(seed: 12)
        func pick() -> String { TextSearchTests.alphabet[Int(generator.next() % UInt64(TextSearchTests.alphabet.count))] }
        for _ in 0..<4000 {
            let text = (0..<Int(generator.next() % 12)).map { _ in pick() }.joined()
            let query: String
            if generator.next() % 2 == 0, !text.isEmpty {
                // A piece of the text itself, its case changed at random.
                let scalars = Array(text.unicodeScalars)
                let start = Int(generator.next() % UInt64(scalars.count))
                let end = min(scalars.count, start + Int(generator.next() % 4) + 1)
                let piece = String(String.UnicodeScalarView(scalars[start..<end]))
                query = generator.next() % 2 == 0 ? piece.uppercased() : piece
            } else {
                query = (0..<Int(generator.next() % 3) + 1).map { _ in pick() }.joined()
            }
            let expected = TextSearchTests.rule(text, query)
            #expect(TextSearchTests.matches(query, text) == expected, "\(Array(query.unicodeScalars)) in \(Array(text.unicodeScalars))")
            // Told from the escaped text, a match is never ruled out: escaped as itsypad does, or by another writer.
            var utf8 = text
            var escaped: [UInt8] = []
            utf8.withUTF8 { JSONString.appendEscaped($0, to: &escaped) }
            var spelled: [UInt8] = []
            for byte in escaped {
                if byte.isASCIILetter && generator.chance(0.3) {
                    spelled += Array("\\u00".utf8) + Array(String(byte, radix: 16).utf8)
                } else {
                    spelled.append(byte)
                }
            }
            for form in [escaped, spelled] where expected {
                #expect(
                    form.withUnsafeBufferPointer { TextQuery(query).mayMatch(escaped: $0) },
                    "\(Array(query.unicodeScalars)) in \(String(decoding: form, as: UTF8.self))")
            }
        }
    }

    /// Texts without the query are ruled out from their escaped bytes, before any decoding.
    @Test(arguments: [
        ("9999", #"id 1999 and 99 99"#, false), ("merge", #"MERGE\nit"#, true), ("merge", #"mer\nge"#, false),
        ("kelvin", "\u{212A}ELVIN", true), ("ab", #"\u0061b"#, true), ("ab", #"a\u001bb"#, false),
        ("n", #"a\nb"#, true), ("\"", #"\""#, true),
    ])
    func escapedTextsWithoutTheQueryAreRuledOut(_ query: String, _ escaped: String, _ mayMatch: Bool) {
        var escaped = escaped
        #expect(escaped.withUTF8 { TextQuery(query).mayMatch(escaped: $0) } == mayMatch)
    }

    @Test(arguments: [
        ("KELVIN", "\u{212A}elvin"), ("kelvin", "\u{212A}ELVIN"), (";", "a\u{37E}b"), ("`", "\u{1FEF}"),
        ("istanbul", "\u{130}stanbul"), ("e", "e\u{301}"), ("\n", "a\r\nb"), ("9999", "id 19999"), ("", "x"),
    ])
    func agreesOnTheHardCases(_ query: String, _ text: String) {
        #expect(TextSearchTests.matches(query, text) == TextSearchTests.rule(text, query))
    }

    /// No scalar but the three `mayFoldToASCII` knows lowercases to, or is, a character equal to an ASCII one.
    @Test func theListOfScalarsThatFoldToASCIIIsComplete() {
        let ascii = Set((0..<128).map { String(Character(Unicode.Scalar(UInt8($0)))) })
        var found: [UInt32] = []
        for value in UInt32(0x80)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            for character in String(scalar).lowercased() where ascii.contains(String(character)) {
                found.append(value)
                break
            }
        }
        #expect(found == [0x37E, 0x1FEF, 0x212A])
        for value in found {
            var utf8 = Array(String(Unicode.Scalar(value)!).utf8)
            #expect(utf8.withUnsafeBufferPointer(TextQuery.mayFoldToASCII))
            utf8 = Array("plain é 日".utf8)
            #expect(!utf8.withUnsafeBufferPointer(TextQuery.mayFoldToASCII))
        }
    }
}

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
        var decided: [TextQuery.EscapedVerdict: Int] = [:]
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
            // Told from the escaped text, a match is never ruled out nor a text that does not match taken:
            // escaped as itsypad does, or by another writer.
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
            for form in [escaped, spelled] {
                let verdict = form.withUnsafeBufferPointer { TextQuery(query).verdict(escaped: $0) }
                #expect(
                    verdict != (expected ? .noMatch : .match),
                    "\(verdict) for \(Array(query.unicodeScalars)) in \(String(decoding: form, as: UTF8.self))")
                decided[verdict, default: 0] += 1
            }
        }
        // Most of the alphabet is what the escaped bytes cannot decide; some texts are decided either way.
        #expect(decided[.match, default: 0] > 100 && decided[.noMatch, default: 0] > 300, "\(decided)")
    }

    /// Told from escaped bytes that are not a text itsypad writes (invalid UTF-8, a raw quote or
    /// control character): never a match, so that the decoder reports them; a text that matches
    /// through its escapes only is never ruled out.
    @Test(
        arguments: [
            [0x6D, 0x65, 0x72, 0x67, 0x65, 0x20, 0xFF], [0xC3, 0x20, 0x6D, 0x65, 0x72, 0x67, 0x65],
            [0x6D, 0x65, 0x72, 0x67, 0x65, 0x20, 0xC3],
            [0x6D, 0x65, 0x72, 0x67, 0x65, 0x20, 0xED, 0xA0, 0x80], [0xC0, 0xAF, 0x20, 0x6D, 0x65, 0x72, 0x67, 0x65],
            [0x6D, 0x65, 0x72, 0x67, 0x65, 0x22], [0x01, 0x6D, 0x65, 0x72, 0x67, 0x65],
            Array(#"merge\q"#.utf8), Array(#"merge\"#.utf8), Array(#"mer\u0067e"#.utf8), Array(#"\/merge"#.utf8),
        ] as [[UInt8]])
    func bytesNoTextHasAreLeftToTheDecoder(_ escaped: [UInt8]) {
        #expect(escaped.withUnsafeBufferPointer { TextQuery("MERGE").verdict(escaped: $0) } == .undecided)
    }

    /// Texts without the query are ruled out from their escaped bytes, before any decoding; texts
    /// without escapes that hold it between ASCII neighbours are taken.
    @Test(
        arguments: [
            ("9999", #"id 1999 and 99 99"#, .noMatch), ("merge", #"MERGE\nit"#, .undecided), ("merge", #"mer\nge"#, .noMatch),
            ("kelvin", "\u{212A}ELVIN", .undecided), ("ab", #"\u0061b"#, .undecided), ("ab", #"a\u001bb"#, .noMatch),
            ("n", #"a\nb"#, .undecided), ("\"", #"\""#, .undecided), ("merge", "git MERGE café", .match),
            ("merge", "mergeé", .undecided), ("merge", "émerge", .undecided), ("e", "e\u{301}", .undecided),
            ("9999", "19999", .match), ("", "x", .undecided), ("é", "é", .undecided),
        ] as [(String, String, TextQuery.EscapedVerdict)])
    func escapedTextsAreDecidedWhereTheyCanBe(_ query: String, _ escaped: String, _ verdict: TextQuery.EscapedVerdict) {
        var escaped = escaped
        #expect(escaped.withUTF8 { TextQuery(query).verdict(escaped: $0) } == verdict)
    }

    @Test(arguments: [
        ("KELVIN", "\u{212A}elvin"), ("kelvin", "\u{212A}ELVIN"), (";", "a\u{37E}b"), ("`", "\u{1FEF}"),
        ("istanbul", "\u{130}stanbul"), ("e", "e\u{301}"), ("\n", "a\r\nb"), ("9999", "id 19999"), ("", "x"),
    ])
    func agreesOnTheHardCases(_ query: String, _ text: String) {
        #expect(TextSearchTests.matches(query, text) == TextSearchTests.rule(text, query))
    }

    /// The byte search finds what a search a byte at a time finds: at every length around its
    /// sixteen-byte steps (the last of which overlaps the one before), from any start, for needles
    /// of letters and of other bytes, among bytes that differ from them by the case bit only.
    @Test func firstFoldedASCIIFindsWhatAByteAtATimeSearchFinds() {
        var generator = SeededGenerator(seed: 21)
        let needleBytes = Array("merg9@`[{ ".utf8)
        let textBytes = needleBytes + Array("MERG`@{[".utf8) + [0x00, 0x80, 0xC3, 0xA9, 0xCD, 0xED, 0xFF]
        func pick(_ bytes: [UInt8]) -> UInt8 { bytes[Int(generator.next() % UInt64(bytes.count))] }
        var found = 0
        for _ in 0..<20000 {
            let text = (0..<Int(generator.next() % 70)).map { _ in pick(textBytes) }
            var needle = (0..<Int(generator.next() % 4) + 1).map { _ in pick(needleBytes) }
            if generator.chance(0.5), text.count > 4 {
                // A piece of the text, lowercased: found at least there, unless it holds other bytes.
                let at = Int(generator.next() % UInt64(text.count - 4))
                needle = text[at..<at + Int(generator.next() % 4) + 1].map(TextQuery.lowercaseASCII)
                if needle.contains(where: { $0 >= 0x80 || $0 < 0x20 }) { continue }
            }
            let start = Int(generator.next() % UInt64(text.count + 1))
            let expected = (start..<max(start, text.count - needle.count + 1)).first { at in
                needle.indices.allSatisfy { TextQuery.lowercaseASCII(text[at + $0]) == needle[$0] }
            }
            let actual = text.withUnsafeBufferPointer { text in
                needle.withUnsafeBufferPointer { TextQuery.firstFoldedASCII($0, in: text, from: start) }
            }
            #expect(actual == expected, "\(needle) in \(text) from \(start)")
            if expected != nil { found += 1 }
        }
        #expect(found > 3000)
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

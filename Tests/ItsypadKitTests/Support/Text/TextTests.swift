import Testing

@testable import ItsypadModel
@testable import ItsypadSupport

@Suite struct TextTests {
    @Test(arguments: [
        ("hello", 10, "hello"),
        ("  a \n\t b  ", 10, "a b"),
        ("abcdefghijkl", 5, "abcd…"),
        ("one two three", 7, "one tw…"),
    ])
    func previews(_ text: String, _ limit: Int, _ expected: String) {
        #expect(Text.preview(text, limit: limit) == expected)
    }

    @Test(arguments: [
        ("# Notes\nbody", "# Notes"),
        ("\n\n   indented title   \nrest", "indented title"),
        ("", "Untitled"),
        ("   \n \n", "Untitled"),
        (String(repeating: "x", count: 40), String(repeating: "x", count: 30)),
    ])
    func namesTabsAfterTheFirstLine(_ content: String, _ name: String) {
        #expect(Tab.derivedName(for: content) == name)
    }

    @Test func suggestsNearestWord() {
        #expect(Text.suggestion(for: "clp", among: ["tab", "clip", "settings"]) == "clip")
        #expect(Text.suggestion(for: "clipboard.maxEntry", among: Settings.keys) == "clipboard.maxEntries")
        #expect(Text.suggestion(for: "zzzzzz", among: ["tab", "clip"]) == nil)
    }

    @Test(arguments: [
        ("a\u{1B}]52;c;aGk=\u{07}b", "a\u{FFFD}]52;c;aGk=\u{FFFD}b"),
        ("clear\u{1B}[2J", "clear\u{FFFD}[2J"),
        ("csi\u{9B}2J and nel\u{85}", "csi\u{FFFD}2J and nel\u{FFFD}"),
        ("\u{202E}evil\u{202C} \u{2066}iso\u{2069} \u{61C}", "\u{FFFD}evil\u{FFFD} \u{FFFD}iso\u{FFFD} \u{FFFD}"),
        ("nul\u{0}del\u{7F}", "nul\u{FFFD}del\u{FFFD}"),
        ("3f2a\tcolumns stay\té日👍 \u{200F}mark", "3f2a\tcolumns stay\té日👍 \u{200F}mark"),
    ])
    func makesLinesSafeForATerminal(_ line: String, _ safe: String) {
        var bytes = Array(line.utf8)
        Text.makeTerminalSafe(&bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == safe)
    }

    /// The project's check refuses what the standard library's `String(validating:)` refuses.
    @Test(
        arguments: [
            [0x68, 0x69], [0xC3, 0x28], [0xC3, 0xA9], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xED, 0x9F, 0xBF],
            [0xF0, 0x9F, 0x91, 0x8D], [0xF4, 0x90, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xE6, 0x97], [0xFF], [0x80], [],
            Array("naïve café 日本 👍🏽 עולם".utf8), Array("naïve café 日本".utf8) + [0xE6], [0x00, 0x7F, 0x0A],
        ] as [[UInt8]])
    func refusesInvalidUTF8(_ bytes: [UInt8]) {
        #expect(Text.decodeUTF8(bytes) == String(validating: bytes, as: UTF8.self))
    }

    @Test func identifiersAreVersion4AndParse() {
        let id = Identifier.make()
        #expect(Identifier.isValid(id))
        #expect(id == id.lowercased())
        #expect(Array(id)[14] == "4")
        #expect(Identifier.bytes(id).map(Identifier.format) == id)
        #expect(!Identifier.isValid("not-a-uuid"))
        #expect(
            Identifier.bytes("0123ABCD-ef01-4567-89ab-CDEF01234567") == [
                0x01, 0x23, 0xAB, 0xCD, 0xEF, 0x01, 0x45, 0x67,
                0x89, 0xAB, 0xCD, 0xEF, 0x01, 0x23, 0x45, 0x67,
            ])
        for invalid in [
            "0123abcd-ef01-4567-89ab-cdef0123456", "0123abcd-ef01-4567-89ab-cdef012345678", "0123abcd_ef01-4567-89ab-cdef01234567",
            "0123abcd-ef01-4567-89ab-cdef0123456g", "0123abcdef01-4567-89ab-cdef012345678", "0123abcd-ef01-4567-89ab-cdef0123456é",
        ] {
            #expect(Identifier.bytes(invalid) == nil, "\(invalid)")
        }
    }
}

/// `Text.preview` and `PreviewBuilder` against the rule as first written
/// (whole `Character`s of a whole `String`), on awkward text fed in pieces.
@Suite struct PreviewTests {
    /// The original implementation, kept as the reference.
    static func reference(_ text: String, limit: Int) -> String {
        var result = ""
        var pendingSpace = false
        var count = 0
        for character in text {
            if character.isWhitespace {
                pendingSpace = count > 0
                continue
            }
            if pendingSpace {
                if count + 1 >= limit { return result + "…" }
                result.append(" ")
                count += 1
                pendingSpace = false
            }
            if count >= limit - 1 { return result + "…" }
            result.append(character)
            count += 1
        }
        return result
    }

    static let alphabet: [String] = [
        "a", "Z", " ", "\t", "\n", "\r", "\r\n", "\u{0B}", "\u{0C}", "\u{85}", "\u{A0}", "é", "e", "\u{301}", "\u{308}",
        "ß", "日", "👍", "\u{1F3FD}", "\u{200D}", "👩", "🇫", "🇷", "\u{FE0F}", "ก", "\u{E31}", "\u{1100}", "\u{1161}", "\u{11A8}",
        "\u{300}", "\u{2028}", "\u{3000}", "\u{AD}", "\u{0}", "\u{1B}", "\u{7F}", "\u{9B}", "ǅ", "\u{2FF}", "\u{36F}", "\u{600}",
    ]

    @Test func matchesTheReferenceOnRandomTextFedInPieces() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<3000 {
            let length = Int(generator.next() % 40)
            let text = (0..<length).map { _ in PreviewTests.alphabet[Int(generator.next() % UInt64(PreviewTests.alphabet.count))] }.joined()
            let limit = Int(generator.next() % 12) + 1
            let expected = PreviewTests.reference(text, limit: limit)
            #expect(Text.preview(text, limit: limit) == expected, "\(Array(text.unicodeScalars))")
            // Fed in random pieces cut at scalar boundaries.
            var builder = PreviewBuilder(limit: limit)
            let scalars = Array(text.unicodeScalars)
            var start = 0
            while start < scalars.count, !builder.isComplete {
                let end = min(scalars.count, start + Int(generator.next() % 4) + 1)
                let piece = Array(String(String.UnicodeScalarView(scalars[start..<end])).utf8)
                _ = piece.withUnsafeBufferPointer { builder.feed($0, isLast: end == scalars.count) }
                start = end
            }
            if scalars.isEmpty { _ = [UInt8]().withUnsafeBufferPointer { builder.feed($0, isLast: true) } }
            #expect(String(decoding: builder.output, as: UTF8.self) == expected, "\(Array(text.unicodeScalars)) in pieces")
        }
    }

    /// Checks the preview written straight from `text` escaped, whole and cut short at random
    /// (as a listing reads a long text's first bytes), against the reference; whether the whole
    /// answered. A `\/` escape stands for a slash now and then, as another writer may escape it.
    static func checkFromEscaped(_ text: String, limit: Int, _ generator: inout SeededGenerator) -> Bool {
        var escaped: [UInt8] = []
        var utf8 = text
        utf8.withUTF8 { JSONString.appendEscaped($0, to: &escaped) }
        if generator.chance(0.1), let slash = escaped.firstIndex(of: 0x2F) {
            escaped.replaceSubrange(slash...slash, with: [0x5C, 0x2F])
        }
        let expected = Array(PreviewTests.reference(text, limit: limit).utf8)
        var out: [UInt8] = [0x41]
        let whole = escaped.withUnsafeBufferPointer { PreviewBuilder.append(escaped: $0, isWhole: true, limit: limit, to: &out) }
        #expect(out == [0x41] + (whole ? expected : []), "\(Array(text.unicodeScalars)) limit \(limit)")
        let cut = escaped.isEmpty ? 0 : Int(generator.next() % UInt64(escaped.count))
        var head: [UInt8] = []
        let headAnswered = escaped[..<cut].withUnsafeBufferPointer {
            PreviewBuilder.append(escaped: $0, isWhole: false, limit: limit, to: &head)
        }
        #expect(head == (headAnswered ? expected : []), "\(Array(text.unicodeScalars)) cut at \(cut) limit \(limit)")
        return whole
    }

    /// The preview written straight from the escaped text, where it answers, is the
    /// reference's; cut short of the whole text it answers only when the cut cannot matter.
    @Test func fromEscapedTextMatchesTheReferenceWhereItAnswers() {
        var generator = SeededGenerator(seed: 11)
        var answered = 0
        // Mostly what the escaped path reads, with what it leaves to the decoder now and then.
        let common = [
            "a", "Z", " ", "\t", "\n", "\r\n", "\u{0C}", "\u{08}", "\"", "\\", "/", "é", "ß", "\u{A0}", "\u{85}", "\u{2FF}", "~", "\u{7F}",
        ]
        for round in 0..<4000 {
            let length = Int(generator.next() % 60)
            let text = (0..<length).map { _ in
                generator.chance(0.03)
                    ? PreviewTests.alphabet[Int(generator.next() % UInt64(PreviewTests.alphabet.count))]
                    : common[Int(generator.next() % UInt64(common.count))]
            }.joined()
            let limit = round % 3 == 0 ? 100 : Int(generator.next() % 12) + 1
            if PreviewTests.checkFromEscaped(text, limit: limit, &generator) { answered += 1 }
        }
        #expect(answered > 1000, "the escaped path answered only \(answered) of 4000")
    }

    /// Words of printable ASCII between single spaces go eight bytes at a time: texts mostly of
    /// them, with runs of spaces, other whitespace, escapes and longer characters between (where a
    /// space may be dropped or merged), long enough to reach the limit at any byte of a word.
    @Test func fromEscapedWordsMatchesTheReference() {
        var generator = SeededGenerator(seed: 13)
        var answered = 0
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCZ0189.,:;/-_~{}()<>=!?#$%&'*+@[]^`|\u{7F}")
        let others = [
            "  ", "   ", "\t", "\n", " \n", "\n ", "\r\n", "\"", "\\", "é", " é", "\u{A0}", " \u{A0} ", "\u{85}", "e\u{301}",
            "a\u{308}", "日", "👍", "\u{0}", "\u{1B}", "\u{0C}",
        ]
        for round in 0..<3000 {
            let length = Int(generator.next() % 300)
            var text = generator.chance(0.2) ? " " : ""
            while text.unicodeScalars.count < length {
                if generator.chance(0.06) {
                    text += others[Int(generator.next() % UInt64(others.count))]
                } else {
                    text += String((0..<Int(generator.next() % 12) + 1).map { _ in letters[Int(generator.next() % UInt64(letters.count))] })
                    if generator.chance(0.85) { text += " " }
                }
            }
            let limit = round % 2 == 0 ? 100 : Int(generator.next() % 40) + 1
            if PreviewTests.checkFromEscaped(text, limit: limit, &generator) { answered += 1 }
        }
        #expect(answered > 1000, "the escaped path answered only \(answered) of 3000")
    }

    /// A text is its own preview exactly where the byte path writes its escaped bytes as they are,
    /// and then the reference's preview is the text itself; most short texts of every script are.
    @Test(arguments: ScriptSamples.scripts.indices.map(Optional.some) + [nil])
    func ownPreviewsAreTheReferencesPreviews(_ script: Int?) {
        var generator = SeededGenerator(seed: 80 + UInt64(script ?? 99))
        var own = 0
        for round in 0..<1500 {
            var text = ScriptSamples.text(&generator, script: script, length: round % 5 == 0 ? 120 : 20)
            if generator.chance(0.2) {
                text += PreviewTests.alphabet[Int(generator.next() % UInt64(PreviewTests.alphabet.count))]
            }
            var escaped: [UInt8] = []
            var utf8 = text
            utf8.withUTF8 { JSONString.appendEscaped($0, to: &escaped) }
            let isOwn = escaped.withUnsafeBufferPointer(PreviewBuilder.isOwnPreview(escaped:))
            var written: [UInt8] = []
            let answered = escaped.withUnsafeBufferPointer {
                PreviewBuilder.append(escaped: $0, isWhole: true, limit: PreviewBuilder.listingLimit, to: &written)
            }
            #expect(isOwn == (answered && written == escaped), "\(Array(text.unicodeScalars))")
            #expect(PreviewBuilder.isOwnPreview(text: text) == isOwn, "\(Array(text.unicodeScalars))")
            if isOwn {
                #expect(PreviewTests.reference(text, limit: PreviewBuilder.listingLimit) == text, "\(Array(text.unicodeScalars))")
                #expect(escaped == Array(text.utf8))
                own += 1
            }
        }
        let name = script.map { ScriptSamples.scripts[$0].name } ?? "mixed"
        if !["other", "mixed"].contains(name) { #expect(own > 100, "\(name): \(own) of 1500 are their own previews") }
    }

    /// In every script the preview is written from the escaped bytes for almost every text, and
    /// as the reference writes it; the few texts left are written by the general path.
    @Test(arguments: ScriptSamples.scripts.indices.map(Optional.some) + [nil])
    func fromEscapedTextInEveryScript(_ script: Int?) {
        var generator = SeededGenerator(seed: 60 + UInt64(script ?? 99))
        var answered = 0
        let rounds = 1500
        for round in 0..<rounds {
            let text = ScriptSamples.text(&generator, script: script, length: 40)
            let limit = round % 3 == 0 ? 100 : Int(generator.next() % 12) + 1
            if PreviewTests.checkFromEscaped(text, limit: limit, &generator) { answered += 1 }
            #expect(Text.preview(text, limit: limit) == PreviewTests.reference(text, limit: limit), "\(Array(text.unicodeScalars))")
        }
        let name = script.map { ScriptSamples.scripts[$0].name } ?? "mixed"
        if !["other", "mixed"].contains(name) { #expect(answered > rounds / 2, "\(name): \(answered) of \(rounds) answered") }
    }

}

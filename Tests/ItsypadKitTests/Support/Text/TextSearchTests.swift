import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

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
        var decided: [TextQuery.EscapedVerdict: Int] = [:], anchoredDecided: [TextQuery.EscapedVerdict: Int] = [:]
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
            // Letters spelled as `\u00xx` escapes now and then (not those of escapes).
            var spelled: [UInt8] = []
            var index = 0
            while index < escaped.count {
                let byte = escaped[index]
                if byte == 0x5C {
                    let length = escaped[index + 1] == UInt8(ascii: "u") ? 6 : 2
                    spelled += escaped[index..<index + length]
                    index += length
                    continue
                }
                if byte.isASCIILetter && generator.chance(0.3) {
                    spelled += Array("\\u00".utf8) + Array(String(byte, radix: 16).utf8)
                } else {
                    spelled.append(byte)
                }
                index += 1
            }
            for form in [escaped, spelled] {
                let verdict = form.withUnsafeBufferPointer { TextQuery(query).verdict(escaped: $0) }
                #expect(
                    verdict != (expected ? .noMatch : .match),
                    "\(verdict) for \(Array(query.unicodeScalars)) in \(String(decoding: form, as: UTF8.self))")
                decided[verdict, default: 0] += 1
                // The anchored search, on the texts it is told compare as bytes.
                guard form.withUnsafeBufferPointer(TextQuery.comparesAsBytes(escaped:)) else { continue }
                let anchored = form.withUnsafeBufferPointer { TextQuery(query).verdict(escaped: $0, comparesAsBytes: true) }
                #expect(
                    anchored != (expected ? .noMatch : .match),
                    "anchored \(anchored) for \(Array(query.unicodeScalars)) in \(String(decoding: form, as: UTF8.self))")
                anchoredDecided[anchored, default: 0] += 1
            }
        }
        // Most of the alphabet is what the escaped bytes cannot decide; some texts are decided either way.
        #expect(decided[.match, default: 0] > 100 && decided[.noMatch, default: 0] > 300, "\(decided)")
        #expect(anchoredDecided[.match, default: 0] > 100 && anchoredDecided[.noMatch, default: 0] > 300, "\(anchoredDecided)")
    }

    /// A text compares as bytes when every scalar does (`ScalarKind`) and no control but tab, LF and
    /// CR is in it: then its only escapes are two bytes long.
    @Test func comparesAsBytesWhereEveryScalarDoes() {
        var generator = SeededGenerator(seed: 31)
        func pick() -> String { TextSearchTests.alphabet[Int(generator.next() % UInt64(TextSearchTests.alphabet.count))] }
        for round in 0..<3000 {
            let text =
                round % 2 == 0
                ? (0..<Int(generator.next() % 8)).map { _ in pick() }.joined()
                : ScriptSamples.text(&generator, script: nil, length: 12)
            let expected = text.unicodeScalars.allSatisfy { scalar in
                let value = scalar.value
                if value < 0x80 { return value >= 0x20 || [0x09, 0x0A, 0x0D].contains(value) }
                return ![.mark, .unsearchable, .unknown].contains(ScalarKind.of(value))
            }
            #expect(TextQuery.comparesAsBytes(text: text) == expected, "\(Array(text.unicodeScalars))")
        }
        // Escapes itsypad does not write, and bytes no text has, do not compare as bytes.
        for escaped in [#"a\u0041"#, #"a\b"#, #"a\"#, "a\"b", "a\u{1}b", "e\u{301}"] {
            let bytes = Array(escaped.utf8)
            #expect(!bytes.withUnsafeBufferPointer(TextQuery.comparesAsBytes(escaped:)), "\(escaped)")
        }
    }

    /// The anchored search decides the texts that compare as bytes as the rule does, in the hard cases.
    @Test(
        arguments: [
            ("合并", "请合并分支", .match), ("合并", "合 并", .noMatch), ("merge", #"MERGE\nit"#, .match), ("n", #"a\nb"#, .noMatch),
            ("nb", #"a\nb"#, .noMatch), ("σ", "ΟΔΟΣ", .match), ("ОШИБКА", "ошибка коммита", .match), ("é", "CAFÉ", .match),
            ("👍", "ok 👍🏽", .noMatch), ("👍🏽", "ok 👍🏽!", .match), ("💻", "👩‍💻", .undecided), ("🇫🇷", "🇩🇪🇫🇷", .undecided),
            ("ß", "STRAẞE", .match), ("9999", "id 1999 and 99 99", .noMatch), ("Ｍ", "ｍerge", .match), ("café 4", "CAFÉ 42", .match),
        ] as [(String, String, TextQuery.EscapedVerdict)])
    func anchoredSearchDecidesTheHardCases(_ query: String, _ escaped: String, _ verdict: TextQuery.EscapedVerdict) {
        let bytes = Array(escaped.utf8)
        #expect(bytes.withUnsafeBufferPointer(TextQuery.comparesAsBytes(escaped:)))
        #expect(bytes.withUnsafeBufferPointer { TextQuery(query).verdict(escaped: $0, comparesAsBytes: true) } == verdict)
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

    /// Escaped texts are decided from their bytes, escapes and all, unless they spell characters
    /// in a way itsypad does not write or hold a scalar whose bytes do not compare as its character.
    @Test(
        arguments: [
            ("9999", #"id 1999 and 99 99"#, .noMatch), ("merge", #"MERGE\nit"#, .match), ("merge", #"mer\nge"#, .noMatch),
            ("kelvin", "\u{212A}ELVIN", .undecided), ("ab", #"\u0061b"#, .undecided), ("ab", #"a\u001bb"#, .noMatch),
            ("n", #"a\nb"#, .noMatch), ("\n", #"a\nb"#, .match), ("\n", #"a\r\nb"#, .noMatch), ("\"", #"\""#, .match),
            ("merge", "git MERGE café", .match), ("merge", "mergeé", .match), ("e", "e\u{301}", .undecided), ("9999", "19999", .match),
            ("", "x", .match), ("é", "É", .match), ("привет", "ПРИВЕТ МИР", .match), ("ПРИВЕТ", "привет", .match),
            ("приветы", "привет", .noMatch), ("日本", "東京と日本", .match), ("👍", "ok 👍🏽", .noMatch), ("👍🏽", "ok 👍🏽!", .match),
            ("👩", "👩‍💻", .noMatch), ("💻", "👩‍💻", .undecided), ("🇫🇷", "🇩🇪🇫🇷", .undecided), ("σ", "ΟΔΟΣ", .match), ("σ", "οδος", .noMatch),
            ("straße", "STRASSE", .noMatch), ("STRASSE", "straße", .noMatch), ("istanbul", "\u{130}stanbul", .undecided),
        ] as [(String, String, TextQuery.EscapedVerdict)])
    func escapedTextsAreDecidedWhereTheyCanBe(_ query: String, _ escaped: String, _ verdict: TextQuery.EscapedVerdict) {
        var escaped = escaped
        #expect(escaped.withUTF8 { TextQuery(query).verdict(escaped: $0) } == verdict)
        if verdict != .undecided {
            #expect(
                TextSearchTests.rule(escaped.replacing("\\n", with: "\n").replacing("\\r", with: "\r").replacing("\\\"", with: "\""), query)
                    == (verdict == .match))
        }
    }

    /// In every script the bytes decide almost every text, and as the rule does; the few they
    /// leave are decided by it.
    @Test(arguments: ScriptSamples.scripts.indices.map(Optional.some) + [nil])
    func matchesTheRuleInEveryScript(_ script: Int?) {
        var generator = SeededGenerator(seed: 40 + UInt64(script ?? 99))
        var decided = 0
        let rounds = 1500
        for _ in 0..<rounds {
            let text = ScriptSamples.text(&generator, script: script, length: 14)
            var query = ScriptSamples.text(&generator, script: script, length: 3)
            if generator.chance(0.6), !text.isEmpty {
                let scalars = Array(text.unicodeScalars)
                let start = Int(generator.next() % UInt64(scalars.count))
                let end = min(scalars.count, start + Int(generator.next() % 6) + 1)
                query = String(String.UnicodeScalarView(scalars[start..<end]))
                if generator.chance(0.5) { query = query.uppercased() }
            }
            let expected = TextSearchTests.rule(text, query)
            #expect(TextSearchTests.matches(query, text) == expected, "\(Array(query.unicodeScalars)) in \(Array(text.unicodeScalars))")
            var utf8 = text
            var escaped: [UInt8] = []
            utf8.withUTF8 { JSONString.appendEscaped($0, to: &escaped) }
            let verdict = escaped.withUnsafeBufferPointer { TextQuery(query).verdict(escaped: $0) }
            #expect(
                verdict != (expected ? .noMatch : .match), "\(verdict) for \(Array(query.unicodeScalars)) in \(Array(text.unicodeScalars))")
            if verdict != .undecided { decided += 1 }
            if escaped.withUnsafeBufferPointer(TextQuery.comparesAsBytes(escaped:)) {
                let anchored = escaped.withUnsafeBufferPointer { TextQuery(query).verdict(escaped: $0, comparesAsBytes: true) }
                #expect(
                    anchored != (expected ? .noMatch : .match),
                    "anchored \(anchored) for \(Array(query.unicodeScalars)) in \(Array(text.unicodeScalars))")
            }
        }
        // The scripts of the usual text are decided from bytes; "latin" and "other" hold many scalars left to the rule.
        let name = script.map { ScriptSamples.scripts[$0].name } ?? "mixed"
        if !["latin", "other", "mixed"].contains(name) { #expect(decided > rounds / 2, "\(name): \(decided) of \(rounds) decided") }
    }

    @Test(arguments: [
        ("KELVIN", "\u{212A}elvin"), ("kelvin", "\u{212A}ELVIN"), (";", "a\u{37E}b"), ("`", "\u{1FEF}"),
        ("istanbul", "\u{130}stanbul"), ("e", "e\u{301}"), ("\n", "a\r\nb"), ("9999", "id 19999"), ("", "x"),
    ])
    func agreesOnTheHardCases(_ query: String, _ text: String) {
        #expect(TextSearchTests.matches(query, text) == TextSearchTests.rule(text, query))
    }

    /// The byte search finds what a search a byte at a time finds: at every length around its
    /// sixteen-byte steps (the last of which overlaps the one before), from any start.
    @Test func firstOccurrenceFindsWhatAByteAtATimeSearchFinds() {
        var generator = SeededGenerator(seed: 21)
        let bytes = Array("merg9 ".utf8) + [0x00, 0x80, 0xC3, 0xA9, 0xD0, 0xBF, 0xFF]
        func pick() -> UInt8 { bytes[Int(generator.next() % UInt64(bytes.count))] }
        var found = 0
        for _ in 0..<20000 {
            let text = (0..<Int(generator.next() % 70)).map { _ in pick() }
            var needle = (0..<Int(generator.next() % 4) + 1).map { _ in pick() }
            if generator.chance(0.5), text.count > 4 {
                let at = Int(generator.next() % UInt64(text.count - 4))
                needle = Array(text[at..<at + Int(generator.next() % 4) + 1])
            }
            let start = Int(generator.next() % UInt64(text.count + 1))
            let expected = (start..<max(start, text.count - needle.count + 1)).first { at in
                needle.indices.allSatisfy { text[at + $0] == needle[$0] }
            }
            let actual = text.withUnsafeBufferPointer { text in
                needle.withUnsafeBufferPointer { TextQuery.firstOccurrence(of: $0, in: text, from: start) }
            }
            #expect(actual == expected, "\(needle) in \(text) from \(start)")
            if expected != nil { found += 1 }
        }
        #expect(found > 3000)
    }
}

/// The search against `LC_ALL=C.UTF-8 grep -ci` on the same texts, one a line: the same count
/// in every script, and, where the two differ, which is right and why.
@Suite struct GrepAgreementTests {
    static func grepCount(_ query: String, _ lines: [String]) throws -> Int {
        let path = "/tmp/itsypad-grep-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).txt"
        defer { unlink(path) }
        try FileSystem.writeAtomically(path, Array(lines.joined(separator: "\n").utf8) + [0x0A], mode: 0o600)
        let output = try Subprocess(
            executable: "/bin/sh", arguments: ["-c", "grep -ci -- \"$1\" \"$2\"", "sh", query, path],
            environment: ["LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"]
        ).run(timeout: 30)
        return Int(output.outputText.split(separator: "\n").first ?? "") ?? -1
    }

    static func count(_ query: String, _ lines: [String]) -> Int {
        lines.filter { TextSearchTests.matches(query, $0) }.count
    }

    /// Pieces of each script on which grep's case folding and Unicode's lowercasing agree.
    static let agreeing: [(String, [String])] = [
        ("ascii", ["a", "Z", "merge", "MERGE", "9", " ", "\t", "\"", "\\", "/", "~", "k", "K"]),
        ("cyrillic", ["п", "р", "и", "в", "е", "т", "П", "Р", "И", "В", "Е", "Т", "ё", "Ё", "ж", "Ж", " ", "мир", "МИР", "5"]),
        ("greek", ["σ", "Σ", "ά", "Ά", "ω", "Ω", " ", "θ", "Θ"]),
        ("chinese", ["日", "本", "中", "文", "。", "，", "的", " ", "7"]),
        ("japanese", ["こ", "ん", "に", "ち", "は", "カ", "タ", "ナ", "ガ", "ー", "Ｔ", "ｔ"]),
        ("emoji", ["👍", "❤️", "🎉", "😀", " ", "a", "©"]),
        ("latin", ["é", "É", "e", "ß", "ö", "Ö", "ạ", "Ạ", " "]),
    ]

    @Test(arguments: agreeing.indices)
    func countsWhatGrepCountsInEveryScript(_ script: Int) throws {
        var generator = SeededGenerator(seed: 80 + UInt64(script))
        let pieces = GrepAgreementTests.agreeing[script].1
        func text(_ length: Int) -> String {
            (0..<Int(generator.next() % UInt64(length)) + 1).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined()
        }
        let lines = (0..<400).map { _ in text(12) }
        for _ in 0..<12 {
            var query = text(2)
            if generator.chance(0.5) { query = query.uppercased() }
            if query.trimmingPrefix(while: { $0 == " " }).isEmpty { continue }
            #expect(try GrepAgreementTests.grepCount(query, lines) == GrepAgreementTests.count(query, lines), "\(query)")
        }
    }

    /// Where they differ: grep compares scalars folded one at a time; the rule lowercases and
    /// compares whole characters, so a scalar that is part of a character (a skin tone, an emoji
    /// joined by ZWJ, a flag's half, an accent) is not a match on its own, a precomposed letter
    /// equals its decomposed spelling, and final sigma stays apart from σ, as its lowercase
    /// mapping keeps it (grep folds both to Σ).
    @Test(arguments: [
        ("👍", "ok 👍🏽", true, false), ("👩", "👩‍💻", true, false), ("🇪🇫", "🇩🇪🇫🇷", true, false),
        ("é", "e\u{301}", false, true), ("e", "e\u{301}", true, false), ("σ", "ς", true, false),
    ])
    func differsFromGrepWhereCharactersDecide(_ query: String, _ text: String, _ grep: Bool, _ rule: Bool) throws {
        #expect(try GrepAgreementTests.grepCount(query, [text]) == (grep ? 1 : 0))
        #expect(TextSearchTests.matches(query, text) == rule && TextSearchTests.rule(text, query) == rule)
    }
}

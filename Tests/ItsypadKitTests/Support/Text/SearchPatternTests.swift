import Testing

@testable import ItsypadSupport

@Suite struct SearchPatternTests {
    // MARK: What matches

    @Test(arguments: [
        // Literals, search anywhere in the text
        ("password", "my password is", true), ("password", "passwor", false), ("", "", true), ("", "anything", true),
        ("a.c", "abc", true), ("a.c", "a\nc", false), ("(?s)a.c", "a\nc", true), ("a.c", "a\u{2028}c", false),
        // Escapes
        ("\\$\\d+\\.\\d\\d", "costs $12.50", true), ("\\t", "a\tb", true), ("\\x41\\u0042\\u{1F600}", "AB😀", true),
        ("\\o{101}", "A", true), ("\\0", "\u{0}", true), ("\\Qa.b*\\E", "xa.b*y", true), ("\\Qa.b*\\E", "aab", false),
        ("\\e\\[", "\u{1B}[2J", true), ("a\\ b", "a b", true), ("\\-", "-", true),
        // Classes
        ("[abc]", "xbz", true), ("[abc]", "xyz", false), ("[^abc]", "abc", false), ("[^abc]", "abcd", true),
        ("[a-f0-9]{8}", "id 3f2a9c1e", true), ("[a-f0-9]{8}", "id 3f2a9c1", false), ("[]a]", "]", true),
        ("[a-]", "-", true), ("[-a]", "-", true), ("[\\]]", "]", true), ("[\\d-]", "-", true), ("[.]", "a", false),
        ("[\\w.+-]+@[\\w-]+\\.[\\w.]+", "mail me: a.b+c@ex-ample.co.uk", true),
        ("[[:alpha:]]+[[:digit:]]", "abc1", true), ("[[:^alpha:]]", "abc", false), ("[[:xdigit:]]{4}", "beef", true),
        ("[\\p{Lu}]", "abcD", true), ("\\p{Lu}", "abc", false), ("\\P{L}", "abc", false), ("[\\w-.]+", "-", true),
        ("\\p{^L}", "1", true), ("\\pN", "٣", true), ("\\p{Letter}\\p{White_Space}", "a b", true),
        // Shorthands are Unicode-aware
        ("\\d", "٣", true), ("\\d", "²", false), ("\\D", "123", false), ("\\w", "é", true), ("\\w", "_", true),
        ("\\w", "-", false), ("\\W", "a_1", false), ("\\s", "\u{A0}", true), ("\\s", "\u{200B}", false), ("\\S", " \t\n", false),
        ("\\h", "\u{A0}", true), ("\\h", "\n", false), ("\\v", "\u{2029}", true), ("\\V", "\n\r", false),
        ("\\R", "\r\n", true), ("a\\Rb", "a\r\nb", true), ("a\\Rb", "a\n\rb", false),
        // Anchors: the whole text without (?m)
        ("^otpauth://", "otpauth://totp/x", true), ("^otpauth://", "see otpauth://totp/x", false),
        ("^b", "a\nb", false), ("a$", "a\n", false), ("a$", "ba", true), ("^$", "", true), ("^$", "\n", false),
        ("\\Aa", "ab", true), ("b\\z", "ab", true), ("b\\z", "ab\n", false), ("b\\Z", "ab\n", true),
        ("b\\Z", "ab\r\n", true), ("b\\Z", "ab\n\n", false), ("\\Z", "", true),
        // (?m): line boundaries at every line break, CRLF counting as one
        ("(?m)^b", "a\nb", true), ("(?m)^b", "a\rb", true), ("(?m)a$", "a\r\nb", true), ("(?m)^$", "a\r\nb", false),
        ("(?m)^$", "a\n\nb", true), ("(?m)^$", "a\r\n", true), ("(?m)^b$", "a\u{2028}b\u{2029}c", true),
        ("(?m)^\\s*$", "text\n   \nmore", true), ("(?m)^token=", "x=1\ntoken=abc", true),
        // Word boundaries
        ("\\bcat\\b", "the cat sat", true), ("\\bcat\\b", "concatenate", false), ("\\bfoo\\b", "éfoo", false),
        ("\\Bcat\\B", "concatenate", true), ("\\b", "", false), ("\\B", "", true), ("\\b", "a", true),
        // Groups, alternation, quantifiers
        ("(ab)+c", "xababcx", true), ("(?:ab)+c", "xac", false), ("(?<user>\\w+)@", "me@host", true),
        ("(?P<n>a)(?'m'b)", "ab", true), ("cat|dog", "hotdog", true), ("cat|dog", "bird", false), ("a|", "b", true),
        ("(|a)b", "b", true), ("()", "x", true), ("a*", "", true), ("a+", "", false), ("colou?r", "color", true),
        ("a{3}", "aa", false), ("a{3}", "aaa", true), ("a{2,}", "a a", false), ("a{2,}", "baab", true),
        ("^a{2,3}$", "aaaa", false), ("^a{2,3}$", "aaa", true), ("^a{,2}$", "aa", true), ("^a{,2}$", "aaa", false),
        ("^a{0}b", "b", true), ("a{", "a{", true), ("a{1,2", "a{1,2", true), ("x{,}", "x{,}", true), ("x{}", "x{}", true),
        ("a+?b", "aab", true), ("a{2}?", "aa", true), ("(a|b)*?c", "ababc", true), ("^(a*)*$", "aaaa", true),
        ("^(a*)*b$", "aaaa", false), ("(a|ab)(c|bcd)(d*)", "abcd", true),
        // Flags
        ("(?i)hello", "HeLLo", true), ("hello", "HeLLo", false), ("(?i:he)llo", "HEllo", true), ("(?i:he)llo", "HELLO", false),
        ("a(?i)b|c", "C", true), ("((?i)a)b", "AB", false), ("((?i)a)b", "Ab", true), ("(?i)k", "\u{212A}", true),
        ("(?i)[a-z]+", "ÀBC", true), ("(?i)[^a]", "A", false), ("(?i)é", "É", true), ("(?i)σ", "ς", true),
        ("(?i)ß", "SS", false), ("(?i-i)a", "A", false), ("(?x) a b # comment\n c", "abc", true), ("(?x)a\\ b", "a b", true),
        ("(?#note)a", "a", true), ("(?n)(a)", "a", true),
        // Unicode text is matched per scalar
        ("日本", "こんにちは日本語", true), ("^.$", "😀", true), ("^.$", "e\u{301}", false), ("^..$", "e\u{301}", true),
        ("é", "e\u{301}", false), ("\u{1F1EB}", "🇫🇷", true),
    ])
    func matches(_ pattern: String, _ text: String, _ expected: Bool) throws {
        #expect(try SearchPattern(pattern).matches(text) == expected, "\(pattern) on \(text.debugDescription)")
    }

    // MARK: What is refused

    @Test(arguments: [
        ("(a)\\1", "backreferences"), ("(?<n>a)\\k<n>", "backreferences"), ("(?P<n>a)(?P=n)", "backreferences"), ("\\g1", "backreferences"),
        ("a(?=b)", "lookahead"), ("a(?!b)", "lookahead"), ("(?<=a)b", "lookbehind"), ("(?<!a)b", "lookbehind"),
        ("(?>a+)b", "atomic"), ("a*+", "possessive"), ("a++b", "possessive"), ("a{2}+", "possessive"),
        ("(?R)", "recursion"), ("(?1)", "recursion"), ("(?(1)a|b)", "conditional"), ("(*ACCEPT)", "control verbs"),
        ("(unclosed", "missing ')'"), ("unopened)", "unmatched ')'"), ("[abc", "missing ']'"), ("*a", "nothing to repeat"),
        ("a**", "cannot follow another"), ("x{2}{3}", "cannot follow another"), ("{2}", "nothing to repeat"),
        ("a{3,2}", "wrong order"), ("a{1001}", "above 1000"), ("a{99999999999999999999}", "above 1000"),
        ("[z-a]", "out of order"), ("[a-\\d]", "invalid range"), ("[a&&b]", "set operations"), ("[a--b]", "set operations"),
        ("[[a]]", "nested classes"), ("[[:alpah:]]", "POSIX class"), ("\\p{Greek}", "Unicode property"), ("\\y", "unknown escape"),
        ("[\\y]", "unknown escape"), ("\\", "trailing backslash"), ("\\x{110000}", "U+10FFFF"), ("\\u{D800}", "not a Unicode scalar"),
        ("\\xZ", "hex digits"), ("(?q)", "flag 'q'"), ("(?<>a)", "group name"), ("(?#open", "unterminated comment"),
        ("(?", "unterminated group"), ("(?i", "unterminated group"),
        (String(repeating: "(", count: 101) + String(repeating: ")", count: 101), "nested more than 100"),
        ("(a{1000}){1000}", "too large"), ("[a-z]{600}[0-9]{600}", "too large"), ("\\d{1000}", "too large"),
        (Array(repeating: "word", count: 200).joined(separator: "|"), "too large"),
    ])
    func refuses(_ pattern: String, _ reason: String) {
        #expect {
            try SearchPattern(pattern)
        } throws: { error in
            (error as? SearchPatternError)?.reason.contains(reason) == true
        }
    }

    @Test func errorsSayWhere() {
        #expect(throws: SearchPatternError(reason: "backreferences are not supported", offset: 3)) { try SearchPattern("(a)\\1") }
        #expect(SearchPatternError(reason: "x", offset: 3).description == "x (at character 4)")
    }

    // MARK: Agreement with Swift Regex

    /// Random patterns over a small alphabet, matched against every short
    /// text, must agree with Swift's Regex where both are defined (ASCII text
    /// without CR, where scalars and grapheme clusters coincide).
    @Test func agreesWithSwiftRegexOnRandomPatterns() throws {
        var random = SeededGenerator(seed: 7)
        let texts = Self.allTexts(over: ["a", "b", "-", "\n"], upTo: 4)
        var compared = 0
        for _ in 0..<400 {
            let pattern = Self.randomPattern(&random, depth: 3)
            let ours = try SearchPattern(pattern)
            // Swift refuses some forms this matcher accepts, such as a quantified anchor.
            guard let reference = try? Regex(pattern) else { continue }
            compared += 1
            for text in texts {
                #expect(ours.matches(text) == text.contains(reference), "\(pattern) on \(text.debugDescription)")
            }
        }
        #expect(compared > 200)
    }

    static func randomPattern(_ random: inout SeededGenerator, depth: Int) -> String {
        let atoms = ["a", "b", ".", "[ab]", "[^a]", "\\w", "\\W", "-", "^", "$", "(?m:^)", "(?m:$)", "(?i:A)", "\\n", "\\s", "\\S"]
        let quantifiers = ["", "", "*", "+", "?", "{2}", "{1,2}", "{0,1}", "{2,}", "*?"]
        guard depth > 0 else { return atoms.randomElement(using: &random)! }
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return "(" + randomPattern(&random, depth: depth - 1) + "|" + randomPattern(&random, depth: depth - 1) + ")"
        case 1: return randomPattern(&random, depth: depth - 1) + randomPattern(&random, depth: depth - 1)
        case 2: return "(?:" + randomPattern(&random, depth: depth - 1) + ")" + quantifiers.randomElement(using: &random)!
        default: return atoms.randomElement(using: &random)! + quantifiers.randomElement(using: &random)!
        }
    }

    static func allTexts(over alphabet: [String], upTo length: Int) -> [String] {
        var texts = [""]
        var layer = [""]
        for _ in 0..<length {
            layer = layer.flatMap { prefix in alphabet.map { prefix + $0 } }
            texts += layer
        }
        return texts
    }

    // MARK: The cost bound

    /// Patterns that make backtracking matchers take exponential time, on
    /// texts shaped to trigger it (none matches, so every text is read to the
    /// end): the step count stays within 2 × size × (scalars + 1) and grows
    /// linearly with the text, up to the 1 MB clip limit for the classic ones
    /// (100 KB for the rest, to keep the debug-build test run short).
    @Test(arguments: [
        ("(a+)+$", "", "a", "!", 1_000_000), ("(a|aa)+$", "", "a", "!", 1_000_000), ("(a|a)*b", "", "a", "", 1_000_000),
        ("(x+x+)+y", "", "x", "", 1_000_000), ("((a*)*)*b", "", "a", "", 100_000), ("^(\\w+\\s?)*$", "", "word ", "!", 100_000),
        ("(.*a){20}", String(repeating: "a", count: 19), "b", "", 100_000), ("^(([a-z])+.)+[A-Z]([a-z])+$", "", "ab", "!", 100_000),
        ("(a?){30}a{30}", "", "b", "", 100_000), ("(?i)(é+)+$", "", "É", "!", 100_000), ("(.*){1,30}x", "", "y", "", 100_000),
        (Array(repeating: "a", count: 50).joined(separator: "|") + "|b", "", "c", "", 100_000),
        ("(\\d+[.,]?)+%", "", "1", "x", 100_000), ("^(\\s*[a-z]+\\s*=\\s*\"[^\"]*\"\\s*)*$", "", "k = \"v\" ", "x", 100_000),
    ])
    func costIsLinear(_ pattern: String, _ prefix: String, _ unit: String, _ tail: String, _ longest: Int) throws {
        let compiled = try SearchPattern(pattern)
        var previous: (scalars: Int, steps: Int)?
        for length in [1_000, 10_000, 100_000, 1_000_000] where length <= longest {
            let text = prefix + String(repeating: unit, count: length / unit.utf8.count) + tail
            let scalars = text.unicodeScalars.count
            let (matched, steps) = compiled.search(text)
            #expect(!matched)
            #expect(steps <= 2 * compiled.size * (scalars + 1), "\(pattern): \(steps) steps for \(scalars) scalars")
            if let previous {
                // Ten times the text costs ten times the steps, give or take the start.
                let ratio = Double(steps) / Double(previous.steps)
                let growth = Double(scalars) / Double(previous.scalars)
                #expect(ratio <= growth * 1.1, "\(pattern): steps grew \(ratio)× for \(growth)× the text")
            }
            previous = (scalars, steps)
        }
    }
}

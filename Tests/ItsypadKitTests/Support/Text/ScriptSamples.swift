/// Pieces of text in several scripts, for randomized tests of the byte-level
/// text paths: the usual letters of each, their capitals, and what joins or
/// compares in unusual ways (combining marks, emoji sequences, flags, signs
/// that lowercase or normalise to other scalars).
enum ScriptSamples {
    static let scripts: [(name: String, pieces: [String])] = [
        ("ascii", ["a", "Z", "merge", "MERGE", "9", " ", " ", "\t", "\n", "\r\n", "\r", "\"", "\\", "/", "~", "k", "K", "s"]),
        ("cyrillic", ["п", "р", "и", "в", "е", "т", "П", "Р", "И", "В", "Е", "Т", "ё", "Ё", "ж", "Ж", " ", "мир", "МИР", "5", "ӂ", "Ӂ"]),
        ("greek", ["σ", "Σ", "ς", "ά", "Ά", "ΐ", "ω", "Ω", "\u{2126}", " ", "ΣΊΣΥΦΟΣ", "ϴ", "θ"]),
        ("chinese", ["日", "本", "中", "文", "。", "，", "\u{3000}", "的", "𠀀", " ", "7"]),
        ("japanese", ["こ", "ん", "に", "ち", "は", "カ", "タ", "ナ", "ガ", "か\u{3099}", "ｶ", "ﾞ", "ー", "Ｔ", "ｔ", "\u{3000}"]),
        (
            "emoji",
            [
                "👍", "👍🏽", "❤️", "❤️‍🔥", "👩‍💻", "🏃‍♀️", "🇫🇷", "🇩🇪", "🇫", "1️⃣", "🎉", "\u{200D}", "\u{FE0F}", "🏻", "😀", " ", "a", "\u{E0067}",
                "🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}", "©", "♀",
            ]
        ),
        (
            "latin",
            [
                "é", "É", "e\u{301}", "e", "ß", "ẞ", "ǅ", "ǆ", "İ", "i", "ı", "I", "K", "k", "\u{212A}", "ﬁ", "fi", "Å", "\u{212B}", "ạ",
                "Ạ",
                "Ａ", "ａ", "ö", "Ö", "o\u{308}", " ",
            ]
        ),
        (
            "other",
            [
                "\u{A0}", "\u{85}", "\u{2028}", "\u{3000}", "\u{AD}", "\u{200B}", "\u{202E}", "\u{1B}", "\u{7F}", "\u{600}", "ก", "\u{E31}",
                "\u{1100}", "\u{1161}", "한", "글", "\u{11A8}", "עולם", "\u{5B4}", "\u{37E}", ";", "\u{F900}", "\u{0}", "\u{301}", "a",
            ]
        ),
    ]

    /// A random text of up to `length` pieces: of one script, or (`script` nil) of all of them.
    static func text(_ generator: inout SeededGenerator, script: Int?, length: Int) -> String {
        (0..<Int(generator.next() % UInt64(length + 1))).map { _ in
            let pieces = scripts[script ?? Int(generator.next() % UInt64(scripts.count))].pieces
            return pieces[Int(generator.next() % UInt64(pieces.count))]
        }.joined()
    }
}

/// Guesses the language of a piece of text so a tab or clipboard entry can be
/// highlighted without the user choosing one.
///
/// Detection is heuristic and deliberately cheap: it runs on every clipboard
/// add and tab edit, so it reads only the first ``scanLimit`` bytes and works
/// on raw UTF-8 bytes instead of `Character`s or `Regex`.
public enum LanguageDetector {
    /// Canonical language ids, sorted. `"plain"` means no particular language.
    public static let languages: [String] = [
        "bash", "c", "cpp", "csharp", "css", "dockerfile", "go", "html", "java",
        "javascript", "json", "kotlin", "lua", "makefile", "markdown", "php",
        "plain", "python", "ruby", "rust", "sql", "swift", "toml", "typescript",
        "xml", "yaml",
    ]

    /// How many bytes of the content are examined; the start of a file is
    /// enough to tell its language and keeps detection bounded for huge pastes.
    public static let scanLimit = 8 * 1024

    /// Minimum score the winning language needs; below it the evidence is too
    /// weak (one ordinary sentence, a lone `key: value`) and the text is plain.
    static let threshold = 4

    /// How many lines one rule may score on, so a long run of one weak pattern
    /// (fifty `- item` lines) cannot outweigh several distinct strong ones.
    static let maxHitsPerRule = 3

    /// Returns the id (one of ``languages``) that best fits `content`, or
    /// `"plain"` when nothing fits clearly.
    ///
    /// Evidence is tried from strongest to weakest: a shebang line, JSON
    /// structure, markup, then weighted per-line patterns.
    public static func detect(_ content: String) -> String {
        let bytes = Array(content.utf8.prefix(scanLimit))
        let body = bytes.trimmingASCIIWhitespace()
        guard !body.isEmpty else { return "plain" }

        if let id = shebangLanguage(body) { return id }
        if looksLikeJSON(body, truncated: content.utf8.count > scanLimit) { return "json" }
        if let id = markupLanguage(body) { return id }
        return scoredLanguage(bytes)
    }

    /// Maps a user-typed language name or common alias (`"JS"`, `"yml"`,
    /// `"c++"`) to its canonical id, or `nil` when it is unknown.
    public static func canonical(_ name: String) -> String? {
        var key = name.lowercased()
        // Trimmed only when it must be: the trim walks every character (every synced tab's language is read).
        if key.first?.isWhitespace == true || key.last?.isWhitespace == true {
            key = String(key.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        }
        if languages.contains(key) { return key }
        return aliases[key]
    }

    /// The language a file's name implies (`notes.md`, `x.rb`, `Makefile`), or
    /// `nil` when the name says nothing (then the content decides).
    public static func language(forFileName fileName: String) -> String? {
        let name = fileName.lowercased()
        if let language = fileNames[name] { return language }
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        let suffix = String(name[name.index(after: dot)...])
        return extensions[suffix] ?? canonical(suffix)
    }

    /// The extension a file of `language` takes (`md`, `py`; `txt` for plain or an unknown id), so
    /// that an editor given such a file highlights it.
    public static func fileExtension(for language: String) -> String {
        fileExtensions[language] ?? "txt"
    }

    /// Each language's usual extension; `language(forFileName:)` reads each back as its language.
    static let fileExtensions: [String: String] = [
        "bash": "sh", "c": "c", "cpp": "cpp", "csharp": "cs", "css": "css", "dockerfile": "dockerfile", "go": "go",
        "html": "html", "java": "java", "javascript": "js", "json": "json", "kotlin": "kt", "lua": "lua", "makefile": "mk",
        "markdown": "md", "php": "php", "plain": "txt", "python": "py", "ruby": "rb", "rust": "rs", "sql": "sql",
        "swift": "swift", "toml": "toml", "typescript": "ts", "xml": "xml", "yaml": "yaml",
    ]

    /// Whole file names that imply a language.
    static let fileNames: [String: String] = [
        "makefile": "makefile", "gnumakefile": "makefile", "dockerfile": "dockerfile", "containerfile": "dockerfile",
    ]

    /// Extensions that are neither a language id nor one of its ``aliases``.
    static let extensions: [String: String] = [
        "h": "c", "cc": "cpp", "cxx": "cpp", "hh": "cpp", "hpp": "cpp", "hxx": "cpp",
        "htm": "html", "xhtml": "html", "markdown": "markdown", "mk": "makefile",
        "mjs": "javascript", "cjs": "javascript", "jsx": "javascript", "tsx": "typescript",
        "kts": "kotlin", "ksh": "bash", "pyw": "python", "rake": "ruby",
        "jsonl": "json", "xsd": "xml", "svg": "xml", "plist": "xml",
    ]

    static let aliases: [String: String] = [
        "sh": "bash", "shell": "bash", "zsh": "bash",
        "js": "javascript", "ts": "typescript", "py": "python",
        "md": "markdown", "yml": "yaml", "c++": "cpp",
        "cs": "csharp", "c#": "csharp",
        "text": "plain", "txt": "plain", "plaintext": "plain",
        "rs": "rust", "golang": "go", "kt": "kotlin", "rb": "ruby",
        "docker": "dockerfile", "make": "makefile",
    ]
}

// MARK: - Decisive checks

extension LanguageDetector {
    /// Interpreter names (version suffix stripped) from a `#!` line. Perl has
    /// no id of its own, so it is pinned to plain rather than guessed at.
    static let interpreters: [String: String] = [
        "bash": "bash", "sh": "bash", "zsh": "bash", "ksh": "bash", "dash": "bash",
        "python": "python", "node": "javascript", "nodejs": "javascript",
        "deno": "typescript", "ts-node": "typescript", "ruby": "ruby",
        "perl": "plain", "lua": "lua", "luajit": "lua", "php": "php",
        "swift": "swift", "make": "makefile",
    ]

    /// Reads `#!/usr/bin/env python3` or `#!/bin/bash`; `nil` when there is no
    /// shebang or the interpreter is unknown, so scoring gets its chance.
    static func shebangLanguage(_ body: ArraySlice<UInt8>) -> String? {
        guard body.hasPrefix("#!") else { return nil }
        let firstLine = body.dropFirst(2).prefix { $0 != .newline }
        var words = firstLine.split(whereSeparator: \.isASCIIWhitespace).map { String(decoding: $0, as: UTF8.self) }
        guard !words.isEmpty else { return nil }
        if words[0].split(separator: "/").last == "env" {
            // `env -S deno run` or `env FOO=1 node`: skip options and variables.
            words = Array(words.dropFirst().drop { $0.hasPrefix("-") || $0.contains("=") })
        }
        guard let program = words.first?.split(separator: "/").last else { return nil }
        let name = String(program.reversed().drop { $0.isNumber || $0 == "." }.reversed())
        return interpreters[name]
    }

    /// A light structural JSON check: one top-level object or array, balanced
    /// brackets outside strings, and only JSON literals between them. It
    /// rejects TOML `[section]` headers and JavaScript object literals, which
    /// also start with a bracket. A `truncated` document (longer than
    /// ``scanLimit``) only has to be valid so far, so big JSON pastes count.
    static func looksLikeJSON(_ body: ArraySlice<UInt8>, truncated: Bool) -> Bool {
        guard let first = body.first, first == .openBrace || first == .openBracket else { return false }
        if !truncated {
            guard let last = body.last, last == .closeBrace || last == .closeBracket else { return false }
        }

        var open: [UInt8] = []
        var i = body.startIndex
        while i < body.endIndex {
            let byte = body[i]
            switch byte {
            case .quote:
                i += 1
                while i < body.endIndex, body[i] != .quote {
                    i += body[i] == .backslash ? 2 : 1
                }
                guard i < body.endIndex else { return truncated }
            case .openBrace, .openBracket:
                open.append(byte == .openBrace ? .closeBrace : .closeBracket)
            case .closeBrace, .closeBracket:
                guard open.popLast() == byte else { return false }
                // Content after the top-level value closes means it was not one value.
                if open.isEmpty && i != body.index(before: body.endIndex) { return false }
            case .comma, .colon, .space, .tab, .newline, .carriageReturn:
                break
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
                while i + 1 < body.endIndex, body[i + 1].isNumberByte { i += 1 }
            case UInt8(ascii: "a")...UInt8(ascii: "z"):
                let word = body[i...].prefix(while: \.isASCIILowercase)
                guard word.isOneOf("true", "false", "null") else { return false }
                i += word.count - 1
            default:
                return false
            }
            i += 1
        }
        return open.isEmpty || truncated
    }

    /// Tag names that only HTML uses; markup containing none of them is XML.
    static let htmlTags: Set<String> = [
        "a", "article", "aside", "b", "body", "br", "button", "canvas", "code",
        "div", "em", "footer", "form", "h1", "h2", "h3", "h4", "head", "header",
        "hr", "i", "iframe", "img", "input", "label", "li", "link", "main", "meta",
        "nav", "ol", "option", "p", "pre", "script", "section", "select", "span",
        "strong", "style", "table", "td", "textarea", "th", "title", "tr", "ul",
    ]

    /// Recognises PHP, XML and HTML from their opening bytes and tag names.
    static func markupLanguage(_ body: ArraySlice<UInt8>) -> String? {
        let lower = body.prefix(64).map(\.asciiLowercased)[...]
        if lower.hasPrefix("<?php") { return "php" }
        if lower.hasPrefix("<?xml") { return "xml" }
        if lower.hasPrefix("<!doctype html") || lower.hasPrefix("<html") {
            return "html"
        }
        guard body.count > 1, body.first == .lessThan else { return nil }
        let second = body[body.startIndex + 1]
        guard second.isASCIILetter || second == .bang else { return nil }

        var sawClosingTag = false
        var i = body.startIndex
        while let lt = body[i...].firstIndex(of: .lessThan) {
            var nameStart = lt + 1
            if nameStart < body.endIndex, body[nameStart] == .slash {
                sawClosingTag = true
                nameStart += 1
            }
            let name = body[nameStart...].prefix { $0.isASCIILetter || $0.isASCIIDigit }
            if htmlTags.contains(String(decoding: name.map(\.asciiLowercased), as: UTF8.self)) { return "html" }
            i = lt + 1
        }
        let selfClosing = body.contains("/>")
        return sawClosingTag || selfClosing ? "xml" : nil
    }
}

// MARK: - Scoring

extension LanguageDetector {
    /// Picks the language with a clear, strong enough lead in ``scores(_:)``.
    static func scoredLanguage(_ bytes: [UInt8]) -> String {
        let scores = scores(bytes)
        guard let best = scores.max(), best >= threshold,
            scores.filter({ $0 == best }).count == 1,
            let winner = scores.firstIndex(of: best)
        else { return "plain" }
        return profiles[winner].id
    }

    /// Sums rule weights per language (indexed like ``profiles``) over all lines.
    static func scores(_ bytes: [UInt8]) -> [Int] {
        let lowered = bytes.map(\.asciiLowercased)
        var scores = [Int](repeating: 0, count: profiles.count)
        var hits = [Int](repeating: 0, count: allRules.count)
        var previous: ArraySlice<UInt8> = []
        var insideFence = false

        for raw in bytes.split(separator: .newline, omittingEmptySubsequences: false) {
            let rawLine = raw.last == .carriageReturn ? raw.dropLast() : raw
            let text = rawLine.trimmingASCIIWhitespace()
            defer { previous = rawLine }
            if text.isEmpty { continue }

            // Code inside a Markdown fence belongs to the Markdown document;
            // only the fence lines themselves are scored.
            let isFence = text.hasPrefix("```") || text.hasPrefix("~~~")
            if isFence { insideFence.toggle() } else if insideFence { continue }

            let line = Line(raw: rawLine, text: text, lower: lowered[text.indices], previous: previous)
            allRules.withUnsafeBufferPointer { rules in
                for candidates in [unanchoredRules, anchoredRules[Int(text[text.startIndex])]] {
                    for i in candidates where hits[i] < maxHitsPerRule && rules[i].rule.matches(line) {
                        hits[i] += 1
                        scores[rules[i].profile] += rules[i].rule.weight
                    }
                }
            }
        }

        // A superset language (TypeScript, C++) also earns its base's score,
        // but only once it has shown evidence of its own.
        let own = scores
        for (p, profile) in profiles.enumerated() {
            if let base = profile.base, own[p] > 0, let b = profiles.firstIndex(where: { $0.id == base }) {
                scores[p] += own[b]
            }
        }
        return scores
    }

    /// Every profile's rules in one flat array tagged with the profile index,
    /// so the per-line loop walks one contiguous buffer.
    static let allRules: [(profile: Int, rule: Rule)] = profiles.indices.flatMap { p in
        profiles[p].rules.map { (p, $0) }
    }

    /// Indices into ``allRules`` of the rules anchored at the start of the
    /// trimmed line, by the byte they need there. About half of all rules are
    /// anchored, so a line only tries the few that can match its first byte.
    static let anchoredRules: [[Int]] = {
        var table = [[Int]](repeating: [], count: 256)
        for (i, entry) in allRules.enumerated() {
            for byte in entry.rule.match.firstBytes ?? [] { table[Int(byte)].append(i) }
        }
        return table
    }()

    /// Indices into ``allRules`` of the rules that can match anywhere in a line.
    static let unanchoredRules: [Int] = allRules.indices.filter { allRules[$0].rule.match.firstBytes == nil }
}

extension LanguageDetector {
    /// One line of input as the rules see it.
    struct Line {
        /// The line without its line break.
        let raw: ArraySlice<UInt8>
        /// `raw` without leading and trailing whitespace.
        let text: ArraySlice<UInt8>
        /// `text` with ASCII letters lowercased, for case-insensitive keywords.
        let lower: ArraySlice<UInt8>
        /// The raw line just above, for rules that depend on context.
        let previous: ArraySlice<UInt8>
        /// Which bytes occur in `lower`: most substring rules can be rejected
        /// by checking their first and last byte here instead of scanning.
        let present: ByteSet

        init(raw: ArraySlice<UInt8>, text: ArraySlice<UInt8>, lower: ArraySlice<UInt8>, previous: ArraySlice<UInt8>) {
            self.raw = raw
            self.text = text
            self.lower = lower
            self.previous = previous
            present = ByteSet(lower)
        }

        /// Whether `needle` occurs in the text (or its lowercased copy).
        func contains(_ needle: StaticString, ignoringCase: Bool = false) -> Bool {
            let ends = needle.withUTF8Buffer { ($0.first.map(\.asciiLowercased), $0.last.map(\.asciiLowercased)) }
            guard let first = ends.0, let last = ends.1, present.contains(first), present.contains(last) else {
                return needle.utf8CodeUnitCount == 0
            }
            return ignoringCase ? lower.contains(needle) : text.contains(needle)
        }
    }

    /// One cheap test on a line, most of them on its trimmed text.
    ///
    /// Every case is a plain value (static strings, no closures), so the loop
    /// that runs hundreds of rules per line does no reference counting.
    enum Match: Sendable {
        case prefix(StaticString)
        case suffix(StaticString)
        case contains(StaticString)
        /// The whole trimmed line equals the string (block enders such as `fi`).
        case line(StaticString)
        /// Case-insensitive prefix; the string must be lowercase.
        case prefixCI(StaticString)
        /// Case-insensitive substring; the string must be lowercase.
        case containsCI(StaticString)
        /// Prefix of the untrimmed line, where indentation itself is the signal.
        case rawPrefix(StaticString)
        /// The line contains at least one of the given bytes.
        case containsAnyOf(StaticString)
        /// The line starts with one of the given bytes.
        case startsWithAnyOf(StaticString)

        // Shapes too structured for a prefix or substring; each is described at
        // the function of the same name.
        case typedBinding, rustFunction, cssSelector, cssDeclaration, yamlPair
        case tomlTable, tomlPair, makeTarget, afterMakeTarget, makeVariable, shellVariable

        /// The bytes a trimmed line must start with for this match to succeed,
        /// or `nil` when it may match a line starting with anything.
        var firstBytes: [UInt8]? {
            switch self {
            case .prefix(let s), .line(let s): s.withUTF8Buffer { $0.first.map { [$0] } }
            case .prefixCI(let s): s.withUTF8Buffer { $0.first.map { [$0, $0.asciiUppercased] } }
            default: nil
            }
        }

        func matches(_ line: Line) -> Bool {
            switch self {
            case .prefix(let s): line.text.hasPrefix(s)
            case .suffix(let s): line.text.hasSuffix(s)
            case .contains(let s): line.contains(s)
            case .line(let s): line.text.count == s.utf8CodeUnitCount && line.text.hasPrefix(s)
            case .prefixCI(let s): line.lower.hasPrefix(s)
            case .containsCI(let s): line.contains(s, ignoringCase: true)
            case .rawPrefix(let s): line.raw.hasPrefix(s)
            case .containsAnyOf(let s): line.text.contains(where: ByteSet(s).contains)
            case .startsWithAnyOf(let s): line.text.first.map(ByteSet(s).contains) ?? false
            case .typedBinding: LanguageDetector.isTypedBinding(line.text)
            case .rustFunction: LanguageDetector.isRustFunction(line.text)
            case .cssSelector: LanguageDetector.isCSSSelector(line.text)
            case .cssDeclaration: LanguageDetector.isCSSDeclaration(line.text)
            case .yamlPair: LanguageDetector.isYAMLPair(line.text)
            case .tomlTable: LanguageDetector.isTOMLTable(line.text)
            case .tomlPair: LanguageDetector.isTOMLPair(line.text)
            case .makeTarget: LanguageDetector.isMakeTarget(line.raw)
            case .afterMakeTarget: LanguageDetector.isMakeTarget(line.previous)
            case .makeVariable: LanguageDetector.isMakeVariable(line.raw)
            case .shellVariable: LanguageDetector.hasShellVariable(line.text)
            }
        }
    }

    /// A match (optionally narrowed by a second match and an exclusion) and how
    /// much it says about the language; negative weights are evidence against.
    struct Rule: Sendable {
        let match: Match
        let also: Match?
        let unless: Match?
        let weight: Int

        init(_ match: Match, and also: Match? = nil, unless: Match? = nil, _ weight: Int) {
            self.match = match
            self.also = also
            self.unless = unless
            self.weight = weight
        }

        func matches(_ line: Line) -> Bool {
            guard match.matches(line) else { return false }
            if let also, !also.matches(line) { return false }
            if let unless, unless.matches(line) { return false }
            return true
        }
    }

    /// The scoring rules of one language.
    struct Profile: Sendable {
        let id: String
        /// A language whose score is added once this one has evidence of its
        /// own, for supersets such as TypeScript over JavaScript and C++ over C.
        let base: String?
        let rules: [Rule]

        init(_ id: String, base: String? = nil, _ rules: [Rule]) {
            self.id = id
            self.base = base
            self.rules = rules
        }
    }
}

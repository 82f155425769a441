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
        let lowered = name.lowercased()
        let key = String(lowered.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
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

// MARK: - Rule tables

extension LanguageDetector {
    /// One table of weighted line rules per language. Weights: 5–6 nearly
    /// decisive on their own, 3–4 typical of the language, 1–2 shared with
    /// others and only useful in combination.
    static let profiles: [Profile] = [
        Profile("swift", [
            Rule(.prefix("import Foundation"), 4),
            Rule(.prefix("import SwiftUI"), 5),
            Rule(.prefix("import UIKit"), 5),
            Rule(.contains("func "), 2),
            Rule(.contains("guard "), 3),
            Rule(.contains("if let "), 2),
            Rule(.typedBinding, 2),
            Rule(.prefix("extension "), 3),
            Rule(.contains("protocol "), 3),
            Rule(.contains("\\("), 2),
            Rule(.contains("case ."), 2),
            Rule(.contains(" -> "), 1),
            Rule(.contains("print("), 1),
            Rule(.suffix(";"), -1),
        ]),
        Profile("python", [
            Rule(.prefix("def "), and: .suffix(":"), 4),
            // A bare `import name`: Go, Java and JavaScript imports carry quotes, `;` or braces.
            Rule(.prefix("import "), unless: .containsAnyOf(";\"'{"), 2),
            Rule(.prefix("from "), and: .contains(" import "), 4),
            Rule(.prefix("elif "), 4),
            Rule(.contains("self."), 2),
            Rule(.prefix("class "), and: .suffix(":"), 3),
            Rule(.prefix("if __name__ =="), 5),
            Rule(.prefix("except"), 4),
            Rule(.prefix("for "), and: .suffix(":"), 2),
            Rule(.prefix("print("), 1),
            Rule(.contains("None"), 1),
            Rule(.suffix(";"), -1),
            Rule(.suffix("{"), -1),
        ]),
        Profile("go", [
            // Go package names are single words; Java and Kotlin ones are dotted.
            Rule(.prefix("package "), unless: .containsAnyOf(".;"), 4),
            Rule(.contains("func main()"), 4),
            Rule(.prefix("func ("), 4),
            Rule(.prefix("func "), 2),
            Rule(.contains(":="), 3),
            Rule(.contains("fmt."), 4),
            Rule(.prefix("import ("), 4),
            Rule(.prefix("import \""), 4),
            Rule(.prefix("type "), and: .suffix(" struct {"), 4),
            Rule(.prefix("type "), and: .suffix(" interface {"), 4),
            Rule(.contains("err != nil"), 5),
            Rule(.prefix("defer "), 3),
        ]),
        Profile("rust", [
            Rule(.contains("fn main()"), 5),
            Rule(.rustFunction, 3),
            Rule(.contains("let mut "), 4),
            Rule(.prefix("impl"), 4),
            Rule(.prefix("use "), and: .contains("::"), 4),
            Rule(.contains("println!"), 4),
            Rule(.contains("!("), 1),
            Rule(.contains("::"), 1),
            Rule(.contains("&mut "), 3),
            Rule(.contains("&str"), 3),
            Rule(.prefix("#[derive"), 5),
            Rule(.prefix("pub "), 2),
            Rule(.prefix("match "), 2),
            Rule(.contains("Some("), 2),
            Rule(.contains(".unwrap()"), 3),
            Rule(.contains("Vec<"), 2),
        ]),
        Profile("c", [
            Rule(.prefix("#include <stdio.h>"), 5),
            Rule(.prefix("#include <stdlib.h>"), 5),
            Rule(.prefix("#include <string.h>"), 4),
            Rule(.prefix("#include"), 2),
            Rule(.prefix("#define "), 3),
            Rule(.prefix("typedef "), 3),
            Rule(.contains("printf("), 3),
            Rule(.contains("int main("), 3),
            Rule(.contains("malloc("), 4),
            Rule(.contains("sizeof("), 3),
            Rule(.contains("char *"), 3),
            Rule(.contains("NULL"), 2),
            Rule(.prefix("return 0;"), 2),
        ]),
        Profile("cpp", base: "c", [
            Rule(.prefix("#include <iostream>"), 6),
            // C++ standard headers have no `.h`.
            Rule(.prefix("#include <"), unless: .suffix(".h>"), 3),
            Rule(.contains("std::"), 4),
            Rule(.contains("template<"), 5),
            Rule(.contains("template <"), 5),
            Rule(.contains("cout <<"), 4),
            Rule(.contains("using namespace std"), 6),
            Rule(.contains("nullptr"), 4),
            Rule(.line("public:"), 4),
            Rule(.line("private:"), 4),
            Rule(.contains("auto "), 2),
        ]),
        Profile("java", [
            Rule(.contains("public class "), 4),
            Rule(.contains("public static void main("), 6),
            Rule(.contains("System.out.print"), 6),
            Rule(.prefix("import java."), 6),
            Rule(.prefix("package "), and: .suffix(";"), 2),
            Rule(.line("@Override"), 3),
            Rule(.contains("private final "), 3),
            Rule(.contains(" implements "), 3),
            Rule(.contains("String[] "), 4),
            Rule(.contains("new ArrayList<"), 4),
        ]),
        Profile("kotlin", [
            Rule(.contains("fun main"), 6),
            Rule(.prefix("fun "), 4),
            Rule(.contains(" fun "), 3),
            Rule(.prefix("val "), 3),
            Rule(.prefix("import kotlin"), 5),
            Rule(.prefix("package "), and: .contains("."), unless: .contains(";"), 3),
            Rule(.contains("data class "), 5),
            Rule(.contains("companion object"), 5),
            Rule(.contains("?.let"), 4),
            Rule(.contains("when ("), 3),
            Rule(.contains("listOf("), 4),
            Rule(.contains("mapOf("), 4),
            Rule(.contains("println("), 2),
        ]),
        Profile("typescript", base: "javascript", [
            Rule(.prefix("interface "), and: .suffix("{"), 4),
            Rule(.prefix("export interface "), 5),
            Rule(.prefix("export type "), 5),
            Rule(.prefix("type "), and: .contains(" = "), 4),
            Rule(.prefix("import type "), 5),
            Rule(.contains(": string"), 3),
            Rule(.contains(": number"), 4),
            Rule(.contains(": boolean"), 4),
            Rule(.contains(": any"), 3),
            Rule(.contains("): void"), 3),
            Rule(.contains(" as const"), 4),
            Rule(.contains("readonly "), 3),
        ]),
        Profile("javascript", [
            Rule(.contains("function"), 2),
            Rule(.prefix("const "), and: .contains(" = "), 2),
            Rule(.prefix("var "), and: .suffix(";"), 1),
            Rule(.contains("=>"), 2),
            Rule(.contains("console.log("), 5),
            Rule(.contains("require("), 4),
            Rule(.contains("module.exports"), 5),
            Rule(.contains("document."), 4),
            Rule(.contains("window."), 3),
            Rule(.prefix("export default"), 4),
            Rule(.prefix("import "), and: .contains(" from "), 3),
            Rule(.contains("==="), 3),
            Rule(.contains("!=="), 3),
            Rule(.contains(".then("), 3),
            Rule(.contains("undefined"), 3),
            Rule(.contains("addEventListener("), 4),
        ]),
        Profile("css", [
            Rule(.cssSelector, 1),
            Rule(.cssSelector, and: .startsWithAnyOf(".#"), 2),
            Rule(.cssDeclaration, 3),
            Rule(.prefix("@media "), 5),
            Rule(.prefix("@import "), 2),
            Rule(.contains("!important"), 4),
            Rule(.contains("px;"), 2),
        ]),
        Profile("markdown", [
            Rule(.prefix("# "), 1),
            Rule(.prefix("##"), 3),
            Rule(.prefix("```"), 3),
            Rule(.contains("]("), 3),
            Rule(.contains("**"), 2),
            Rule(.prefix("- [ ] "), 3),
            Rule(.prefix("- [x] "), 3),
            Rule(.prefix("- "), 1),
            Rule(.prefix("* "), 1),
            Rule(.prefix("1. "), 1),
            Rule(.prefix("> "), 1),
            Rule(.prefix("|"), and: .suffix("|"), 2),
        ]),
        Profile("yaml", [
            Rule(.yamlPair, 2),
            Rule(.line("---"), 2),
            Rule(.prefix("- "), 1),
        ]),
        Profile("toml", [
            Rule(.tomlTable, 3),
            Rule(.tomlPair, 2),
        ]),
        Profile("sql", [
            Rule(.prefixCI("select "), 3),
            Rule(.prefixCI("select "), and: .containsCI(" from "), 3),
            Rule(.prefixCI("from "), unless: .containsCI(" import "), 2),
            Rule(.prefixCI("where "), 3),
            Rule(.containsCI("group by "), 3),
            Rule(.containsCI("order by "), 3),
            Rule(.containsCI(" join "), 2),
            Rule(.prefixCI("create table"), 6),
            Rule(.prefixCI("create index"), 6),
            Rule(.prefixCI("insert into"), 6),
            Rule(.prefixCI("update "), and: .containsCI(" set "), 5),
            Rule(.prefixCI("delete from"), 6),
            Rule(.prefixCI("alter table"), 6),
            Rule(.prefixCI("drop table"), 6),
            Rule(.containsCI("primary key"), 4),
            Rule(.containsCI("varchar("), 4),
            Rule(.containsCI("not null"), 2),
        ]),
        Profile("dockerfile", [
            // Instructions are upper case by convention, which keeps `from x import y` out.
            Rule(.prefix("FROM "), 4),
            Rule(.prefix("RUN "), 4),
            Rule(.prefix("COPY "), 4),
            Rule(.prefix("WORKDIR "), 5),
            Rule(.prefix("CMD "), 4),
            Rule(.prefix("ENTRYPOINT "), 5),
            Rule(.prefix("EXPOSE "), 5),
            Rule(.prefix("ENV "), 3),
            Rule(.prefix("ARG "), 3),
            Rule(.prefix("LABEL "), 3),
            Rule(.prefix("ADD "), 2),
        ]),
        Profile("makefile", [
            Rule(.makeTarget, 1),
            // A recipe is a tab-indented line right under its target; Go is
            // tab-indented too, so the tab alone proves nothing.
            Rule(.rawPrefix("\t"), and: .afterMakeTarget, 4),
            Rule(.prefix(".PHONY"), 6),
            Rule(.contains("$@"), 4),
            Rule(.contains("$<"), 4),
            Rule(.contains("$^"), 4),
            Rule(.rawPrefix("\t@"), 3),
            Rule(.prefix("ifeq "), 4),
            Rule(.prefix("ifdef "), 3),
            Rule(.line("endif"), 2),
            Rule(.makeVariable, 2),
            Rule(.contains("$("), 1),
        ]),
        Profile("lua", [
            Rule(.prefix("local function "), 5),
            Rule(.prefix("local "), 3),
            Rule(.line("end"), 1),
            Rule(.contains("function"), 1),
            // Shell writes `; then` and `[ … ]`; Lua does neither.
            Rule(.contains(" then"), unless: .containsAnyOf(";["), 2),
            Rule(.prefix("elseif "), 4),
            Rule(.contains("~="), 4),
            Rule(.contains(" .. "), 4),
            Rule(.contains("ipairs("), 5),
            Rule(.contains("pairs("), 3),
            Rule(.contains("nil"), 2),
            Rule(.prefix("-- "), 1),
            Rule(.suffix(" do"), 1),
        ]),
        Profile("ruby", [
            // Python's `def` line ends with a colon; Ruby's never does.
            Rule(.prefix("def "), unless: .suffix(":"), 3),
            Rule(.line("end"), 2),
            Rule(.prefix("puts "), 4),
            Rule(.prefix("require '"), 3),
            Rule(.prefix("require \""), 3),
            Rule(.prefix("attr_"), 5),
            Rule(.prefix("elsif "), 5),
            Rule(.contains(" do |"), 5),
            Rule(.prefix("@"), and: .contains(" = "), 2),
            Rule(.contains("#{"), 3),
            Rule(.contains(".each"), 3),
            Rule(.prefix("class "), and: .contains(" < "), 4),
            Rule(.prefix("module "), 3),
            Rule(.prefix("unless "), 4),
            Rule(.contains("nil"), 1),
        ]),
        Profile("php", [
            Rule(.contains("<?php"), 6),
            Rule(.contains("$this->"), 5),
            Rule(.prefix("$"), and: .suffix(";"), 3),
            Rule(.prefix("namespace "), and: .suffix(";"), 2),
            Rule(.prefix("use "), and: .contains("\\"), 4),
            Rule(.contains("function "), 1),
            Rule(.contains("->"), 1),
        ]),
        Profile("csharp", [
            Rule(.prefix("using System"), 6),
            Rule(.prefix("using "), and: .suffix(";"), 2),
            Rule(.prefix("namespace "), 3),
            Rule(.contains("Console.Write"), 6),
            Rule(.contains("static void Main("), 6),
            Rule(.contains("{ get; set; }"), 6),
            Rule(.contains("async Task"), 5),
            Rule(.contains("$\""), 3),
            Rule(.contains("foreach ("), 3),
            Rule(.prefix("var "), and: .contains(" = new "), 2),
            Rule(.contains("public override "), 2),
            Rule(.contains("public class "), 2),
        ]),
        Profile("bash", [
            Rule(.line("fi"), 4),
            Rule(.line("done"), 4),
            Rule(.line("esac"), 5),
            Rule(.line("then"), 3),
            Rule(.contains("; then"), 4),
            Rule(.contains("; do"), 4),
            Rule(.prefix("if ["), 4),
            Rule(.contains("[[ "), 3),
            Rule(.prefix("echo "), 2),
            Rule(.shellVariable, 2),
            // `export NAME=value`; JavaScript's `export const x = 1` has spaces around `=`.
            Rule(.prefix("export "), and: .contains("="), unless: .contains(" = "), 4),
            Rule(.prefix("set -"), 4),
            Rule(.contains(">/dev/null"), 4),
            Rule(.contains("2>&1"), 4),
            Rule(.prefix("sudo "), 4),
            Rule(.prefix("cd "), 3),
            Rule(.contains("| grep "), 3),
            Rule(.prefix("apt-get "), 3),
            Rule(.prefix("chmod "), 3),
            Rule(.prefix("mkdir "), 2),
            Rule(.prefix("curl "), 2),
            Rule(.prefix("git "), 2),
            Rule(.prefix("npm "), 2),
            Rule(.prefix("pip "), 2),
            Rule(.prefix("brew "), 2),
            Rule(.prefix("docker "), 2),
            // `for f in *.txt; do`, unlike `for (…)` loops and Python's `for x in y:`.
            Rule(.prefix("for "), and: .contains(" in "), unless: .containsAnyOf("(:"), 2),
            Rule(.contains("$("), 1),
        ]),
    ]
}

// MARK: - Line shapes too structured for a prefix or substring

extension LanguageDetector {
    /// Swift's `let name: Type` / `var name: Type`, also after modifiers.
    static func isTypedBinding(_ text: ArraySlice<UInt8>) -> Bool {
        for keyword: StaticString in ["let ", "var "] {
            guard let found = text.firstIndex(of: keyword) else { continue }
            let start = found + keyword.utf8CodeUnitCount
            let name = text[start...].prefix(while: \.isIdentifierByte)
            if !name.isEmpty, text[(start + name.count)...].hasPrefix(": ") { return true }
        }
        return false
    }

    /// `fn name(` at the start of a line, after optional `pub`/`async`.
    static func isRustFunction(_ text: ArraySlice<UInt8>) -> Bool {
        let starts = text.hasPrefix("fn ") || text.hasPrefix("pub fn ") || text.hasPrefix("pub(crate) fn ")
            || text.hasPrefix("async fn ") || text.hasPrefix("pub async fn ")
        return starts && text.contains(.openParen)
    }

    /// `body {`, `.btn:hover {`, `#main > p {`: a line ending in `{` with
    /// nothing code-like (calls, assignments, statements) before it.
    static func isCSSSelector(_ text: ArraySlice<UInt8>) -> Bool {
        guard text.count > 1, text.last == .openBrace, let first = text.first,
              first.isASCIILetter || ByteSet.cssSelectorStart.contains(first)
        else { return false }
        return !text.contains(where: ByteSet.codePunctuation.contains)
    }

    /// Property names that have no dash; dashed names (`font-size`) count anyway.
    static let cssProperties: Set<String> = [
        "background", "border", "bottom", "color", "content", "cursor", "display",
        "flex", "float", "gap", "grid", "height", "left", "margin", "opacity",
        "outline", "overflow", "padding", "position", "right", "top", "transform",
        "transition", "width",
    ]

    /// `prop: value;` where `prop` is a known or dashed CSS property; this
    /// keeps C's `default: break;` and TypeScript's `id: number;` out.
    static func isCSSDeclaration(_ text: ArraySlice<UInt8>) -> Bool {
        guard text.last == .semicolon, let colon = text.firstIndex(of: .colon) else { return false }
        let name = text[..<colon]
        guard !name.isEmpty, name.allSatisfy({ $0.isASCIILowercase || $0 == .dash }) else { return false }
        return name.contains(.dash) || cssProperties.contains(String(decoding: name, as: UTF8.self))
    }

    /// `key: value` or `key:` (optionally as a `- ` list item), with a
    /// single-word key and no statement punctuation at the end that would
    /// mean CSS, an object literal in code, or a call.
    static func isYAMLPair(_ text: ArraySlice<UInt8>) -> Bool {
        let item = text.hasPrefix("- ") ? text.dropFirst(2) : text
        guard let last = item.last, !ByteSet.statementEnd.contains(last) else { return false }
        let key = item.prefix(while: \.isKeyByte)
        guard !key.isEmpty else { return false }
        let rest = item[(item.startIndex + key.count)...]
        return rest.count == 1 && rest.first == .colon || rest.hasPrefix(": ")
    }

    /// `[section]` or `[[array.of.tables]]`.
    static func isTOMLTable(_ text: ArraySlice<UInt8>) -> Bool {
        var name = text
        while name.first == .openBracket, name.last == .closeBracket {
            name = name.dropFirst().dropLast()
        }
        guard name.count < text.count, !name.isEmpty else { return false }
        return name.allSatisfy { $0.isKeyByte || $0 == .quote }
    }

    /// `key = value` where the value is a TOML literal (string, number,
    /// boolean, array or inline table). Spaces around `=` are required:
    /// shell assignments (`NAME="x"`) have none.
    static func isTOMLPair(_ text: ArraySlice<UInt8>) -> Bool {
        let key = text.prefix(while: \.isKeyByte)
        guard !key.isEmpty else { return false }
        let rest = text[(text.startIndex + key.count)...]
        guard rest.hasPrefix(" = ") else { return false }
        let value = rest.dropFirst(3)
        guard let first = value.first else { return false }
        return ByteSet.tomlValueStart.contains(first) || first.isASCIIDigit
            || value.hasPrefix("true") || value.hasPrefix("false")
    }

    /// A make rule header such as `all: main.o`, `%.o: %.c` or `.PHONY: all`,
    /// starting in column one.
    static func isMakeTarget(_ raw: ArraySlice<UInt8>) -> Bool {
        guard let first = raw.first, !first.isASCIIWhitespace, first != .hash,
              let colon = raw.firstIndex(of: .colon) else { return false }
        let afterColon = raw[(colon + 1)...].first
        guard afterColon != .equals, afterColon != .colon else { return false }
        return raw[..<colon].allSatisfy { $0.isIdentifierByte || ByteSet.makeTargetPunctuation.contains($0) }
    }

    /// `CC := gcc` or `PREFIX ?= /usr/local` in column one.
    static func isMakeVariable(_ raw: ArraySlice<UInt8>) -> Bool {
        guard let first = raw.first, first.isASCIILetter else { return false }
        return raw.contains(" := ") || raw.contains(" ?= ")
    }

    /// `$HOME`, `${name}`, `$1`, `$@`: shell parameter expansion. Lowercase
    /// `$name` is left out because it is how PHP spells every variable.
    static func hasShellVariable(_ text: ArraySlice<UInt8>) -> Bool {
        var i = text.startIndex
        while let dollar = text[i...].firstIndex(of: .dollar) {
            let next = dollar + 1
            guard next < text.endIndex else { return false }
            let byte = text[next]
            if byte.isASCIIUppercase || byte.isASCIIDigit || ByteSet.shellSpecialParameter.contains(byte) {
                return true
            }
            i = next
        }
        return false
    }
}

// MARK: - Byte helpers

extension UInt8 {
    static let tab = UInt8(ascii: "\t")
    static let newline = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")
    static let space = UInt8(ascii: " ")
    static let bang = UInt8(ascii: "!")
    static let quote = UInt8(ascii: "\"")
    static let hash = UInt8(ascii: "#")
    static let dollar = UInt8(ascii: "$")
    static let openParen = UInt8(ascii: "(")
    static let comma = UInt8(ascii: ",")
    static let dash = UInt8(ascii: "-")
    static let dot = UInt8(ascii: ".")
    static let slash = UInt8(ascii: "/")
    static let colon = UInt8(ascii: ":")
    static let semicolon = UInt8(ascii: ";")
    static let lessThan = UInt8(ascii: "<")
    static let equals = UInt8(ascii: "=")
    static let openBracket = UInt8(ascii: "[")
    static let backslash = UInt8(ascii: "\\")
    static let closeBracket = UInt8(ascii: "]")
    static let underscore = UInt8(ascii: "_")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
}

extension LanguageDetector {
    /// A set of ASCII bytes as a bitmask, so membership tests in hot loops
    /// neither allocate nor search.
    struct ByteSet: Sendable {
        private var low: UInt64 = 0
        private var high: UInt64 = 0

        init(_ members: StaticString) {
            members.withUTF8Buffer { buffer in
                for byte in buffer where byte < 128 {
                    if byte < 64 { low |= 1 << UInt64(byte) } else { high |= 1 << UInt64(byte - 64) }
                }
            }
        }

        /// The set of bytes occurring in `bytes`.
        init(_ bytes: ArraySlice<UInt8>) {
            for byte in bytes where byte < 128 {
                if byte < 64 { low |= 1 << UInt64(byte) } else { high |= 1 << UInt64(byte - 64) }
            }
        }

        func contains(_ byte: UInt8) -> Bool {
            if byte < 64 { return low & (1 << UInt64(byte)) != 0 }
            if byte < 128 { return high & (1 << UInt64(byte - 64)) != 0 }
            return false
        }

        static let cssSelectorStart = ByteSet(".#:*[")
        static let codePunctuation = ByteSet("(=;\"")
        static let statementEnd = ByteSet(";{,(")
        static let tomlValueStart = ByteSet("\"'[{")
        static let makeTargetPunctuation = ByteSet(".-/%$() ")
        static let shellSpecialParameter = ByteSet("{@#?")
    }
}

extension UInt8 {
    var isASCIIWhitespace: Bool {
        self == .space || self == .tab || self == .newline || self == .carriageReturn
    }

    var isASCIIUppercase: Bool { self >= UInt8(ascii: "A") && self <= UInt8(ascii: "Z") }
    var isASCIILowercase: Bool { self >= UInt8(ascii: "a") && self <= UInt8(ascii: "z") }
    var isASCIILetter: Bool { isASCIIUppercase || isASCIILowercase }
    var isASCIIDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
    var isASCIIAlphanumeric: Bool { isASCIILetter || isASCIIDigit }
    var isIdentifierByte: Bool { isASCIIAlphanumeric || self == .underscore }
    /// Bytes of a bare config key (`runs-on`, `tool.poetry`).
    var isKeyByte: Bool { isIdentifierByte || self == .dash || self == .dot }
    /// Bytes that can continue a JSON number after its first digit or sign.
    var isNumberByte: Bool {
        isASCIIDigit || self == .dot || self == .dash || self == UInt8(ascii: "+")
            || self == UInt8(ascii: "e") || self == UInt8(ascii: "E")
    }
    var asciiLowercased: UInt8 { isASCIIUppercase ? self + 32 : self }
    var asciiUppercased: UInt8 { isASCIILowercase ? self - 32 : self }
}

extension Collection where Element == UInt8 {
    func trimmingASCIIWhitespace() -> SubSequence {
        let start = drop(while: \.isASCIIWhitespace)
        var end = start.endIndex
        while end > start.startIndex {
            let before = start.index(end, offsetBy: -1)
            guard start[before].isASCIIWhitespace else { break }
            end = before
        }
        return start[..<end]
    }
}

extension ArraySlice where Element == UInt8 {
    func hasPrefix(_ s: StaticString) -> Bool {
        hasBytes(s, at: startIndex)
    }

    func hasSuffix(_ s: StaticString) -> Bool {
        hasBytes(s, at: endIndex - s.utf8CodeUnitCount)
    }

    /// Whether `s` occurs starting at index `i`. Written as a plain loop:
    /// it runs for almost every rule on every line.
    func hasBytes(_ s: StaticString, at i: Int) -> Bool {
        guard i >= startIndex, i + s.utf8CodeUnitCount <= endIndex else { return false }
        return s.withUTF8Buffer { needle in
            for k in 0..<needle.count where self[i + k] != needle[k] { return false }
            return true
        }
    }

    func contains(_ needle: StaticString) -> Bool {
        firstIndex(of: needle) != nil
    }

    /// Plain first-byte-then-compare search: needles are a few bytes long,
    /// and the generic `firstRange(of:)` costs more in setup than it saves.
    func firstIndex(of needle: StaticString) -> Int? {
        let n = needle.utf8CodeUnitCount
        guard n > 0 else { return startIndex }
        guard count >= n else { return nil }
        return needle.withUTF8Buffer { p in
            let first = p[0]
            var i = startIndex
            while i <= endIndex - n {
                if self[i] == first, hasBytes(needle, at: i) { return i }
                i += 1
            }
            return nil
        }
    }

    /// Whether the bytes spell exactly one of the given words.
    func isOneOf(_ words: StaticString...) -> Bool {
        words.contains { word in count == word.utf8CodeUnitCount && hasPrefix(word) }
    }
}

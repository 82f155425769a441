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
        if looksLikeJSON(body) { return "json" }
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
        guard body.hasPrefix(Array("#!".utf8)) else { return nil }
        let firstLine = body.dropFirst(2).prefix { $0 != .newline }
        var words = firstLine.split(whereSeparator: isASCIIWhitespace).map { String(decoding: $0, as: UTF8.self) }
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
    /// also start with a bracket.
    static func looksLikeJSON(_ body: ArraySlice<UInt8>) -> Bool {
        guard let first = body.first, first == .openBrace || first == .openBracket,
              let last = body.last, last == .closeBrace || last == .closeBracket
        else { return false }

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
                guard i < body.endIndex else { return false }
            case .openBrace, .openBracket:
                open.append(byte == .openBrace ? .closeBrace : .closeBracket)
            case .closeBrace, .closeBracket:
                guard open.popLast() == byte else { return false }
                // Content after the top-level value closes means it was not one value.
                if open.isEmpty && i != body.index(before: body.endIndex) { return false }
            case .comma, .colon, .space, .tab, .newline, .carriageReturn:
                break
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
                while i + 1 < body.endIndex, isNumberByte(body[i + 1]) { i += 1 }
            case UInt8(ascii: "a")...UInt8(ascii: "z"):
                let word = body[i...].prefix { UInt8(ascii: "a")...UInt8(ascii: "z") ~= $0 }
                guard jsonLiterals.contains(where: { $0.elementsEqual(word) }) else { return false }
                i += word.count - 1
            default:
                return false
            }
            i += 1
        }
        return open.isEmpty
    }

    static let jsonLiterals = ["true", "false", "null"].map { Array($0.utf8) }

    /// Tag names that only HTML uses; markup containing none of them is XML.
    static let htmlTags: Set<String> = [
        "a", "body", "br", "button", "div", "footer", "form", "h1", "h2", "h3",
        "head", "header", "img", "input", "li", "link", "meta", "nav", "ol", "p",
        "script", "section", "span", "style", "table", "title", "ul",
    ]

    /// Recognises PHP, XML and HTML from their opening bytes and tag names.
    static func markupLanguage(_ body: ArraySlice<UInt8>) -> String? {
        let lower = body.prefix(64).map(lowercasedASCII)[...]
        if lower.hasPrefix(Array("<?php".utf8)) { return "php" }
        if lower.hasPrefix(Array("<?xml".utf8)) { return "xml" }
        if lower.hasPrefix(Array("<!doctype html".utf8)) || lower.hasPrefix(Array("<html".utf8)) {
            return "html"
        }
        guard body.count > 1, body.first == .lessThan, isASCIILetter(body[body.startIndex + 1]) || body[body.startIndex + 1] == .bang
        else { return nil }

        var sawClosingTag = false
        var i = body.startIndex
        while let lt = body[i...].firstIndex(of: .lessThan) {
            var nameStart = lt + 1
            if nameStart < body.endIndex, body[nameStart] == .slash {
                sawClosingTag = true
                nameStart += 1
            }
            let name = body[nameStart...].prefix { isASCIILetter($0) || isASCIIDigit($0) }
            if htmlTags.contains(String(decoding: name.map(lowercasedASCII), as: UTF8.self)) { return "html" }
            i = lt + 1
        }
        let selfClosing = body.contains(Array("/>".utf8))
        return sawClosingTag || selfClosing ? "xml" : nil
    }
}

// MARK: - Scoring

extension LanguageDetector {
    /// Sums rule weights per language over all lines and picks a clear winner.
    static func scoredLanguage(_ bytes: [UInt8]) -> String {
        let lowered = bytes.map(lowercasedASCII)
        var scores = [Int](repeating: 0, count: profiles.count)
        var hits = profiles.map { [Int](repeating: 0, count: $0.rules.count) }
        var previous: ArraySlice<UInt8> = []
        var insideFence = false

        for raw in bytes.split(separator: .newline, omittingEmptySubsequences: false) {
            let rawLine = raw.last == .carriageReturn ? raw.dropLast() : raw
            let text = rawLine.trimmingASCIIWhitespace()
            defer { previous = rawLine }
            if text.isEmpty { continue }

            // Code inside a Markdown fence belongs to the Markdown document;
            // only the fence lines themselves are scored.
            let isFence = text.hasPrefix(Array("```".utf8)) || text.hasPrefix(Array("~~~".utf8))
            if isFence { insideFence.toggle() } else if insideFence { continue }

            let line = Line(raw: rawLine, text: text, lower: lowered[text.indices], previous: previous)
            for (p, profile) in profiles.enumerated() {
                for (r, rule) in profile.rules.enumerated()
                where hits[p][r] < maxHitsPerRule && rule.pattern.matches(line) {
                    hits[p][r] += 1
                    scores[p] += rule.weight
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

        guard let best = scores.max(), best >= threshold,
              scores.filter({ $0 == best }).count == 1,
              let winner = scores.firstIndex(of: best)
        else { return "plain" }
        return profiles[winner].id
    }
}

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
}

/// A cheap test on one line; most compare bytes of the trimmed text.
struct Pattern: Sendable {
    let matches: @Sendable (Line) -> Bool

    static func prefix(_ s: String) -> Pattern {
        let p = Array(s.utf8)
        return Pattern { $0.text.hasPrefix(p) }
    }

    static func suffix(_ s: String) -> Pattern {
        let p = Array(s.utf8)
        return Pattern { $0.text.hasSuffix(p) }
    }

    static func contains(_ s: String) -> Pattern {
        let p = Array(s.utf8)
        return Pattern { $0.text.contains(p) }
    }

    /// The whole trimmed line equals `s` (block enders like `fi`, `end`).
    static func line(_ s: String) -> Pattern {
        let p = Array(s.utf8)
        return Pattern { $0.text.elementsEqual(p) }
    }

    /// Case-insensitive prefix; `s` must be lowercase.
    static func prefixCI(_ s: String) -> Pattern {
        let p = Array(s.utf8)
        return Pattern { $0.lower.hasPrefix(p) }
    }

    /// Case-insensitive substring; `s` must be lowercase.
    static func containsCI(_ s: String) -> Pattern {
        let p = Array(s.utf8)
        return Pattern { $0.lower.contains(p) }
    }

    /// Prefix of the untrimmed line, where indentation itself is the signal.
    static func rawPrefix(_ s: String) -> Pattern {
        let p = Array(s.utf8)
        return Pattern { $0.raw.hasPrefix(p) }
    }

    static func when(_ test: @escaping @Sendable (Line) -> Bool) -> Pattern {
        Pattern(matches: test)
    }

    func and(_ other: Pattern) -> Pattern {
        Pattern { matches($0) && other.matches($0) }
    }

    func andNot(_ other: Pattern) -> Pattern {
        Pattern { matches($0) && !other.matches($0) }
    }
}

/// A pattern and how much a match says about the language; negative weights
/// are evidence against it.
struct Rule: Sendable {
    let pattern: Pattern
    let weight: Int

    init(_ pattern: Pattern, _ weight: Int) {
        self.pattern = pattern
        self.weight = weight
    }
}

/// The scoring rules of one language.
struct Profile: Sendable {
    let id: String
    /// A language whose rules also apply, for supersets such as
    /// TypeScript over JavaScript and C++ over C.
    let base: String?
    let rules: [Rule]

    init(_ id: String, base: String? = nil, _ rules: [Rule]) {
        self.id = id
        self.base = base
        self.rules = rules
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
            Rule(.when(isTypedBinding), 2),
            Rule(.prefix("extension "), 3),
            Rule(.contains("protocol "), 3),
            Rule(.contains("\\("), 2),
            Rule(.contains("case ."), 2),
            Rule(.contains(" -> "), 1),
            Rule(.contains("print("), 1),
            Rule(.suffix(";"), -1),
        ]),
        Profile("python", [
            Rule(.prefix("def ").and(.suffix(":")), 4),
            Rule(.prefix("import ").andNot(.contains(";")).andNot(.contains("\"")).andNot(.contains("'"))
                .andNot(.contains(" from ")).andNot(.contains("{")), 2),
            Rule(.prefix("from ").and(.contains(" import ")), 4),
            Rule(.prefix("elif "), 4),
            Rule(.contains("self."), 2),
            Rule(.prefix("class ").and(.suffix(":")), 3),
            Rule(.prefix("if __name__ =="), 5),
            Rule(.prefix("except"), 4),
            Rule(.prefix("for ").and(.contains(" in ")).and(.suffix(":")), 2),
            Rule(.prefix("print("), 1),
            Rule(.contains("None"), 1),
            Rule(.suffix(";"), -1),
            Rule(.suffix("{"), -1),
        ]),
        Profile("go", [
            Rule(.prefix("package ").andNot(.contains(".")).andNot(.contains(";")), 4),
            Rule(.contains("func main()"), 4),
            Rule(.prefix("func ("), 4),
            Rule(.prefix("func "), 2),
            Rule(.contains(":="), 3),
            Rule(.contains("fmt."), 4),
            Rule(.prefix("import (").and(.suffix("(")), 4),
            Rule(.prefix("import \""), 4),
            Rule(.prefix("type ").and(.suffix(" struct {")), 4),
            Rule(.prefix("type ").and(.suffix(" interface {")), 4),
            Rule(.contains("err != nil"), 5),
            Rule(.prefix("defer "), 3),
        ]),
        Profile("rust", [
            Rule(.contains("fn main()"), 5),
            Rule(.when(isRustFunction), 3),
            Rule(.contains("let mut "), 4),
            Rule(.prefix("impl"), 4),
            Rule(.prefix("use ").and(.contains("::")), 4),
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
            Rule(.prefix("#include <").andNot(.suffix(".h>")), 3),
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
            Rule(.prefix("package ").and(.suffix(";")), 2),
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
            Rule(.prefix("package ").and(.contains(".")).andNot(.contains(";")), 3),
            Rule(.contains("data class "), 5),
            Rule(.contains("companion object"), 5),
            Rule(.contains("?.let"), 4),
            Rule(.contains("when ("), 3),
            Rule(.contains("listOf("), 4),
            Rule(.contains("mapOf("), 4),
            Rule(.contains("println("), 2),
        ]),
        Profile("typescript", base: "javascript", [
            Rule(.prefix("interface ").and(.suffix("{")), 4),
            Rule(.prefix("export interface "), 5),
            Rule(.prefix("export type "), 5),
            Rule(.prefix("type ").and(.contains(" = ")), 4),
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
            Rule(.prefix("const ").and(.contains(" = ")), 2),
            Rule(.prefix("var ").and(.suffix(";")), 1),
            Rule(.contains("=>"), 2),
            Rule(.contains("console.log("), 5),
            Rule(.contains("require("), 4),
            Rule(.contains("module.exports"), 5),
            Rule(.contains("document."), 4),
            Rule(.contains("window."), 3),
            Rule(.prefix("export default"), 4),
            Rule(.prefix("import ").and(.contains(" from ")), 3),
            Rule(.contains("==="), 3),
            Rule(.contains("!=="), 3),
            Rule(.contains(".then("), 3),
            Rule(.contains("undefined"), 3),
            Rule(.contains("addEventListener("), 4),
        ]),
        Profile("css", [
            Rule(.when(isCSSSelector), 1),
            Rule(.when(isCSSSelector).and(.when { [.dot, .hash].contains($0.text.first) }), 2),
            Rule(.when(isCSSDeclaration), 3),
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
            Rule(.prefix("|").and(.suffix("|")), 2),
        ]),
        Profile("yaml", [
            Rule(.when(isYAMLPair), 2),
            Rule(.line("---"), 2),
            Rule(.prefix("- "), 1),
            // YAML forbids tabs for indentation; tab-indented lines mean Go or make.
            Rule(.rawPrefix("\t"), -2),
        ]),
        Profile("toml", [
            Rule(.when(isTOMLTable), 3),
            Rule(.when(isTOMLPair), 2),
        ]),
        Profile("sql", [
            Rule(.prefixCI("select "), 3),
            Rule(.prefixCI("select ").and(.containsCI(" from ")), 3),
            Rule(.prefixCI("from ").andNot(.containsCI(" import ")), 2),
            Rule(.prefixCI("where "), 3),
            Rule(.containsCI("group by "), 3),
            Rule(.containsCI("order by "), 3),
            Rule(.containsCI(" join "), 2),
            Rule(.prefixCI("create table"), 6),
            Rule(.prefixCI("create index"), 6),
            Rule(.prefixCI("insert into"), 6),
            Rule(.prefixCI("update ").and(.containsCI(" set ")), 5),
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
            Rule(.when(isMakeTarget), 1),
            // A recipe is a tab-indented line right under its target; Go is
            // tab-indented too, so the tab alone proves nothing.
            Rule(.rawPrefix("\t").and(.when { isMakeTarget(raw: $0.previous) }), 4),
            Rule(.prefix(".PHONY"), 6),
            Rule(.contains("$@"), 4),
            Rule(.contains("$<"), 4),
            Rule(.contains("$^"), 4),
            Rule(.rawPrefix("\t@"), 3),
            Rule(.prefix("ifeq "), 4),
            Rule(.prefix("ifdef "), 3),
            Rule(.line("endif"), 2),
            Rule(.when(isMakeVariable), 2),
            Rule(.contains("$("), 1),
        ]),
        Profile("lua", [
            Rule(.prefix("local function "), 5),
            Rule(.prefix("local "), 3),
            Rule(.line("end"), 1),
            Rule(.contains("function"), 1),
            Rule(.contains(" then").andNot(.contains(";")).andNot(.contains("[")), 2),
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
            Rule(.prefix("def ").andNot(.suffix(":")), 3),
            Rule(.line("end"), 2),
            Rule(.prefix("puts "), 4),
            Rule(.prefix("require '"), 3),
            Rule(.prefix("require \""), 3),
            Rule(.prefix("attr_"), 5),
            Rule(.prefix("elsif "), 5),
            Rule(.contains(" do |"), 5),
            Rule(.prefix("@").and(.contains(" = ")), 2),
            Rule(.contains("#{"), 3),
            Rule(.contains(".each"), 3),
            Rule(.prefix("class ").and(.contains(" < ")), 4),
            Rule(.prefix("module "), 3),
            Rule(.prefix("unless "), 4),
            Rule(.contains("nil"), 1),
        ]),
        Profile("php", [
            Rule(.contains("<?php"), 6),
            Rule(.contains("$this->"), 5),
            Rule(.prefix("$").and(.contains(" = ")).and(.suffix(";")), 3),
            Rule(.prefix("namespace ").and(.suffix(";")), 2),
            Rule(.prefix("use ").and(.contains("\\")), 4),
            Rule(.contains("function "), 1),
            Rule(.contains("->"), 1),
        ]),
        Profile("csharp", [
            Rule(.prefix("using System"), 6),
            Rule(.prefix("using ").and(.suffix(";")), 2),
            Rule(.prefix("namespace "), 3),
            Rule(.contains("Console.Write"), 6),
            Rule(.contains("static void Main("), 6),
            Rule(.contains("{ get; set; }"), 6),
            Rule(.contains("async Task"), 5),
            Rule(.contains("$\""), 3),
            Rule(.contains("foreach ("), 3),
            Rule(.prefix("var ").and(.contains(" = new ")), 2),
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
            Rule(.prefix("if [").or(.prefix("elif [")), 4),
            Rule(.contains("[[ "), 3),
            Rule(.prefix("echo "), 2),
            Rule(.when(hasShellVariable), 2),
            Rule(.prefix("export ").and(.contains("=")).andNot(.contains(" = ")), 4),
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
            Rule(.prefix("for ").and(.contains(" in ")).andNot(.contains("(")).andNot(.contains(":")), 2),
            Rule(.contains("$("), 1),
        ]),
    ]
}

// MARK: - Line predicates too shaped for a plain prefix or substring

extension LanguageDetector {
    /// Swift's `let name: Type` / `var name: Type`, also after modifiers.
    @Sendable static func isTypedBinding(_ line: Line) -> Bool {
        for keyword in [Array("let ".utf8), Array("var ".utf8)] {
            guard let start = line.text.firstRange(of: keyword)?.upperBound else { continue }
            let name = line.text[start...].prefix(while: isIdentifierByte)
            let rest = line.text[(start + name.count)...]
            if !name.isEmpty, rest.hasPrefix(Array(": ".utf8)) { return true }
        }
        return false
    }

    /// `fn name(` at the start of a line, after optional `pub`/`async`.
    @Sendable static func isRustFunction(_ line: Line) -> Bool {
        let text = line.text
        for prefix in ["fn ", "pub fn ", "pub(crate) fn ", "async fn ", "pub async fn "] where text.hasPrefix(Array(prefix.utf8)) {
            return text.contains(.openParen)
        }
        return false
    }

    /// `body {`, `.btn:hover {`, `#main > p {`: a line ending in `{` with
    /// nothing code-like (calls, assignments, statements) before it.
    @Sendable static func isCSSSelector(_ line: Line) -> Bool {
        let text = line.text
        guard text.count > 1, text.last == .openBrace, let first = text.first,
              isASCIILetter(first) || [.dot, .hash, .colon, .star, .openBracket].contains(first)
        else { return false }
        return !text.contains { [.openParen, .equals, .semicolon, .quote].contains($0) }
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
    @Sendable static func isCSSDeclaration(_ line: Line) -> Bool {
        let text = line.text
        guard text.last == .semicolon, let colon = text.firstIndex(of: .colon) else { return false }
        let name = text[..<colon]
        guard !name.isEmpty, name.allSatisfy({ isASCIILowercase($0) || $0 == .dash }) else { return false }
        return name.contains(.dash) || cssProperties.contains(String(decoding: name, as: UTF8.self))
    }

    /// `key: value` or `key:` (optionally as a `- ` list item), with a
    /// single-word key and no statement punctuation that would mean CSS, JSON
    /// inside code, or a C label.
    @Sendable static func isYAMLPair(_ line: Line) -> Bool {
        var text = line.text
        if text.hasPrefix(Array("- ".utf8)) { text = text.dropFirst(2) }
        guard let last = text.last, ![.semicolon, .openBrace, .comma, .openParen].contains(last) else { return false }
        let key = text.prefix { isIdentifierByte($0) || $0 == .dash || $0 == .dot }
        guard !key.isEmpty else { return false }
        let rest = text[(text.startIndex + key.count)...]
        return rest.elementsEqual([.colon]) || rest.hasPrefix([.colon, .space])
    }

    /// `[section]` or `[[array.of.tables]]`.
    @Sendable static func isTOMLTable(_ line: Line) -> Bool {
        var text = line.text
        while text.first == .openBracket, text.last == .closeBracket {
            text = text.dropFirst().dropLast()
        }
        guard text.count < line.text.count, !text.isEmpty else { return false }
        return text.allSatisfy { isIdentifierByte($0) || $0 == .dash || $0 == .dot || $0 == .quote }
    }

    /// `key = value` where the value is a TOML literal (string, number,
    /// boolean, array or inline table). Spaces around `=` are required:
    /// shell assignments (`NAME="x"`) have none.
    @Sendable static func isTOMLPair(_ line: Line) -> Bool {
        let text = line.text
        let key = text.prefix { isIdentifierByte($0) || $0 == .dash || $0 == .dot }
        guard !key.isEmpty else { return false }
        let rest = text[(text.startIndex + key.count)...]
        guard rest.hasPrefix(Array(" = ".utf8)) else { return false }
        let value = rest.dropFirst(3)
        guard let first = value.first else { return false }
        return [.quote, .apostrophe, .openBracket, .openBrace].contains(first) || isASCIIDigit(first)
            || value.hasPrefix(Array("true".utf8)) || value.hasPrefix(Array("false".utf8))
    }

    /// A make rule header such as `all: main.o`, `%.o: %.c` or `.PHONY: all`,
    /// starting in column one.
    static func isMakeTarget(raw: ArraySlice<UInt8>) -> Bool {
        guard let first = raw.first, !isASCIIWhitespace(first), first != .hash,
              let colon = raw.firstIndex(of: .colon) else { return false }
        let targets = raw[..<colon]
        let afterColon = raw[(colon + 1)...].first
        guard afterColon != .equals, afterColon != .colon else { return false }
        return targets.allSatisfy {
            isIdentifierByte($0) || [.dot, .dash, .slash, .percent, .dollar, .openParen, .closeParen, .space].contains($0)
        }
    }

    @Sendable static func isMakeTarget(_ line: Line) -> Bool {
        isMakeTarget(raw: line.raw)
    }

    /// `CC := gcc` or `PREFIX ?= /usr/local` in column one.
    @Sendable static func isMakeVariable(_ line: Line) -> Bool {
        guard let first = line.raw.first, isASCIILetter(first) else { return false }
        return line.raw.contains(Array(" := ".utf8)) || line.raw.contains(Array(" ?= ".utf8))
    }

    /// `$HOME`, `${name}`, `$1`, `$@`: shell parameter expansion. Lowercase
    /// `$name` is left out because it is how PHP spells every variable.
    @Sendable static func hasShellVariable(_ line: Line) -> Bool {
        var i = line.text.startIndex
        while let dollar = line.text[i...].firstIndex(of: .dollar) {
            let next = dollar + 1
            guard next < line.text.endIndex else { return false }
            let byte = line.text[next]
            if isASCIIUppercase(byte) || isASCIIDigit(byte) || [.openBrace, .at, .hash, .question].contains(byte) {
                return true
            }
            i = next
        }
        return false
    }
}

extension Pattern {
    func or(_ other: Pattern) -> Pattern {
        Pattern { matches($0) || other.matches($0) }
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
    static let percent = UInt8(ascii: "%")
    static let apostrophe = UInt8(ascii: "'")
    static let openParen = UInt8(ascii: "(")
    static let closeParen = UInt8(ascii: ")")
    static let star = UInt8(ascii: "*")
    static let comma = UInt8(ascii: ",")
    static let dash = UInt8(ascii: "-")
    static let dot = UInt8(ascii: ".")
    static let slash = UInt8(ascii: "/")
    static let colon = UInt8(ascii: ":")
    static let semicolon = UInt8(ascii: ";")
    static let lessThan = UInt8(ascii: "<")
    static let equals = UInt8(ascii: "=")
    static let question = UInt8(ascii: "?")
    static let at = UInt8(ascii: "@")
    static let openBracket = UInt8(ascii: "[")
    static let backslash = UInt8(ascii: "\\")
    static let closeBracket = UInt8(ascii: "]")
    static let underscore = UInt8(ascii: "_")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
}

@inline(__always) func isASCIIWhitespace(_ b: UInt8) -> Bool {
    b == .space || b == .tab || b == .newline || b == .carriageReturn
}

@inline(__always) func isASCIIUppercase(_ b: UInt8) -> Bool { b >= 65 && b <= 90 }
@inline(__always) func isASCIILowercase(_ b: UInt8) -> Bool { b >= 97 && b <= 122 }
@inline(__always) func isASCIILetter(_ b: UInt8) -> Bool { isASCIIUppercase(b) || isASCIILowercase(b) }
@inline(__always) func isASCIIDigit(_ b: UInt8) -> Bool { b >= 48 && b <= 57 }
@inline(__always) func isASCIIAlphanumeric(_ b: UInt8) -> Bool { isASCIILetter(b) || isASCIIDigit(b) }
@inline(__always) func isIdentifierByte(_ b: UInt8) -> Bool { isASCIIAlphanumeric(b) || b == .underscore }
@inline(__always) func isNumberByte(_ b: UInt8) -> Bool {
    isASCIIDigit(b) || b == .dot || b == .dash || b == UInt8(ascii: "+") || b == UInt8(ascii: "e") || b == UInt8(ascii: "E")
}
@inline(__always) func lowercasedASCII(_ b: UInt8) -> UInt8 { isASCIIUppercase(b) ? b + 32 : b }

extension Collection where Element == UInt8 {
    func trimmingASCIIWhitespace() -> SubSequence {
        let start = drop(while: isASCIIWhitespace)
        var end = start.endIndex
        while end > start.startIndex {
            let before = start.index(end, offsetBy: -1)
            guard isASCIIWhitespace(start[before]) else { break }
            end = before
        }
        return start[..<end]
    }
}

extension ArraySlice where Element == UInt8 {
    func hasPrefix(_ p: [UInt8]) -> Bool {
        count >= p.count && self.starts(with: p)
    }

    func hasSuffix(_ p: [UInt8]) -> Bool {
        count >= p.count && self[(endIndex - p.count)...].elementsEqual(p)
    }

    /// Plain first-byte-then-compare search; needles are a few bytes long.
    func contains(_ needle: [UInt8]) -> Bool {
        guard let first = needle.first else { return true }
        guard count >= needle.count else { return false }
        var i = startIndex
        let last = endIndex - needle.count
        while i <= last {
            if self[i] == first, self[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i += 1
        }
        return false
    }
}

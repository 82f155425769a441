// MARK: - Rule tables

extension LanguageDetector {
    /// One table of weighted line rules per language. Weights: 5–6 nearly
    /// decisive on their own, 3–4 typical of the language, 1–2 shared with
    /// others and only useful in combination.
    static let profiles: [Profile] = [
        Profile(
            "swift",
            [
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
        Profile(
            "python",
            [
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
        Profile(
            "go",
            [
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
        Profile(
            "rust",
            [
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
        Profile(
            "c",
            [
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
        Profile(
            "cpp", base: "c",
            [
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
        Profile(
            "java",
            [
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
        Profile(
            "kotlin",
            [
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
        Profile(
            "typescript", base: "javascript",
            [
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
        Profile(
            "javascript",
            [
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
        Profile(
            "css",
            [
                Rule(.cssSelector, 1),
                Rule(.cssSelector, and: .startsWithAnyOf(".#"), 2),
                Rule(.cssDeclaration, 3),
                Rule(.prefix("@media "), 5),
                Rule(.prefix("@import "), 2),
                Rule(.contains("!important"), 4),
                Rule(.contains("px;"), 2),
            ]),
        Profile(
            "markdown",
            [
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
        Profile(
            "yaml",
            [
                Rule(.yamlPair, 2),
                Rule(.line("---"), 2),
                Rule(.prefix("- "), 1),
            ]),
        Profile(
            "toml",
            [
                Rule(.tomlTable, 3),
                Rule(.tomlPair, 2),
            ]),
        Profile(
            "sql",
            [
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
        Profile(
            "dockerfile",
            [
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
        Profile(
            "makefile",
            [
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
        Profile(
            "lua",
            [
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
        Profile(
            "ruby",
            [
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
        Profile(
            "php",
            [
                Rule(.contains("<?php"), 6),
                Rule(.contains("$this->"), 5),
                Rule(.prefix("$"), and: .suffix(";"), 3),
                Rule(.prefix("namespace "), and: .suffix(";"), 2),
                Rule(.prefix("use "), and: .contains("\\"), 4),
                Rule(.contains("function "), 1),
                Rule(.contains("->"), 1),
            ]),
        Profile(
            "csharp",
            [
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
        Profile(
            "bash",
            [
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
        let starts =
            text.hasPrefix("fn ") || text.hasPrefix("pub fn ") || text.hasPrefix("pub(crate) fn ")
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
            let colon = raw.firstIndex(of: .colon)
        else { return false }
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

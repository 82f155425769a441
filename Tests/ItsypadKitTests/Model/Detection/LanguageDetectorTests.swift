import Testing

@testable import ItsypadCLI
@testable import ItsypadModel

/// A snippet and the language id it should be detected as.
struct LanguageSample: Sendable, CustomTestStringConvertible {
    let expected: String
    let code: String

    init(_ expected: String, _ code: String) {
        self.expected = expected
        self.code = code
    }

    var testDescription: String {
        let firstLine = code.split(separator: "\n").first.map(String.init) ?? ""
        return "\(expected): \(firstLine.prefix(40))"
    }
}

let languageSamples: [LanguageSample] = [
    // Shebangs decide on their own, whatever follows.
    LanguageSample("python", "#!/usr/bin/env python3\nprint('hi')"),
    LanguageSample("bash", "#!/bin/bash\nls"),
    LanguageSample("bash", "#!/bin/sh\nexit 0"),
    LanguageSample("bash", "#!/usr/bin/env zsh\nsource ~/.zshrc"),
    LanguageSample("javascript", "#!/usr/bin/env node\nmain()"),
    LanguageSample("typescript", "#!/usr/bin/env -S deno run --allow-net\nserve()"),
    LanguageSample("typescript", "#!/usr/bin/env ts-node\nrun()"),
    LanguageSample("ruby", "#!/usr/bin/ruby\nmain"),
    LanguageSample("lua", "#!/usr/bin/env lua5.4\nmain()"),
    LanguageSample("php", "#!/usr/bin/php\n<?php echo 1;"),
    LanguageSample("plain", "#!/usr/bin/perl\nprint \"hi\\n\";"),

    LanguageSample(
        "swift",
        """
        import Foundation

        struct User: Codable {
            let name: String
            var age: Int
        }

        func greet(_ user: User) -> String {
            guard !user.name.isEmpty else { return "Hi" }
            return "Hello, \\(user.name)"
        }
        """),
    LanguageSample(
        "swift",
        """
        enum Direction {
            case north, south
        }

        extension Direction {
            func turned() -> Direction {
                switch self {
                case .north: return .south
                case .south: return .north
                }
            }
        }
        """),
    LanguageSample(
        "swift",
        """
        if let value = cache[key] {
            print(value)
        }
        let count: Int = items.count
        """),

    LanguageSample(
        "python",
        """
        import os

        def main():
            for name in os.listdir("."):
                print(name)

        if __name__ == "__main__":
            main()
        """),
    LanguageSample(
        "python",
        """
        class Stack:
            def __init__(self):
                self.items = []

            def push(self, item):
                if item is None:
                    raise ValueError("no item")
                elif len(self.items) > 100:
                    self.items.pop(0)
                self.items.append(item)
        """),
    LanguageSample(
        "python",
        """
        from dataclasses import dataclass

        try:
            value = int(text)
        except ValueError:
            value = 0
        """),

    LanguageSample(
        "go",
        """
        package main

        import "fmt"

        func main() {
        \tx := 42
        \tfmt.Println("hello", x)
        }
        """),
    LanguageSample(
        "go",
        """
        type Server struct {
        \taddr string
        }

        func (s *Server) Start() error {
        \tln, err := net.Listen("tcp", s.addr)
        \tif err != nil {
        \t\treturn err
        \t}
        \tdefer ln.Close()
        \treturn nil
        }
        """),

    LanguageSample(
        "rust",
        """
        use std::collections::HashMap;

        fn main() {
            let mut counts = HashMap::new();
            counts.insert("a", 1);
            println!("{:?}", counts);
        }
        """),
    LanguageSample(
        "rust",
        """
        #[derive(Debug, Clone)]
        pub struct Point {
            x: i32,
            y: i32,
        }

        impl Point {
            pub fn name(&self) -> &str {
                match self.x {
                    0 => "origin",
                    _ => "other",
                }
            }
        }
        """),

    LanguageSample(
        "c",
        """
        #include <stdio.h>
        #include <stdlib.h>

        int main(void) {
            char *buf = malloc(64);
            printf("hello\\n");
            free(buf);
            return 0;
        }
        """),
    LanguageSample(
        "c",
        """
        #define MAX 16

        typedef struct node {
            int value;
            struct node *next;
        } node_t;

        node_t *new_node(int value) {
            node_t *n = malloc(sizeof(node_t));
            n->next = NULL;
            return n;
        }
        """),

    LanguageSample(
        "cpp",
        """
        #include <iostream>
        #include <vector>

        int main() {
            std::vector<int> v{1, 2, 3};
            for (auto x : v) std::cout << x << std::endl;
            return 0;
        }
        """),
    LanguageSample(
        "cpp",
        """
        template <typename T>
        class Box {
        public:
            explicit Box(T value) : value_(value) {}
            T get() const { return value_; }
        private:
            T value_;
            Box *next = nullptr;
        };
        """),

    LanguageSample(
        "java",
        """
        public class Hello {
            public static void main(String[] args) {
                System.out.println("Hello");
            }
        }
        """),
    LanguageSample(
        "java",
        """
        package com.example.app;

        import java.util.List;
        import java.util.ArrayList;

        public class Repo implements Store {
            private final List<String> items = new ArrayList<>();

            @Override
            public void add(String item) {
                items.add(item);
            }
        }
        """),

    LanguageSample(
        "kotlin",
        """
        fun main() {
            val names = listOf("a", "b")
            for (n in names) println(n)
        }
        """),
    LanguageSample(
        "kotlin",
        """
        package com.example.app

        data class User(val name: String, val age: Int)

        class Repo {
            companion object {
                fun create(): Repo = Repo()
            }

            fun find(id: Int): User? = users[id]?.let { it }
        }
        """),

    LanguageSample(
        "typescript",
        """
        interface User {
          id: number;
          name: string;
        }

        export function greet(user: User): string {
          return `Hello ${user.name}`;
        }
        """),
    LanguageSample(
        "typescript",
        """
        import type { Config } from "./config";

        export type Mode = "light" | "dark";

        const defaults = { mode: "light" } as const;

        function log(message: string): void {
          console.log(message);
        }
        """),

    LanguageSample(
        "javascript",
        """
        const express = require('express');
        const app = express();
        app.get('/', (req, res) => res.send('hi'));
        console.log('listening');
        """),
    LanguageSample(
        "javascript",
        """
        function add(a, b) {
          return a + b;
        }

        document.querySelector('#btn').addEventListener('click', () => {
          console.log(add(1, 2));
        });
        """),
    LanguageSample(
        "javascript",
        """
        import React from 'react';

        export default function App() {
          if (props.value === undefined) return null;
          return fetch(url).then(r => r.json());
        }
        """),

    LanguageSample("json", #"{"name": "itsypad", "version": 2, "tags": ["a", "b"], "ok": true, "x": null}"#),
    LanguageSample(
        "json",
        """
        [
          {"id": 1, "score": -2.5e3},
          {"id": 2, "note": "a \\"quoted\\" } brace"}
        ]
        """),

    LanguageSample(
        "html",
        """
        <!DOCTYPE html>
        <html>
        <head><title>Hi</title></head>
        <body><p>Hello</p></body>
        </html>
        """),
    LanguageSample(
        "html",
        """
        <div class="card">
          <p>Hello <a href="/x">there</a></p>
        </div>
        """),

    LanguageSample(
        "xml",
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <note><to>Tove</to></note>
        """),
    LanguageSample(
        "xml",
        """
        <project>
          <modelVersion>4.0.0</modelVersion>
          <artifactId>demo</artifactId>
        </project>
        """),

    LanguageSample(
        "php",
        """
        <?php
        echo "Hello";
        """),
    LanguageSample(
        "php",
        """
        <?php

        namespace App\\Http;

        class Controller
        {
            public function show($id)
            {
                return $this->repo->find($id);
            }
        }
        """),

    LanguageSample(
        "csharp",
        """
        using System;

        namespace Demo
        {
            class Program
            {
                static void Main(string[] args)
                {
                    Console.WriteLine("Hello");
                }
            }
        }
        """),
    LanguageSample(
        "csharp",
        """
        public class User
        {
            public string Name { get; set; }
            public int Age { get; set; }

            public async Task SaveAsync()
            {
                var db = new Database();
                await db.SaveAsync($"user {Name}");
            }
        }
        """),

    LanguageSample(
        "ruby",
        """
        class Greeter
          def initialize(name)
            @name = name
          end

          def greet
            puts "Hello, #{@name}!"
          end
        end
        """),
    LanguageSample(
        "ruby",
        """
        require 'json'

        items.each do |item|
          if item.nil?
            next
          elsif item.empty?
            puts "empty"
          end
        end
        """),

    LanguageSample(
        "lua",
        """
        local function greet(name)
          print("Hello, " .. name)
        end

        local count = 0
        for i, v in ipairs(items) do
          count = count + 1
        end
        """),
    LanguageSample(
        "lua",
        """
        function M.setup(opts)
          if opts == nil then
            opts = {}
          elseif opts.x ~= 1 then
            return
          end
        end
        """),

    LanguageSample(
        "bash",
        """
        set -euo pipefail
        for f in *.txt; do
          echo "$f"
        done
        """),
    LanguageSample(
        "bash",
        """
        if [ -z "$HOME" ]; then
          export PATH=$HOME/bin:$PATH
        fi
        """),
    LanguageSample(
        "bash",
        """
        sudo apt-get update
        cd /tmp
        curl -fsSL https://example.com/install.sh | bash >/dev/null 2>&1
        """),

    LanguageSample(
        "sql",
        """
        SELECT id, name
        FROM users
        WHERE active = 1
        ORDER BY name;
        """),
    LanguageSample(
        "sql",
        """
        CREATE TABLE users (
          id INTEGER PRIMARY KEY,
          name VARCHAR(64) NOT NULL
        );
        INSERT INTO users (name) VALUES ('ada');
        """),
    LanguageSample("sql", "select count(*) from orders o join users u on u.id = o.user_id where u.active group by u.id;"),

    LanguageSample(
        "css",
        """
        body {
          margin: 0;
          font-family: sans-serif;
        }

        .btn:hover {
          color: #fff;
        }
        """),
    LanguageSample(
        "css",
        """
        @media (max-width: 600px) {
          #sidebar {
            display: none !important;
          }
        }
        """),

    LanguageSample(
        "markdown",
        """
        # Itsypad

        A tiny scratchpad. See [docs](https://example.com).

        ## Install

        - Download
        - Run `itsypad`
        """),
    LanguageSample(
        "markdown",
        """
        Notes for **Tuesday**:

        - [ ] ship it
        - [x] write tests

        ```swift
        let x = 1
        func f() -> Int { x }
        ```
        """),

    LanguageSample(
        "yaml",
        """
        name: CI
        on:
          push:
            branches: [main]
        jobs:
          build:
            runs-on: ubuntu-latest
            steps:
              - uses: actions/checkout@v4
        """),
    LanguageSample(
        "yaml",
        """
        ---
        apiVersion: v1
        kind: Pod
        metadata:
          name: web
        spec:
          containers:
            - name: nginx
              image: nginx:1.25
        """),

    LanguageSample(
        "toml",
        """
        [package]
        name = "itsypad"
        version = "0.1.0"

        [dependencies]
        serde = { version = "1", features = ["derive"] }
        """),
    LanguageSample(
        "toml",
        """
        title = "Example"
        enabled = true

        [[servers]]
        port = 8080
        """),

    LanguageSample(
        "dockerfile",
        """
        FROM node:20-alpine
        WORKDIR /app
        COPY package.json .
        RUN npm install
        CMD ["node", "index.js"]
        """),
    LanguageSample(
        "dockerfile",
        """
        FROM ubuntu:22.04 AS build
        ENV DEBIAN_FRONTEND=noninteractive
        RUN apt-get update && apt-get install -y curl
        EXPOSE 8080
        ENTRYPOINT ["/usr/bin/app"]
        """),

    LanguageSample(
        "makefile",
        """
        CC = gcc

        all: main.o
        \t$(CC) -o app main.o

        clean:
        \trm -f *.o app
        """),
    LanguageSample(
        "makefile",
        """
        .PHONY: build test

        build:
        \t@swift build

        %.o: %.c
        \t$(CC) -c $< -o $@
        """),
]

/// Samples that exercise the scoring machinery rather than one language.
let tieBreakSamples: [LanguageSample] = [
    // One TypeScript-only hint on mostly JavaScript: the superset wins
    // because it inherits the JavaScript score.
    LanguageSample(
        "typescript",
        """
        const total = items.reduce((sum, item) => sum + item.price, 0);
        console.log(total);
        let label: string = "Total";
        """),
    // Likewise C++ over C.
    LanguageSample(
        "cpp",
        """
        #include <stdio.h>
        int main() {
            std::string name = "x";
            printf("%s\n", name.c_str());
        }
        """),
    // Code inside a fence belongs to the Markdown document.
    LanguageSample(
        "markdown",
        """
        Some notes:

        ```python
        import os
        def main():
            print(os.getcwd())
        if __name__ == "__main__":
            main()
        ```
        """),
    // Many `NAME = 1` lines look like TOML, but one rule only counts a few
    // times, so the distinct Python clues below them win.
    LanguageSample(
        "python",
        """
        WIDTH = 80
        HEIGHT = 24
        DEPTH = 3
        COLORS = 256
        SPEED = 10

        def area(scale):
            if scale is None:
                return WIDTH * HEIGHT
            for step in range(scale):
                print(step)
        """),
]

let plainSamples: [String] = [
    "",
    "   \n\t  \n",
    "hello",
    "Remember to buy milk and eggs on the way home.",
    "The quick brown fox jumps over the lazy dog.",
    "Meeting notes from Tuesday: we agreed to ship on Friday.",
    "I will echo your thoughts then leave, and we can import the rest later.",
    "https://example.com/search?q=swift&page=2",
    """
    Dear team,

    Thanks for the great work this week. Let's keep the momentum going
    and make sure the release notes are ready before the end of the day.

    Cheers
    """,
    // A single weak hint is not enough evidence.
    "import os",
    "key: value",
]

@Suite struct LanguageDetectorTests {
    @Test(arguments: languageSamples + tieBreakSamples)
    func detectsLanguage(_ sample: LanguageSample) {
        #expect(LanguageDetector.detect(sample.code) == sample.expected)
    }

    @Test(arguments: plainSamples)
    func plainTextIsPlain(_ text: String) {
        #expect(LanguageDetector.detect(text) == "plain")
    }

    @Test func samplesCoverEnoughLanguages() {
        let counts = Dictionary(grouping: languageSamples, by: \.expected).mapValues(\.count)
        let wellCovered = counts.filter { $0.key != "plain" && $0.value >= 2 }
        #expect(wellCovered.count >= 20)
    }

    /// A file named with a language's extension is read back as that language.
    @Test(arguments: LanguageDetector.languages)
    func everyLanguageHasAnExtensionThatMeansIt(_ language: String) {
        let suffix = LanguageDetector.fileExtension(for: language)
        #expect(LanguageDetector.language(forFileName: "tab." + suffix) == language, "\(language): .\(suffix)")
    }

    @Test func languagesAreSortedUniqueAndComplete() {
        let required = [
            "plain", "bash", "c", "cpp", "csharp", "css", "dockerfile", "go", "html",
            "java", "javascript", "json", "kotlin", "lua", "makefile", "markdown", "php",
            "python", "ruby", "rust", "sql", "swift", "toml", "typescript", "xml", "yaml",
        ]
        #expect(LanguageDetector.languages == LanguageDetector.languages.sorted())
        #expect(Set(LanguageDetector.languages).count == LanguageDetector.languages.count)
        #expect(Set(required).isSubset(of: LanguageDetector.languages))
    }

    @Test func everyScoringProfileIsAKnownLanguage() {
        for profile in LanguageDetector.profiles {
            #expect(LanguageDetector.languages.contains(profile.id), "\(profile.id)")
            if let base = profile.base {
                #expect(LanguageDetector.profiles.contains { $0.id == base }, "\(base)")
            }
        }
    }

    @Test func onlyTheFirstScanLimitBytesAreRead() {
        let code = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(1)\n}\n"
        #expect(LanguageDetector.detect(code) == "go")
        let padding = String(repeating: "word ", count: LanguageDetector.scanLimit / 5 + 10)
        #expect(LanguageDetector.detect(padding + "\n" + code) == "plain")
    }

    @Test func jsonLongerThanTheScanLimitIsStillJSON() {
        let entries = (0..<400).map { #"{"id": \#($0), "name": "item \#($0)", "tags": ["a", "b"]}"# }
        let json = "[\n" + entries.joined(separator: ",\n") + "\n]"
        #expect(json.utf8.count > LanguageDetector.scanLimit)
        #expect(LanguageDetector.detect(json) == "json")
    }

    @Test func jsonNeedsValidStructure() {
        #expect(LanguageDetector.detect(#"{"a": [1, 2}"#) != "json")
        #expect(LanguageDetector.detect(#"{"a": "unterminated}"#) != "json")
        #expect(LanguageDetector.detect("{ name: 1 }") != "json")
        #expect(LanguageDetector.detect("[a]\nb = [1]") != "json")
        #expect(LanguageDetector.detect("[1, 2, 3]") == "json")
    }

    @Test(arguments: [
        ("swift", "swift"), ("Swift", "swift"), ("  PYTHON ", "python"),
        ("sh", "bash"), ("shell", "bash"), ("zsh", "bash"), ("bash", "bash"),
        ("js", "javascript"), ("JS", "javascript"), ("ts", "typescript"), ("py", "python"),
        ("md", "markdown"), ("yml", "yaml"), ("c++", "cpp"), ("C++", "cpp"),
        ("cs", "csharp"), ("c#", "csharp"), ("C#", "csharp"),
        ("text", "plain"), ("txt", "plain"), ("plaintext", "plain"), ("plain", "plain"),
        ("rs", "rust"), ("golang", "go"), ("kt", "kotlin"), ("rb", "ruby"),
        ("docker", "dockerfile"), ("make", "makefile"), ("Dockerfile", "dockerfile"),
    ])
    func canonicalMapsAliases(_ input: String, _ expected: String) {
        #expect(LanguageDetector.canonical(input) == expected)
    }

    @Test(arguments: ["", "cobol", "c+", "javascript2", "pyth on"])
    func canonicalRejectsUnknownNames(_ input: String) {
        #expect(LanguageDetector.canonical(input) == nil)
    }

    @Test func everyLanguageIsItsOwnCanonicalName() {
        for id in LanguageDetector.languages {
            #expect(LanguageDetector.canonical(id) == id)
        }
    }

    @Test(arguments: [
        ("notes.md", "markdown"), ("x.rb", "ruby"), ("script.PY", "python"), ("a.yml", "yaml"), ("lib.rs", "rust"),
        ("main.go", "go"), ("x.hpp", "cpp"), ("Makefile", "makefile"), ("Dockerfile", "dockerfile"),
        ("notes.txt", "plain"), ("page.htm", "html"),
    ])
    func fileNamesImplyALanguage(_ name: String, _ language: String) {
        #expect(LanguageDetector.language(forFileName: name) == language)
    }

    @Test(arguments: ["README", ".bashrc", "archive.tar.zst", "go", "notes."])
    func fileNamesThatSayNothing(_ name: String) {
        #expect(LanguageDetector.language(forFileName: name) == nil)
    }

    @Test func everyFileNameMapsToAKnownLanguage() {
        for language in Array(LanguageDetector.extensions.values) + Array(LanguageDetector.fileNames.values) {
            #expect(LanguageDetector.languages.contains(language), "\(language)")
        }
    }
}

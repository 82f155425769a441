import Testing

@testable import ItsypadModel
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A fenced block of the README, with the `<!-- readme-test: NAME; WHY -->` marker on the line before it.
struct ReadmeBlock {
    /// nil when the block has no marker.
    let name: String?
    /// What the marker says about running it, for blocks that need a stand-in.
    let why: String
    let line: Int
    let text: String

    var lines: [String] { text.split(separator: "\n").map(String.init) }

    static func parse(_ readme: String) -> [ReadmeBlock] {
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [ReadmeBlock] = []
        var index = 0
        while index < lines.count {
            guard lines[index].hasPrefix("```") else {
                index += 1
                continue
            }
            let opening = index
            let body = lines[(opening + 1)...].prefix { !$0.hasPrefix("```") }
            index = opening + body.count + 2
            let marker = opening > 0 ? ReadmeBlock.marker(lines[opening - 1]) : nil
            blocks.append(
                ReadmeBlock(
                    name: marker?.name, why: marker?.why ?? "", line: opening + 1, text: body.map { $0 + "\n" }.joined()))
        }
        return blocks
    }

    /// `<!-- readme-test: NAME -->` or `<!-- readme-test: NAME; WHY -->`.
    static func marker(_ line: String) -> (name: String, why: String)? {
        let prefix = "<!-- readme-test: ", suffix = " -->"
        guard line.hasPrefix(prefix), line.hasSuffix(suffix) else { return nil }
        let content = line.dropFirst(prefix.count).dropLast(suffix.count)
        let parts = content.split(separator: ";", maxSplits: 1)
        return (String(parts[0]), parts.count > 1 ? String(parts[1].drop { $0 == " " }) : "")
    }
}

/// A new user's account: an empty HOME, and, once the set-up block has run, the
/// installed itsypad on PATH. Temporary files go inside HOME.
final class ReadmeAccount {
    let home = TemporaryDirectory()
    /// Stand-ins for desktop tools, put first on PATH for the blocks that say so.
    var standIns: String { home.path + "/.stand-ins" }

    var environment: [String: String] {
        [
            "HOME": home.path, "PATH": home.path + "/.local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "dumb",
            "TMPDIR": home.path,
        ]
    }

    /// Runs `script` as pasted into `shell`, stopping at the first failing command.
    func run(
        _ script: String, shell: String = "/bin/bash", in directory: String? = nil, stdin: String? = nil, path: String? = nil
    ) throws -> RunResult {
        var environment = environment
        if let path { environment["PATH"] = path + ":" + environment["PATH"]! }
        let options = shell.hasSuffix("zsh") ? ["-f", "-e"] : shell.hasSuffix("bash") ? ["--norc", "--noprofile", "-e"] : ["-e"]
        return try Process.run(
            shell, options + ["-c", "cd '\(directory ?? home.path)'\n" + script], stdin: stdin.map { Array($0.utf8) },
            environment: environment, timeout: 600)
    }

    func writeStandIn(_ name: String, _ script: String) throws {
        try FileSystem.makeDirectory(standIns)
        try FileSystem.writeAtomically(standIns + "/" + name, Array(("#!/bin/sh\n" + script).utf8), mode: 0o755)
    }

    func read(_ relativePath: String) -> String? {
        home.read(relativePath)
    }
}

/// The README as a new user follows it: every fenced block, in order, on a fresh HOME.
@Suite struct ReadmeTests {
    static let readme: String = {
        (try? FileSystem.read(GeneratedFiles.root + "/README.md")).map { String(decoding: $0!, as: UTF8.self) } ?? ""
    }()

    static let blocks = ReadmeBlock.parse(readme)

    /// The text of the block marked NAME.
    static func block(_ name: String) -> String? { blocks.first { $0.name == name }?.text }

    @Test func everyBlockHasAMarker() {
        #expect(ReadmeTests.blocks.count >= 10, "the README's blocks were not found")
        for block in ReadmeTests.blocks where block.name == nil {
            Issue.record("the block at README.md line \(block.line) has no <!-- readme-test: NAME --> marker on the line before it")
        }
        let names = ReadmeTests.blocks.compactMap(\.name)
        #expect(Set(names).count == names.count, "marker names repeat: \(names)")
    }

    /// Each block as a new user pastes it, in the README's order, sharing one
    /// account; a block whose marker names no step here fails.
    @Test(.needs(["zsh", "python3", "git", "rclone"] + DesktopSession.Kind.wayland.tools))
    func everyBlockRunsInOrderOnAFreshHome() throws {
        let account = ReadmeAccount()
        let other = ReadmeAccount()
        var steps = ReadmeSteps(account: account, otherMachine: other)
        for block in ReadmeTests.blocks {
            guard let name = block.name else { continue }
            guard try steps.run(name, block) else {
                Issue.record("README.md line \(block.line): no step runs the block marked '\(name)'")
                continue
            }
        }
    }

    /// Only the standard library and Glibc: no source imports Foundation, and
    /// the built binary links no Foundation library.
    @Test func dependencyLineIsTrue() throws {
        let words = ReadmeTests.readme.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("only the Swift standard library and Glibc (no Foundation)."))
        #expect(words.contains("It runs on **Linux**, and builds with **Swift 6.0 or later**."))
        let sources = GeneratedFiles.root + "/Sources"
        let imports = try Process.run(
            "/bin/grep", ["-rlE", "^[[:space:]]*(@_implementationOnly )?import (Foundation|FoundationEssentials)", sources])
        #expect(imports.status == 1 && imports.stdout.isEmpty, "Foundation imported by \(imports.stdout)")
        let libraries = try Process.run("/usr/bin/ldd", [Process.itsypad])
        #expect(libraries.status == 0 && libraries.stdout.contains("libc.so"), "\(libraries.stderr)")
        #expect(!libraries.stdout.contains("Foundation"), "\(libraries.stdout)")
        let package = String(decoding: try #require(try FileSystem.read(GeneratedFiles.root + "/Package.swift")), as: UTF8.self)
        #expect(package.hasPrefix("// swift-tools-version:6.0\n"), "the README says Swift 6.0 or later")
    }

    @Test func interruptedImportCommitsAllOrNothing() throws {
        let device = Device()
        let clips = (0..<20000).map {
            "{\"id\":\"\(Identifier.make())\",\"text\":\"bulk \($0)\",\"timestamp\":\"2026-01-01T00:00:00.000Z\"}"
        }
        device.directory.write("export.json", "{\"format\":\"itsypad-export\",\"version\":1,\"clips\":[\(clips.joined(separator: ","))]}")
        _ = device.output("settings", "set", "clipboard.maxEntries", "30000")
        var environment = Process.baseEnvironment
        environment["PATH"] = FileSystem.directoryName(Process.itsypad) + ":" + environment["PATH"]!
        // Job control gives the background import a default SIGINT, as a foreground job at a terminal has.
        let result = try Process.run(
            "/bin/bash",
            [
                "-c",
                """
                set -m
                ITSYPAD_DATA_DIR='\(device.dataDir)' itsypad import '\(device.directory.file("export.json"))' &
                pid=$!
                sleep 0.03
                kill -INT $pid
                wait $pid && echo "status 0" || echo "status $?"
                """,
            ], environment: environment)
        let count = device.output("clip", "ls").split(separator: "\n").count
        #expect(result.stdout.contains("status 130") || result.stdout.contains("status 0"), "\(result.stdout)")
        #expect(count == 0 || count == 20000, "a partial import: \(count) entries")
    }
}

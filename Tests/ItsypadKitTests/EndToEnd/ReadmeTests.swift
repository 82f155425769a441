import Testing

@testable import ItsypadModel
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The README's walk-through and recipes, run as a user would paste them.
@Suite struct ReadmeTests {
    static let readme: String = {
        var path = #filePath
        for _ in 0..<4 { path = FileSystem.directoryName(path) }
        return (try? FileSystem.read(path + "/README.md")).map { String(decoding: $0!, as: UTF8.self) } ?? ""
    }()

    static func hasTool(_ name: String) -> Bool {
        ["/usr/bin/", "/bin/", "/usr/local/bin/"].contains { FileSystem.exists($0 + name) }
    }

    /// The shell block after `<!-- readme-test: NAME -->`.
    static func block(_ name: String) -> String? {
        guard let marker = readme.firstRange(of: "<!-- readme-test: \(name) -->\n```sh\n") else { return nil }
        let rest = readme[marker.upperBound...]
        return rest.firstRange(of: "```").map { String(rest[..<$0.lowerBound]) }
    }

    /// A shell with the built itsypad first on PATH.
    func bash(_ script: String) throws -> RunResult {
        var environment = Process.baseEnvironment
        environment["PATH"] = FileSystem.directoryName(Process.itsypad) + ":" + (environment["PATH"] ?? "")
        return try Process.run("/bin/bash", ["-e", "-c", script], environment: environment)
    }

    @Test func twoDeviceWalkthroughRuns() throws {
        let script = try #require(ReadmeTests.block("walkthrough"))
        let result = try bash(script + "\nrm -rf \"$WORK\"")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("WRITE THE REPORT\ncall mum\nbook the 9:00 train"))
        #expect(result.stdout.contains("todo (conflict laptop "))
        #expect(result.stdout.contains("pending:    0 tabs, 0 clips, 0 settings"))
    }

    @Test(.enabled(if: ReadmeTests.hasTool("git"), "git is not installed"))
    func gitRemoteWalkthroughRuns() throws {
        let script = try #require(ReadmeTests.block("git-walkthrough"))
        let result = try bash(script + "\nrm -rf \"$WORK\"")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("copied on the laptop"))
        #expect(result.stdout.contains("buy milk"))
        #expect(result.stdout.contains("remote:     fetched 20"))
        // Encrypted, so commits name devices by id: their names are setting values.
        #expect(result.stdout.contains("itsypad sync on ") && !result.stdout.contains("on desktop"), "\(result.stdout)")
        #expect(result.stdout.contains("itsypad sync enable on ") && !result.stdout.contains("on laptop"), "\(result.stdout)")
    }

    /// The recipe as the README prints it, with fzf's pick made by `--filter`
    /// (and Esc, which prints nothing, by a filter that matches nothing).
    @Test(.enabled(if: ReadmeTests.hasTool("fzf"), "fzf is not installed"))
    func fzfPickerRecipe() throws {
        let recipe = "itsypad clip ls | fzf | cut -f1 | itsypad clip show"
        #expect(ReadmeTests.readme.contains(recipe + " | wl-copy"))
        let device = Device()
        let script = """
            export ITSYPAD_DATA_DIR='\(device.dataDir)'
            itsypad clip add 'the one I want' >/dev/null
            itsypad clip add 'something else' >/dev/null
            \(recipe.replacing("fzf", with: "fzf --filter 'one I want'"))
            """
        let picked = try bash(script)
        #expect(picked.status == 0, "\(picked.stderr)")
        #expect(picked.stdout == "the one I want")
        let escaped = try bash(script.replacing("'one I want'", with: "'nothing like it'"))
        #expect(escaped.status == 0)
        #expect(escaped.stdout.isEmpty && escaped.stderr.isEmpty, "\(escaped.stdout)\(escaped.stderr)")
    }

    /// Only the standard library and Glibc: no source imports Foundation, and
    /// the built binary links no Foundation library.
    @Test func dependencyLineIsTrue() throws {
        #expect(ReadmeTests.readme.contains("No package dependencies: only the Swift standard library and Glibc (no Foundation)."))
        let sources = GeneratedFiles.root + "/Sources"
        let imports = try Process.run(
            "/bin/grep", ["-rlE", "^[[:space:]]*(@_implementationOnly )?import (Foundation|FoundationEssentials)", sources])
        #expect(imports.status == 1 && imports.stdout.isEmpty, "Foundation imported by \(imports.stdout)")
        let libraries = try Process.run("/usr/bin/ldd", [Process.itsypad])
        #expect(libraries.status == 0 && libraries.stdout.contains("libc.so"), "\(libraries.stderr)")
        #expect(!libraries.stdout.contains("Foundation"), "\(libraries.stdout)")
    }

    @Test func cronLinesAreQuietOnSuccess() throws {
        #expect(ReadmeTests.readme.contains("*/5 * * * * itsypad sync"))
        let device = Device()
        let backend = TemporaryDirectory()
        _ = device.output("sync", "enable", backend.path + "/b")
        _ = device.output("clip", "add", "x")
        for line in ["itsypad sync", "itsypad clip prune"] {
            let result = try bash("export ITSYPAD_DATA_DIR='\(device.dataDir)'; \(line) </dev/null")
            #expect(result.status == 0)
            #expect(result.stdout.isEmpty && result.stderr.isEmpty, "cron would mail: \(result.stdout)\(result.stderr)")
        }
    }

    @Test func completionInstallLinesProduceLoadableScripts() throws {
        let directory = TemporaryDirectory()
        let result = try bash(
            """
            itsypad completions bash > '\(directory.path)/itsypad'
            bash -n '\(directory.path)/itsypad'
            itsypad completions zsh > '\(directory.path)/_itsypad'
            itsypad completions fish > '\(directory.path)/itsypad.fish'
            test -s '\(directory.path)/_itsypad' && test -s '\(directory.path)/itsypad.fish'
            """)
        #expect(result.status == 0, "\(result.stderr)")
    }

    @Test func interruptedImportCommitsAllOrNothing() throws {
        let device = Device()
        let clips = (0..<20000).map {
            "{\"id\":\"\(Identifier.make())\",\"text\":\"bulk \($0)\",\"timestamp\":\"2026-01-01T00:00:00.000Z\"}"
        }
        device.directory.write("export.json", "{\"format\":\"itsypad-export\",\"version\":1,\"clips\":[\(clips.joined(separator: ","))]}")
        _ = device.output("settings", "set", "clipboard.maxEntries", "30000")
        // Job control gives the background import a default SIGINT, as a foreground job at a terminal has.
        let result = try bash(
            """
            set -m
            ITSYPAD_DATA_DIR='\(device.dataDir)' itsypad import '\(device.directory.file("export.json"))' &
            pid=$!
            sleep 0.03
            kill -INT $pid
            wait $pid && echo "status 0" || echo "status $?"
            """)
        let count = device.output("clip", "ls").split(separator: "\n").count
        #expect(result.stdout.contains("status 130") || result.stdout.contains("status 0"), "\(result.stdout)")
        #expect(count == 0 || count == 20000, "a partial import: \(count) entries")
    }
}

import Testing

@testable import ItsypadCLI
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

extension Tag {
    /// Minutes rather than seconds: run only when asked for (see each test).
    @Tag static var slow: Self
}

/// The README's set-up command on a fresh account: HOME an empty directory,
/// PATH without the prefix. The command is `BUILD && INSTALL`. Its install half
/// runs verbatim here, in a checkout whose `.build/release/itsypad` is the
/// binary this `swift test` built: running the build half inside `swift test`
/// would wait on the lock SwiftPM holds on `.build` and take minutes, and it
/// builds the same sources. The build half is checked word for word, and
/// `setupCommandRunsVerbatimFromAFreshCopy` runs the whole line when asked.
@Suite struct SetupTests {
    static let build = "swift build -c release --static-swift-stdlib -Xlinker -s"
    static let install = ".build/release/itsypad install"

    static var setupLines: [String] {
        (ReadmeTests.block("setup") ?? "").split(separator: "\n").map(String.init)
    }

    @Test func setupIsABuildThenTheBuiltBinarysInstallThenTheTests() throws {
        #expect(SetupTests.setupLines == [SetupTests.build + " && " + SetupTests.install, "swift test"])
        let ci = String(decoding: try #require(try FileSystem.read(GeneratedFiles.root + "/.ci/run")), as: UTF8.self)
        #expect(ci.hasSuffix("\nswift test\n"), "CI must run the README's test command")
    }

    /// A fresh HOME and a PATH without the prefix, as on a new account.
    static func freshAccount(_ home: TemporaryDirectory, path: String = "/usr/local/bin:/usr/bin:/bin") -> [String: String] {
        ["HOME": home.path, "PATH": path, "LANG": "C.UTF-8", "TERM": "dumb"]
    }

    /// A checkout whose release build is the binary under test.
    static func checkout() throws -> TemporaryDirectory {
        let checkout = TemporaryDirectory()
        try FileSystem.makeDirectory(checkout.path + "/.build/release")
        let copied = try Process.run("/bin/cp", [Process.itsypad, checkout.path + "/.build/release/itsypad"])
        try #require(copied.status == 0, "\(copied.stderr)")
        return checkout
    }

    @Test func setupInstallsEverythingIntoAFreshHome() throws {
        let line = try #require(SetupTests.setupLines.first)
        let installHalf = String(try #require(line.split(separator: " && ", maxSplits: 1).last))
        let home = TemporaryDirectory()
        let checkout = try SetupTests.checkout()
        let account = SetupTests.freshAccount(home)
        let result = try Process.run("/bin/bash", ["-e", "-c", "cd '\(checkout.path)' && " + installHalf], environment: account)
        #expect(result.status == 0, "\(result.stderr)")
        let prefix = home.path + "/.local"
        #expect(result.stdout.isEmpty)
        #expect(
            result.stderr
                == "warning: \(prefix)/bin is not on your PATH; add it, e.g. in ~/.profile: export PATH=\"$HOME/.local/bin:$PATH\"\n")

        for file in Installation(prefix: prefix).paths {
            var info = stat()
            #expect(stat(file, &info) == 0, "\(file) was not installed")
            #expect(info.st_mode & 0o7777 == (file.hasSuffix("/bin/itsypad") ? 0o755 : 0o644), "\(file)")
        }
        let version = try Process.run(prefix + "/bin/itsypad", ["--version"], environment: account)
        #expect(version.stdout == Itsypad.version + "\n")
        #expect(try FileSystem.read(prefix + "/bin/itsypad") == FileSystem.read(Process.itsypad))
    }

    @Test(.needs(["man"]))
    func manPagesAreFoundAfterSetup() throws {
        let (home, prefix) = try installedAccount()
        var account = SetupTests.freshAccount(home)
        account["MANWIDTH"] = "80"
        let overview = try Process.run("man", ["-M", prefix + "/share/man", "itsypad"], environment: account)
        #expect(overview.status == 0, "\(overview.stderr)")
        // man justifies the text: compare words.
        func words(_ text: String) -> String { text.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
        #expect(words(overview.stdout).contains("itsypad - a scratchpad and clipboard history"), "\(overview.stdout.prefix(300))")
        let backend = try Process.run("man", ["-M", prefix + "/share/man", "5", "itsypad-backend"], environment: account)
        #expect(words(backend.stdout).contains("itsypad-backend - the directory itsypad syncs through"), "\(backend.stderr)")
        // Once the bin directory is on PATH, plain `man itsypad` finds the pages next to it.
        let onPath = SetupTests.freshAccount(home, path: prefix + "/bin:/usr/bin:/bin")
        let found = try Process.run("man", ["-w", "itsypad"], environment: onPath)
        #expect(found.stdout == prefix + "/share/man/man1/itsypad.1\n", "\(found.stderr)")
    }

    @Test func bashCompletionLoadsAfterSetup() throws {
        let (home, prefix) = try installedAccount()
        let script = prefix + "/share/bash-completion/completions/itsypad"
        let complete = #"COMP_WORDS=(itsypad cl); COMP_CWORD=1; _itsypad; printf '%s\n' "${COMPREPLY[@]}""#
        let sourced = try Process.run(
            "bash", ["--norc", "--noprofile", "-c", "source '\(script)' && " + complete],
            environment: SetupTests.freshAccount(home))
        #expect(sourced.stdout == "clip\n", "\(sourced.stderr)")
        // bash-completion loads it on demand from ~/.local/share/bash-completion/completions.
        let loader = "/usr/share/bash-completion/bash_completion"
        if FileSystem.exists(loader) {
            let loaded = try Process.run(
                "bash", ["--norc", "--noprofile", "-c", "source \(loader); _completion_loader itsypad; " + complete],
                environment: SetupTests.freshAccount(home))
            #expect(loaded.stdout == "clip\n", "\(loaded.stderr)")
        }
    }

    /// zsh, with the README's fpath line.
    @Test(.needs(["zsh"]))
    func zshCompletionLoadsAfterSetup() throws {
        let (home, _) = try installedAccount()
        let fpath = try #require(ReadmeTests.block("zsh-fpath")).trimmingNewline
        let result = try Process.run(
            "zsh", ["-f", "-c", fpath + #"; autoload -Uz compinit && compinit -u -D && print -r -- $_comps[itsypad]"#],
            environment: SetupTests.freshAccount(home))
        #expect(result.stdout == "_itsypad\n", "\(result.stderr)")
    }

    /// fish reads ~/.local/share/fish/vendor_completions.d by itself, for a
    /// command it finds on PATH (as it is once the user follows install's advice).
    @Test(.needs(["fish"]))
    func fishCompletionLoadsAfterSetup() throws {
        let (home, prefix) = try installedAccount()
        let result = try Process.run(
            "fish", ["-c", "complete -C 'itsypad cl'"],
            environment: SetupTests.freshAccount(home, path: prefix + "/bin:/usr/bin:/bin"))
        #expect(result.stdout.hasPrefix("clip\t"), "\(result.stdout)\(result.stderr)")
    }

    @Test func uninstallRemovesExactlyWhatInstallWrote() throws {
        let (home, prefix) = try installedAccount()
        try FileSystem.writeAtomically(prefix + "/bin/other-tool", Array("#!/bin/sh\n".utf8))
        let result = try Process.run(
            "/bin/bash", ["-c", "itsypad uninstall"],
            environment: SetupTests.freshAccount(home, path: prefix + "/bin:/usr/bin:/bin"))
        #expect(result.status == 0, "\(result.stderr)")
        let left = try Process.run("/usr/bin/find", [prefix, "-type", "f"])
        #expect(left.stdout == prefix + "/bin/other-tool\n")
        #expect(FileSystem.isDirectory(prefix + "/share/man/man1"), "directories stay")
    }

    /// HOME with the install half of the set-up line done.
    func installedAccount() throws -> (TemporaryDirectory, String) {
        let home = TemporaryDirectory()
        let checkout = try SetupTests.checkout()
        let result = try Process.run(
            "/bin/bash", ["-c", "cd '\(checkout.path)' && " + SetupTests.install],
            environment: SetupTests.freshAccount(home))
        try #require(result.status == 0, "\(result.stderr)")
        return (home, home.path + "/.local")
    }

    /// The whole set-up line, build included, in a fresh copy of the sources:
    /// minutes of release build, so only with ITSYPAD_TEST_SETUP_BUILD=1.
    @Test(
        .tags(.slow),
        .enabled(if: getenv("ITSYPAD_TEST_SETUP_BUILD") != nil, "set ITSYPAD_TEST_SETUP_BUILD=1 to build a release in the test"))
    func setupCommandRunsVerbatimFromAFreshCopy() throws {
        let line = try #require(SetupTests.setupLines.first)
        let copy = TemporaryDirectory()
        // The package as a fresh clone has it (SwiftPM wants the test target's folder too), without .build.
        let copied = try Process.run(
            "/bin/cp", ["-R"] + ["Package.swift", "Sources", "Tests"].map { GeneratedFiles.root + "/" + $0 } + [copy.path])
        try #require(copied.status == 0, "\(copied.stderr)")
        let home = TemporaryDirectory()
        let toolchain = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        let result = try Process.run(
            "/bin/bash", ["-e", "-c", "cd '\(copy.path)' && " + line],
            environment: SetupTests.freshAccount(home, path: toolchain))
        #expect(result.status == 0, "\(result.stderr)")
        let binary = home.path + "/.local/bin/itsypad"
        #expect(try Process.run(binary, ["--version"]).stdout == Itsypad.version + "\n")
        // Stripped: no debug sections left.
        let bytes = try #require(try FileSystem.read(binary))
        #expect(!bytes.contains(Array(".debug_info".utf8)), "the installed binary still carries debug information")
    }
}

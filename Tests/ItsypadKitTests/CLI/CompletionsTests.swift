import Testing

@testable import ItsypadCLI
@testable import ItsypadModel
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The completion scripts: committed files match the generator, and each
/// script, loaded in its real shell, offers the right candidates.
@Suite struct CompletionsTests {
    @Test(arguments: Shell.allCases)
    func committedScriptIsTheGeneratedOne(_ shell: Shell) throws {
        let name = CommandTable.root.name
        try GeneratedFiles.check(
            "completions/" + shell.scriptName(for: name),
            CompletionScript.generate(for: shell, root: CommandTable.root))
    }

    @Test(.needs(["shellcheck"]))
    func bashScriptPassesShellcheck() throws {
        let scratch = TemporaryDirectory()
        scratch.write("itsypad.bash", CompletionScript.generate(for: .bash, root: CommandTable.root))
        let result = try Process.run("shellcheck", ["-s", "bash", scratch.file("itsypad.bash")])
        #expect(result.status == 0, "\(result.stdout)")
    }

    /// Command lines and what must be offered for the last (possibly empty) word.
    static let cases: [CompletionCase] = [
        CompletionCase("itsypad cl", exactly: ["clip"]),
        CompletionCase("itsypad clip ", exactly: ["add", "ls", "show", "copy", "watch", "rm", "pin", "unpin", "clear", "prune"]),
        CompletionCase("itsypad clip ls --", including: ["--limit", "--search", "--pinned", "--json", "--data-dir", "--quiet"]),
        // --version is taken only before a subcommand.
        CompletionCase("itsypad --v", exactly: ["--version"]),
        CompletionCase("itsypad clip ls --v", exactly: []),
        CompletionCase("itsypad tab new --language py", including: ["python"]),
        CompletionCase(
            "itsypad settings get clipboard.m", exactly: ["clipboard.maxBytes", "clipboard.maxEntries", "clipboard.maxSyncBytes"]),
        CompletionCase("itsypad clip prune --older-than 1", exactly: ["12h", "1d"]),
        CompletionCase("itsypad completions ", exactly: ["bash", "zsh", "fish"]),
        CompletionCase("itsypad tab rm ", exactly: []),
        // help takes command paths.
        CompletionCase(
            "itsypad help ",
            exactly: ["tab", "clip", "settings", "sync", "export", "import", "help", "completions", "install", "uninstall"]),
        CompletionCase("itsypad help cl", exactly: ["clip"]),
        CompletionCase("itsypad help tab ", exactly: ["new", "ls", "show", "edit", "rm"]),
        CompletionCase("itsypad help clip add ", exactly: []),
        // settings set offers values by the key's type.
        CompletionCase("itsypad settings set sync.enabled ", exactly: ["true", "false"]),
        CompletionCase("itsypad settings set clipboard.ignoreSecrets t", exactly: ["true"]),
        CompletionCase("itsypad settings set clipboard.retention 1", exactly: ["12h", "1d"]),
        CompletionCase("itsypad settings set clipboard.maxEntries ", exactly: []),
        // The hidden __complete command is not offered.
        CompletionCase("itsypad __", exactly: []),
    ]

    @Test(.needs(["bash"]), arguments: cases)
    func bash(_ example: CompletionCase) throws {
        try example.check(try ShellCompletion.bash(example.line))
    }

    @Test(.needs(["zsh"]), arguments: cases)
    func zsh(_ example: CompletionCase) throws {
        try example.check(try ShellCompletion.zsh(example.line))
    }

    @Test(.needs(["fish"]), arguments: cases)
    func fish(_ example: CompletionCase) throws {
        try example.check(try ShellCompletion.fish(example.line))
    }

    /// Ids come from the data directory named on the command line, through `__complete`.
    @Test(arguments: Shell.allCases)
    func dynamicIdsComeFromTheDataDirectoryTyped(_ shell: Shell) throws {
        try ExternalTool.require([shell.rawValue])
        let device = Device()
        var clips: [String] = []
        for text in ["first", "second: with a colon"] {
            let added = try device.run("clip", "add", text)
            try #require(added.status == 0, "\(added.stderr)")
            clips.append(Identifier.short(String(added.stdout.dropLast())))
        }
        let tab = try device.run("tab", "new", "--name", "notes", "hello")
        try #require(tab.status == 0, "\(tab.stderr)")

        let complete = { (line: String) in try ShellCompletion.run(shell, line) }
        #expect(try complete("itsypad --data-dir \(device.dataDir) clip show ").sorted() == clips.sorted())
        #expect(try complete("itsypad --data-dir=\(device.dataDir) clip rm \(clips[0]) ").sorted() == clips.sorted())
        // Tabs complete by short id and by name, names with spaces quoted as the shell reads them back.
        let spaced = try device.run("tab", "new", "--name", "two words", "y")
        try #require(spaced.status == 0, "\(spaced.stderr)")
        let tabIDs = [tab, spaced].map { Identifier.short(String($0.stdout.dropLast())) }
        let spacedName = shell == .bash ? #"two\ words"# : "two words"
        #expect(try complete("itsypad --data-dir \(device.dataDir) tab show ").sorted() == (tabIDs + ["notes", spacedName]).sorted())
        #expect(try complete("itsypad --data-dir \(device.dataDir) tab show tw") == [spacedName])
        if shell == .bash {
            // After a backslash or an opening quote the rest of the name completes.
            #expect(try complete(#"itsypad --data-dir \#(device.dataDir) tab show two\ w"#) == [#"two\ words"#])
            #expect(try complete("itsypad --data-dir \(device.dataDir) tab show 'two") == ["two words"])
        }
        // Without --data-dir the default directory (under a nonexistent HOME) has no clips.
        #expect(try complete("itsypad clip show ") == [])
    }

    @Test(arguments: Shell.allCases)
    func optionValuesCompleteFilesAndDirectories(_ shell: Shell) throws {
        try ExternalTool.require([shell.rawValue])
        let scratch = TemporaryDirectory()
        scratch.write("notes.txt", "x")
        _ = mkdir(scratch.file("subdir"), 0o755)
        let directories = try ShellCompletion.run(shell, "itsypad --data-dir \(scratch.path)/")
        #expect(directories.contains { $0.hasSuffix("subdir") || $0.hasSuffix("subdir/") })
        #expect(!directories.contains { $0.hasSuffix("notes.txt") })
        let files = try ShellCompletion.run(shell, "itsypad import \(scratch.path)/no")
        #expect(files.contains { $0.hasSuffix("notes.txt") })
    }
}

/// One command line and the candidates a shell must offer for it.
struct CompletionCase: Sendable, CustomTestStringConvertible {
    let line: String
    let expected: [String]
    /// Whether the candidates must be exactly `expected`, or only include them.
    let exact: Bool

    init(_ line: String, exactly expected: [String]) {
        self.line = line
        self.expected = expected
        exact = true
    }

    init(_ line: String, including expected: [String]) {
        self.line = line
        self.expected = expected
        exact = false
    }

    var testDescription: String { "'\(line)'" }

    func check(_ candidates: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        if exact {
            #expect(candidates.sorted() == expected.sorted(), "\(line)", sourceLocation: sourceLocation)
        } else {
            #expect(expected.allSatisfy(candidates.contains), "\(line): \(candidates)", sourceLocation: sourceLocation)
        }
    }
}

/// Runs a completion script in its shell and returns the candidates it offers
/// for a command line, completing its last word (empty after a final space).
/// The generated script is used, so that a stale committed file fails only
/// the comparison test; the built binary is on PATH for `__complete`.
enum ShellCompletion {
    static func run(_ shell: Shell, _ line: String) throws -> [String] {
        switch shell {
        case .bash: return try bash(line)
        case .zsh: return try zsh(line)
        case .fish: return try fish(line)
        }
    }

    /// Calls the completion function with COMP_WORDS as bash would set them.
    static func bash(_ line: String) throws -> [String] {
        let scratch = try script(.bash)
        // Words split at spaces, except escaped ones (`two\ words` is one word, as bash keeps it).
        var words = line.replacing(#"\ "#, with: "\u{0}").split(separator: " ", omittingEmptySubsequences: false)
            .map { String($0).replacing("\u{0}", with: #"\ "#) }
        // Bash splits "--option=value" at the "=" into three words.
        words = words.flatMap { word -> [String] in
            guard word.hasPrefix("--"), let equals = word.firstIndex(of: "=") else { return [word] }
            return [String(word[..<equals]), "=", String(word[word.index(after: equals)...])].filter { !$0.isEmpty }
        }
        let driver = #"""
            source "$1"; shift
            COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
            _itsypad
            printf '%s\n' "${COMPREPLY[@]}"
            """#
        let result = try Process.run(
            "bash", ["--norc", "--noprofile", "-c", driver, "bash", scratch.file("script")] + words,
            environment: environment(scratch))
        return try candidates(result, line)
    }

    /// Drives an interactive `zsh -f` on a pseudo-terminal (zpty), types the line
    /// and a TAB, and prints every match the completion system would add.
    static func zsh(_ line: String) throws -> [String] {
        let scratch = try script(.zsh)
        scratch.write(
            "setup.zsh",
            #"""
            PROMPT='' RPROMPT=''
            autoload -Uz compinit && compinit -u -D
            bindkey '^I' complete-word
            compadd() {
                # Calls that only fill arrays (-O, -A, -D) are the completion system's own plumbing.
                if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
                local -a matches
                builtin compadd -O matches "$@"
                (( $#matches )) && print -rl -- ${matches/#/COMPLETION:}
                # Add them too: _files decides whether to fall back to all files by what was added.
                builtin compadd "$@"
            }
            # One completion, then leave: the outer shell reads until this one exits.
            comppostfuncs=(exit)
            """#)
        let driver = #"""
            zmodload zsh/zpty || exit 2
            zpty z zsh -f -i
            zpty -w z "fpath=(${(q)1} \$fpath); source ${(q)1}/setup.zsh"
            zpty -w z "$2"$'\t'
            local line
            while zpty -r z line; do
                line=${line//[$'\r\n']/}
                [[ $line == *COMPLETION:* ]] && print -r -- ${line#*COMPLETION:}
            done
            exit 0
            """#
        let result = try Process.run(
            "timeout", ["20", "zsh", "-f", "-c", driver, "zsh", scratch.path, line],
            environment: environment(scratch))
        return try candidates(result, line)
    }

    /// `complete -C` prints "candidate<TAB>description" lines.
    static func fish(_ line: String) throws -> [String] {
        let scratch = try script(.fish)
        let result = try Process.run(
            "fish", ["--no-config", "-c", "source $argv[1]; complete -C $argv[2]", scratch.file("script"), line],
            environment: environment(scratch))
        return try candidates(result, line).map { String($0.prefix { $0 != "\t" }) }
    }

    /// A directory holding the generated script (as `script`, and as `_itsypad` for zsh's fpath).
    private static func script(_ shell: Shell) throws -> TemporaryDirectory {
        let scratch = TemporaryDirectory()
        let text = CompletionScript.generate(for: shell, root: CommandTable.root)
        scratch.write(shell == .zsh ? shell.scriptName(for: CommandTable.root.name) : "script", text)
        return scratch
    }

    private static func environment(_ scratch: TemporaryDirectory) -> [String: String] {
        var environment = Process.baseEnvironment
        environment["PATH"] = FileSystem.directoryName(FileSystem.absolute(Process.itsypad)) + ":" + environment["PATH"]!
        environment["HOME"] = scratch.path + "/home"
        environment["TERM"] = "dumb"
        return environment
    }

    private static func candidates(_ result: RunResult, _ line: String) throws -> [String] {
        try #require(result.status == 0, "completing '\(line)' failed (\(result.status)): \(result.stderr)")
        #expect(result.stderr.isEmpty, "completing '\(line)': \(result.stderr)")
        var seen: Set<String> = []
        // zsh's file completion may add the same match under two tags.
        return result.stdout.split(separator: "\n").map(String.init).filter { seen.insert($0).inserted }
    }
}

/// Files committed to the repository that are generated by code: each test compares one, and
/// ITSYPAD_REGENERATE=1 makes it write the file instead (see `RecordingMode`).
enum GeneratedFiles {
    /// The repository's root, from this file's path (Tests/ItsypadKitTests/CLI/…).
    static let root: String = {
        var path = #filePath
        for _ in 0..<4 { path = FileSystem.directoryName(path) }
        return path
    }()

    static var regenerating: Bool { RecordingMode.regenerate.isOn }

    /// Checks the committed file at `relativePath` against `expected` (see `RecordingMode.check`).
    static func check(_ relativePath: String, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try RecordingMode.regenerate.check(
            root + "/" + relativePath, Array(expected.utf8), name: relativePath, sourceLocation: sourceLocation)
    }
}

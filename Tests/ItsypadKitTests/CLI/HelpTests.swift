import Testing

@testable import ItsypadCLI
@testable import ItsypadSupport

@Suite struct HelpTests {
    let device = Device()

    @Test(arguments: [[], ["-h"], ["--help"], ["help"]])
    func topLevelHelp(_ arguments: [String]) {
        let (status, out, err) = device.inProcess(arguments)
        #expect(status == 0)
        #expect(err.isEmpty)
        #expect(out.hasPrefix("OVERVIEW: "))
        for section in ["USAGE: itsypad", "OPTIONS:", "SUBCOMMANDS:", "See 'itsypad help <subcommand>' for detailed help."] {
            #expect(out.contains(section))
        }
    }

    @Test(arguments: [["help", "clip", "add"], ["clip", "add", "--help"], ["clip", "add", "-h"]])
    func commandHelp(_ arguments: [String]) {
        let (status, out, _) = device.inProcess(arguments)
        #expect(status == 0)
        #expect(out.contains("USAGE: itsypad clip add [--local] [--type <mime>] [<text> ...]"))
        #expect(out.contains("  --local                 Never sync this entry."))
        #expect(out.contains("EXAMPLES:"))
    }

    @Test func wrapsToColumns() {
        let context = Context.memory(environment: ["COLUMNS": "50"])
        _ = Itsypad.run(["help", "clip", "add"], context: context)
        #expect(context.standardOutput.text.split(separator: "\n").allSatisfy { $0.count <= 50 })
    }

    @Test(arguments: [
        (["clpi"], "Unknown command 'clpi'. Did you mean 'clip'?", "Usage: itsypad [--data-dir <dir>] [--quiet] [--version] <subcommand>"),
        (["clip", "ls", "--jsn"], "Unknown option '--jsn'. Did you mean '--json'?", "Usage: itsypad clip ls"),
        (["clip", "pin"], "Missing expected argument '<id>'.", "See 'itsypad clip pin --help' for more information."),
        (["tab", "new", "--name"], "Missing value for '--name <name>'.", "Usage: itsypad tab new"),
        (["settings", "get", "a", "b"], "Unexpected argument 'b'.", "Usage: itsypad settings get <key>"),
    ])
    func usageErrors(_ arguments: [String], _ message: String, _ usage: String) {
        let (status, out, err) = device.inProcess(arguments)
        #expect(status == 64)
        #expect(out.isEmpty)
        #expect(err.hasPrefix("Error: " + message), "\(err)")
        #expect(err.contains(usage), "\(err)")
    }

    @Test func completionCallbackOffersIdsAndNames() {
        let id = device.inProcess(["tab", "new", "--name", "notes", "x"]).1.trimmingNewline
        _ = device.inProcess(["tab", "new", "--name", "two words", "y"])
        _ = device.inProcess(["tab", "new", "--name", "tab\tinside", "z"])
        let lines = device.inProcess(["__complete", "tabs"]).1.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
        #expect(lines.contains(String(id.prefix(8))))
        #expect(lines.contains("notes"))
        #expect(lines.contains("two words"))
        // A name with a tab or newline would break the one-candidate-a-line format.
        #expect(!lines.contains("tab"))
        #expect(device.inProcess(["__complete", "setting-keys"]).1.contains("clipboard.maxEntries\t"))
    }

    @Test func helpIsListedOnce() {
        let out = device.inProcess(["--help"]).1
        let rows = out.split(separator: "\n").filter { $0.hasPrefix("  help ") }
        #expect(rows.count == 1, "\(rows)")
    }

    /// The hint names a command `help` accepts, and following it works.
    @Test(arguments: [
        (["tab", "--help"], "See 'itsypad help tab <subcommand>' for detailed help."),
        (["sync", "--help"], "See 'itsypad help sync <subcommand>' for detailed help."),
        (["--help"], "See 'itsypad help <subcommand>' for detailed help."),
    ])
    func subcommandHintNamesTheWholePath(_ arguments: [String], _ hint: String) {
        let out = device.inProcess(arguments).1
        #expect(out.contains(hint), "\(out)")
    }

    @Test func followingTheTabHintShowsTheSubcommand() {
        let (status, out, err) = device.inProcess(["help", "tab", "new"])
        #expect(status == 0, "\(err)")
        #expect(out.contains("USAGE: itsypad tab new"))
    }

    @Test func version() {
        #expect(device.inProcess(["--version"]).1 == Itsypad.version + "\n")
        // Before a subcommand it wins, as in git.
        #expect(device.inProcess(["--version", "clip", "ls"]).1 == Itsypad.version + "\n")
    }

    /// After a command --version is an unknown option (git: "unknown option `version'"), never silently ignored.
    @Test(arguments: [["clip", "ls", "--version"], ["tab", "--version"], ["sync", "status", "--version"]])
    func versionAfterACommandIsAUsageError(_ arguments: [String]) {
        let (status, out, err) = device.inProcess(arguments)
        #expect(status == 64)
        #expect(out.isEmpty)
        #expect(err.hasPrefix("Error: Unknown option '--version'."), "\(err)")
    }

    /// Every crontab line among the examples, as cron runs it: sh with HOME set
    /// and PATH=/usr/bin:/bin, itsypad installed in ~/.local/bin and syncing.
    @Test func crontabExamplesRunUnderCron() throws {
        func examples(_ command: CommandSpec) -> [String] {
            command.examples.map(\.command) + command.subcommands.flatMap(examples)
        }
        let crontab = examples(CommandTable.root).filter { $0.first.map { $0.isNumber || $0 == "*" } ?? false }
        #expect(crontab.count >= 2)
        let home = TemporaryDirectory()
        try FileSystem.makeDirectory(home.path + "/.local/bin")
        let copied = try Process.run("/bin/cp", [Process.itsypad, home.path + "/.local/bin/itsypad"])
        try #require(copied.status == 0)
        let cron = ["HOME=" + home.path, "PATH=/usr/bin:/bin"]
        let enabled = try Process.run(
            "/usr/bin/env", ["-i"] + cron + [home.path + "/.local/bin/itsypad", "sync", "enable", home.path + "/backend"])
        try #require(enabled.status == 0, "\(enabled.stderr)")
        for line in crontab {
            let command = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true).last.map(String.init) ?? ""
            let result = try Process.run("/usr/bin/env", ["-i"] + cron + ["/bin/sh", "-c", command])
            #expect(result.status == 0, "'\(line)' under cron: \(result.stderr)")
            #expect(result.stdout.isEmpty && result.stderr.isEmpty, "cron would mail: \(result.stdout)\(result.stderr)")
        }
    }
}

import Testing

@testable import ItsypadCLI
@testable import ItsypadSupport

/// The command table is the one place options are declared: the names actions
/// read are the table's names, and each command reads only what its entry lists.
@Suite struct CommandTableTests {
    /// Every command in the table, visible or hidden, by its path ("clip prune").
    static let commands: [(path: String, spec: CommandSpec)] = {
        func walk(_ command: CommandSpec, _ names: [String]) -> [(path: String, spec: CommandSpec)] {
            [(names.joined(separator: " "), command)] + command.subcommands.flatMap { walk($0, names + [$0.name]) }
        }
        return walk(CommandTable.root, [])
    }()

    static var commandsWithActions: [String] { commands.filter { $0.spec.action != nil }.map(\.path) }

    @Test func optionNamesAreTheTablesNames() {
        let inTable = Set(Self.commands.flatMap { $0.spec.options.map(\.long) })
        #expect(Set(OptionName.allCases.map(\.rawValue)) == inTable)
    }

    /// Command lines that take each action down its paths that read options, in a
    /// data directory holding the tab "notes" and one clip ($CLIP), with the
    /// exit status each should end with. `$DIR` is a scratch directory.
    static let samples: [String: [(arguments: [String], status: Int32)]] = [
        "tab new": [
            (["tab", "new", "--name", "n", "--language", "swift", "let x = 1"], 0),
            (["tab", "new", "--file", "$DIR/notes.md", "--create"], 0),
        ],
        "tab ls": [(["tab", "ls", "--json"], 0)],
        "tab show": [(["tab", "show", "--json", "notes"], 0)],
        "tab edit": [
            (["tab", "edit", "notes", "--name", "renamed", "--language", "go", "new text"], 0),
            (["tab", "edit", "notes", "--auto-language"], 0),
        ],
        "tab rm": [(["tab", "rm", "notes"], 0)],
        "clip add": [(["clip", "add", "--local", "hello"], 0)],
        "clip ls": [(["clip", "ls", "-n", "5", "--search", "cop", "--pinned"], 0), (["clip", "ls", "--json"], 0)],
        "clip show": [(["clip", "show", "$CLIP"], 0)],
        // No desktop in the sample's environment: both fail, having read their options.
        "clip copy": [(["clip", "copy", "--primary", "$CLIP"], 1)],
        "clip watch": [(["clip", "watch", "--primary"], 1)],
        "clip rm": [(["clip", "rm", "$CLIP"], 0)],
        "clip pin": [(["clip", "pin", "$CLIP"], 0)],
        "clip unpin": [(["clip", "unpin", "$CLIP"], 0)],
        "clip clear": [(["clip", "clear", "--all"], 0)],
        "clip prune": [(["clip", "prune", "--older-than", "7d", "--keep", "5"], 0)],
        "settings": [(["settings"], 0)],
        "settings list": [(["settings", "list", "--json"], 0)],
        "settings get": [(["settings", "get", "editor"], 0), (["settings", "get", "clipboard.retention"], 0)],
        "settings set": [(["settings", "set", "clipboard.retention", "7d"], 0)],
        "settings unset": [(["settings", "unset", "clipboard.retention"], 0)],
        "sync": [(["sync"], 1)],
        "sync enable": [
            (["sync", "enable", "$DIR/backend"], 0), (["sync", "enable", "$DIR/encrypted", "--encrypt"], 0),
            (["sync", "enable", "$DIR/plain", "--no-encrypt"], 0),
        ],
        "sync key show": [(["sync", "key", "show"], 1)],
        "sync key rotate": [(["sync", "key", "rotate"], 1)],
        "sync disable": [(["sync", "disable"], 0)],
        "sync push": [(["sync", "push"], 1)],
        "sync pull": [(["sync", "pull"], 1)],
        "sync status": [(["sync", "status", "--json"], 0)],
        "sync log": [(["sync", "log", "-n", "2", "--json"], 0)],
        "sync compact": [(["sync", "compact"], 1)],
        // Sync is not enabled, so watch reads its options and stops at once.
        "sync watch": [(["sync", "watch", "--interval", "5"], 1)],
        "export": [(["export"], 0), (["export", "--include-sync-key"], 1), (["export", "--device-settings"], 0)],
        "import": [
            (["import", "$DIR/export.json"], 0), (["import", "--kvs", "$DIR/kvs.json"], 0),
            (["import", "--from", "clipman", "$DIR/clipman.json"], 0),
        ],
        "help": [(["help", "clip", "add"], 0)],
        "completions": [(["completions", "bash"], 0)],
        // No --prefix, $PREFIX or $HOME: install reads --prefix and stops before copying anything.
        "install": [(["install"], 1)],
        "uninstall": [(["uninstall", "--prefix", "$DIR/prefix"], 0)],
        "__complete": [(["__complete", "tabs"], 0)],
    ]

    @Test(arguments: commandsWithActions)
    func everyOptionReadIsInTheTableEntry(_ path: String) throws {
        let samples = try #require(Self.samples[path], "no sample command line for '\(path)': add one above")
        for sample in samples {
            let device = Device()
            #expect(device.inProcess(["tab", "new", "--name", "notes", "hello"]).0 == 0)
            let clip = device.inProcess(["clip", "add", "copied"]).1.trimmingNewline
            device.directory.write("export.json", device.inProcess(["export"]).1)
            device.directory.write("kvs.json", #"{"tabs": []}"#)
            device.directory.write("clipman.json", #"["copied elsewhere"]"#)
            let arguments = sample.arguments.map {
                $0.replacing("$DIR", with: device.directory.path).replacing("$CLIP", with: clip)
            }

            let parsed = try Parser(root: CommandTable.root).parse(arguments)
            let context = Context.memory(environment: ["ITSYPAD_DATA_DIR": device.dataDir, "TMPDIR": device.directory.path])
            let invocation = Invocation(parsed: parsed, context: context)
            let action = try #require(parsed.command.action)
            let status: Int32
            do { status = try action(invocation) } catch {
                let failure = ItsypadError.wrapping(error)
                context.standardError.line(failure.message)
                status = failure.exitCode
            }
            invocation.close()
            #expect(status == sample.status, "\(arguments): \(context.standardError.text)")

            let declared = parsed.command.options + CommandTable.root.options.filter(\.isGlobal)
            for option in invocation.optionsRead {
                #expect(
                    declared.contains { $0.long == option.rawValue },
                    "'itsypad \(path)' reads --\(option.rawValue), which its entry in the command table lacks")
            }
        }
    }
}

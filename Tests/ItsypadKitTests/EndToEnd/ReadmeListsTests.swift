import Testing

@testable import ItsypadCLI
@testable import ItsypadModel
@testable import ItsypadSupport

/// The README's lists against what they describe: the JSON forms the binary
/// prints, the settings table, and the command table.
@Suite struct ReadmeListsTests {
    /// The lines of the README section headed `heading`, up to the next heading.
    static func section(_ heading: String) -> [String] {
        let lines = ReadmeTests.readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(of: heading) else { return [] }
        return Array(lines[(start + 1)...].prefix { !$0.hasPrefix("#") })
    }

    /// The words between backquotes, in order.
    static func quoted(_ text: some StringProtocol) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// "- `tab ls`, `tab show`: `id`, `name`" as (commands, fields).
    static var jsonLists: [(commands: [String], fields: [String])] {
        section("## JSON output").filter { $0.hasPrefix("- ") }.map { line in
            let parts = line.split(separator: ":", maxSplits: 1)
            return (quoted(parts[0]), parts.count > 1 ? quoted(parts[1]) : [])
        }
    }

    /// Every form, printed by the built binary for a data directory that has
    /// something of each kind, must have exactly the README's fields in order,
    /// and itsypad(1) must name each of them.
    @Test func jsonFieldListsAreTheFormsTheBinaryPrints() throws {
        let lists = ReadmeListsTests.jsonLists
        #expect(Set(lists.flatMap(\.commands)) == ["tab ls", "tab show", "clip ls", "settings list", "sync status", "sync log"])
        let device = Device()
        let backend = TemporaryDirectory()
        _ = device.output("tab", "new", "--name", "todo", "buy milk")
        _ = device.output("clip", "add", "hello")
        _ = device.output("sync", "enable", backend.path + "/backend")
        _ = device.output("sync")
        let manual = try ReadmeListsTests.jsonSectionOfItsypad1()
        for (commands, fields) in lists {
            for command in commands {
                var arguments = command.split(separator: " ").map(String.init) + ["--json"]
                if command == "tab show" { arguments.append("todo") }
                let result = try device.runArguments(arguments)
                try #require(result.status == 0, "\(command) --json: \(result.stderr)")
                var form = try JSONValue.parse(result.stdout)
                if case .array(let items) = form { form = try #require(items.first, "\(command) --json printed no element") }
                guard case .object(let members) = form else {
                    Issue.record("\(command) --json printed no object")
                    continue
                }
                #expect(
                    members.map(\.0) == fields, "README.md lists for \(command) --json: \(fields), the binary prints \(members.map(\.0))")
            }
            let paragraph = manual.first { $0.hasPrefix(commands[0] + " --json") } ?? ""
            let words = Set(paragraph.split { !$0.isLetter && !$0.isNumber }.map(String.init))
            for field in fields where !words.contains(field) {
                Issue.record("itsypad(1) does not describe \(field) of \(commands[0]) --json")
            }
        }
    }

    /// The JSON OUTPUT paragraphs of man/itsypad.1, as plain text.
    static func jsonSectionOfItsypad1() throws -> [String] {
        let page = String(decoding: try #require(try FileSystem.read(GeneratedFiles.root + "/man/itsypad.1")), as: UTF8.self)
        let section = page.split(separator: ".SH ").first { $0.hasPrefix("\"JSON OUTPUT\"") || $0.hasPrefix("JSON OUTPUT") } ?? ""
        // The section's first line is its heading.
        return section.drop { $0 != "\n" }.split(separator: ".PP").map {
            $0.replacing("\\-", with: "-").replacing("\\fB", with: "").replacing("\\fR", with: "")
        }
        .map { String($0.drop { $0 == "\n" }) }
    }

    /// `| `key` | type | scope | default |` against `Settings.all`: every
    /// setting in order, its type as `settings set` describes it, its scope, and
    /// its default (a value, or the help's words for one computed at run time).
    @Test func settingsTableIsTheSettingsDefinitions() throws {
        let rows = ReadmeTests.readme.split(separator: "\n").filter {
            $0.hasPrefix("| `") && ($0.contains(" | synced | ") || $0.contains(" | device | "))
        }
        .map { $0.split(separator: "|").map { $0.trimmingCharacters(in: " ") } }
        #expect(rows.map { $0[0] } == Settings.all.map { "`\($0.key)`" })
        for (row, definition) in zip(rows, Settings.all) {
            #expect(row[1] == definition.kind.summary, "README.md's type of \(definition.key)")
            #expect(row[2] == definition.scope.rawValue, "README.md's scope of \(definition.key)")
            let expected: String
            switch definition.defaultValue {
            case .list([]): expected = "none"
            case .some(let value): expected = "`\(value.description)`"
            case nil:
                expected =
                    definition.help.split(separator: "(default: ").dropFirst().first.map { String($0.prefix { $0 != ")" }) } ?? "none"
            }
            #expect(row[3] == expected, "README.md's default of \(definition.key)")
        }
    }

    /// "- `sync`: `enable`, `key show`" lists a command's subcommands; a line
    /// without a colon lists commands that have none.
    @Test func commandListIsTheCommandTable() {
        var listed: [String] = []
        for line in ReadmeListsTests.section("## Commands") where line.hasPrefix("- ") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, let group = ReadmeListsTests.quoted(parts[0]).first {
                listed += ReadmeListsTests.quoted(parts[1]).map { group + " " + $0 }
            } else {
                listed += ReadmeListsTests.quoted(line)
            }
        }
        func leaves(_ command: CommandSpec, _ path: String) -> [String] {
            command.visibleSubcommands.isEmpty
                ? [path] : command.visibleSubcommands.flatMap { leaves($0, path.isEmpty ? $0.name : path + " " + $0.name) }
        }
        let table = CommandTable.root.visibleSubcommands.flatMap { leaves($0, $0.name) }
        #expect(listed.sorted() == table.sorted(), "README.md's command list differs from the command table")
        #expect(Set(listed).count == listed.count, "README.md lists a command twice")
    }
}

extension Substring {
    func trimmingCharacters(in set: Character) -> String {
        String(drop { $0 == set }.reversed().drop { $0 == set }.reversed())
    }
}

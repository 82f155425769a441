import Testing

@testable import ItsypadCLI
@testable import ItsypadStore
@testable import ItsypadSupport

/// `import --from clipman`, in process: the one import path with clipman's file (the real
/// clipman and CopyQ are in `ClipboardPeerTests`).
@Suite struct HistoryImportTests {
    let device = Device()
    static let now: Milliseconds = 1_800_000_000_000

    /// Runs itsypad with HOME set, as a user's shell would.
    func run(
        _ arguments: [String], home: String? = nil, environment: [String: String] = [:], now: Milliseconds = now
    ) -> (
        Int32, String, String
    ) {
        var variables = ["ITSYPAD_DATA_DIR": device.dataDir, "TMPDIR": device.directory.path, "HOME": home ?? device.directory.path]
        for (key, value) in environment { variables[key] = value }
        let context = Context.memory(environment: variables, now: { now })
        let status = Itsypad.run(arguments, context: context)
        return (status, context.standardOutput.text, context.standardError.text)
    }

    func clipman(_ texts: [String]) -> String {
        let file = device.directory.file("clipman.json")
        device.directory.write("clipman.json", JSONValue.array(texts.map(JSONValue.string)).serialized())
        return file
    }

    /// The history, newest first: (text, timestamp, pinned, localOnly).
    func history() throws -> [(String, String, Bool, Bool)] {
        let listed = try JSONValue.parse(device.inProcess(["clip", "ls", "--json"]).1).arrayValue ?? []
        return listed.map {
            (
                $0["text"]?.stringValue ?? "", $0["timestamp"]?.stringValue ?? "", $0["pinned"]?.boolValue ?? false,
                $0["localOnly"]?.boolValue ?? false
            )
        }
    }

    func texts() throws -> [String] { try history().map(\.0) }

    @Test func theNewestStaysNewestDatedNowAndAMillisecondApart() throws {
        let (exit, _, err) = run(["import", "--from", "clipman", clipman(["oldest", "two\nlines", "newest"])])
        #expect(exit == 0, "\(err)")
        let imported = try history()
        #expect(imported.map(\.0) == ["newest", "two\nlines", "oldest"])
        #expect(imported.map(\.1) == [Self.now, Self.now - 1, Self.now - 2].map(Time.iso8601))
        #expect(imported.allSatisfy { !$0.2 && !$0.3 })
        let status = try JSONValue.parse(device.inProcess(["sync", "status", "--json"]).1)
        #expect(status["pending"]?["ClipboardEntry"]?.int64Value == 3, "all three are queued to sync")
    }

    @Test func aTextTheHistoryHoldsIsNotAddedAgainAndTheRestGoesBelowIt() throws {
        _ = device.inProcess(["clip", "add", "copied here too"], now: Self.now - 60_000)
        let file = clipman(["older", "copied here too", "newer", "newer"])
        let (status, _, err) = run(["import", "--from", "clipman", file])
        #expect(status == 0, "\(err)")
        #expect(try texts() == ["newer", "copied here too", "older"])
        let times = try history().map(\.1)
        #expect(times == [Self.now, Self.now - 60_000, Self.now - 60_001].map(Time.iso8601))
        // Importing the same file again adds nothing.
        let before = try history()
        #expect(run(["import", "--from", "clipman", file], now: Self.now + 5000).0 == 0)
        #expect(try history().map(\.0) == before.map(\.0) && history().map(\.1) == before.map(\.1))
    }

    @Test func theCapKeepsTheNewestAndAnotherImportBringsTheRestInOrder() throws {
        #expect(device.inProcess(["settings", "set", "clipboard.maxEntries", "3"]).0 == 0)
        let file = clipman((1...5).map { "clip \($0)" })
        let (status, _, err) = run(["import", "--from", "clipman", file])
        #expect(status == 0)
        #expect(err.contains("imported the newest 3 of 5 new clips: clipboard.maxEntries is 3"), "\(err)")
        #expect(try texts() == ["clip 5", "clip 4", "clip 3"])
        #expect(device.inProcess(["settings", "set", "clipboard.maxEntries", "10"]).0 == 0)
        #expect(run(["import", "--from", "clipman", file], now: Self.now + 3_600_000).0 == 0)
        #expect(try texts() == ["clip 5", "clip 4", "clip 3", "clip 2", "clip 1"])
    }

    @Test func entriesOverMaxBytesAndBlankOnesAreLeftOutAndNamed() throws {
        #expect(device.inProcess(["settings", "set", "clipboard.maxBytes", "10"]).0 == 0)
        let (status, _, err) = run([
            "import", "--from", "clipman", clipman(["kept", String(repeating: "x", count: 11), " ", "ten bytes!"]),
        ])
        #expect(status == 0)
        #expect(try texts() == ["ten bytes!", "kept"])
        #expect(err.contains("left out 1 item larger than clipboard.maxBytes (10 bytes): .[1] (11 bytes)"), "\(err)")
        #expect(err.contains("left out 1 empty item: .[2]"), "\(err)")
    }

    @Test func aSecretIsKeptButNeverSynced() throws {
        let token = "ghp_" + String(repeating: "a1B2", count: 9)
        #expect(run(["import", "--from", "clipman", clipman(["plain", token])]).0 == 0)
        #expect(try history().map(\.3) == [true, false])
    }

    @Test func aLargeHistoryImportsWhole() throws {
        #expect(device.inProcess(["settings", "set", "clipboard.maxEntries", "100000"]).0 == 0)
        let (status, _, err) = run(["import", "--from", "clipman", clipman((0..<100_000).map { "entry \($0)\nof many" })])
        #expect(status == 0, "\(err)")
        let listed = device.inProcess(["clip", "ls"]).1.split(separator: "\n")
        #expect(listed.count == 100_000)
        #expect(listed.first?.hasSuffix("\tentry 99999 of many") == true && listed.last?.hasSuffix("\tentry 0 of many") == true)
    }

    @Test func theDefaultFileIsUnderHomeWhateverXDGDataHomeSays() throws {
        let home = device.directory.file("home")
        try FileSystem.makeDirectory(home + "/.local/share")
        try FileSystem.makeDirectory(home + "/xdg")
        try FileSystem.writeAtomically(home + "/.local/share/clipman.json", Array(#"["from home"]"#.utf8))
        try FileSystem.writeAtomically(home + "/xdg/clipman.json", Array(#"["from xdg"]"#.utf8))
        let (status, _, err) = run(["import", "--from", "clipman"], home: home, environment: ["XDG_DATA_HOME": home + "/xdg"])
        #expect(status == 0, "\(err)")
        #expect(try texts() == ["from home"])
    }

    @Test func aMissingFileFailsAndSaysWhere() {
        let (status, _, err) = run(["import", "--from", "clipman"], home: device.directory.file("nobody"))
        #expect(status == 1)
        #expect(err.contains("no such file: \(device.directory.file("nobody"))/.local/share/clipman.json (clipman's history"), "\(err)")
        let (noHome, _, said) = run(["import", "--from", "clipman"], home: "")
        #expect(noHome == 1 && said.contains("no HOME"), "\(said)")
    }

    static let malformed: [(String, String, String)] = [
        ("an empty file", "", "is empty; nothing was imported"),
        ("not JSON", "clipman was here", "is not valid JSON"),
        ("an object", #"{"history":["a"]}"#, "not a clipman history (a JSON array of strings); nothing was imported"),
        ("a number after valid strings", #"["a","b",3]"#, "not a clipman history: .[2] is not a string; nothing was imported"),
        ("invalid UTF-8", "[\"ok\",\"\u{FFFD}\"]", "is not valid JSON (invalid UTF-8 in string"),
        ("a truncated file", #"["a","b"#, "is not valid JSON"),
    ]

    @Test("a malformed file imports nothing", arguments: malformed)
    func malformedFile(_ example: (name: String, file: String, message: String)) throws {
        _ = device.inProcess(["clip", "add", "already here"])
        let before = device.inProcess(["clip", "ls", "--json"]).1
        let path = device.directory.file("clipman.json")
        // The invalid UTF-8 case puts a lone 0xFF byte where U+FFFD is.
        let bytes = example.name == "invalid UTF-8" ? Array(#"["ok",""#.utf8) + [0xFF] + Array(#""]"#.utf8) : Array(example.file.utf8)
        try FileSystem.writeAtomically(path, bytes)
        let (status, _, err) = run(["import", "--from", "clipman", path])
        #expect(status == 1)
        #expect(err.contains(example.message), "\(err)")
        #expect(device.inProcess(["clip", "ls", "--json"]).1 == before)
        #expect(!FileSystem.exists(DataDirectoryLayout(root: device.dataDir).staged))
    }

    @Test func anEmptyHistoryImportsNothingAndSucceeds() throws {
        for file in ["[]", "null"] {
            device.directory.write("clipman.json", file)
            #expect(run(["import", "--from", "clipman", device.directory.file("clipman.json")]).0 == 0)
        }
        #expect(try texts().isEmpty)
    }

    static let misuse: [[String]] = [
        ["import", "--from", "cliphist", "x.json"],
        ["import", "--from", "copyq", "x.json"],
        ["import", "--from", "clipman", "--kvs", "x.json"],
        ["import"],
        ["import", "--from"],
    ]

    @Test("misuse is a usage error", arguments: misuse)
    func usage(_ arguments: [String]) {
        let (status, _, err) = run(arguments)
        #expect(status == 64, "\(err)")
        #expect(err.contains("Usage: itsypad import"), "\(err)")
    }
}

import Testing

@testable import ItsypadBackend
@testable import ItsypadCLI
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

@Suite struct ClipCommandTests {
    let device = Device()

    func add(_ text: String, _ extra: [String] = []) -> String {
        let (status, out, err) = device.inProcess(["clip", "add"] + extra, stdin: text)
        #expect(status == 0, "clip add failed: \(err)")
        return out.trimmingNewline
    }

    func ids(_ arguments: [String] = []) -> [String] {
        device.inProcess(["clip", "ls"] + arguments).1.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
    }

    @Test func addListShowRoundTrip() {
        let id = add("  two\n\twords  \n")
        let (status, out, _) = device.inProcess(["clip", "ls"])
        #expect(status == 0)
        #expect(out == "\(id.prefix(8))\ttwo words\n")
        #expect(device.inProcess(["clip", "show", String(id.prefix(4))]).1 == "  two\n\twords  \n")
    }

    @Test func repeatingTheNewestAddsNothing() {
        let first = add("same")
        #expect(add("same") == first)
        _ = add("other")
        #expect(add("same") != first)
        #expect(ids().count == 3)
    }

    @Test(arguments: ["", "   \n\t "])
    func refusesBlankInput(_ text: String) {
        let (status, _, err) = device.inProcess(["clip", "add"], stdin: text)
        #expect(status == 1)
        #expect(err.contains("empty"))
        #expect(ids().isEmpty)
    }

    @Test func refusesInvalidUTF8GivenAsText() throws {
        let result = try device.runArguments(["clip", "add", "--type", "text/plain"], stdin: [0x66, 0x6F, 0xFF, 0x0A])
        #expect(result.status == 1)
        #expect(result.stderr.contains("UTF-8"))
        #expect(ids().isEmpty)
    }

    @Test func listFiltersAndLimits() {
        let pinned = add("Alpha one")
        _ = add("beta two")
        _ = add("ALPHA three")
        #expect(device.inProcess(["clip", "pin", pinned]).0 == 0)
        #expect(ids(["--search", "alpha"]).count == 2)
        #expect(ids(["--limit", "1"]).count == 1)
        #expect(ids(["--pinned"]) == [String(pinned.prefix(8))])
        #expect(device.inProcess(["clip", "ls", "--limit", "x"]).0 == 64)
    }

    @Test func jsonListingHasTheDocumentedFields() throws {
        _ = add("hello")
        _ = add("secret", ["--local"])
        let json = try JSONValue.parse(device.inProcess(["clip", "ls", "--json"]).1)
        let items = try #require(json.arrayValue)
        #expect(items.count == 2)
        guard case .object(let members) = items[0] else { Issue.record("not an object"); return }
        #expect(members.map(\.0) == ["id", "text", "timestamp", "pinned", "localOnly", "syncState", "type", "size"])
        #expect(items[1]["type"] == .string("text/plain") && items[1]["size"] == .integer(5))
        #expect(items[0]["syncState"] == .string("localOnly"))
        #expect(items[1]["syncState"] == .string("pending"))
        #expect(items[1]["timestamp"]?.stringValue.flatMap(Time.parseISO8601) != nil)
    }

    @Test func secretsAndIgnoredPatternsStayLocal() throws {
        #expect(device.inProcess(["settings", "set", "clipboard.ignore", "^otpauth://", "hunter2"]).0 == 0)
        _ = add("otpauth://totp/x?secret=abc")
        _ = add("-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----\n")
        _ = add("just text")
        let states = try #require(try JSONValue.parse(device.inProcess(["clip", "ls", "--json"]).1).arrayValue)
            .map { $0["localOnly"] }
        #expect(states == [.bool(false), .bool(true), .bool(true)])
    }

    @Test func removeClearAndPinnedEntries() {
        let a = add("a"), b = add("b"), c = add("c")
        #expect(device.inProcess(["clip", "pin", a]).0 == 0)
        #expect(device.inProcess(["clip", "rm", b]).0 == 0)
        #expect(device.inProcess(["clip", "rm", "ffffffff"]).0 == 1)
        #expect(device.inProcess(["clip", "clear"]).0 == 0)
        #expect(ids() == [String(a.prefix(8))])
        _ = c
        #expect(device.inProcess(["clip", "clear", "--all"]).0 == 0)
        #expect(ids().isEmpty)
    }

    @Test func pruneHonoursAgeKeepAndPins() {
        let day: Int64 = 86_400_000
        let now: Int64 = 100 * day
        for (age, text) in [(10, "old"), (9, "old pinned"), (1, "recent"), (0, "newest")] {
            let (status, out, _) = device.inProcess(["clip", "add", text], now: now - Int64(age) * day)
            #expect(status == 0)
            if text == "old pinned" { #expect(device.inProcess(["clip", "pin", out.trimmingNewline]).0 == 0) }
        }
        #expect(device.inProcess(["clip", "prune", "--older-than", "7d"], now: now).0 == 0)
        #expect(device.inProcess(["clip", "ls"]).1.contains("old pinned"))
        #expect(!device.inProcess(["clip", "ls"]).1.contains("\told\n"))
        // Keeping one entry removes every unpinned one: the pinned entry stays.
        #expect(device.inProcess(["clip", "prune", "--keep", "1"], now: now).0 == 0)
        #expect(ids().count == 1)
        #expect(device.inProcess(["clip", "prune", "--older-than", "soon"]).0 == 64)
    }

    @Test func inputOverMaxBytesIsRefusedAndNothingStored() throws {
        #expect(device.inProcess(["settings", "get", "clipboard.maxBytes"]).1 == "16777216\n")
        #expect(device.inProcess(["settings", "set", "clipboard.maxBytes", "1000"]).0 == 0)
        _ = add("small")
        let big = String(repeating: "x", count: 1001)
        for arguments in [["clip", "add"], ["clip", "add", big]] {
            let result = try device.runArguments(arguments, stdin: arguments.count == 2 ? Array(big.utf8) : nil)
            #expect(result.status == 1)
            #expect(result.stderr.contains("larger than clipboard.maxBytes (1000 bytes); nothing was stored"), "\(result.stderr)")
        }
        #expect(ids().count == 1)
        #expect(try device.runArguments(["clip", "add"], stdin: Array(String(repeating: "y", count: 1000).utf8)).status == 0)
        #expect(ids().count == 2)
    }

    /// A text of several pieces (escapes and multi-byte characters cut at every
    /// boundary) lists from its first bytes and prints whole in JSON.
    @Test func bigClipsPreviewAndStreamExactly() throws {
        let unit = "ab\"\\\n\té日👍\u{1}"
        let text = "  start " + String(repeating: unit, count: 80_000)
        let added = try device.runArguments(["clip", "add"], stdin: Array(text.utf8))
        #expect(added.status == 0, "\(added.stderr)")
        let listed = try device.run("clip", "ls")
        #expect(listed.stdout == added.stdout.prefix(8) + "\t" + Text.preview(text, limit: 100) + "\n")
        let json = try device.run("clip", "ls", "--json")
        #expect(try JSONValue.parse(json.stdout).arrayValue?.first?["text"] == .string(text))
        let timestamp = try #require(
            try JSONValue.parse(json.stdout).arrayValue?.first?["timestamp"]?.stringValue.flatMap(Time.parseISO8601))
        // Over 1 MiB: kept local-only.
        let entry = ClipEntry(id: added.stdout.trimmingNewline, text: text, timestamp: timestamp, localOnly: .oversized)
        let expected = JSONValue.array([JSONForms.clip(entry, syncState: .localOnly)]).prettySerialized() + "\n"
        #expect(json.stdoutBytes == Array(expected.utf8))
        #expect(try device.run("clip", "show", String(added.stdout.prefix(8))).stdoutBytes == Array(text.utf8))
        // Adding it again is a repeat of the newest entry.
        #expect(try device.runArguments(["clip", "add"], stdin: Array(text.utf8)).stdout == added.stdout)
    }

    @Test func historyNeverExceedsMaxEntriesAndEvictionsAreQueued() throws {
        // Evictions are deletions for a backend to hear about: this device has synced with one.
        let backend = TemporaryDirectory()
        #expect(device.inProcess(["sync", "enable", backend.path + "/b"]).0 == 0)
        #expect(device.inProcess(["settings", "set", "clipboard.maxEntries", "3"]).0 == 0)
        let first = add("1")
        for text in ["2", "3", "4", "5"] { _ = add(text) }
        #expect(ids().count == 3)
        let pending = try PendingQueue(path: device.dataDir + "/sync/pending.log").changes()
        #expect(pending.contains { $0.key == RecordKey(.clip, first) && $0.operation == .delete })
    }
}

extension ClipCommandTests {
    /// `clip ls | fzf | cut -f1 | itsypad clip show`: the id may come on standard input.
    @Test func showReadsTheIdFromStandardInput() {
        let id = add("picked")
        #expect(device.inProcess(["clip", "show"], stdin: String(id.prefix(8)) + "\n") == (0, "picked", ""))
        // Esc in fzf feeds nothing: nothing to show, quietly, as xargs -r would.
        #expect(device.inProcess(["clip", "show"], stdin: "") == (0, "", ""))
        #expect(device.inProcess(["clip", "show"], stdin: "\n") == (0, "", ""))
        let (status, _, err) = device.inProcess(["clip", "show"], stdin: "\(id)\n\(id)\n")
        #expect(status == 64)
        #expect(err.contains("Expected one id on standard input, not 2."), "\(err)")
    }

    @Test func showWithoutAnIdOnATerminalIsAUsageError() {
        _ = add("x")
        let context = Context.memory(environment: ["ITSYPAD_DATA_DIR": device.dataDir], stdinIsTerminal: true)
        #expect(Itsypad.run(["clip", "show"], context: context) == 64)
        #expect(context.standardError.text.contains("Missing expected argument '<id>'"))
    }
}

extension String {
    var trimmingNewline: String { hasSuffix("\n") ? String(dropLast()) : self }
}

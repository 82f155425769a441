import Testing

@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

/// `clipboard.ignore` is synced, so its patterns come from peers: none may
/// stall `clip add`, and one this version cannot use is left out with a
/// warning rather than failing every clip.
@Suite struct IgnorePatternTests {
    let device = Device()

    func isLocalOnly(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> (Bool, String) {
        let (status, out, err) = device.inProcess(["clip", "add"], stdin: text)
        #expect(status == 0, "clip add failed: \(err)", sourceLocation: sourceLocation)
        let id = out.trimmingNewline
        let items = try #require(try JSONValue.parse(device.inProcess(["clip", "ls", "--json"]).1).arrayValue)
        let item = try #require(items.first { $0["id"]?.stringValue == id }, sourceLocation: sourceLocation)
        return (item["localOnly"] == .bool(true), err)
    }

    /// Stores patterns as a peer's record or an older version would, without `settings set`'s checks.
    func store(_ patterns: [String]) throws {
        _ = device.inProcess(["settings"])
        let settings = try SettingsStore(path: device.dataDir + "/settings.json")
        try settings.set("clipboard.ignore", .list(patterns), clock: HybridTimestamp(physical: Time.now(), device: "peer"))
    }

    @Test func catastrophicPatternsAreMatchedInOnePass() throws {
        #expect(device.inProcess(["settings", "set", "clipboard.ignore", "(a+)+$", "(a|aa)+$", "(.*a){20}x", "^(\\w+\\s?)*$"]).0 == 0)
        // Each of these takes a backtracking matcher longer than the age of the universe.
        #expect(try isLocalOnly(String(repeating: "a", count: 100_000) + "!") == (false, ""))
        #expect(try isLocalOnly(String(repeating: "word ", count: 20_000) + "!") == (false, ""))
        #expect(try isLocalOnly("aaaa").0)
    }

    @Test(arguments: [
        ("(a)\\1", "backreferences"), ("x(?=y)", "lookahead"), ("(?<!x)y", "lookbehind"), ("(?>a+)", "atomic"),
        ("a++", "possessive"), ("(unclosed", "missing ')'"), ("a{5000}", "above 1000"), ("[a-z]{600}[0-9]{600}", "too large"),
    ])
    func settingsSetRefusesWithTheReason(_ pattern: String, _ reason: String) {
        let (status, _, err) = device.inProcess(["settings", "set", "clipboard.ignore", "ok", pattern])
        #expect(status == 64)
        #expect(err.contains(reason), "\(err)")
        #expect(device.inProcess(["settings", "get", "clipboard.ignore"]).1 == "\n")
    }

    @Test func storedPatternsThisVersionCannotUseAreLeftOutWithAWarning() throws {
        try store(["(a)\\1", "hunter2", "(?<=x)y"])
        let (localOnly, err) = try isLocalOnly("my hunter2")
        #expect(localOnly)
        let warnings = err.split(separator: "\n")
        #expect(warnings.count == 2)
        #expect(warnings.first?.hasPrefix("warning: clipboard.ignore pattern \"(a)\\\\1\" is ignored: backreferences") == true, "\(err)")
        #expect(warnings.last?.contains("lookbehind") == true)
        // The stored value is kept as it is: a newer version may use it.
        #expect(device.inProcess(["settings", "get", "clipboard.ignore"]).1 == "(a)\\1\nhunter2\n(?<=x)y\n")
        #expect(try isLocalOnly("nothing to hide") == (false, err))
    }

    @Test func patternsTogetherBeyondTheSizeLimitAreLeftOut() throws {
        let large = "[a-z]{400}"
        #expect(device.inProcess(["settings", "set", "clipboard.ignore", large, large, large]).0 == 64)
        // Two fit (401 instructions each), the third would pass 1000; a small one still fits after it.
        try store([large, large, large, "hunter2"])
        let (localOnly, err) = try isLocalOnly("my hunter2")
        #expect(localOnly)
        #expect(err.split(separator: "\n").count == 1)
        #expect(err.contains("together are too large"))
    }

    @Test func aPeersPatternThisVersionRefusesArrivesAndIsLeftOut() throws {
        let fleet = Fleet(2)
        fleet.enable(0)
        fleet.enable(1)
        #expect(fleet[0].inProcess(["settings", "set", "clipboard.ignore", "hunter2"]).0 == 0)
        // The peer runs a version that accepts more syntax.
        let peerSettings = try SettingsStore(path: fleet[0].dataDir + "/settings.json")
        try peerSettings.set(
            "clipboard.ignore", .list(["(a)\\1", "hunter2"]), clock: HybridTimestamp(physical: Time.now() + 1000, device: "peer"))
        fleet.sync(0)
        fleet.sync(1)
        #expect(fleet[1].inProcess(["settings", "get", "clipboard.ignore"]).1 == "(a)\\1\nhunter2\n")
        let (status, out, err) = fleet[1].inProcess(["clip", "add"], stdin: "hunter2 again")
        #expect(status == 0)
        #expect(err.contains("backreferences"))
        let entry = try #require(try JSONValue.parse(fleet[1].inProcess(["clip", "ls", "--json"]).1).arrayValue?.first)
        #expect(entry["id"]?.stringValue == out.trimmingNewline)
        #expect(entry["localOnly"] == .bool(true))
    }
}

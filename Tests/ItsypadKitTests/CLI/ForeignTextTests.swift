import Testing

@testable import ItsypadCLI
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

/// Text someone else chose (a peer's synced setting, CopyQ's tab and types) goes through the
/// listings' escaping: on a terminal, and in every message on stderr, control characters (C0,
/// DEL, C1) show as U+FFFD; a listing through a pipe keeps the exact bytes.
@Suite struct ForeignTextTests {
    let device = Device()
    /// An OSC 52 (sets the clipboard), BEL, a C1 CSI (clears the screen) and DEL.
    static let hostile = "a\u{1B}]52;c;aGk=\u{07}b\u{9B}2Jc\u{7F}"
    static let shown = "a\u{FFFD}]52;c;aGk=\u{FFFD}b\u{FFFD}2Jc\u{FFFD}"
    /// A pattern this version refuses (a backreference), which clip add names in a warning.
    static let refused = "(x)\\1" + hostile

    /// Runs in-process with stdout and stderr on a terminal or not.
    func run(_ arguments: [String], terminal: Bool, environment: [String: String] = [:]) -> (Int32, String, String) {
        var variables = ["ITSYPAD_DATA_DIR": device.dataDir, "TMPDIR": device.directory.path]
        for (key, value) in environment { variables[key] = value }
        let context = Context.memory(environment: variables, stdoutIsTerminal: terminal, stderrIsTerminal: terminal)
        let status = Itsypad.run(arguments, context: context)
        return (status, context.standardOutput.text, context.standardError.text)
    }

    /// Stores `clipboard.ignore` as a peer's record would, without `settings set`'s checks.
    func storeIgnorePatterns(_ patterns: [String]) throws {
        _ = device.inProcess(["settings"])
        let settings = try SettingsStore(path: device.dataDir + "/settings.json")
        try settings.set("clipboard.ignore", .list(patterns), clock: HybridTimestamp(physical: Time.now(), device: "peer"))
    }

    static func hasControls(_ text: String) -> Bool { HostileDesktopTests.hasControls(text) }

    @Test func aSyncedValueIsShownSafelyOnATerminalAndExactlyThroughAPipe() throws {
        try storeIgnorePatterns([Self.hostile, "line\nbreak"])
        let (status, got, _) = run(["settings", "get", "clipboard.ignore"], terminal: true)
        #expect(status == 0)
        #expect(got == Self.shown + "\nline\u{FFFD}break\n", "each item one line, made safe on its own")
        #expect(run(["settings", "get", "clipboard.ignore"], terminal: false).1 == Self.hostile + "\nline\nbreak\n")

        let listed = run(["settings"], terminal: true).1
        let line = listed.split(separator: "\n").first { $0.hasPrefix("clipboard.ignore=") }
        // Lists show as JSON strings (ESC and BEL escaped there); DEL and C1, which JSON leaves, as U+FFFD.
        #expect(line == "clipboard.ignore=\"a\\u001b]52;c;aGk=\\u0007b\u{FFFD}2Jc\u{FFFD}\",\"line\\nbreak\"", "\(listed)")
        #expect(!Self.hasControls(listed), "\(Array(listed.utf8))")
        #expect(run(["settings"], terminal: false).1.contains("\u{9B}2Jc\u{7F}"), "exact bytes through a pipe")
    }

    @Test func clipAddsWarningAboutARefusedPatternIsSafe() throws {
        try storeIgnorePatterns([Self.refused])
        let (status, _, err) = run(["clip", "add", "some text"], terminal: false)
        #expect(status == 0)
        #expect(err.contains("warning: clipboard.ignore pattern ") && err.contains("is ignored: backreferences"), "\(err)")
        #expect(err.contains("b\u{FFFD}2Jc\u{FFFD}"), "\(err)")
        #expect(!Self.hasControls(err), "\(Array(err.utf8))")
    }

    /// A remote's last error (a tool's words, quoting what a server sent) in `sync status`: one
    /// line each, made safe on a terminal, as it is through a pipe.
    @Test func aRemotesLastErrorIsShownSafely() throws {
        #expect(run(["settings", "set", "sync.backend", "rclone:dav:itsypad"], terminal: false).0 == 0)
        let status = JSONValue.object([("lastError", .string("rclone could not list rclone:dav:itsypad:\n  " + Self.hostile))])
        try FileSystem.makeDirectory(device.dataDir + "/sync/rclone")
        device.directory.write("data/sync/rclone/status.json", status.serialized())
        let (code, shown, _) = run(["sync", "status"], terminal: true)
        #expect(code == 0)
        #expect(shown.contains("rclone error:  rclone could not list rclone:dav:itsypad:\n              " + Self.shown + "\n"), "\(shown)")
        #expect(!Self.hasControls(shown), "\(Array(shown.utf8))")
        #expect(run(["sync", "status"], terminal: false).1.contains("  " + Self.hostile + "\n"), "exact bytes through a pipe")
    }

    /// CopyQ's tab name and an item's types, in import's note and warning.
    @Test func copyqsTabNameAndTypesAreShownSafely() throws {
        let items: JSONValue = .array([
            .object([
                ("types", .array([.string("text/plain")])), ("pinned", .bool(false)), ("text", .string(Base64.encode(Array("kept".utf8)))),
            ]),
            .object([("types", .array([.string("image/" + Self.hostile)])), ("pinned", .bool(false))]),
        ])
        let dump = JSONValue.object([("tab", .string(Self.hostile)), ("items", items)]).serialized()
        device.directory.write("dump.json", dump)
        device.directory.write("copyq", "#!/bin/sh\ncat '\(device.directory.file("dump.json"))'\n", mode: 0o755)
        let (status, _, err) = run(
            ["import", "--from", "copyq"], terminal: true, environment: ["PATH": device.directory.path + ":/usr/bin:/bin"])
        #expect(status == 0, "\(err)")
        #expect(err.contains("row 1 (image/\(Self.shown))"), "\(err)")
        #expect(err.contains("imported 1 clip from CopyQ's tab \(Self.shown)"), "\(err)")
        let withoutProgress = err.split(separator: "\r\u{1B}[K").joined()
        #expect(!Self.hasControls(withoutProgress), "\(Array(err.utf8))")
    }
}

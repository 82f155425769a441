import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

extension Tag {
    /// Runs the real clipman, and a real CopyQ server under Xvfb (seconds per test).
    @Tag static var clipboardPeers: Self
}

/// `import --from` against the tools people leave: the history the real clipman writes, and the
/// items a real CopyQ server holds, imported by the built binary.
@Suite(.tags(.clipboardPeers), .serialized, .timeLimit(.minutes(3)))
struct ClipboardPeerTests {
    static func texts(_ device: Device) throws -> [String] {
        let listed = try JSONValue.parse(try device.run("clip", "ls", "--json").stdout).arrayValue ?? []
        return listed.map { $0["text"]?.stringValue ?? "" }
    }

    @Test(.needs(["clipman"]))
    func whatClipmanRecordedIsImportedNewestFirst() throws {
        let device = Device()
        let home = device.directory.file("home")
        // clipman writes its file but does not make its directory.
        try FileSystem.makeDirectory(home + "/.local/share")
        // Without a compositor clipman still records (it only fails to serve the clip back with wl-copy).
        let environment = ["PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "XDG_DATA_HOME": home + "/elsewhere"]
        for text in ["first", "two\nlines", "tabs\tand ünïcödé ✓", "first", "last"] {
            let stored = try Process.run("clipman", ["store", "--max-items=100"], stdin: Array(text.utf8), environment: environment)
            #expect(stored.status == 0, "\(stored.stderr)")
        }
        let file = try #require(try FileSystem.read(home + "/.local/share/clipman.json"), "clipman wrote no history")
        let written = try #require(try JSONValue.parse(file).arrayValue).compactMap(\.stringValue)
        // clipman moves a repeated clip to the end.
        #expect(written == ["two\nlines", "tabs\tand ünïcödé ✓", "first", "last"])

        let imported = try device.run("import", "--from", "clipman", environment: ["HOME": home])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try Self.texts(device) == written.reversed())
        // Again: nothing more.
        #expect(try device.run("import", "--from", "clipman", environment: ["HOME": home]).status == 0)
        #expect(try Self.texts(device).count == written.count)
    }

    @Test func withoutCopyQOnPathTheImportFailsAndSaysWhy() throws {
        let device = Device()
        let result = try device.run("import", "--from", "copyq", environment: ["PATH": device.directory.path])
        #expect(result.status == 1)
        #expect(result.stderr.contains("copyq is not installed"), "\(result.stderr)")
    }

    @Test(.needs(["copyq", "Xvfb", "setsid"]))
    func withoutACopyQServerTheImportFailsAndSaysWhy() throws {
        let device = Device()
        let home = device.directory.file("home")
        let result = try device.run(
            "import", "--from", "copyq", environment: ["HOME": home, "XDG_CONFIG_HOME": home + "/.config"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("CopyQ is not running (start it with 'copyq --start-server')"), "\(result.stderr)")
    }

    @Test(.needs(["copyq", "Xvfb", "setsid"]))
    func theItemsOfCopyQsFirstTabAreImportedInTheirOrder() throws {
        let copyq = try CopyQServer.start()
        defer { copyq.stop() }
        let texts = ["oldest", "two\nlines\n", "back\\slash and \\n written out", "ünïcödé ✓ \u{1F600}", "  padded  "]
        for text in texts { try copyq.run("add", "--", text) }
        try copyq.run("write", "0", "image/png", "-", stdin: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D])
        try copyq.run("write", "0", "text/html", "<b>bold</b>")
        try copyq.run("add", "--", "newest")
        // A pinned CopyQ item keeps its row: pinned last, so that the order is the order of adding.
        try copyq.run("eval", "--", "plugins.itempinned.pin(0)")
        try copyq.run("tab", "second", "add", "not in the first tab")

        let device = Device()
        let imported = try device.run("import", "--from", "copyq", environment: copyq.environment)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try Self.texts(device) == ["newest"] + texts.reversed())
        let pinned = try device.run("clip", "ls", "--pinned").stdout
        #expect(pinned.hasSuffix("\t[pinned] newest\n"), "\(pinned)")
        #expect(
            imported.stderr.contains("left out 2 items that are not text: row 1 (text/html), row 2 (image/png)"), "\(imported.stderr)")
        #expect(
            try device.run("clip", "show", String(try device.run("clip", "ls").stdout.split(separator: "\n")[4].prefix(8))).stdout
                == "two\nlines\n")

        // All or nothing, and no more the second time.
        let before = try device.run("clip", "ls", "--json").stdout
        #expect(try device.run("import", "--from", "copyq", environment: copyq.environment).status == 0)
        #expect(try device.run("clip", "ls", "--json").stdout == before)
    }

    @Test(.needs(["copyq", "Xvfb", "setsid"]))
    func aLongTabIsReadByOneCopyQProcessAndLimitsApply() throws {
        let copyq = try CopyQServer.start()
        defer { copyq.stop() }
        try copyq.run("config", "maxitems", "3000")
        try copyq.run("eval", "--", "for (var i = 0; i < 3000; ++i) add('item ' + i + (i == 7 ? new Array(300).join('x') : ''))")
        let device = Device()
        #expect(try device.run("settings", "set", "clipboard.maxBytes", "200").status == 0)
        #expect(try device.run("settings", "set", "clipboard.maxEntries", "2500").status == 0)
        let imported = try device.run("import", "--from", "copyq", environment: copyq.environment)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(
            imported.stderr.contains("left out 1 item larger than clipboard.maxBytes (200 bytes): row 2992 (305 bytes)"),
            "\(imported.stderr)")
        #expect(imported.stderr.contains("imported the newest 2500 of 2999 new clips"), "\(imported.stderr)")
        let listed = try Self.texts(device)
        #expect(listed.count == 2500 && listed.first == "item 2999" && listed.last == "item 500")
    }
}

/// A CopyQ server of its own (config, data and socket in a temporary home) on an Xvfb display of
/// its own, each in its own process group, killed whole by `stop`.
final class CopyQServer {
    let home = TemporaryDirectory()
    private(set) var environment: [String: String] = [:]
    private var groups: [pid_t] = []

    static func start() throws -> CopyQServer {
        let server = CopyQServer()
        do { try server.launch() } catch {
            server.stop()
            throw error
        }
        return server
    }

    private func launch() throws {
        let display = home.file("display")
        groups.append(
            try Process.spawn(
                "/usr/bin/setsid", ["Xvfb", "-displayfd", "1", "-nolisten", "tcp"], stdin: "/dev/null", stdout: display,
                stderr: home.file("xvfb.log"), environment: nil))
        let number = try wait("Xvfb to choose a display") { home.read("display").flatMap { $0.hasSuffix("\n") ? $0 : nil } }
        try FileSystem.makeDirectory(home.file("run"))
        environment = [
            "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home.path, "XDG_CONFIG_HOME": home.file(".config"),
            "XDG_DATA_HOME": home.file(".local/share"), "XDG_RUNTIME_DIR": home.file("run"), "DISPLAY": ":" + number.trimmingNewline,
            "LANG": "C.UTF-8",
        ]
        groups.append(
            try Process.spawn(
                "/usr/bin/setsid", ["copyq"], stdin: "/dev/null", stdout: home.file("copyq.log"), stderr: home.file("copyq.err"),
                environment: environment))
        _ = try wait("the CopyQ server to answer") {
            try Process.run("copyq", ["count"], environment: environment, timeout: 10).status == 0 ? true : nil
        }
    }

    /// Runs a copyq command against this server; a failure throws, quoting it.
    @discardableResult
    func run(_ arguments: String..., stdin: [UInt8]? = nil) throws -> RunResult {
        let result = try Process.run("copyq", arguments, stdin: stdin, environment: environment, timeout: 60)
        guard result.status == 0 else { throw ItsypadError.failure("copyq \(arguments.prefix(2)) failed: \(result.stderr)") }
        return result
    }

    private func wait<Value>(_ what: String, timeout: Double = 30, _ ready: () throws -> Value?) throws -> Value {
        let deadline = Monotonic.seconds() + timeout
        while Monotonic.seconds() < deadline {
            if let value = try ready() { return value }
            usleep(100_000)
        }
        throw ItsypadError.failure("timed out waiting for \(what): \(home.read("copyq.err") ?? "") \(home.read("xvfb.log") ?? "")")
    }

    /// Kills the server's group (with CopyQ's clipboard monitor), then Xvfb's, and reaps them:
    /// what they hold is thrown away.
    func stop() {
        for group in groups.reversed() {
            kill(-group, SIGKILL)
            var status: Int32 = 0
            while waitpid(group, &status, 0) < 0 && errno == EINTR {}
        }
        groups = []
    }
}

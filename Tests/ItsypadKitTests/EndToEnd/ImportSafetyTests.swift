import Testing

@testable import ItsypadStore
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// `import` of files a user is given, and disk errors while it commits: all or nothing, with a true
/// message, and importing the same file again repairs what an earlier version left missing.
@Suite struct ImportSafetyTests {
    /// An export of five tabs, two text clips, an image and a synced setting.
    static func export(from source: Device) throws -> String {
        for index in 1...5 { try source.run("tab", "new", "tab \(index)") }
        try source.run("clip", "add", "clip one")
        try source.run("clip", "add", "clip two")
        try source.runArguments(["clip", "add", "--type", "image/png"], stdin: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3])
        try source.run("settings", "set", "clipboard.maxEntries", "500")
        let export = try source.run("export")
        #expect(export.status == 0, "\(export.stderr)")
        source.directory.write("export.json", export.stdout)
        return source.directory.file("export.json")
    }

    /// What a user sees of a device: texts, tab names, the setting, what waits to be sent and
    /// whether everything can be exported. Opening the data directory finishes a committed import.
    static func snapshot(_ device: Device) throws -> [String] {
        let clips = try device.run("clip", "ls").stdout.split(separator: "\n").map { $0.split(separator: "\t").dropFirst().joined() }
        let tabs = try device.run("tab", "ls").stdout.split(separator: "\n").map { String($0.split(separator: "\t")[1]) }
        let pending = try device.run("sync", "status").stdout.split(separator: "\n").filter { $0.hasPrefix("pending") }
        return clips + tabs + pending.map(String.init) + [
            try device.run("settings", "get", "clipboard.maxEntries").stdout, "export exits \(try device.run("export").status)",
        ]
    }

    /// Runs itsypad on `device` under strace, `fault` (strace's `-e inject=` form) applied.
    static func traced(_ device: Device, injecting fault: String, tracing calls: String, _ arguments: [String]) throws -> RunResult {
        var environment = Process.baseEnvironment
        environment["ITSYPAD_DATA_DIR"] = device.dataDir
        environment["TMPDIR"] = device.directory.path
        return try Process.run(
            "strace", ["-f", "-o", "/dev/null", "-e", "trace=" + calls, "-e", "inject=" + fault, Process.itsypad] + arguments,
            environment: environment, timeout: 120)
    }

    static func deviceWithData() throws -> Device {
        let device = Device()
        try device.run("clip", "add", "here before")
        try device.run("tab", "new", "tab here before")
        return device
    }

    @Test(.enabled(if: ExternalTool.installed("strace"), "strace is not installed"))
    func aDiskErrorAtAnyRenameOfTheCommitImportsAllOrNothingAndSaysWhich() throws {
        let source = Device()
        let file = try ImportSafetyTests.export(from: source)
        let reference = try ImportSafetyTests.deviceWithData()
        let before = try ImportSafetyTests.snapshot(reference)
        #expect(try reference.run("import", file).status == 0)
        let imported = try ImportSafetyTests.snapshot(reference)
        #expect(imported != before)
        // Once (a second try passes) and from then on (the next command finishes it), at every rename.
        for call in 1...16 {
            for when in ["\(call)", "\(call)+"] {
                let device = try ImportSafetyTests.deviceWithData()
                let result = try ImportSafetyTests.traced(
                    device, injecting: "renameat:error=EIO:when=\(when)", tracing: "renameat", ["import", file])
                #expect(result.signal == nil && !result.timedOut)
                let after = try ImportSafetyTests.snapshot(device)
                if result.status == 0 {
                    #expect(after == imported, "rename \(when): exit 0 but \(after)")
                } else if result.stderr.contains("nothing was imported") {
                    #expect(after == before, "rename \(when): \(result.stderr) but \(after)")
                } else {
                    #expect(result.stderr.contains("the next itsypad command finishes it"), "rename \(when): \(result.stderr)")
                    #expect(after == imported, "rename \(when): \(result.stderr) but \(after)")
                }
                #expect(!FileSystem.exists(DataDirectoryLayout(root: device.dataDir).staged))
            }
        }
    }

    @Test func importingAgainRestoresAnImagesMissingBytesAndQueuesWhatWasNeverSent() throws {
        let source = Device()
        let file = try ImportSafetyTests.export(from: source)
        let device = Device()
        #expect(try device.run("import", file).status == 0)
        let imported = try ImportSafetyTests.snapshot(device)
        // What an import cut short by an older version left: an image without its file, nothing queued.
        let layout = DataDirectoryLayout(root: device.dataDir)
        let blobs = layout.clips + "/blobs"
        for name in try FileSystem.list(blobs) { try FileSystem.remove(blobs + "/" + name) }
        try FileSystem.remove(layout.pendingQueue)
        #expect(try device.run("export").status == 1)
        let again = try device.run("import", file)
        #expect(again.status == 0, "\(again.stderr)")
        // Every clip and tab is queued again (settings are not: they carry no sign of having been sent).
        let repaired = try ImportSafetyTests.snapshot(device)
        #expect(repaired.filter { !$0.hasPrefix("pending") } == imported.filter { !$0.hasPrefix("pending") })
        #expect(repaired.contains("pending:    5 tabs, 3 clips, 0 settings"), "\(repaired)")
    }
}

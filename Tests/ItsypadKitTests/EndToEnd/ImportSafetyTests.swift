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

    /// A new device that imported `file`, and its `snapshot` then.
    static func importing(_ file: String) throws -> (Device, [String]) {
        let device = Device()
        let result = try device.run("import", file)
        #expect(result.status == 0, "\(result.stderr)")
        return (device, try snapshot(device))
    }

    /// The environment `Device` runs itsypad in, with the binary's path as ITSYPAD for scripts.
    static func environment(_ device: Device) -> [String: String] {
        var environment = Process.baseEnvironment
        environment["ITSYPAD_DATA_DIR"] = device.dataDir
        environment["TMPDIR"] = device.directory.path
        environment["ITSYPAD"] = Process.itsypad
        return environment
    }

    /// Runs itsypad on `device` under strace, `fault` (strace's `-e inject=` form) applied.
    static func traced(_ device: Device, injecting fault: String, tracing calls: String, _ arguments: [String]) throws -> RunResult {
        let environment = ImportSafetyTests.environment(device)
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

    @Test(.needs(["strace"]))
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

    @Test("an import into a history makes each staged directory durable once, before its commit marker", .needs(["strace"]))
    func anImportSyncsEachStagedDirectoryOnce() throws {
        let device = try ImportSafetyTests.deviceWithData()
        let clips = (1...200).map { (id: ImportTests.id($0), text: "clip \($0)", time: ImportTests.time($0)) }
        device.directory.write("export.json", ImportTests.export(clips: clips, tabs: [(id: ImportTests.id(1000), content: "a tab")]))
        let importing = ["import", device.directory.file("export.json")]
        let synced = try FirstPushTests.perFile(device, importing, calls: "fsync,fdatasync,syncfs") { _ in 1 }
        let stage = DataDirectoryLayout(root: device.dataDir).staged
        for directory in ["clips", "sync", "tabs"] { #expect(synced[stage + "/" + directory] != nil, "\(directory): \(synced)") }
        // The stage's files and directories are synced once, before the marker; moving them into place syncs them no more.
        for (path, count) in synced where path.hasPrefix(stage + "/") { #expect(count == 1, "\(path) synced \(count) times: \(synced)") }
        #expect(try device.run("clip", "ls").stdout.split(separator: "\n").count == 201)
    }

    @Test func importingAgainRestoresAnImagesMissingBytesAndQueuesWhatWasNeverSent() throws {
        let source = Device()
        let file = try ImportSafetyTests.export(from: source)
        let (device, imported) = try ImportSafetyTests.importing(file)
        // What an import cut short by an older version left: an image without its file, nothing queued.
        let layout = DataDirectoryLayout(root: device.dataDir)
        let blobs = layout.clips + "/blobs"
        for name in try FileSystem.list(blobs) { try FileSystem.remove(blobs + "/" + name) }
        try FileSystem.remove(layout.pendingQueue)
        #expect(try device.run("export").status == 1)
        let again = try device.run("import", file)
        #expect(again.status == 0, "\(again.stderr)")
        // Every clip, tab and synced setting is queued again.
        let repaired = try ImportSafetyTests.snapshot(device)
        #expect(repaired.filter { !$0.hasPrefix("pending") } == imported.filter { !$0.hasPrefix("pending") })
        #expect(repaired.contains("pending:    5 tabs, 3 clips, 1 setting"), "\(repaired)")
    }

    /// A device that syncs imported a setting without queueing it (as an older version did: the same
    /// queue, without the setting's line): importing the same document again queues it, and the other
    /// device gets it.
    @Test func importingAgainIntoASyncedDeviceSendsTheSettingsItHolds() throws {
        let source = Device()
        let file = try ImportSafetyTests.export(from: source)
        let backend = TemporaryDirectory()
        let (device, peer) = (Device(), Device())
        for each in [device, peer] { #expect(try each.run("sync", "enable", backend.path + "/backend").status == 0) }
        let first = try device.run("import", file)
        #expect(first.status == 0, "\(first.stderr)")
        let queue = DataDirectoryLayout(root: device.dataDir).pendingQueue
        let lines = String(decoding: try #require(try FileSystem.read(queue)), as: UTF8.self).split(separator: "\n")
        let withoutSettings = lines.filter { !$0.contains(#""type":"Setting""#) }.map { $0 + "\n" }.joined()
        #expect(withoutSettings.count < lines.map { $0.count + 1 }.reduce(0, +), "no setting was queued")
        // Written in place: the queue keeps its identity, as it would have.
        let fd = open(queue, O_WRONLY | O_TRUNC)
        try #require(fd >= 0)
        try Array(withoutSettings.utf8).withUnsafeBytes { try FileSystem.writeAll(fd: fd, $0, path: queue) }
        close(fd)
        let again = try device.run("import", file)
        #expect(again.status == 0, "\(again.stderr)")
        for each in [device, peer] { #expect(try each.run("sync").status == 0) }
        #expect(try peer.run("settings", "get", "clipboard.maxEntries").stdout == "500\n")
    }

    /// Runs itsypad on `device` with a time-out: a hang is reported, not waited for.
    static func run(_ device: Device, _ arguments: [String], timeout: Double = 60) throws -> RunResult {
        let environment = ImportSafetyTests.environment(device)
        return try Process.run(Process.itsypad, arguments, environment: environment, timeout: timeout)
    }

    @Test func anImportedTabNamingAFileIsANormalTabAndSaysSo() throws {
        let device = Device()
        device.directory.write("bashrc", "precious\n")
        let victim = device.directory.file("bashrc")
        let document = """
            {"format":"itsypad-export","version":1,"tabs":[{"id":"00000000-0000-4000-8000-000000000001","name":"shopping",\
            "content":"eggs","language":"plain","languageLocked":false,"lastModified":"2026-01-01T00:00:00.000Z",\
            "fileURL":\(JSONValue.string(victim).serialized()),"syncState":"synced"}],"clips":[],"settings":[]}
            """
        device.directory.write("export.json", document)
        let result = try device.run("import", device.directory.file("export.json"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("imported 1 tab backed by a file as normal tabs"), "\(result.stderr)")
        let listed = try JSONValue.parse(try device.run("tab", "ls", "--json").stdout)
        #expect(listed.arrayValue?.first?["fileURL"] == .null)
        #expect(listed.arrayValue?.first?["content"]?.stringValue == "eggs")
        #expect(try device.run("tab", "edit", "shopping", "milk").status == 0)
        #expect(device.directory.read("bashrc") == "precious\n")
        #expect(try device.run("sync", "status").stdout.contains("pending:    1 tab"))
    }

    @Test func aFIFOWhereAFileBackedTabsFileWasHangsNothing() throws {
        let device = Device()
        let path = device.directory.file("notes.md")
        device.directory.write("notes.md", "notes\n")
        #expect(try device.run("tab", "new", "--file", path).status == 0)
        unlink(path)
        #expect(mkfifo(path, 0o600) == 0)
        for arguments in [["tab", "ls", "--json"], ["export"], ["tab", "show", "notes.md"], ["tab", "ls"]] {
            let result = try ImportSafetyTests.run(device, arguments)
            #expect(!result.timedOut, "\(arguments) hangs on a FIFO")
            #expect(result.signal == nil)
        }
        let show = try ImportSafetyTests.run(device, ["tab", "show", "notes.md"])
        #expect(show.status == 1 && show.stderr.contains("not a regular file"), "\(show.stderr)")
        let export = try ImportSafetyTests.run(device, ["export"])
        #expect(export.status == 1 && export.stderr.contains("left out of the export: tab 'notes.md'"), "\(export.stderr)")
        #expect(export.stderr.contains("everything else was exported (1 tab left out)"), "\(export.stderr)")
    }

    /// The peak resident memory of a run (`/usr/bin/time`), in KiB, and the run.
    static func peakMemory(_ device: Device, _ arguments: [String], stdin: [UInt8]? = nil) throws -> (kib: Int, result: RunResult) {
        let report = device.directory.file("time-\(arguments.count)")
        let environment = ImportSafetyTests.environment(device)
        let result = try Process.run(
            "/usr/bin/time", ["-f", "%M", "-o", report, Process.itsypad] + arguments, stdin: stdin, environment: environment,
            timeout: 300)
        let kib = Int(String(decoding: try FileSystem.read(report) ?? [], as: UTF8.self).split(separator: "\n").last ?? "") ?? .max
        return (kib, result)
    }

    @Test(.needs(["time"]))
    func sparseFilesOfAnySizeAreRefusedInBoundedMemory() throws {
        let device = try ImportSafetyTests.deviceWithData()
        let before = try ImportSafetyTests.snapshot(device)
        device.directory.write("sparse", "")
        let sparse = device.directory.file("sparse")
        for size in [1 << 30, 100 << 30] {
            #expect(truncate(sparse, off_t(size)) == 0)
            for mode in [["--kvs"], ["--from", "clipman"], []] {
                let (kib, result) = try ImportSafetyTests.peakMemory(device, ["import"] + mode + [sparse])
                #expect(result.status == 1 && result.signal == nil, "\(mode) \(size): \(result.status) \(result.stderr)")
                #expect(result.stderr.contains("nothing was imported"), "\(result.stderr)")
                #expect(kib < 100 << 10, "\(mode) of \(size >> 20) MiB: \(kib) KiB resident")
            }
        }
        unlink(sparse)
        #expect(try ImportSafetyTests.snapshot(device) == before)
    }

    @Test func pipesFIFOsAndStandardInputAreReadAsStreams() throws {
        let source = Device()
        let file = try ImportSafetyTests.export(from: source)
        let (_, imported) = try ImportSafetyTests.importing(file)
        let quoted = { (text: String) in "'" + text + "'" }
        for script in ["\"$ITSYPAD\" import <(cat \(quoted(file)))", "cat \(quoted(file)) | \"$ITSYPAD\" import -"] {
            let device = Device()
            let environment = ImportSafetyTests.environment(device)
            let result = try Process.run("/bin/bash", ["-c", script], environment: environment, timeout: 60)
            #expect(result.status == 0, "\(script): \(result.stderr)")
            #expect(try ImportSafetyTests.snapshot(device) == imported, "\(script)")
        }
        // A FIFO whose writer comes after the import opened it, and the other formats through pipes.
        let device = Device()
        device.directory.write(
            "kvs.json", #"{"clipboard":[{"id":"00000000-0000-4000-8000-000000000009","text":"from kvs","timestamp":790000000}]}"#)
        device.directory.write("clipman.json", #"["from clipman"]"#)
        let fifo = device.directory.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let environment = ImportSafetyTests.environment(device)
        let script = """
            "$ITSYPAD" import \(quoted(fifo)) & importing=$!
            cat \(quoted(file)) > \(quoted(fifo)); wait $importing || exit 1
            "$ITSYPAD" import --kvs <(cat \(quoted(device.directory.file("kvs.json")))) || exit 2
            "$ITSYPAD" import --from clipman <(cat \(quoted(device.directory.file("clipman.json")))) || exit 3
            """
        let result = try Process.run("/bin/bash", ["-c", script], environment: environment, timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let texts = try device.run("clip", "ls").stdout
        for text in ["clip one", "from kvs", "from clipman"] { #expect(texts.contains(text), "\(texts)") }
    }

    @Test(.needs(["strace"]))
    func aFileCutShortWhileItIsImportedFailsAndLeavesNothing() throws {
        let device = try ImportSafetyTests.deviceWithData()
        let before = try ImportSafetyTests.snapshot(device)
        let clips = (1...3000).map {
            "{\"id\":\"\(ImportTests.id($0))\",\"text\":\"\(String(repeating: "x", count: 1000))\",\"timestamp\":\"\(ImportTests.time($0 % 3600))\",\"pinned\":false}"
        }
        device.directory.write(
            "big.json",
            "{\"format\":\"itsypad-export\",\"version\":1,\"tabs\":[],\"clips\":[\(clips.joined(separator: ","))],\"settings\":[]}")
        let path = device.directory.file("big.json")
        let scratch = TemporaryScratch()
        let environment = ImportSafetyTests.environment(device)
        // The import pauses right after it maps the file (at its madvise), long enough to cut the file short.
        let pid = try Process.spawn(
            "strace",
            [
                "-f", "-o", "/dev/null", "-e", "trace=madvise", "-e", "inject=madvise:delay_exit=5000000:when=1", Process.itsypad, "import",
                path,
            ],
            stdin: "/dev/null", stdout: scratch.path + "/out", stderr: scratch.path + "/err", environment: environment)
        // A file of /proc has no size: read to its end.
        func proc(_ path: String) -> String {
            let fd = open(path, O_RDONLY)
            guard fd >= 0 else { return "" }
            defer { close(fd) }
            return String(decoding: (try? FileSystem.readAll(fd: fd)) ?? [], as: UTF8.self)
        }
        var mapped = false
        for _ in 0..<6000 where !mapped {
            mapped = proc("/proc/\(pid)/task/\(pid)/children").split(separator: " ").contains { proc("/proc/\($0)/maps").contains(path) }
            if !mapped { usleep(10_000) }
        }
        #expect(mapped, "the import never mapped the file")
        #expect(truncate(path, 5000) == 0)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let stderr = String(decoding: try FileSystem.read(scratch.path + "/err") ?? [], as: UTF8.self)
        #expect(status & 0x7F == 0 && (status >> 8) & 0xFF == 1, "status \(status): \(stderr)")
        #expect(stderr.contains("was cut short while it was read; nothing was imported"), "\(stderr)")
        #expect(!FileSystem.exists(DataDirectoryLayout(root: device.dataDir).staged))
        #expect(try ImportSafetyTests.snapshot(device) == before)
    }
}

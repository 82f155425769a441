import Testing

@testable import ItsypadCLI
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite struct ImportTests {
    let device = Device()

    static func export(clips: [(id: String, text: String, time: String)], tabs: [(id: String, content: String)] = []) -> String {
        let clipItems = clips.map { "{\"id\":\"\($0.id)\",\"text\":\"\($0.text)\",\"timestamp\":\"\($0.time)\",\"pinned\":false}" }
        let tabItems = tabs.map {
            "{\"id\":\"\($0.id)\",\"name\":\"n\",\"content\":\"\($0.content)\",\"language\":\"plain\",\"lastModified\":\"2026-01-01T00:00:00.000Z\"}"
        }
        return
            "{\"format\":\"itsypad-export\",\"version\":1,\"tabs\":[\(tabItems.joined(separator: ","))],\"clips\":[\(clipItems.joined(separator: ","))],\"settings\":[]}"
    }

    static func id(_ number: Int) -> String {
        let hex = String(number, radix: 16)
        return "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex
    }

    static func time(_ second: Int) -> String { "2026-01-01T00:\(twoDigits(second / 60)):\(twoDigits(second % 60)).000Z" }

    /// Everything a user could see of the data directory.
    func snapshot() -> [String] {
        [["clip", "ls", "--json"], ["tab", "ls", "--json"], ["settings", "list"], ["sync", "status"]].map {
            device.inProcess($0, now: 1).1
        }
    }

    @Test func anInvalidItemAfterValidOnesImportsNothing() throws {
        _ = device.inProcess(["clip", "add", "already here"])
        let before = snapshot()
        let valid = ImportTests.export(
            clips: (1...50).map { (ImportTests.id($0), "clip \($0)", ImportTests.time($0)) },
            tabs: [(ImportTests.id(900), "a tab")])
        let broken = valid.replacingFirst("}],\"settings\"", with: "},{\"id\":\"bad\"}],\"settings\"")
        let (status, _, err) = device.inProcess(["import", "-"], stdin: broken)
        #expect(status == 1)
        #expect(err.contains("nothing was imported"), "\(err)")
        #expect(snapshot() == before)
        #expect(!FileSystem.exists(DataDirectoryLayout(root: device.dataDir).staged))
    }

    @Test(.enabled(if: SmallDisk.canMount, "needs root to mount a small tmpfs"))
    func aFullDiskImportsNothingAndSaysSo() throws {
        let scratch = TemporaryDirectory()
        let disk = try SmallDisk(in: scratch.path, megabytes: 1)
        defer { disk.unmount() }
        let dataDir = disk.path + "/data"
        func run(_ arguments: [String], stdin: String? = nil) throws -> RunResult {
            try device.runArguments(arguments, stdin: stdin.map { Array($0.utf8) }, environment: ["ITSYPAD_DATA_DIR": dataDir])
        }
        #expect(try run(["settings", "set", "clipboard.maxEntries", "100000"]).status == 0)
        #expect(try run(["clip", "add", "kept"]).status == 0)
        #expect(try run(["tab", "new", "kept tab"]).status == 0)
        let before = try ["clip ls --json", "tab ls", "settings list"].map { try run($0.split(separator: " ").map(String.init)).stdout }
        // About 1.2 MB of clips and tabs: more than the disk holds.
        let text = String(repeating: "x", count: 3000)
        let document = ImportTests.export(
            clips: (1...300).map { (ImportTests.id($0), "\(text) \($0)", ImportTests.time($0)) },
            tabs: (1...100).map { (ImportTests.id(10_000 + $0), "\(text) tab \($0)") })
        let result = try run(["import", "-"], stdin: document)
        #expect(result.status == 1)
        #expect(result.stderr.contains("No space left on device"), "\(result.stderr)")
        #expect(result.stderr.contains("nothing was"), "\(result.stderr)")
        #expect(
            try ["clip ls --json", "tab ls", "settings list"].map { try run($0.split(separator: " ").map(String.init)).stdout } == before)
        #expect(!FileSystem.exists(DataDirectoryLayout(root: dataDir).staged))
        // The space is free again: later work goes on.
        #expect(try run(["clip", "add", "after"]).status == 0)
    }

    @Test func aCommittedStageIsFinishedAndAnUncommittedOneDropped() throws {
        _ = device.inProcess(["clip", "add", "x"])
        let store = try DataStore(path: device.dataDir)
        // Uncommitted: a crash while staging. The next open drops it.
        let dropped = try StagedChanges(in: FileTree(root: device.dataDir))
        try dropped.write("tabs/" + ImportTests.id(1) + ".json", Array("garbage".utf8))
        store.close()
        _ = try DataStore(path: device.dataDir)
        #expect(!FileSystem.exists(DataDirectoryLayout(root: device.dataDir).staged))
        #expect(!FileSystem.exists(device.dataDir + "/tabs/" + ImportTests.id(1) + ".json"))
        // Committed: a crash after the marker. The next open moves the files into place.
        let source = Device()
        let tabID = source.inProcess(["tab", "new", "from the stage"]).1.trimmingNewline
        let tabFile = try #require(try FileSystem.read(source.dataDir + "/tabs/" + tabID + ".json"))
        let committed = try StagedChanges(in: FileTree(root: device.dataDir))
        try committed.write("tabs/" + tabID + ".json", tabFile)
        try FileSystem.writeAtomically(
            DataDirectoryLayout(root: device.dataDir).staged + "/commit", Array("write tabs/\(tabID).json\n".utf8))
        #expect(device.inProcess(["tab", "show", tabID]).1 == "from the stage")
        #expect(!FileSystem.exists(DataDirectoryLayout(root: device.dataDir).staged))
    }

    /// A committed stage's tab directory replaces an empty one whole, joins a full one a file at a
    /// time, and a crash after it moved whole leaves the rest for the next open to finish.
    @Test(arguments: ["empty", "full", "moved"])
    func aCommittedStageOfTabsIsFinishedWhateverTheTabsDirectoryHolds(_ tabs: String) throws {
        let source = Device()
        let tabID = source.inProcess(["tab", "new", "from the stage"]).1.trimmingNewline
        let tabFile = try #require(try FileSystem.read(source.dataDir + "/tabs/" + tabID + ".json"))
        let local = tabs == "full" ? device.inProcess(["tab", "new", "local"]).1.trimmingNewline : nil
        if tabs == "empty" { try FileSystem.makeDirectory(device.dataDir + "/tabs") }
        let stage = try StagedChanges(in: FileTree(root: device.dataDir))
        let stageDirectory = DataDirectoryLayout(root: device.dataDir).staged
        try stage.write("tabs/" + tabID + ".json", tabFile)
        if tabs == "moved" {
            #expect(try FileTree(root: device.dataDir).moveDirectory(stageDirectory + "/tabs", to: device.dataDir + "/tabs"))
        }
        try FileSystem.writeAtomically(stageDirectory + "/commit", Array("write tabs/\(tabID).json\n".utf8))
        #expect(device.inProcess(["tab", "show", tabID]).1 == "from the stage")
        if let local { #expect(device.inProcess(["tab", "show", local]).1 == "local") }
        #expect(!FileSystem.exists(stageDirectory))
        #expect(try FileSystem.list(device.dataDir + "/tabs").filter { $0.hasSuffix(".json") }.count == (local == nil ? 1 : 2))
    }

    /// Tab files are staged a few hundred at a time: a tab named twice keeps its newer version
    /// wherever the two fall, and a newer local tab is kept, in a fresh data directory or not.
    @Test(arguments: [false, true])
    func aTabNamedTwiceAmongThousandsKeepsItsNewerVersion(_ withLocalTabs: Bool) throws {
        func tab(_ number: Int, _ content: String, month: Int) -> String {
            "{\"id\":\"\(ImportTests.id(number))\",\"name\":\"n\",\"content\":\"\(content)\",\"language\":\"plain\","
                + "\"lastModified\":\"2026-\(twoDigits(month))-01T00:00:00.000Z\"}"
        }
        var tabs = [tab(5, "old", month: 1), tab(7, "newer", month: 3)]
        tabs += (10..<1_110).map { tab($0, "tab \($0)", month: 1) }
        tabs += [tab(5, "new", month: 2), tab(7, "older", month: 1), tab(9, "imported", month: 1)]
        if withLocalTabs {
            let local = "{\"format\":\"itsypad-export\",\"version\":1,\"tabs\":[\(tab(9, "local", month: 5))],\"clips\":[],\"settings\":[]}"
            try FileSystem.writeAtomically(device.dataDir + "/../local.json", Array(local.utf8))
            #expect(device.inProcess(["import", device.dataDir + "/../local.json"]).0 == 0)
        }
        let document =
            "{\"format\":\"itsypad-export\",\"version\":1,\"tabs\":[\(tabs.joined(separator: ","))],\"clips\":[],\"settings\":[]}"
        try FileSystem.writeAtomically(device.dataDir + "/../tabs.json", Array(document.utf8))
        #expect(device.inProcess(["import", device.dataDir + "/../tabs.json"]).0 == 0)
        #expect(device.inProcess(["tab", "show", ImportTests.id(5)]).1 == "new")
        #expect(device.inProcess(["tab", "show", ImportTests.id(7)]).1 == "newer")
        #expect(device.inProcess(["tab", "show", ImportTests.id(9)]).1 == (withLocalTabs ? "local" : "imported"))
        #expect(device.inProcess(["tab", "show", ImportTests.id(1_109)]).1 == "tab 1109")
        #expect(device.inProcess(["tab", "ls"]).1.split(separator: "\n").count == 1_103)
        #expect(!FileSystem.exists(DataDirectoryLayout(root: device.dataDir).staged))
    }

    @Test func theClipCapKeepsTheNewestAddsNothingElseAndSaysSo() throws {
        #expect(device.inProcess(["settings", "set", "clipboard.maxEntries", "5"]).0 == 0)
        #expect(device.inProcess(["clip", "add", "mine"], now: 0).0 == 0)
        let document = ImportTests.export(clips: (1...10).map { (ImportTests.id($0), "clip \($0)", ImportTests.time($0)) })
        let context = Context.memory(environment: ["ITSYPAD_DATA_DIR": device.dataDir], stdin: Array(document.utf8))
        #expect(Itsypad.run(["import", "-"], context: context) == 0)
        #expect(context.standardError.text.contains("imported the newest 4 of 10 new clips"), "\(context.standardError.text)")
        #expect(context.standardError.text.contains("clipboard.maxEntries is 5"))
        let listed = device.inProcess(["clip", "ls"]).1.split(separator: "\n").map { String($0.split(separator: "\t")[1]) }
        #expect(listed == ["clip 10", "clip 9", "clip 8", "clip 7", "mine"])
        // The next clip add evicts one entry, not a mass of them.
        _ = device.inProcess(["clip", "add", "next"])
        let after = device.inProcess(["clip", "ls"]).1.split(separator: "\n").map { String($0.split(separator: "\t")[1]) }
        #expect(after == ["next", "clip 10", "clip 9", "clip 8", "clip 7"])
        // Raising the cap and importing again brings the rest.
        #expect(device.inProcess(["settings", "set", "clipboard.maxEntries", "100"]).0 == 0)
        #expect(device.inProcess(["import", "-"], stdin: document).0 == 0)
        #expect(device.inProcess(["clip", "ls"]).1.split(separator: "\n").count == 11)
    }

    /// An import writes the queue's summary with it (`StagedQueueSummary`), so that the listing after
    /// it replays nothing; the summary says what a full replay of the queue says, version for version,
    /// over a queue that had a summary, confirmations and other records already.
    @Test func anImportLeavesTheQueueSummarizedAsAReplayWould() throws {
        #expect(device.inProcess(["settings", "set", "clipboard.maxEntries", "10000"]).0 == 0)
        let first = ImportTests.export(
            clips: (1...1200).map { (ImportTests.id($0), "clip \($0)", ImportTests.time($0 % 3600)) },
            tabs: [(ImportTests.id(5000), "a tab")])
        #expect(device.inProcess(["import", "-"], stdin: first).0 == 0)
        #expect(device.inProcess(["clip", "ls", "--json"]).0 == 0)
        #expect(device.inProcess(["clip", "add", "mine"]).0 == 0)
        #expect(device.inProcess(["clip", "rm", ImportTests.id(7)]).0 == 0)
        let second = ImportTests.export(
            clips: ([7] + Array(1100...2400)).map { (ImportTests.id($0), "clip \($0)", ImportTests.time($0 % 3600)) },
            tabs: [(ImportTests.id(5000), "a tab"), (ImportTests.id(5001), "another tab")])
        #expect(device.inProcess(["import", "-"], stdin: second).0 == 0)

        let layout = DataDirectoryLayout(root: device.dataDir)
        let log = layout.pendingQueue
        let fd = open(log, O_RDONLY)
        defer { close(fd) }
        var info = stat()
        #expect(fstat(fd, &info) == 0)
        let summary = try #require(
            PendingSummary.load(
                PendingSummary.path(forLog: log), in: FileTree(root: device.dataDir), log: fd, inode: UInt64(info.st_ino),
                size: Int(info.st_size), logPath: log),
            "the import left no summary of its queue")
        #expect(summary.coveredBytes == Int(info.st_size))
        let replayed = try PendingQueue(path: log).waitingRecords(summarized: false)
        #expect(summary.version == replayed.recent.version)
        let changes = try PendingQueue(path: log).changes()
        let clips = changes.filter { $0.key.type == .clip }
        #expect(clips.count == 2401 && summary.clipCount == clips.count)
        let wrong = clips.filter { summary.clipVersion(PackedID($0.key.name)!) != $0.version }
        #expect(wrong.isEmpty, "\(wrong.prefix(3))")
        let others = changes.filter { $0.key.type != .clip }
        #expect(Dictionary(uniqueKeysWithValues: others.map { ($0.key, $0.version) }) == summary.others)
    }

    /// Clips are read from the export's bytes, their text copied into the log when it is escaped
    /// as the log escapes it: whatever the JSON's form, the log must hold exactly what decoding
    /// each clip and adding it writes.
    @Test func clipsInAnyJSONFormAreLoggedAsAddingThemWould() throws {
        let elements = [
            #"{"id":"00000000-0000-4000-8000-000000000001","text":"plain","timestamp":"2026-01-01T00:00:01.000Z","pinned":false,"localOnly":false}"#,
            #"{"id":"00000000-0000-4000-8000-00000000000A","text":"a\n\"b\"\\ caf\u00e9 \/ \b \u001B \t","timestamp":"2026-01-01T00:00:02Z","pinned":true}"#,
            #" { "timestamp" : "2026-01-01T01:00:03.5+01:00" , "text" : "日本 \ud83d\udc4d\r\n" , "id" : "00000000-0000-4000-8000-000000000003" } "#,
            #"{"id":"00000000-0000-4000-8000-000000000004","text":"secret","timestamp":"2026-01-01T00:00:04.000Z","localOnly":true,"localReason":"secret"}"#,
            #"{"id":"00000000-0000-4000-8000-000000000005","text":"local","timestamp":"2026-01-01T00:00:05.000Z","localOnly":true,"pinned":"yes"}"#,
            #"{"id":"00000000-0000-4000-8000-000000000006","text":"nested","timestamp":"2026-01-01T00:00:06.000Z","extra":{"a":[1]}}"#,
            #"{"id":"00000000-0000-4000-8000-000000000007","text":"reason","timestamp":"2026-01-01T00:00:07.000Z","localReason":"nonsense"}"#,
            #"{"\u0069d":"00000000-0000-4000-8000-000000000008","text":"escaped key","timestamp":"2026-01-01T00:00:08.000Z"}"#,
        ]
        let document = #"{"format":"itsypad-export","version":1,"clips":["# + elements.joined(separator: ",") + "]}"
        let (status, _, err) = device.inProcess(["import", "-"], stdin: document)
        #expect(status == 0, "\(err)")
        var expected: [UInt8] = []
        for element in elements {
            let json = try JSONValue.parse(element)
            let reason =
                json["localReason"]?.stringValue.flatMap(LocalOnlyReason.init(rawValue:))
                ?? (json["localOnly"]?.boolValue == true ? .requested : nil)
            let entry = ClipEntry(
                id: try #require(json["id"]?.stringValue).lowercased(), text: try #require(json["text"]?.stringValue),
                timestamp: try #require(json["timestamp"]?.stringValue.flatMap(Time.parseISO8601)),
                pinned: json["pinned"]?.boolValue ?? false, localOnly: reason)
            expected += try ClipStore.addLine(entry)
        }
        #expect(try FileSystem.read(device.dataDir + "/clips/log") == expected)
        #expect(device.inProcess(["clip", "ls"]).1.split(separator: "\n").count == elements.count)
    }
}

extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        return String(self[..<range.lowerBound]) + replacement + String(self[range.upperBound...])
    }
}

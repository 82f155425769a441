import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

@Suite struct SyncPropagationTests {
    @Test(arguments: FleetBackend.allCases)
    func everyCommandsEffectPropagates(_ backend: FleetBackend) throws {
        let fleet = Fleet(2, backend: backend)
        let a = fleet[0], b = fleet[1]
        let tab = a.output("tab", "new", "--name", "shared", "line one")
        let clip = a.output("clip", "add", "copied text")
        let local = a.output("clip", "add", "--local", "only here")
        _ = a.output("settings", "set", "clipboard.retention", "2w")
        _ = a.output("settings", "set", "editor", "nano")
        fleet.enable(0)
        fleet.enable(1)
        #expect(b.output("tab", "show", "shared") == "line one")
        #expect(b.output("clip", "show", clip) == "copied text")
        #expect(b.inProcess(["clip", "show", local]).0 == 1)
        #expect(b.output("settings", "get", "clipboard.retention") == "2w")
        #expect(b.inProcess(["settings", "get", "editor"]).1 == "vi\n", "device-scoped keys never leave the device")

        _ = a.output("tab", "edit", tab, "--name", "renamed")
        _ = a.output("tab", "edit", tab, "line one\nline two")
        _ = a.output("clip", "pin", clip)
        let second = a.output("clip", "add", "second")
        fleet.sync(0)
        fleet.sync(1)
        #expect(b.output("tab", "show", "renamed") == "line one\nline two")
        #expect(b.output("clip", "ls", "--pinned").hasPrefix(String(clip.prefix(8))))

        _ = b.output("clip", "rm", second)
        _ = b.output("tab", "rm", tab)
        _ = b.output("settings", "unset", "clipboard.retention")
        fleet.sync(1)
        fleet.sync(0)
        #expect(a.inProcess(["clip", "show", second]).0 == 1)
        #expect(a.output("tab", "ls").isEmpty)
        #expect(a.output("settings", "get", "clipboard.retention") == "never")
        try fleet.expectConverged()
    }

    @Test(arguments: FleetBackend.allCases)
    func clearPruneAndEvictionDeletePerEntry(_ backend: FleetBackend) throws {
        let fleet = Fleet(2, backend: backend)
        let a = fleet[0], b = fleet[1]
        fleet.enable(0)
        fleet.enable(1)
        _ = a.output("settings", "set", "clipboard.maxEntries", "3")
        for i in 1...5 { _ = a.output("clip", "add", "entry \(i)") }
        fleet.sync(0)
        fleet.sync(1)
        #expect(try fleet.clips(1).count == 3)
        let keep = a.output("clip", "add", "keep me")
        _ = a.output("clip", "pin", keep)
        _ = a.output("clip", "clear")
        fleet.sync(0)
        fleet.sync(1)
        #expect(try fleet.clips(1).values.sorted() == ["keep me|true"])
        try fleet.expectConverged()
    }

    @Test func syncedRecordsShowAsSynced() throws {
        let fleet = Fleet(1)
        let a = fleet[0]
        _ = a.output("clip", "add", "x")
        #expect(a.output("clip", "ls", "--json").contains("\"pending\""))
        fleet.enable(0)
        #expect(a.output("clip", "ls", "--json").contains("\"synced\""))
        #expect(a.output("sync", "status").contains("pending:    0 tabs, 0 clips, 0 settings"))
        #expect(a.output("sync", "log").contains("ok"))
    }

    /// A history long enough that `--json` reads the queue through its summary: each clip's
    /// syncState, pending, then synced, then pending again after an edit, is the full replay's,
    /// and the output is the one printed without a summary.
    @Test func syncStatesThroughTheQueueSummaryAreTheFullReplays() throws {
        let fleet = Fleet(1, backend: .inMemory)
        let a = fleet[0]
        func importClips(_ count: Int, high: UInt64) {
            let clips = (0..<count).map { index in
                JSONValue.object([
                    ("id", .string(PackedID(high: high, low: 0x8000_0000_0000_0000 | UInt64(index)).string)),
                    ("text", .string("clip \(high) \(index) é\t\"")),
                    ("timestamp", .string(Time.iso8601(1_767_400_000_000 + Int64(index)))),
                    ("pinned", .bool(false)), ("localOnly", .bool(index == 3)),
                ])
            }
            let document = JSONValue.object([("format", .string("itsypad-export")), ("version", .integer(1)), ("clips", .array(clips))])
            #expect(a.inProcess(["import", "-"], stdin: document.serialized()).0 == 0)
        }
        _ = a.output("settings", "set", "clipboard.maxEntries", "3000")
        importClips(1200, high: 0xabcd_0000_0000_4000)
        let summary = a.dataDir + "/sync/pending.keys"

        func expectStatesOfTheFullReplay(pending expected: Int, _ comment: Comment) throws {
            // Through the summary the previous step left, then without one.
            let output = a.output("clip", "ls", "--json")
            try FileSystem.remove(summary)
            #expect(a.output("clip", "ls", "--json") == output, comment)
            let waiting = Set(try PendingQueue(path: a.dataDir + "/sync/pending.log").changes().map(\.key))
            var pending = 0
            for clip in try #require(try JSONValue.parse(output).arrayValue) {
                let key = RecordKey(.clip, try #require(clip["id"]?.stringValue))
                let state = clip["localOnly"] == .bool(true) ? "localOnly" : waiting.contains(key) ? "pending" : "synced"
                #expect(clip["syncState"] == .string(state), comment)
                pending += state == "pending" ? 1 : 0
            }
            #expect(pending == expected, comment)
        }

        try expectStatesOfTheFullReplay(pending: 1199, "imported")
        #expect(FileSystem.exists(summary), "a long queue is summarized")
        fleet.enable(0)
        try expectStatesOfTheFullReplay(pending: 0, "synced")
        // Sent, the queue is short again: more clips make it long enough to be summarized, then an edit follows the summary.
        importClips(1000, high: 0xbcde_0000_0000_4000)
        try expectStatesOfTheFullReplay(pending: 999, "more imported")
        #expect(FileSystem.exists(summary), "a long queue is summarized")
        _ = a.output("clip", "pin", PackedID(high: 0xabcd_0000_0000_4000, low: 0x8000_0000_0000_0005).string)
        try expectStatesOfTheFullReplay(pending: 1000, "a synced clip pinned since")
        fleet.sync(0)
        try expectStatesOfTheFullReplay(pending: 0, "synced again")
    }
}

@Suite struct SyncConflictTests {
    @Test(arguments: FleetBackend.allCases)
    func editsToDifferentLinesMerge(_ backend: FleetBackend) throws {
        let fleet = Fleet(2, backend: backend)
        let a = fleet[0], b = fleet[1]
        let tab = a.output("tab", "new", "--name", "doc", "alpha\nbeta\ngamma")
        fleet.enable(0)
        fleet.enable(1)
        _ = a.output("tab", "edit", tab, "ALPHA\nbeta\ngamma")
        _ = b.output("tab", "edit", tab, "alpha\nbeta\nGAMMA")
        fleet.sync(0)
        fleet.sync(1)
        fleet.converge()
        #expect(a.output("tab", "show", tab) == "ALPHA\nbeta\nGAMMA")
        #expect(try fleet.tabs(0).count == 1)
        try fleet.expectConverged()
    }

    @Test(arguments: FleetBackend.allCases)
    func overlappingEditsKeepBothVersions(_ backend: FleetBackend) throws {
        let fleet = Fleet(2, backend: backend)
        let a = fleet[0], b = fleet[1]
        let base: Milliseconds = 1_800_000_000_000
        let tab = a.output("tab", "new", "--name", "doc", "same line", now: base)
        fleet.enable(0)
        fleet.enable(1)
        _ = a.output("tab", "edit", tab, "edited on a", now: base + 1_000)
        _ = b.output("tab", "edit", tab, "edited on b", now: base + 2_000)
        fleet.sync(0)
        fleet.sync(1)
        fleet.converge()
        let tabs = try fleet.tabs(0)
        #expect(tabs[tab] == "doc|edited on b", "the newer edit wins the tab")
        let copy = tabs.first { $0.key != tab }?.value ?? ""
        #expect(copy.hasPrefix("doc (conflict dev0 ") && copy.hasSuffix("|edited on a"), "\(copy)")
        try fleet.expectConverged()
    }

    @Test(arguments: FleetBackend.allCases)
    func aClockBehindDoesNotLoseTheNewerEdit(_ backend: FleetBackend) throws {
        let fleet = Fleet(2, backend: backend)
        let a = fleet[0], b = fleet[1]
        let now: Milliseconds = 1_800_000_000_000
        let tab = a.output("tab", "new", "--name", "doc", "v1", now: now)
        fleet.enable(0)
        fleet.enable(1)
        // b's clock is an hour behind, but its edit comes after it saw v1: it must win.
        _ = b.output("tab", "edit", tab, "v2 from b", now: now - 3_600_000)
        fleet.sync(1)
        fleet.sync(0)
        #expect(a.output("tab", "show", tab) == "v2 from b")
        // And settings: b's later change wins despite its clock.
        _ = a.output("settings", "set", "clipboard.retention", "1d", now: now + 10)
        fleet.sync(0)
        fleet.sync(1)
        _ = b.output("settings", "set", "clipboard.retention", "3d", now: now - 3_600_000)
        fleet.sync(1)
        fleet.sync(0)
        #expect(a.output("settings", "get", "clipboard.retention") == "3d")
    }

    @Test(arguments: FleetBackend.allCases)
    func editBeatsDeleteBothWays(_ backend: FleetBackend) throws {
        let fleet = Fleet(2, backend: backend)
        let a = fleet[0], b = fleet[1]
        let first = a.output("tab", "new", "--name", "first", "text")
        let second = a.output("tab", "new", "--name", "second", "text")
        fleet.enable(0)
        fleet.enable(1)
        // a deletes, b edits; a syncs first.
        _ = a.output("tab", "rm", first)
        _ = b.output("tab", "edit", first, "edited text")
        // b deletes, a edits; b syncs first.
        _ = b.output("tab", "rm", second)
        _ = a.output("tab", "edit", second, "also edited")
        fleet.sync(0)
        fleet.sync(1)
        fleet.converge()
        #expect(a.output("tab", "show", first) == "edited text")
        #expect(a.output("tab", "show", second) == "also edited")
        try fleet.expectConverged()
    }

    @Test(arguments: FleetBackend.allCases)
    func deleteAndDeleteIsFine(_ backend: FleetBackend) throws {
        let fleet = Fleet(2, backend: backend)
        let tab = fleet[0].output("tab", "new", "x")
        fleet.enable(0)
        fleet.enable(1)
        _ = fleet[0].output("tab", "rm", tab)
        _ = fleet[1].output("tab", "rm", tab)
        fleet.converge()
        #expect(try fleet.tabs(0).isEmpty && fleet.tabs(1).isEmpty)
    }

    @Test(arguments: FleetBackend.allCases)
    func pinnedMergesAsLogicalOr(_ backend: FleetBackend) throws {
        let fleet = Fleet(2, backend: backend)
        let a = fleet[0], b = fleet[1]
        let clip = a.output("clip", "add", "pin me")
        fleet.enable(0)
        fleet.enable(1)
        _ = b.output("clip", "pin", clip)
        fleet.converge()
        #expect(try fleet.clips(0)[clip] == "pin me|true")
        try fleet.expectConverged()
    }
}

@Suite struct SyncLifecycleTests {
    @Test func deletionsWhileDisabledAreNotResurrected() throws {
        let fleet = Fleet(2)
        let a = fleet[0]
        let tab = a.output("tab", "new", "doomed")
        let clip = a.output("clip", "add", "doomed clip")
        fleet.enable(0)
        fleet.enable(1)
        _ = a.output("sync", "disable")
        _ = a.output("tab", "rm", tab)
        _ = a.output("clip", "rm", clip)
        #expect(a.inProcess(["sync"]).0 == 1, "sync refuses while disabled")
        fleet.enable(0)
        fleet.converge()
        #expect(try fleet.tabs(1).isEmpty)
        #expect(try fleet.clips(1).isEmpty)
        try fleet.expectConverged()
    }

    @Test(arguments: FleetBackend.allCases)
    func firstSyncNeverOverwritesLocalTabsWithStaleData(_ backend: FleetBackend) throws {
        let fleet = Fleet(2, backend: backend)
        let a = fleet[0], b = fleet[1]
        let tab = a.output("tab", "new", "--name", "notes", "original")
        fleet.enable(0)
        // b got the same tab through an export while offline, then edited it: its edit follows the exported version.
        _ = b.output("import", "-", stdin: a.output("export"))
        _ = b.output("tab", "edit", tab, "edited offline on b")
        fleet.enable(1)
        fleet.converge()
        #expect(a.output("tab", "show", tab) == "edited offline on b")
        #expect(try fleet.tabs(0).count == 1)
        try fleet.expectConverged()
    }

    @Test func anOfflineEditOfAnOlderExportKeepsBothVersions() throws {
        let fleet = Fleet(2)
        let a = fleet[0], b = fleet[1]
        let base: Milliseconds = 1_800_000_000_000
        let tab = a.output("tab", "new", "--name", "notes", "original", now: base)
        let export = a.output("export")
        fleet.enable(0)
        _ = a.output("tab", "edit", tab, "edited on a", now: base + 1_000)
        fleet.sync(0)
        // b edits the export's version, not knowing a's edit.
        _ = b.output("import", "-", stdin: export)
        _ = b.output("tab", "edit", tab, "edited offline on b", now: base + 2_000)
        fleet.enable(1)
        fleet.converge()
        #expect(a.output("tab", "show", tab) == "edited offline on b")
        // Without a common ancestor the older text is kept as a conflict copy, never as a second record of the tab.
        let tabs = try fleet.tabs(0)
        #expect(tabs.count == 2)
        #expect(tabs.values.filter { $0.hasSuffix("|edited on a") }.count == 1)
        try fleet.expectConverged()
    }

    @Test(arguments: [FleetBackend.directory, .encryptedDirectory])
    func replacedBackendGetsEverythingAgainAndLocalDataStays(_ backend: FleetBackend) throws {
        let fleet = Fleet(2, backend: backend)
        let a = fleet[0], b = fleet[1]
        _ = a.output("tab", "new", "from a")
        _ = b.output("clip", "add", "from b")
        fleet.enable(0)
        fleet.enable(1)
        fleet.converge()
        _ = try Process.run("/bin/rm", ["-rf", fleet.backendPath])
        _ = b.output("tab", "new", "made after the wipe")
        // A plain sync never re-creates a backend (it may be an unmounted disk): only sync enable does.
        let (status, _, err) = b.inProcess(["sync"])
        #expect(status == ExitCode.temporary && err.contains("sync enable"))
        #expect(!FileSystem.exists(fleet.backendPath))
        fleet.enable(0)
        fleet.converge()
        #expect(try fleet.tabs(0).count == 2)
        #expect(try fleet.clips(0).count == 1)
        try fleet.expectConverged()
    }

    @Test(arguments: FleetBackend.allCases)
    func expiredTokenStillFindsRemoteDeletions(_ backend: FleetBackend) throws {
        let fleet = Fleet(2, backend: backend)
        let a = fleet[0], b = fleet[1]
        let tab = a.output("tab", "new", "to delete")
        let clip = a.output("clip", "add", "to delete too")
        _ = a.output("tab", "new", "to keep")
        fleet.enable(0)
        fleet.enable(1)
        _ = a.output("tab", "rm", tab)
        _ = a.output("clip", "rm", clip)
        for i in 0..<5 { _ = a.output("clip", "add", "filler \(i)") }
        fleet.sync(0)
        fleet.compact(0)
        fleet.sync(1)
        #expect(b.inProcess(["tab", "show", tab]).0 == 1)
        #expect(b.inProcess(["clip", "show", clip]).0 == 1)
        try fleet.expectConverged()
    }

    @Test func lockedBackendExits75AndKeepsPendingWork() throws {
        let fleet = Fleet(1)
        let a = fleet[0]
        fleet.enable(0)
        _ = a.output("clip", "add", "waiting")
        // In a folder backend each device's writes take the lock in its own folder.
        let device = try DataStore(readingWithoutLock: a.dataDir).deviceID
        var lock = try FileLock(path: fleet.backendPath + "/devices/\(device)/lock", mode: .exclusive, timeout: 1)
        #expect(lock != nil)
        let result = try a.run("sync", environment: ["ITSYPAD_LOCK_TIMEOUT": "0.5"])
        #expect(result.status == 75, "\(result.stderr)")
        #expect(a.output("sync", "status").contains("pending:    0 tabs, 1 clip, 0 settings"))
        #expect(a.output("sync", "log").contains("temporary failure"))
        // After its retries the item shows as failed, with the reason, until a sync succeeds.
        #expect(a.output("clip", "ls", "--json").contains("\"failed\""))
        #expect(a.output("sync", "status").contains("locked"))
        lock = nil
        fleet.sync(0)
        #expect(a.output("clip", "ls", "--json").contains("\"synced\""))
    }

    @Test func quietOnSuccessWhenNotATerminal() throws {
        let fleet = Fleet(1)
        fleet.enable(0)
        let result = try fleet[0].run("sync")
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty && result.stderr.isEmpty)
    }
}

@Suite struct SyncLimitsTests {
    @Test(arguments: [FleetBackend.directory, .encryptedDirectory])
    func largeTabsTravelAsAssetsAndLargeClipsStayLocalWithTheirReason(_ backend: FleetBackend) throws {
        let fleet = Fleet(2, backend: backend)
        let a = fleet[0], b = fleet[1]
        let big = (0..<40_000).map { "line \($0) of a long scratch tab" }.joined(separator: "\n")
        #expect(big.utf8.count > 1_000_000)
        let tab = a.output("tab", "new", "--name", "big", stdin: big)
        let clip = a.output("clip", "add", stdin: String(repeating: "y", count: 1_100_000))
        fleet.enable(0)
        fleet.enable(1)
        #expect(b.output("tab", "show", tab) == big)
        #expect(b.inProcess(["clip", "show", clip]).0 == 1)
        // A folder backend, plain or encrypted, keeps each device's assets in its own folder.
        let assets = try FileSystem.list(fleet.backendPath + "/devices").flatMap {
            try FileSystem.list(fleet.backendPath + "/devices/\($0)/assets")
        }
        #expect(assets.count == 1)
        let status = a.output("sync", "status")
        #expect(status.contains("local-only: 1 (1 clip larger than the 1 MiB record limit)"), "\(status)")
    }
}

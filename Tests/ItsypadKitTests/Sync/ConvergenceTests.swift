import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport
@testable import ItsypadSync

#if canImport(Glibc)
import Glibc
#endif

/// The convergence bugs a harder randomized run found, each as its shortest reproduction.
@Suite struct ConvergenceTests {
    let base: Milliseconds = 1_800_000_000_000

    /// A merge is stamped from the versions merged, not the merger's clock: the device
    /// that merges its older rename late does not win over a newer rename made elsewhere.
    @Test func anOlderRenameMergedLateDoesNotWin() throws {
        let fleet = Fleet(2)
        let a = fleet[0], b = fleet[1]
        let tab = a.output("tab", "new", "--name", "start", "one\ntwo", now: base)
        fleet.enable(0)
        fleet.enable(1)
        _ = b.output("tab", "edit", tab, "one\ntwo\nthree", now: base + 1_000)
        fleet.sync(1, now: base + 2_000)
        _ = a.output("tab", "edit", tab, "--name", "older", "--language", "python", now: base + 3_000)
        _ = b.output("tab", "edit", tab, "--name", "newer", "--language", "rust", now: base + 4_000)
        fleet.sync(0, now: base + 5_000)
        fleet.sync(1, now: base + 6_000)
        fleet.sync(0, now: base + 7_000)
        for device in [a, b] {
            let listing = try #require(try JSONValue.parse(device.output("tab", "ls", "--json")).arrayValue?.first)
            #expect(listing["name"]?.stringValue == "newer")
            #expect(listing["language"]?.stringValue == "rust")
            #expect(listing["content"]?.stringValue == "one\ntwo\nthree")
        }
    }

    /// A rename and a language choice made on one device stand against content edits made later on
    /// another that had not seen them: the name and language those edits re-derive from the content
    /// are no choice (the built binary, as `shared/repros/explicit-label-vs-derived.sh` runs it).
    @Test func aChosenLabelBeatsOneThatFollowsTheContent() throws {
        let a = Device(), b = Device()
        let backend = a.directory.path + "/backend"
        func id(_ result: RunResult) -> String { String(result.stdout.split(separator: "\n").first ?? "") }
        let named = id(try b.run("tab", "new", "hotel line\ndelta line"))
        let coded = id(try b.run("tab", "new", "hotel line\nSELECT 1 FROM t;"))
        for device in [a, b, a] { #expect(try device.run("sync", "enable", backend).status == 0) }
        #expect(try a.run("tab", "edit", named, "--name", "chosen-on-a").status == 0)
        #expect(try a.run("tab", "edit", coded, "--language", "python").status == 0)
        #expect(try b.run("tab", "edit", named, "delta line").status == 0)
        #expect(try b.run("tab", "edit", coded, "def f():\n    return 1").status == 0)
        for _ in 0..<2 {
            for device in [a, b] { #expect(try device.run("sync").status == 0) }
        }
        for device in [a, b] {
            let first = try JSONValue.parse(try device.run("tab", "show", named, "--json").stdout)
            #expect(first["name"]?.stringValue == "chosen-on-a")
            #expect(first["content"]?.stringValue == "delta line")
            let second = try JSONValue.parse(try device.run("tab", "show", coded, "--json").stdout)
            #expect(second["language"]?.stringValue == "python")
            #expect(second["languageLocked"]?.boolValue == true)
            #expect(second["content"]?.stringValue == "def f():\n    return 1")
        }
    }

    /// A merge takes the name and the language each from the version that set it last, whichever
    /// version is newer: a later edit that left the name alone does not undo a rename. Either
    /// side merging gets the same.
    @Test func aMergeTakesEachLabelFromTheVersionThatSetItLast() {
        let id = "0f8fad5b-d9cb-469f-a165-70867728950e"
        let created = HybridTimestamp(physical: 1, device: "c")
        let renamed = HybridTimestamp(physical: 10, device: "a")
        let edited = HybridTimestamp(physical: 20, device: "b")
        let onA = Tab(
            id: id, name: "renamed", nameLocked: true, content: "one", language: "plain", languageLocked: false, lastModified: 10,
            fileURL: nil, clock: renamed, history: EditHistory([created, renamed]), languageClock: created)
        let onB = Tab(
            id: id, name: "notes", nameLocked: true, content: "one\ntwo", language: "rust", languageLocked: true, lastModified: 20,
            fileURL: nil, clock: edited, history: EditHistory([created, edited]), nameClock: created)
        for (first, second) in [(onA, onB), (onB, onA)] {
            let (merged, loser) = TabRecords.merged(first, second, ancestor: "one")
            #expect(loser == nil)
            #expect((merged.name, merged.nameLocked, merged.nameClock) == ("renamed", true, renamed))
            #expect((merged.language, merged.languageLocked, merged.languageClock) == ("rust", true, edited))
            #expect(merged.content == "one\ntwo")
            #expect(merged.history == EditHistory([created, renamed, edited]))
        }
    }

    @Test func theSameMergeIsStampedAlikeOnEveryDevice() {
        let early = HybridTimestamp(physical: 10, counter: 3, device: "a")
        let late = HybridTimestamp(physical: 20, counter: 0, device: "b")
        #expect(HybridTimestamp.merged(early, late) == HybridTimestamp.merged(late, early))
        #expect(HybridTimestamp.merged(early, late) > late)
        #expect(HybridTimestamp.merged(early, late).physical == 20)
    }

    /// A pin queued offline does not bring back a clip deleted elsewhere, even when the
    /// journal was compacted meanwhile; and nothing is left to diverge.
    @Test func aQueuedPinDoesNotResurrectAClipDeletedElsewhere() throws {
        let fleet = Fleet(2)
        let a = fleet[0], b = fleet[1]
        let clip = a.output("clip", "add", "shared clip")
        fleet.enable(0)
        fleet.enable(1)
        _ = b.output("sync", "disable")
        _ = b.output("clip", "pin", clip)
        _ = a.output("clip", "rm", clip)
        fleet.sync(0)
        _ = a.output("sync", "compact")
        fleet.enable(1)
        fleet.sync(0)
        fleet.sync(1)
        fleet.sync(0)
        #expect(try fleet.clips(0).isEmpty)
        #expect(try fleet.clips(1).isEmpty)
        #expect(try fannedOutRecordFiles(in: fleet.backendPath + "/records/ClipboardEntry").isEmpty)
        for device in [a, b] { #expect(device.output("sync", "status").contains("pending:    0 tabs, 0 clips, 0 settings")) }
    }

    /// The same when the clip was pruned (removed without a tombstone): after the compaction,
    /// the device that had it synced knows it was removed, whatever waits in its queue.
    @Test func aQueuedPinDoesNotResurrectAPrunedClip() throws {
        let fleet = Fleet(2)
        let a = fleet[0], b = fleet[1]
        let base: Milliseconds = 1_800_000_000_000
        let clip = a.output("clip", "add", "old clip", now: base)
        fleet.enable(0)
        fleet.enable(1)
        _ = b.output("sync", "disable")
        _ = b.output("clip", "pin", clip)
        _ = a.output("clip", "prune", "--older-than", "1d", now: base + 2 * 86_400_000)
        fleet.sync(0)
        _ = a.output("sync", "compact")
        fleet.enable(1)
        fleet.converge()
        #expect(try fleet.clips(0).isEmpty)
        #expect(try fleet.clips(1).isEmpty)
    }

    /// A clip created again on the backend after a device removed it comes back to that device.
    @Test func aClipCreatedAgainAfterARemovalComesBack() throws {
        let directory = TemporaryDirectory()
        let store = try ClipStore(directory: directory.path + "/clips")
        let entry = ClipEntry(id: Identifier.make(), text: "again", timestamp: 1)
        #expect(try store.insert([entry]).count == 1)
        try store.remove(ids: [entry.id])
        #expect(try store.insert([entry]).count == 1)
        #expect(try store.insert([entry]).isEmpty, "a live id is present")
        #expect(try ClipStore(directory: directory.path + "/clips").entries().map(\.id) == [entry.id])
    }

    /// An unpin made after seeing the pin syncs and sticks, on both devices.
    @Test func aSequentialUnpinSticks() throws {
        let fleet = Fleet(2)
        let a = fleet[0]
        fleet.enable(0)
        fleet.enable(1)
        let clip = a.output("clip", "add", "pin me")
        fleet.sync(0)
        fleet.sync(1)
        _ = a.output("clip", "pin", clip)
        fleet.sync(0)
        fleet.sync(1)
        _ = a.output("clip", "unpin", clip)
        fleet.sync(0)
        fleet.sync(1)
        #expect(try fleet.clips(0)[clip] == "pin me|false")
        #expect(try fleet.clips(1)[clip] == "pin me|false")
    }

    /// Concurrent pin changes still merge as logical OR.
    @Test func concurrentPinChangesMergeAsOr() throws {
        let fleet = Fleet(2)
        let a = fleet[0], b = fleet[1]
        let clip = a.output("clip", "add", "shared")
        _ = a.output("clip", "pin", clip)
        fleet.enable(0)
        fleet.enable(1)
        _ = a.output("clip", "unpin", clip)
        _ = b.output("clip", "unpin", clip)
        _ = b.output("clip", "pin", clip)
        fleet.converge()
        #expect(try fleet.clips(0)[clip] == "shared|true")
        try fleet.expectConverged()
    }

    @Test(arguments: [
        // local, ours (synced pinned, history, change), remote (pinned, history) -> outcome
        (false, true, ["1.0.a"], "2.0.b", true, ["1.0.a"], "sendOurs"),  // unpin after seeing the pin: sequential
        (false, true, ["1.0.a"], "2.0.b", true, ["1.0.a", "3.0.c"], "takeRemote"),  // concurrent, remote pinned: OR
        (true, false, ["1.0.a"], "2.0.b", false, ["1.0.a", "3.0.c"], "sendOurs"),  // concurrent, ours pinned: OR
        (true, false, [], "2.0.b", false, ["2.0.b", "3.0.c"], "takeRemote"),  // remote already has our pin
        (true, false, [], "2.0.b", true, ["3.0.c"], "takeRemote"),  // same state
        (false, false, [], "79.0.b", true, ["68.0.b"], "sendOurs"),  // after our own pin, committed unheard
    ])
    func pinResolution(
        local: Bool, syncedPinned: Bool, synced: [String], change: String, remotePinned: Bool, remote: [String], expected: String
    ) {
        let ours = ClipSyncLedger.Entry(
            tag: "5", pinned: syncedPinned, history: EditHistory(strings: synced)!, change: HybridTimestamp(change))
        let theirs = ClipSyncLedger.Entry(tag: "6", pinned: remotePinned, history: EditHistory(strings: remote)!)
        let outcome = ClipRecords.resolvePin(local: local, ours: ours, remote: theirs)
        switch outcome {
        case .takeRemote: #expect(expected == "takeRemote")
        case .sendOurs(let base):
            #expect(expected == "sendOurs")
            #expect(base.tag == "6" && base.change == ours.change)
            #expect(base.history.includes(theirs.history))
        }
    }

    /// A sync killed after its batch committed, before it heard back: the edit it sent,
    /// seen and deleted by another device, is not resurrected; nor is a clip it added.
    @Test(arguments: [false, true])
    func aCrashAfterACommitDoesNotResurrectADeletion(compacting: Bool) throws {
        let (fleet, tab) = twoDevices(sharingTab: "v1", named: "t")
        let a = fleet[0], b = fleet[1]
        _ = b.output("tab", "edit", tab, "v2 from b")
        let clip = b.output("clip", "add", "clip from b")
        try simulateCrashAfterCommit(b) { fleet.sync(1) }
        fleet.sync(0)
        #expect(a.output("tab", "show", tab) == "v2 from b")
        _ = a.output("tab", "rm", tab)
        _ = a.output("clip", "rm", clip)
        fleet.sync(0)
        if compacting { _ = a.output("sync", "compact") }
        fleet.sync(1)
        fleet.sync(0)
        fleet.sync(1)
        #expect(try fleet.tabs(0).isEmpty && fleet.tabs(1).isEmpty)
        #expect(try fleet.clips(0).isEmpty && fleet.clips(1).isEmpty)
        #expect(try fannedOutRecordFiles(in: fleet.backendPath + "/records/ClipboardEntry").isEmpty)
    }

    /// An edit made after the crashed sync is one the deleter never saw: it wins.
    @Test func anEditAfterTheCrashStillBeatsTheDeletion() throws {
        let (fleet, tab) = twoDevices(sharingTab: "v1", named: "t")
        let a = fleet[0], b = fleet[1]
        _ = b.output("tab", "edit", tab, "v2 from b")
        try simulateCrashAfterCommit(b) { fleet.sync(1) }
        fleet.sync(0)
        _ = a.output("tab", "rm", tab)
        fleet.sync(0)
        _ = a.output("sync", "compact")
        _ = b.output("tab", "edit", tab, "v2 from b\nv3 typed after")
        fleet.converge()
        #expect(a.output("tab", "show", tab) == "v2 from b\nv3 typed after")
        try fleet.expectConverged()
    }

    /// A tab removed on one device and edited on another: the edit, unseen by the deleter, comes
    /// back, and a third device that fetches the re-created tab and the removal's tombstone in one
    /// fetch (each device's journal is read in turn, so they come in either order) keeps it
    /// too. `deleterFirst`: whether the deleter's device is the first of the two.
    @Test(arguments: [false, true])
    func aThirdDeviceKeepsATabAnEditBroughtBackOverARemoval(deleterFirst: Bool) throws {
        let fleet = Fleet(3)
        let tab = fleet[0].output("tab", "new", "--name", "t", "v1")
        for index in 0..<3 { fleet.enable(index) }
        let (deleter, editor) = deleterFirst ? (0, 1) : (1, 0)
        _ = fleet[deleter].output("tab", "rm", tab)
        _ = fleet[editor].output("tab", "edit", tab, "v1\nv2 unseen by the deleter")
        fleet.sync(deleter)
        fleet.sync(editor)
        fleet.sync(editor)
        fleet.sync(2)
        #expect(fleet[2].output("tab", "show", tab) == "v1\nv2 unseen by the deleter")
        fleet.converge()
        #expect(try fleet.tabs(0)[tab] == "t|v1\nv2 unseen by the deleter")
        try fleet.expectConverged()
    }

    /// A synced tab removed here leaves the record of its removal (what it had seen) until the removal is sent.
    @Test func aRemovedTabIsRecordedUntilTheRemovalIsSent() throws {
        let fleet = Fleet(1)
        let a = fleet[0]
        let tab = a.output("tab", "new", "text")
        fleet.enable(0)
        _ = a.output("tab", "rm", tab)
        let store = try DataStore(path: a.dataDir)
        guard case .deleted(let deletion)? = try store.tabs.entry(id: tab) else {
            Issue.record("no record of the removal")
            return
        }
        #expect(deletion.tag != nil && !deletion.history.clocks.isEmpty)
        #expect(try store.tabs.all().isEmpty && store.tabs.tab(id: tab) == nil)
        store.close()
        fleet.sync(0)
        #expect(!FileSystem.exists(a.dataDir + "/tabs/\(tab).json"))
        // A version's file is named `<record name>.<device>.json`.
        #expect(
            try fannedOutRecordFiles(in: fleet.backendPath + "/records/Tombstone").map {
                FileSystem.baseName($0).split(separator: ".").prefix(2).joined(separator: ".")
            }
                == ["ScratchTab.\(tab)"])
    }

    /// Two devices syncing one backend and a tab made on the first: the fleet and the tab's id.
    func twoDevices(sharingTab content: String, named name: String) -> (Fleet, String) {
        let fleet = Fleet(2)
        let tab = fleet[0].output("tab", "new", "--name", name, content)
        fleet.enable(0)
        fleet.enable(1)
        return (fleet, tab)
    }

    /// Runs `body` (a sync) and puts the device's data directory back as it was before:
    /// what a kill after the backend committed, before anything was recorded locally, leaves.
    func simulateCrashAfterCommit(_ device: Device, _ body: () -> Void) throws {
        let snapshot = device.directory.path + "/snapshot"
        try Process.run("/bin/cp", ["-a", device.dataDir, snapshot])
        body()
        try Process.run("/bin/rm", ["-rf", device.dataDir])
        try Process.run("/bin/mv", [snapshot, device.dataDir])
    }

    /// A lost queue is noticed and rebuilt from what differs from the last synced versions.
    @Test func aLostQueueIsRebuiltAndTheEditSent() throws {
        let fleet = Fleet(2)
        let a = fleet[0], b = fleet[1]
        let tab = a.output("tab", "new", "--name", "t1", "c1")
        let clip = a.output("clip", "add", "clip")
        fleet.enable(0)
        fleet.enable(1)
        _ = b.output("tab", "edit", tab, "edit on b (queued)")
        _ = b.output("clip", "pin", clip)
        _ = b.output("settings", "set", "clipboard.retention", "2w")
        let doomed = b.output("tab", "new", "doomed")
        fleet.sync(1)
        _ = b.output("tab", "rm", doomed)
        try FileSystem.remove(b.dataDir + "/sync/pending.log")
        let (status, _, err) = b.inProcess(["sync"])
        #expect(status == 0)
        #expect(err.contains("pending.log was missing") && err.contains("rebuilt"), "\(err)")
        fleet.sync(0)
        #expect(a.output("tab", "show", tab) == "edit on b (queued)")
        #expect(try fleet.clips(0)[clip] == "clip|true")
        #expect(a.output("settings", "get", "clipboard.retention") == "2w")
        #expect(a.inProcess(["tab", "show", doomed]).0 == 1, "the deletion was rebuilt too")
        // The next remote edit follows b's, which it had seen: no conflict.
        _ = a.output("tab", "edit", tab, "later edit on a")
        fleet.sync(0)
        fleet.sync(1)
        #expect(b.output("tab", "show", tab) == "later edit on a")
        #expect(try fleet.tabs(1).count == 1)
        #expect(!(b.inProcess(["sync"]).2.contains("warning")), "once rebuilt, the queue is trusted again")
    }

    /// Garbage in the middle of the queue is reported, the file kept, and the queue rebuilt; a torn last line is not.
    @Test func aDamagedQueueIsReportedKeptAndRebuilt() throws {
        let (fleet, tab) = twoDevices(sharingTab: "c1", named: "t1")
        let a = fleet[0], b = fleet[1]
        _ = b.output("tab", "edit", tab, "edit on b")
        let path = b.dataDir + "/sync/pending.log"
        var lines = try #require(try FileSystem.read(path)).split(separator: 0x0A).map(Array.init)
        lines.insert(Array("\u{0}\u{0}garbage".utf8), at: 1)
        try FileSystem.writeAtomically(path, Array(lines.joined(separator: [0x0A])) + [0x0A] + Array("{\"op\":\"sa".utf8))
        let (status, _, err) = b.inProcess(["sync"])
        #expect(status == 0)
        #expect(err.contains("unreadable line") && err.contains("kept as"), "\(err)")
        let kept = try FileSystem.list(b.dataDir + "/sync").filter { $0.hasPrefix("pending.log.damaged-") }
        #expect(kept.count == 1)
        fleet.sync(0)
        #expect(a.output("tab", "show", tab) == "edit on b")

        // A torn last line alone is a crash mid-append: nothing to report.
        _ = b.output("tab", "edit", tab, "second edit on b")
        try FileSystem.writeAtomically(path, try #require(try FileSystem.read(path)) + Array("{\"op\":\"sa".utf8))
        let torn = b.inProcess(["sync"])
        #expect(torn.0 == 0 && !torn.2.contains("warning"), "\(torn.2)")
        fleet.sync(0)
        #expect(a.output("tab", "show", tab) == "second edit on b")
    }
}

/// Tombstones outlive compaction, and `sync compact` removes them once old.
@Suite struct TombstoneTests {
    @Test func compactionRemovesOnlyOldTombstones() throws {
        let fleet = Fleet(1)
        let a = fleet[0]
        let old = a.output("tab", "new", "old")
        let young = a.output("tab", "new", "young")
        fleet.enable(0)
        let day: Milliseconds = 86_400_000
        let start = Time.now()
        // The deletions are stamped by the backend's clock: write the old one a hundred days back.
        let store = try DataStore(path: a.dataDir)
        let backend = try BackendOpener.open(fleet.backendPath, for: store, lockTimeout: 10, now: { start - 100 * day })
        try store.removeTab(try #require(try store.tabs.tab(id: old)))
        try SyncEngine(store: store, backend: backend).sync()
        store.close()
        _ = a.output("tab", "rm", young)
        fleet.sync(0)
        // One file per version, `<record name>.<device>.json`; a purged tombstone record
        // leaves a deletion, removed once every device has seen it (at the next syncs).
        let tombstones = {
            try fannedOutRecordFiles(in: fleet.backendPath + "/records/Tombstone").map {
                String(FileSystem.baseName($0).split(separator: ".")[1])
            }
        }
        #expect(try Set(tombstones()) == [old, young])
        #expect(a.inProcess(["sync", "compact"]).0 == 0)
        fleet.sync(0)
        fleet.sync(0)
        #expect(try tombstones() == [young])
    }
}

/// `import --kvs` reads the forms a key-value dump takes.
@Suite struct LegacyKeyValueImportTests {
    static let tab =
        #"[{"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","name":"Kept","content":"print(1)","language":"python","lastModified":754000000}]"#
    static let clips = #"[{"id":"8F9619FF-8B86-D011-B42D-00C04FC964FF","text":"kept clip","timestamp":754000001}]"#

    /// As a property-list export writes data: base64, optionally in lines.
    static func base64(_ text: String, wrappedAt width: Int = 0) -> String {
        let encoded = Base64.encode(Array(text.utf8))
        guard width > 0 else { return encoded }
        return stride(from: 0, to: encoded.count, by: width).map { String(encoded.dropFirst($0).prefix(width)) }.joined(separator: "\n\t")
    }

    static func quoted(_ text: String) -> String { (JSONValue.string(text)).serialized() }

    @Test(arguments: [
        ("decoded arrays", "{\"tabs\":\(tab),\"clipboard\":\(clips)}"),
        ("JSON documents as strings", "{\"tabs\":\(quoted(tab)),\"clipboard\":\(quoted(clips))}"),
        ("base64 data", "{\"tabs\":\(quoted(base64(tab))),\"clipboard\":\(quoted(base64(clips)))}"),
        (
            "base64 data wrapped in lines",
            "{\"tabs\":\(quoted(base64(tab, wrappedAt: 68))),\"clipboard\":\(quoted(base64(clips, wrappedAt: 68)))}"
        ),
        ("tombstones as a string", "{\"tabs\":\(tab),\"clipboard\":\(clips),\"deletedTabIDs\":\(quoted("[]"))}"),
    ])
    func importsEachForm(_ form: String, _ dump: String) {
        let device = Device()
        let (status, _, err) = device.inProcess(["import", "--kvs", "-"], stdin: dump)
        #expect(status == 0, "\(form): \(err)")
        #expect(device.inProcess(["tab", "ls"]).1.contains("Kept"), "\(form)")
        #expect(device.inProcess(["clip", "ls"]).1 == "8f9619ff\tkept clip\n", "\(form)")
    }

    @Test(arguments: [
        ("tabs", #"{"tabs":"not json and not base64!","clipboard":[]}"#),
        ("tabs", #"{"tabs":42}"#),
        ("clipboard", #"{"tabs":[],"clipboard":"eyJub3QiOiJhbiBhcnJheSJ9"}"#),
        ("deletedClipboardIDs", #"{"clipboard":[],"deletedClipboardIDs":{"a":1}}"#),
    ])
    func refusesWhatItDoesNotRecognise(_ key: String, _ dump: String) {
        let device = Device()
        let (status, _, err) = device.inProcess(["import", "--kvs", "-"], stdin: dump)
        #expect(status == 1)
        #expect(err.contains("dump's \(key) is"), "\(err)")
        #expect(device.inProcess(["tab", "ls"]).1.isEmpty)
    }
}

import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport
@testable import ItsypadSync

/// A backend that runs `body` just before the first call named `pausing`: a sync blocked in
/// backend I/O, caught in the act (the in-memory backend does the work). With `thenFailing`,
/// every later call of that name throws it.
final class PausingBackend: SyncBackend, @unchecked Sendable {
    private let base: SyncBackend
    private let pausing: String
    private var paused = false
    private let thenFailing: BackendError?
    private let body: () -> Void

    init(_ base: SyncBackend, pausingAt call: String, thenFailing: BackendError? = nil, _ body: @escaping () -> Void) {
        self.base = base
        pausing = call
        self.thenFailing = thenFailing
        self.body = body
    }

    private func call<T>(_ name: String, _ work: () throws -> T) throws -> T {
        if name == pausing {
            if paused, let thenFailing { throw thenFailing }
            if !paused { body() }
            paused = true
        }
        return try work()
    }

    var limits: BackendLimits { base.limits }
    var absenceProvesDeletion: Bool { base.absenceProvesDeletion }
    func sealedByteCount(of fields: [String: FieldValue]) throws -> Int? { try base.sealedByteCount(of: fields) }
    func createZoneIfNeeded() throws -> ZoneInfo { try call("createZoneIfNeeded") { try base.createZoneIfNeeded() } }
    func zone() throws -> ZoneInfo { try call("zone") { try base.zone() } }
    func fetchChanges(since token: ChangeToken?, limit: Int) throws -> ChangesPage {
        try call("fetchChanges") { try base.fetchChanges(since: token, limit: limit) }
    }
    func modify(saves: [RecordSave], deletes: [RecordDelete], device: String) throws -> ModifyResult {
        try call("modify") { try base.modify(saves: saves, deletes: deletes, device: device) }
    }
    func putAsset(_ bytes: [UInt8]) throws -> AssetReference { try call("putAsset") { try base.putAsset(bytes) } }
    func readAsset(_ reference: AssetReference) throws -> [UInt8] { try call("readAsset") { try base.readAsset(reference) } }
    func fetchRecord(_ id: RecordID) throws -> BackendRecord? { try call("fetchRecord") { try base.fetchRecord(id) } }
    func compact() throws -> CompactionReport { try call("compact") { try base.compact() } }
    func location(of id: RecordID) -> String { base.location(of: id) }
}

/// A sync holds the data directory's lock only in short local steps, never while it waits for
/// the backend: commands run meanwhile, and what they change comes out as if made just after it.
@Suite struct SyncLockTests {
    /// The engine of `fleet`'s device `index`, its backend pausing at `call` to run `body`.
    func engine(
        _ fleet: Fleet, _ index: Int, pausingAt call: String, thenFailing: BackendError? = nil,
        _ body: @escaping () -> Void
    ) throws -> SyncEngine {
        let backend = PausingBackend(try #require(fleet.memoryBackend), pausingAt: call, thenFailing: thenFailing, body)
        return try SyncEngine(store: try DataStore(path: fleet[index].dataDir, lockTimeout: 1), backend: backend)
    }

    /// `clip add` with no wait for the lock at all (a clipboard watcher's), run as the binary while
    /// the sync is inside each kind of backend call; a second sync is refused with 75 meanwhile.
    @Test(arguments: ["zone", "fetchChanges", "modify", "putAsset"])
    func clipAddRunsWhileASyncWaitsForTheBackend(call: String) throws {
        let fleet = Fleet(2, backend: .inMemory)
        let a = fleet[0]
        fleet.enable(0)
        fleet.enable(1)
        // What `sync` needs to get as far as the sync lock (the in-memory fleet syncs in-process).
        _ = a.output("settings", "set", "sync.backend", fleet.backend.path + "/unused")
        _ = a.output("settings", "set", "sync.enabled", "true")
        // Something to send, its content large enough to travel as an asset.
        _ = a.output("tab", "new", String(repeating: "long line\n", count: BackendLimits.cloudKit.maxInlineValueBytes / 10 + 1))
        var added: RunResult?
        var secondSync: RunResult?
        try engine(fleet, 0, pausingAt: call) {
            added = try? a.run("clip", "add", "copied during \(call)", environment: ["ITSYPAD_LOCK_TIMEOUT": "0"])
            secondSync = try? a.run("sync", environment: ["ITSYPAD_LOCK_TIMEOUT": "0"])
        }.sync()
        let clip = try #require(added, "the backend call \(call) was never made")
        #expect(clip.status == 0, "clip add during \(call): \(clip.stderr)")
        #expect(secondSync?.status == ExitCode.temporary)
        #expect(secondSync?.stderr.contains("another sync of \(a.dataDir) is under way") == true, "\(secondSync?.stderr ?? "")")
        fleet.converge()
        #expect(fleet[1].output("clip", "show", clip.stdout.trimmingNewline) == "copied during \(call)")
    }

    /// A tab edited while the page holding another device's edit of it is being fetched: the
    /// fetched version is applied against the edit, which it does not overwrite (they merge).
    @Test func anEditMadeWhileFetchingIsNotOverwritten() throws {
        let fleet = Fleet(2, backend: .inMemory)
        let a = fleet[0], b = fleet[1]
        fleet.enable(0)
        let id = a.output("tab", "new", "first\nsecond")
        fleet.sync(0)
        fleet.enable(1)
        _ = b.output("tab", "edit", id, "first\nsecond\nfrom b")
        fleet.sync(1)
        try engine(fleet, 0, pausingAt: "fetchChanges") {
            _ = a.output("tab", "edit", id, "from a\nfirst\nsecond")
        }.sync()
        #expect(a.output("tab", "show", id) == "from a\nfirst\nsecond\nfrom b")
        fleet.converge()
        #expect(b.output("tab", "show", id) == "from a\nfirst\nsecond\nfrom b")
    }

    /// A tab edited while the batch sending its previous version is on its way: the version sent
    /// becomes the synced one, and the edit stays on top of it, pending: the push read the queue
    /// as it stood when it started, so the edit waits for the next run (a second batch would fail
    /// here, and none is sent). A tab of the batch left alone is accepted as sent. With the pending
    /// log compacted after the edit: a log put in place of the one the push watched may hide the
    /// edit's line, so the tabs sent are read again at acceptance.
    @Test(arguments: [false, true])
    func anEditMadeWhileItsBatchIsSentStaysPending(compactedMeanwhile: Bool) throws {
        let fleet = Fleet(2, backend: .inMemory)
        let a = fleet[0], b = fleet[1]
        fleet.enable(0)
        fleet.enable(1)
        let id = a.output("tab", "new", "sent")
        let alone = a.output("tab", "new", "sent alone")
        try engine(fleet, 0, pausingAt: "modify", thenFailing: BackendError.unavailable("share unmounted")) {
            _ = a.output("tab", "edit", id, "sent\nedited on the way")
            guard compactedMeanwhile else { return }
            do { try DataStore(path: a.dataDir).pending().compact { _ in true } } catch { Issue.record("compaction: \(error)") }
        }.push()
        let tab = try #require(try DataStore(path: a.dataDir).tabs.tab(id: id))
        #expect(tab.content == "sent\nedited on the way")
        #expect(tab.sync?.ancestor == "sent")
        #expect(tab.hasUnsyncedChanges)
        #expect(try DataStore(path: a.dataDir).tabs.tab(id: alone)?.sync?.ancestor == "sent alone")
        // After a compaction meanwhile, `sync status` counted the tab left alone as waiting too (not traced).
        if !compactedMeanwhile { #expect(a.output("sync", "status").contains("pending:    1 tab, 0 clips, 0 settings")) }
        fleet.converge()
        #expect(b.output("tab", "show", id) == "sent\nedited on the way")
        #expect(b.output("tab", "show", alone) == "sent alone")
        #expect(a.output("sync", "status").contains("pending:    0 tabs, 0 clips, 0 settings"))
        #expect(try DataStore(path: a.dataDir).tabs.tab(id: id)?.hasUnsyncedChanges == false)
    }

    /// Tabs edited and removed between a push and the fetch after it, which brings their sent
    /// versions back (and, as this run accepted them, skips them): the edit and the removal stay
    /// pending, and reach the other device.
    @Test func changesMadeBeforeTheFetchAfterAPushStayPending() throws {
        let fleet = Fleet(2, backend: .inMemory)
        let a = fleet[0], b = fleet[1]
        fleet.enable(0)
        fleet.enable(1)
        let edited = a.output("tab", "new", "sent")
        let removed = a.output("tab", "new", "sent, then removed")
        do {
            // One engine for both: the fetch meets the versions its push sent.
            let engine = try engine(fleet, 0, pausingAt: "fetchChanges") {
                _ = a.output("tab", "edit", edited, "sent\nedited before the fetch")
                _ = a.output("tab", "rm", removed)
            }
            try engine.push()
            try engine.pull()
        }
        let tab = try #require(try DataStore(path: a.dataDir).tabs.tab(id: edited))
        #expect(tab.content == "sent\nedited before the fetch")
        #expect(tab.sync?.ancestor == "sent")
        #expect(a.output("sync", "status").contains("pending:    2 tabs, 0 clips, 0 settings"))
        fleet.converge()
        #expect(b.output("tab", "show", edited) == "sent\nedited before the fetch")
        #expect(try b.run("tab", "show", removed).status != 0)
        #expect(a.output("sync", "status").contains("pending:    0 tabs, 0 clips, 0 settings"))
    }

    /// A page applied in several steps (the lock handed over between them) arrives whole.
    @Test func aPageAppliedInStepsArrivesWhole() throws {
        let fleet = Fleet(2, backend: .inMemory)
        let a = fleet[0], b = fleet[1]
        fleet.enable(0)
        let tabs = (0..<(SyncEngine.stepSize * 2 + 1)).map {
            "{\"id\":\"\(Identifier.make())\",\"content\":\"tab \($0)\",\"lastModified\":\"2026-01-01T00:00:00.000Z\"}"
        }
        _ = a.output("import", "-", stdin: "{\"format\":\"itsypad-export\",\"version\":1,\"tabs\":[\(tabs.joined(separator: ","))]}")
        fleet.sync(0)
        fleet.enable(1)
        #expect(try fleet.tabs(1).count == tabs.count)
    }
}

/// How a sync between two steps knows that a command waits for the data directory.
@Suite struct LockWaitersTests {
    /// A command waiting for the lock holds `lock-waiters` shared; once it is done, nobody does.
    @Test func aWaitingCommandAnnouncesItself() throws {
        let device = Device()
        _ = device.output("clip", "add", "first")
        let lock = try #require(try FileLock(path: device.dataDir + "/lock", mode: .exclusive, timeout: 1))
        let script = """
            "$ITSYPAD" clip add queued >/dev/null 2>&1 &
            for i in $(seq 1 300); do
              if ! flock -n -x "$ITSYPAD_DATA_DIR/lock-waiters" true; then echo seen; break; fi
              sleep 0.01
            done
            wait
            """
        let result = try Process.run(
            "/bin/sh", ["-c", script],
            environment: Process.baseEnvironment.merging(
                ["ITSYPAD": Process.itsypad, "ITSYPAD_DATA_DIR": device.dataDir, "ITSYPAD_LOCK_TIMEOUT": "5"]) { $1 })
        #expect(result.stdout == "seen\n", "\(result.stderr)")
        withExtendedLifetime(lock) {}
        #expect(try FileLock(path: device.dataDir + "/lock-waiters", mode: .exclusive, timeout: 0) != nil)
    }

    /// A command waiting for the lock tries again at least every millisecond: a sync hands it over
    /// between steps of a millisecond or two, so a longer pause, not the step, would be most of
    /// the wait. The pauses asked for (`strace` of its sleeps while the lock stays held) do not
    /// depend on the machine's load; before, they grew to 4 ms.
    @Test(.needs(["strace"])) func aWaitingCommandTriesAgainEveryMillisecond() throws {
        let device = Device()
        _ = device.output("clip", "add", "first")
        let lock = try #require(try FileLock(path: device.dataDir + "/lock", mode: .exclusive, timeout: 1))
        let scratch = TemporaryDirectory()
        let trace = scratch.path + "/trace"
        let result = try device.runArguments(
            ["-f", "-e", "trace=nanosleep,clock_nanosleep", "-o", trace, Process.itsypad, "clip", "add", "queued"],
            environment: ["ITSYPAD_LOCK_TIMEOUT": "0.1"], program: "/usr/bin/strace")
        withExtendedLifetime(lock) {}
        #expect(result.status == 75, "clip add was not refused once the lock stayed busy: \(result.stderr)")
        var pauses: [Int] = []
        for line in String(decoding: try FileSystem.read(trace) ?? [], as: UTF8.self).split(separator: "\n") {
            guard line.contains("nanosleep("), let seconds = line.firstRange(of: "tv_sec="),
                let nanoseconds = line.firstRange(of: "tv_nsec=")
            else { continue }
            let number = { (start: String.Index) in Int(line[start...].prefix { $0.isNumber }) ?? -1 }
            pauses.append(number(seconds.upperBound) * 1_000_000_000 + number(nanoseconds.upperBound))
        }
        #expect(pauses.count >= 50, "\(pauses.count) pauses while waiting 0.1 s")
        #expect(pauses.allSatisfy { $0 <= 1_000_000 }, "pauses longer than 1 ms: \(Set(pauses).sorted())")
    }
}

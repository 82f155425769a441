import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport
@testable import ItsypadSync

/// How a device opens the backend in its own copy of a replicated folder: plain or encrypted.
struct BackendFactory: Sendable, CustomTestStringConvertible {
    let name: String
    /// The backend in a copy, as the device of a data directory opens it.
    let open: @Sendable (_ path: String, _ store: DataStore) throws -> any SyncBackend

    var testDescription: String { name }

    /// What `sync enable` creates, opened as `sync` opens it.
    static let plain = BackendFactory(name: "directory") { path, store in try BackendOpener.open(path, for: store, lockTimeout: 1) }

    /// What `sync enable --encrypt` creates, every device with one key.
    static let encrypted: BackendFactory = {
        let cipher = try! RecordCipher(masterKey: try! SecretBytes.random(count: RecordCipher.masterKeyByteCount))
        return BackendFactory(name: "encrypted directory") { path, store in
            try BackendOpener.open(path, for: store, cipher: cipher, lockTimeout: 1)
        }
    }()

    static let all = [plain, encrypted]
}

/// Devices whose backends are their own copies of one folder, kept in step by the replication
/// simulator, each running the real sync engine in-process against its copy.
struct ReplicatedFleet {
    let fleet: Fleet
    let simulator: ReplicationSimulator
    let factory: BackendFactory
    private let folder = TemporaryDirectory()
    /// Every failed sync, for the failure message.
    private(set) var errors: [String] = []

    init(devices: Int, seed: UInt64, factory: BackendFactory, options: ReplicationSimulator.Options = ReplicationSimulator.Options()) throws
    {
        fleet = Fleet(devices)
        simulator = try ReplicationSimulator(copies: devices, in: folder.path, seed: seed, options: options)
        self.factory = factory
    }

    /// One `itsypad sync` of device `index` against its own copy.
    mutating func sync(_ index: Int, step: String) {
        do {
            let store = try DataStore(path: fleet[index].dataDir, lockTimeout: 1)
            try SyncEngine(store: store, backend: factory.open(simulator.root(index), store)).sync()
        } catch {
            errors.append("\(step): sync on dev\(index): \(error)")
        }
    }

    /// What `itsypad sync enable` does on device `index`, against its own copy: creates the
    /// backend's zone unless the copy already has one (a sync never creates it), then syncs.
    mutating func enable(_ index: Int) {
        do {
            let store = try DataStore(path: fleet[index].dataDir, lockTimeout: 1)
            _ = try factory.open(simulator.root(index), store).createZoneIfNeeded()
        } catch {
            errors.append("enable: creating the zone on dev\(index): \(error)")
        }
        sync(index, step: "enable")
    }

    /// The first device creates the backend; once that has reached every copy, the others join it.
    mutating func enableAll() throws {
        enable(0)
        try simulator.quiesce()
        for index in fleet.devices.indices.dropFirst() { enable(index) }
    }

    /// The zone each copy holds: one zone, replicated, when the fleet was enabled as intended.
    func zoneIDs() throws -> [String] {
        try fleet.devices.indices.map { index in
            try factory.open(simulator.root(index), DataStore(path: fleet[index].dataDir, lockTimeout: 1)).zone().zoneID
        }
    }

    /// Replicate everything, sync every device, and again, until a round of syncs writes nothing.
    mutating func quiesce(rounds: Int = 8) throws {
        for round in 0..<rounds {
            try simulator.quiesce()
            for index in fleet.devices.indices { sync(index, step: "quiescence round \(round)") }
            if simulator.isQuiet { return }
        }
        Issue.record("devices still wrote to the backend after \(rounds) rounds of replication and sync")
    }

    /// Two devices on their own copies, enabled, with a tab of `content` that dev0 created (at
    /// `start`) and every copy holds.
    static func twoSharingATab(_ content: String) throws -> (devices: ReplicatedFleet, id: String, start: Milliseconds) {
        var devices = try ReplicatedFleet(devices: 2, seed: 1, factory: .plain)
        try devices.enableAll()
        let start = Time.now()
        let id = devices.fleet[0].output("tab", "new", content, now: start)
        devices.sync(0, step: "create")
        try devices.quiesce()
        return (devices, id, start)
    }

    /// Device `index` edits tab `id` to `content` at `time`, then syncs.
    mutating func edit(_ index: Int, tab id: String, _ content: String, at time: Milliseconds) {
        _ = fleet[index].output("tab", "edit", id, content, now: time)
        sync(index, step: "edit on dev\(index)")
    }

    /// Conflict copies the service made of the backend's own files (there should be none).
    func conflictCopies() throws -> [String] {
        try ReplicationSimulatorTests.files(simulator.root(0)).keys.filter {
            $0.contains(".sync-conflict-") || $0.contains("(conflicted copy")
        }.sorted()
    }
}

/// A randomized workload (``RandomUser``), but every device has its own copy of the
/// backend folder, replicated in random order with random delays while devices sync at random
/// moments: after quiescence every device holds the same tabs, clips and settings, no typed line
/// is lost, and the service made no conflict copy of the backend's files.
@Suite struct ReplicatedFolderSyncTests {
    /// Simulator settings per seed: both conflict namings, and silent loss of conflict copies.
    static func options(seed: UInt64) -> ReplicationSimulator.Options {
        var options = ReplicationSimulator.Options()
        options.conflictNaming = seed % 2 == 0 ? .dropbox : .syncthing
        options.temporaryNaming =
            ReplicationSimulator.TemporaryNaming.allCases[Int(seed) % ReplicationSimulator.TemporaryNaming.allCases.count]
        options.dropConflictCopyChance = seed % 3 == 0 ? 0.5 : 0
        return options
    }

    @Test(arguments: BackendFactory.all, [1, 2, 3] as [UInt64])
    func threeDevicesConverge(_ factory: BackendFactory, seed: UInt64) throws {
        var devices = try ReplicatedFleet(devices: 3, seed: seed, factory: factory, options: Self.options(seed: seed))
        try devices.enableAll()
        #expect(devices.errors.isEmpty, "enabling failed:\n\(devices.errors.joined(separator: "\n"))")
        #expect(Set(try devices.zoneIDs()).count == 1, "the copies hold different zones")
        try run(&devices, seed: seed)
    }

    func run(_ devices: inout ReplicatedFleet, seed: UInt64) throws {
        var user = RandomUser(seed: seed)
        var replication = SeededGenerator(seed: seed &* 31)
        for step in 0..<90 {
            if let index = try user.act(in: devices.fleet, step: step) { devices.sync(index, step: "step \(step)") }
            try devices.simulator.run(steps: Int.random(in: 0...3, using: &replication))
        }
        try devices.quiesce()
        #expect(devices.errors.isEmpty, "syncs failed:\n\(devices.errors.joined(separator: "\n"))")
        try devices.fleet.expectConverged()
        for index in devices.fleet.devices.indices {
            let lost = try user.linesMissing(on: index, in: devices.fleet)
            #expect(lost.isEmpty, "typed lines lost on dev\(index): \(lost)")
        }
        let copies = try devices.conflictCopies()
        #expect(copies.isEmpty, "the service made conflict copies of the backend's files: \(copies)")
    }
}

extension RandomUser {
    /// The typed lines that are in no tab of device `index`.
    func linesMissing(on index: Int, in fleet: Fleet) throws -> [String] {
        let everything = try fleet.tabs(index).values.joined(separator: "\n")
        return typed.filter { !everything.contains($0) }
    }
}

/// Cases the randomized runs found, replayed step by step.
@Suite struct ReplicatedFolderCasesTests {
    /// A pin and a removal made concurrently: the removal wins, and is written over the pinned
    /// version, so that the pinned version's file goes (a record nobody has any more leaves no
    /// live version behind), and a device that joins later does not get the clip either.
    @Test func aRemovalThatBeatsAConcurrentPinOutlivesItsTombstone() throws {
        var devices = try ReplicatedFleet(devices: 3, seed: 1, factory: .plain)
        devices.enable(0)
        try devices.simulator.quiesce()
        devices.enable(1)
        _ = devices.fleet[0].output("clip", "add", "pinned on one device, removed on the other")
        devices.sync(0, step: "add")
        try devices.quiesce()
        let id = try #require(try devices.fleet.clips(1).keys.first)
        // Neither device sees the other's change before it is sent.
        _ = devices.fleet[0].output("clip", "pin", id)
        devices.sync(0, step: "pin")
        _ = devices.fleet[1].output("clip", "rm", id)
        devices.sync(1, step: "remove")
        try devices.quiesce()
        #expect(try devices.fleet.clips(0).isEmpty && devices.fleet.clips(1).isEmpty, "the removal wins")
        devices.enable(2)
        try devices.quiesce()
        #expect(devices.errors.isEmpty, "\(devices.errors)")
        let live = try ReplicationSimulatorTests.files(devices.simulator.root(0)).filter {
            $0.key.hasPrefix("records/ClipboardEntry/\(FolderLayout.bucket(of: id))/\(id).") && $0.value.contains("\"deleted\":false")
        }
        #expect(live.isEmpty, "live versions of the removed clip are left: \(live.keys.sorted())")
        let joined = try devices.fleet.clips(2)
        #expect(joined.isEmpty, "a pinned version the removal had not seen came back: \(joined)")
    }

    /// A device removes a clip it read from another device's journal before that device's record
    /// file of it arrived, while the device that made it pins it: the removal is written as a
    /// version all the same, so that it meets the pin and wins on every device (with only the
    /// tombstone record written, the devices took the pin and the removal in different orders and
    /// parted ways).
    @Test func aRemovalOfAClipWhoseRecordFileHasNotArrivedIsWritten() throws {
        var devices = try ReplicatedFleet(devices: 2, seed: 1, factory: .plain)
        try devices.enableAll()
        let maker = try DataStore(path: devices.fleet[0].dataDir, lockTimeout: 1).deviceID
        _ = devices.fleet[0].output("clip", "add", "removed before its record file arrived")
        devices.sync(0, step: "add")
        try devices.simulator.scan(0)
        for path in ["devices/\(maker)/device.json", "devices/\(maker)/journal/0000000000000001.log"] {
            #expect(try devices.simulator.deliver(path, from: 0, to: 1), "\(path) was not changed")
        }
        devices.sync(1, step: "read the journal")
        let id = try #require(try devices.fleet.clips(1).keys.first, "the clip is read from the journal alone")
        _ = devices.fleet[1].output("clip", "rm", id)
        devices.sync(1, step: "remove")
        _ = devices.fleet[0].output("clip", "pin", id)
        devices.sync(0, step: "pin")
        try devices.quiesce()
        #expect(devices.errors.isEmpty, "\(devices.errors)")
        for index in 0..<2 {
            let kept = try devices.fleet.clips(index)
            #expect(kept.isEmpty, "dev\(index) keeps the removed clip: \(kept)")
        }
        try devices.fleet.expectConverged()
    }

    /// A device sends an edit while another device's concurrent version of the tab has reached its
    /// copy as a record file, its journal line not yet: the save meets that version, which the merge
    /// with the sender's own last version makes the losing side of overlapping edits. The merge's
    /// conflict copy is written, so that the losing line outlives the version the sender then sends
    /// over both (with only the merged record returned, the copy was never written, and once that
    /// version covered the losing one its file was collected and the line was gone everywhere).
    @Test func aConcurrentVersionMetBySendingKeepsItsConflictCopy() throws {
        let (sharing, id, start) = try ReplicatedFleet.twoSharingATab("shared line")
        var devices = sharing
        // Both devices put a line above the shared one, the second later: the first one's loses.
        _ = devices.fleet[0].output("tab", "edit", id, "typed on dev0\nshared line", now: start + 1_000)
        devices.sync(0, step: "edit on dev0")
        _ = devices.fleet[1].output("tab", "edit", id, "typed on dev1\nshared line", now: start + 2_000)
        devices.sync(1, step: "edit on dev1")
        let maker = try DataStore(path: devices.fleet[0].dataDir, lockTimeout: 1).deviceID
        try devices.simulator.scan(0)
        let recordFile = "records/\(RecordType.tab.rawValue)/\(FolderLayout.bucket(of: id))/\(id).\(maker).json"
        #expect(try devices.simulator.deliver(recordFile, from: 0, to: 1), "\(recordFile) was not changed")
        _ = devices.fleet[1].output("tab", "edit", id, "typed on dev1\nshared line\nedited again on dev1", now: start + 3_000)
        devices.sync(1, step: "send over the version that arrived")
        try devices.quiesce()
        #expect(devices.errors.isEmpty, "\(devices.errors)")
        try devices.fleet.expectConverged()
        for index in 0..<2 {
            let tabs = try devices.fleet.tabs(index).values.joined(separator: "\n")
            #expect(tabs.contains("typed on dev0"), "dev\(index) lost the line: \(tabs)")
        }
    }
}

/// A key rotation in a folder a service replicates, each device on its own copy through the CLI:
/// devices that had not seen the rotation wrote into the old zone in their copies. Each is refused
/// the new zone (exit 1, nothing written) until it enters the new key; then it sends everything
/// again, so nothing typed anywhere is lost, and nothing typed reaches any copy in the clear.
@Suite struct EncryptedReplicatedFolderRotationTests {
    @Test(arguments: [1, 2] as [UInt64])
    func devicesThatWroteIntoTheOldZoneLoseNothing(seed: UInt64) throws {
        let fleet = Fleet(3)
        let folder = TemporaryDirectory()
        let simulator = try ReplicationSimulator(
            copies: 3, in: folder.path, seed: seed, options: ReplicatedFolderSyncTests.options(seed: seed))
        func run(_ index: Int, _ arguments: String..., stdin: String? = nil) -> (status: Int32, err: String) {
            let (status, _, err) = fleet[index].inProcess(arguments, stdin: stdin)
            return (status, err)
        }
        func syncAll() throws {
            for _ in 0..<6 {
                try simulator.quiesce()
                for index in 0..<3 { #expect(run(index, "sync").status == 0) }
                if simulator.isQuiet { return }
            }
        }
        _ = fleet[0].output("clip", "add", "typed-before-0")
        #expect(run(0, "sync", "enable", simulator.root(0), "--encrypt").status == 0)
        try simulator.quiesce()
        let oldKey = fleet[0].output("sync", "key", "show")
        for index in 1...2 {
            _ = fleet[index].output("clip", "add", "typed-before-\(index)")
            #expect(run(index, "sync", "enable", simulator.root(index), "--key", "-", stdin: oldKey).status == 0)
        }
        try syncAll()

        // Device 1 syncs into its copy just before device 0 rotates in its own, device 2 just after.
        for index in 1...2 { _ = fleet[index].output("clip", "add", "typed-during-\(index)") }
        #expect(run(1, "sync").status == 0)
        let rotated = run(0, "sync", "key", "rotate")
        #expect(rotated.status == 0, "\(rotated.err)")
        #expect(run(2, "sync").status == 0)
        try simulator.quiesce()
        let newKey = fleet[0].output("sync", "key", "show")
        for index in 1...2 {
            let refused = run(index, "sync")
            #expect(refused.status == 1 && refused.err.contains("--key -"), "\(refused.err)")
            let joined = run(index, "sync", "enable", simulator.root(index), "--key", "-", stdin: newKey)
            #expect(joined.status == 0, "\(joined.err)")
        }
        try syncAll()
        let typed = (0...2).map { "typed-before-\($0)" } + (1...2).map { "typed-during-\($0)" }
        for index in 0..<3 {
            let listed = fleet[index].output("clip", "ls")
            #expect(typed.allSatisfy(listed.contains), "dev\(index) lacks some of \(typed): \(listed)")
        }
        for index in 0..<3 {
            let inTheClear = try ReplicationSimulatorTests.files(simulator.root(index)).filter { file in
                typed.contains { file.value.contains($0) }
            }.keys
            #expect(inTheClear.isEmpty, "copy \(index): \(inTheClear.sorted())")
        }
    }
}

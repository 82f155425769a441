import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Devices A, B, C… each with a folder backend: on one shared folder, or each on its own copy
/// of a folder kept in step by the replication simulator.
struct ReplicatedDevices {
    let directory = TemporaryDirectory()
    let simulator: ReplicationSimulator?
    let backends: [FolderBackend]

    static func deviceID(_ index: Int) -> String { "dev" + String(UnicodeScalar(UInt8(ascii: "A") + UInt8(index))) }

    /// All devices on one coherent folder.
    init(shared count: Int, segmentSizeLimit: Int = 1 << 22, compactionThreshold: Int = 1 << 30) throws {
        simulator = nil
        let path = directory.path + "/backend"
        backends = (0..<count).map { Self.backend(path, $0, segmentSizeLimit: segmentSizeLimit, compactionThreshold: compactionThreshold) }
    }

    /// Each device on its own copy; the first creates the zone and it reaches every copy.
    init(
        copies count: Int, seed: UInt64 = 1, options: ReplicationSimulator.Options = ReplicationSimulator.Options(),
        segmentSizeLimit: Int = 1 << 22,
        compactionThreshold: Int = 1 << 30, creatingZone: Bool = true
    ) throws {
        let simulator = try ReplicationSimulator(copies: count, in: directory.path, seed: seed, options: options)
        self.simulator = simulator
        backends = (0..<count).map {
            Self.backend(simulator.root($0), $0, segmentSizeLimit: segmentSizeLimit, compactionThreshold: compactionThreshold)
        }
        guard creatingZone else { return }
        _ = try backends[0].createZoneIfNeeded()
        try simulator.quiesce()
        for backend in backends.dropFirst() { _ = try backend.createZoneIfNeeded() }
        try simulator.quiesce()
    }

    /// `cipher`: an encrypted zone's key.
    static func backend(
        _ path: String, _ index: Int, segmentSizeLimit: Int = 1 << 22, compactionThreshold: Int = 1 << 30, instance: String? = nil,
        now: Int64 = testNow, cipher: RecordCipher? = nil
    ) -> FolderBackend {
        FolderBackend(
            path: path, deviceID: deviceID(index), instance: instance ?? "instance-\(index)", deviceName: "device \(index)",
            sealer: cipher.map(VersionSealer.init), lockTimeout: 2, now: { now + Int64(index) }, segmentSizeLimit: segmentSizeLimit,
            compactionThreshold: compactionThreshold)
    }

    /// The path, relative to the backend, of a ScratchTab record file in a backend.
    static func recordFile(_ name: String, _ device: String) -> String {
        "records/ScratchTab/\(FolderLayout.bucket(of: name))/\(name).\(device).json"
    }

    subscript(index: Int) -> FolderBackend { backends[index] }

    static func note(_ name: String, _ text: String) -> BackendRecord {
        BackendRecord(recordName: name, recordType: "ScratchTab", fields: ["content": .string(text)])
    }

    static func text(_ version: RecordVersion) -> String? {
        if case .string(let text)? = version.record.fields["content"] { return text }
        return nil
    }
}

extension FolderBackend {
    /// Every page from `token` on: the last state of each record fetched, the final token, and what it waited for.
    func fetchAll(
        since token: ChangeToken?
    ) throws -> (
        changes: [RecordID: ReplicatedChange], token: ChangeToken, waiting: [ReplicationWait],
        quarantined: [QuarantinedItem]
    ) {
        var changes: [RecordID: ReplicatedChange] = [:]
        var token = token
        var waiting: [ReplicationWait] = []
        var quarantined: [QuarantinedItem] = []
        while true {
            let page = try fetchChanges(since: token, limit: 3)
            for change in page.changes { changes[change.id] = change }
            waiting += page.waiting
            quarantined += page.quarantined
            token = page.token
            if !page.moreComing { return (changes, page.token, waiting, quarantined) }
        }
    }
}

extension ReplicatedBackend {
    @discardableResult
    func write(_ saves: ReplicatedSave...) throws -> [RecordVersion] {
        let result = try modify(saves: saves, deletes: [])
        #expect(result.failures.isEmpty)
        return result.written
    }
}

@Suite struct FolderBackendTests {
    typealias Devices = ReplicatedDevices
    static let r = RecordID(recordType: "ScratchTab", recordName: "r")

    /// A device reads its own journal on from where it last found the end: a line before that is
    /// not read again while the segment is the same file (a line spoiled in place goes unseen by
    /// that reader), and a segment replaced whole, as a compaction replaces it, is read whole.
    @Test func theOwnJournalIsReadOnFromWhereItEnded() throws {
        let devices = try Devices(shared: 1)
        _ = try devices[0].createZoneIfNeeded()
        for index in 0..<3 { _ = try devices[0].write(ReplicatedSave(record: Devices.note("n\(index)", "text"), basedOn: VersionVector())) }
        let journal = devices[0].journal(of: "devA")
        let known = try #require(try journal.end())
        let segment = try #require(try journal.segments().last).path
        let fd = open(segment, O_WRONLY)
        #expect(pwrite(fd, "X", 1, 2) == 1)
        close(fd)
        _ = try devices[0].write(ReplicatedSave(record: Devices.note("n3", "text"), basedOn: VersionVector()))
        #expect(try journal.end(after: known)?.batch.lastSeq == known.batch.lastSeq + 1)
        #expect(throws: BackendError.self) { try journal.end() }
        try FileSystem.writeAtomically(segment, try #require(try FileSystem.read(segment)))
        #expect(throws: BackendError.self) { try journal.end(after: known) }
    }

    @Test func anEditOnAFetchedVersionSupersedesIt() throws {
        let devices = try Devices(shared: 2)
        _ = try devices[0].createZoneIfNeeded()
        let first = try devices[0].write(ReplicatedSave(record: Devices.note("r", "one"), basedOn: VersionVector()))
        #expect(first.map(\.version.tag) == ["devA:1"])
        #expect(try devices[1].createZoneIfNeeded() == devices[0].zone())
        let fetched = try devices[1].fetchAll(since: nil)
        let siblings = try #require(fetched.changes[Self.r]).siblings
        #expect(siblings.map(Devices.text) == ["one"])
        let edit = try devices[1].write(
            ReplicatedSave(record: Devices.note("r", "two"), basedOn: siblings[0].version, base: siblings[0].asBase))
        #expect(edit.map(\.version.tag) == ["devA:1,devB:1"])
        let seen = try devices[0].fetchAll(since: nil)
        #expect(try #require(seen.changes[Self.r]).siblings.map(Devices.text) == ["two"])
        #expect(try #require(seen.changes[Self.r]).siblings.first?.base == siblings[0].asBase)
        // Every file but zone.json is named after the one device that writes it.
        let files = try ReplicationSimulatorTests.files(devices[0].path).keys.sorted()
        #expect(files.allSatisfy { $0 == "zone.json" || $0.contains("devA") || $0.contains("devB") }, "\(files)")
        #expect(files.contains(Devices.recordFile("r", "devA")) && files.contains(Devices.recordFile("r", "devB")))
    }

    @Test func aSaveThatHasNotSeenEveryVersionFailsWithTheSiblings() throws {
        let devices = try Devices(shared: 2)
        _ = try devices[0].createZoneIfNeeded()
        _ = try devices[1].createZoneIfNeeded()
        let existing = try devices[0].write(ReplicatedSave(record: Devices.note("r", "one"), basedOn: VersionVector()))
        let result = try devices[1].modify(
            saves: [
                ReplicatedSave(record: Devices.note("other", "x"), basedOn: VersionVector()),
                ReplicatedSave(record: Devices.note("r", "blind"), basedOn: VersionVector()),
            ], deletes: [])
        #expect(result.written.isEmpty)
        #expect(
            result.failures == [
                ReplicatedFailure(id: RecordID(recordType: "ScratchTab", recordName: "other"), error: .batchRequestFailed),
                ReplicatedFailure(id: Self.r, error: .concurrentVersions(existing)),
            ])
        #expect(try devices[1].fetchAll(since: nil).changes.count == 1, "nothing of the failed batch was written")
    }

    /// Two copies edit one record at once: after replication both see the same two siblings; both
    /// write the same derived merge, which replication does not turn into a new conflict.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func concurrentEditsBecomeSiblingsAndOneDerivedMergeSettlesThem(seed: UInt64) throws {
        let devices = try Devices(copies: 2, seed: seed)
        let simulator = try #require(devices.simulator)
        let original = try devices[0].write(ReplicatedSave(record: Devices.note("r", "base"), basedOn: VersionVector()))[0]
        try simulator.quiesce()
        for (index, text) in ["from A", "from B"].enumerated() {
            _ = try devices[index].write(ReplicatedSave(record: Devices.note("r", text), basedOn: original.version, base: original.asBase))
        }
        try simulator.run(steps: 10)
        try simulator.quiesce()
        let views = try (0..<2).map { try #require(devices[$0].fetchAll(since: nil).changes[Self.r]) }
        #expect(views[0] == views[1])
        // In canonical order: devA:1,devB:1 (B's edit) before devA:2 (A's).
        #expect(views[0].siblings.map(Devices.text) == ["from B", "from A"])
        #expect(VersionHistory.commonAncestor(of: views[0].siblings[0], views[0].siblings[1]) == original.asBase)
        for index in 0..<2 {
            _ = try devices[index].write(
                ReplicatedSave(record: Devices.note("r", "from A + from B"), basedOn: views[0].joinedVersion, isDerived: true))
        }
        try simulator.run(steps: 10)
        try simulator.quiesce()
        for index in 0..<2 {
            let siblings = try #require(devices[index].fetchAll(since: nil).changes[Self.r]).siblings
            #expect(siblings.map(Devices.text) == ["from A + from B"])
            #expect(siblings.first?.version == views[0].joinedVersion)
        }
        let files = try ReplicationSimulatorTests.files(simulator.root(0)).keys
        #expect(!files.contains { $0.contains("sync-conflict") })
    }

    @Test func aLaterSegmentThatArrivesFirstIsWaitedFor() throws {
        let devices = try Devices(copies: 2, options: Self.orderly, segmentSizeLimit: 10)
        let simulator = try #require(devices.simulator)
        _ = try devices[0].write(ReplicatedSave(record: Devices.note("r", "one"), basedOn: VersionVector()))
        _ = try devices[0].write(ReplicatedSave(record: Devices.note("s", "two"), basedOn: VersionVector()))
        try simulator.scan(0)
        #expect(try simulator.deliver("devices/devA/journal/0000000000000002.log", from: 0, to: 1))
        let early = try devices[1].fetchAll(since: nil)
        #expect(early.changes.isEmpty)
        #expect(early.waiting.map(\.path) == ["devices/devA/journal/0000000000000002.log"], "\(early.waiting)")
        #expect(try simulator.deliver("devices/devA/journal/0000000000000001.log", from: 0, to: 1))
        let later = try devices[1].fetchAll(since: early.token)
        #expect(later.changes.keys.map(\.recordName).sorted() == ["r", "s"])
        #expect(later.waiting.isEmpty)
    }

    @Test func aVersionWhoseAssetHasNotArrivedIsWaitedFor() throws {
        let devices = try Devices(copies: 2, options: Self.orderly)
        let simulator = try #require(devices.simulator)
        let blob = Array(repeating: UInt8(ascii: "z"), count: 5000)
        let reference = try devices[0].putAsset(blob)
        var record = Devices.note("r", "")
        record.fields["contentAsset"] = .asset(reference)
        _ = try devices[0].write(ReplicatedSave(record: record, basedOn: VersionVector()))
        try simulator.scan(0)
        #expect(try simulator.deliver("devices/devA/journal/0000000000000001.log", from: 0, to: 1))
        let early = try devices[1].fetchAll(since: nil)
        #expect(early.changes.isEmpty)
        #expect(early.waiting.first?.reason.contains(reference.fileChecksum) == true, "\(early.waiting)")
        try simulator.deliverAll(from: 0, to: 1)
        let later = try devices[1].fetchAll(since: early.token)
        #expect(later.changes[Self.r] != nil)
        #expect(try devices[1].readAsset(reference) == blob)
    }

    @Test("uploading an asset again repairs a damaged copy of the same size")
    func anAssetIsRepairedWhenItsCopyIsDamaged() throws {
        let devices = try Devices(shared: 1)
        _ = try devices[0].createZoneIfNeeded()
        let blob = Array("abc".utf8)
        let reference = try devices[0].putAsset(blob)
        let file = devices.directory.path + "/backend/devices/devA/assets/" + reference.fileChecksum
        try FileSystem.writeAtomically(file, Array("abd".utf8))
        #expect(try devices[0].putAsset(blob) == reference)
        #expect(try devices[0].readAsset(reference) == blob)
    }

    @Test func aHalfReplicatedLineIsWaitedFor() throws {
        var options = Self.orderly
        options.temporaryNaming = .inPlace
        let devices = try Devices(copies: 2, options: options)
        let simulator = try #require(devices.simulator)
        _ = try devices[0].write(ReplicatedSave(record: Devices.note("r", "one"), basedOn: VersionVector()))
        // A long second line, so that half the segment ends in the middle of it.
        _ = try devices[0].write(ReplicatedSave(record: Devices.note("s", String(repeating: "two ", count: 500)), basedOn: VersionVector()))
        try simulator.scan(0)
        try simulator.deliverHalf("devices/devA/journal/0000000000000001.log", from: 0, to: 1)
        let early = try devices[1].fetchAll(since: nil)
        #expect(early.changes.keys.map(\.recordName) == ["r"])
        try simulator.finishStaged()
        try simulator.quiesce()
        #expect(try devices[1].fetchAll(since: early.token).changes.keys.map(\.recordName) == ["s"])
    }

    @Test func replicationLeftoversAreNeverRead() throws {
        let devices = try Devices(shared: 1)
        _ = try devices[0].createZoneIfNeeded()
        _ = try devices[0].write(ReplicatedSave(record: Devices.note("r", "one"), basedOn: VersionVector()))
        let root = devices[0].path
        for leftover in [
            "devices/devB/journal/0000000000000001.sync-conflict-20261123-101500-BBBBBBB.log",
            "devices/devA/journal/.syncthing.0000000000000002.log.tmp",
            "devices/devA (conflicted copy 2026-11-23)/device.json",
            "records/ScratchTab/45/r.devA.sync-conflict-20261123-101500-BBBBBBB.json",
            "records/ScratchTab/45/r.devB (conflicted copy 2026-11-23).json",
            "records/ScratchTab/45/~syncthing~r.devB.json.tmp", "records/ScratchTab/45/.syncthing.r.devB.json.tmp",
            "records/ScratchTab/r.devB.json", "records/ScratchTab/45.sync-conflict-20261123-101500-BBBBBBB/r.devB.json",
            ".stfolder/marker", "devices/.dropbox.cache/x", "zone.sync-conflict-20261123-101500-BBBBBBB.json",
        ] {
            try FileSystem.makeDirectory(FileSystem.directoryName(root + "/" + leftover))
            try FileSystem.writeAtomically(root + "/" + leftover, Array("{\"garbage\":".utf8))
        }
        let fetched = try devices[0].fetchAll(since: nil)
        #expect(fetched.changes.values.flatMap(\.siblings).map(Devices.text) == ["one"])
        #expect(fetched.waiting.isEmpty)
        _ = try devices[0].write(ReplicatedSave(record: Devices.note("r", "two"), basedOn: VersionVector(tag: "devA:1")!))
    }

    /// Another device's malformed line, oversized segment or symlinked journal stops only that device's journal, quarantined with the reason.
    @Test func aBadJournalIsQuarantinedAndTheOthersAreStillRead() throws {
        let devices = try Devices(shared: 4, segmentSizeLimit: 10)
        for index in 0..<4 { _ = try devices[index].createZoneIfNeeded() }
        _ = try devices[0].write(ReplicatedSave(record: Devices.note("a", "from A"), basedOn: VersionVector()))
        _ = try devices[1].write(ReplicatedSave(record: Devices.note("b", "from B"), basedOn: VersionVector()))
        let root = devices[0].path
        try FileSystem.writeAtomically(root + "/devices/devB/journal/0000000000000002.log", Array("{\"seq\":2,\"not\":\"a batch\"}\n".utf8))
        try FileSystem.writeAtomically(
            root + "/devices/devC/journal/0000000000000001.log",
            [UInt8](repeating: UInt8(ascii: " "), count: DeviceJournal.maxLineBytes + 11))
        let elsewhere = devices.directory.path + "/elsewhere"
        try FileSystem.makeDirectory(elsewhere)
        #expect(rmdir(root + "/devices/devD/journal") == 0)
        #expect(symlink(elsewhere, root + "/devices/devD/journal") == 0)
        let fetched = try devices[0].fetchAll(since: nil)
        #expect(fetched.changes.keys.map(\.recordName).sorted() == ["a", "b"])
        #expect(fetched.waiting.isEmpty, "\(fetched.waiting)")
        #expect(
            fetched.quarantined.map(\.location).sorted()
                == ["devices/devB/journal/0000000000000002.log", "devices/devC/journal/0000000000000001.log", "devices/devD/journal"],
            "\(fetched.quarantined)")
        #expect(fetched.quarantined.first { $0.location.hasPrefix("devices/devB") }?.reason.contains("not a valid batch") == true)
    }

    /// Sequence numbers from another device are range-checked before any arithmetic on them.
    @Test(arguments: [Int64.max, Int64.max - 1, VersionVector.maxSequence - 1, 0, -1, .min])
    func aBatchNumberedOutOfRangeIsMalformedWithoutTrapping(seq: Int64) {
        let change = DeviceChange(seq: seq, op: .checkpoint, checkpoint: CheckpointDocument(requires: [:]))
        let next = DeviceChange(seq: seq &+ 1, op: .checkpoint, checkpoint: CheckpointDocument(requires: [:]))
        let batch = DeviceBatch(
            seq: seq, device: "devB", instance: "i", zone: "Z", time: 0, changes: [change, next], files: FilesDigest().hex)
        #expect(batch.problem(device: "devB") != nil)
    }

    @Test func finishingASyncAcknowledgesWhatWasRead() throws {
        let devices = try Devices(shared: 2)
        _ = try devices[0].createZoneIfNeeded()
        _ = try devices[1].createZoneIfNeeded()
        _ = try devices[0].write(ReplicatedSave(record: Devices.note("r", "one"), basedOn: VersionVector()))
        let fetched = try devices[1].fetchAll(since: nil)
        _ = try devices[1].finishSync(acknowledging: fetched.token)
        let document = try devices[1].deviceDocument()
        #expect(document.seen == ["devA": 1])
        #expect(document.lastSync == testNow + 1)
        #expect(document.instance == "instance-1")
    }

    @Test(arguments: ["1:ZONE:5", "2:ZONE:devA.x.0.0", "2:ZONE:devA.1.0", "2:ZONE:bad/id.1.0.0", "2:ZONE:devA.1.0.0/devA.2.0.0", "garbage"])
    func unusableTokensExpire(_ raw: String) {
        #expect(throws: BackendError.tokenExpired) { try FolderToken(decoding: ChangeToken(rawValue: raw), zoneID: "ZONE") }
    }

    @Test func tokensRoundTripAndBelongToTheirZone() throws {
        let token = FolderToken(
            zoneID: "ZONE",
            positions: ["devA": .init(seq: 7, resume: JournalPosition(segment: 1, offset: 420)), "devB": .init(seq: 0, resume: nil)])
        #expect(token.token.rawValue == "2:ZONE:devA.7.1.420/devB.0.0.0")
        #expect(try FolderToken(decoding: token.token, zoneID: "ZONE") == token)
        #expect(throws: BackendError.zoneChanged) { try FolderToken(decoding: token.token, zoneID: "OTHER") }
    }

    /// No delays, no half-done transfers: tests stage the order themselves.
    static var orderly: ReplicationSimulator.Options {
        var options = ReplicationSimulator.Options()
        options.maxDelay = 0
        options.halfDoneChance = 0
        return options
    }
}

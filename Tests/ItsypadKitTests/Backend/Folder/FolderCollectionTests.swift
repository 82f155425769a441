import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

/// What the folder backend removes, compacts and reconciles: superseded versions, tombstones, journals,
/// clones and zones created at once.
@Suite struct FolderCollectionTests {
    typealias Devices = ReplicatedDevices
    static let r = RecordID(recordType: "ScratchTab", recordName: "r")

    /// Fetches everything and acknowledges it.
    @discardableResult
    static func sync(
        _ backend: FolderBackend, since token: ChangeToken? = nil
    ) throws -> (changes: [RecordID: ReplicatedChange], token: ChangeToken, waiting: [ReplicationWait]) {
        let fetched = try backend.fetchAll(since: token)
        _ = try backend.finishSync(acknowledging: fetched.token)
        return (fetched.changes, fetched.token, fetched.waiting)
    }

    static func recordFiles(_ root: String) throws -> [String] {
        try ReplicationSimulatorTests.files(root).keys.filter { $0.hasPrefix("records/") }.sorted()
    }

    @Test func aSupersededVersionIsDroppedAndAReaderWaitsUntilWhatSupersededItArrives() throws {
        let devices = try Devices(copies: 3, options: FolderBackendTests.orderly)
        let simulator = try #require(devices.simulator)
        let one = try devices[0].write(ReplicatedSave(record: Devices.note("r", "one"), basedOn: VersionVector()))[0]
        try simulator.quiesce()
        try devices[1].write(ReplicatedSave(record: Devices.note("r", "two"), basedOn: one.version, base: one.asBase))
        try simulator.scan(1)
        try simulator.deliverAll(from: 1, to: 0)
        try Self.sync(devices[0])
        #expect(try Self.recordFiles(devices[0].path) == [Devices.recordFile("r", "devB")], "A dropped its covered version")
        // C gets A's drop and the removal of A's file, but nothing of B's yet.
        try simulator.scan(0)
        for path in ["devices/devA/journal/0000000000000001.log", Devices.recordFile("r", "devA")] {
            #expect(try simulator.deliver(path, from: 0, to: 2))
        }
        #expect(try Self.recordFiles(devices[2].path).isEmpty)
        let early = try devices[2].fetchAll(since: nil)
        #expect(early.changes[Self.r]?.siblings.map(Devices.text) == ["one"], "the record is not taken for deleted")
        #expect(
            early.waiting.contains { $0.path.hasPrefix("devices/devA/journal") && $0.reason.contains("change 1 of devB") },
            "\(early.waiting)")
        try simulator.deliverAll(from: 1, to: 2)
        let later = try devices[2].fetchAll(since: early.token)
        #expect(later.changes[Self.r]?.siblings.map(Devices.text) == ["two"])
        #expect(later.waiting.isEmpty, "\(later.waiting)")
    }

    @Test func aTombstoneStaysUntilEveryDeviceHasSeenIt() throws {
        let devices = try Devices(shared: 3)
        for index in 0..<3 { _ = try devices[index].createZoneIfNeeded() }
        let one = try devices[0].write(ReplicatedSave(record: Devices.note("r", "one"), basedOn: VersionVector()))[0]
        for index in 0..<3 { try Self.sync(devices[index]) }
        _ = try devices[0].modify(saves: [], deletes: [ReplicatedDelete(id: Self.r, basedOn: one.version)])
        try Self.sync(devices[0])
        try Self.sync(devices[1])
        try Self.sync(devices[0])
        #expect(try Self.recordFiles(devices[0].path) == [Devices.recordFile("r", "devA")], "C has not seen the tombstone yet")
        let seenByC = try Self.sync(devices[2])
        #expect(seenByC.changes[Self.r]?.isDeleted == true)
        try Self.sync(devices[0])
        #expect(try Self.recordFiles(devices[0].path).isEmpty)
        #expect(try devices[1].fetchAll(since: nil).changes[Self.r]?.isDeleted ?? true, "a full fetch does not bring it back")
    }

    @Test func aDeviceSilentForLongerThanTheRetentionIsNotWaitedFor() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/backend"
        let silent = Devices.backend(path, 1)
        let later = testNow + FolderBackend.tombstoneRetention + 1000
        let active = Devices.backend(path, 0, now: later)
        _ = try active.createZoneIfNeeded()
        _ = try silent.createZoneIfNeeded()
        try Self.sync(silent)
        let one = try active.write(ReplicatedSave(record: Devices.note("r", "one"), basedOn: VersionVector()))[0]
        _ = try active.modify(saves: [], deletes: [ReplicatedDelete(id: Self.r, basedOn: one.version)])
        try Self.sync(active)
        #expect(try Self.recordFiles(path).isEmpty)
        // The silent device's token is older than the retention: it starts over with a full fetch.
        #expect(throws: BackendError.tokenExpired) {
            try Devices.backend(path, 1, now: later).fetchChanges(since: ChangeToken(rawValue: "2:\(try active.zone().zoneID):"), limit: 10)
        }
    }

    @Test func aCompactedJournalIsReadFromItsRecordFilesAndOnlyItsTokensExpire() throws {
        let devices = try Devices(shared: 2, compactionThreshold: 2000)
        for index in 0..<2 { _ = try devices[index].createZoneIfNeeded() }
        try devices[1].write(ReplicatedSave(record: Devices.note("fromB", "b"), basedOn: VersionVector()))
        try devices[0].write(ReplicatedSave(record: Devices.note("early", "e"), basedOn: VersionVector()))
        let token = try Self.sync(devices[1]).token
        for index in 0..<10 {
            try devices[0].write(
                ReplicatedSave(record: Devices.note("n\(index)", String(repeating: "x", count: 300)), basedOn: VersionVector()))
        }
        let report = try devices[0].finishSync(acknowledging: try devices[0].fetchAll(since: nil).token)
        #expect(report?.segmentsRemoved == 1)
        #expect(try devices[0].journal(of: "devA").checkpoint() != nil)
        let after = try devices[1].fetchAll(since: token)
        #expect(after.waiting.isEmpty, "\(after.waiting)")
        #expect(
            Set(after.changes.keys.map(\.recordName)) == Set(["early"] + (0..<10).map { "n\($0)" }),
            "A's stream only, from its record files")
        let full = try devices[1].fetchAll(since: nil)
        #expect(full.changes.count == 12)
        // Writing on after the checkpoint: readers continue from it.
        try devices[0].write(ReplicatedSave(record: Devices.note("late", "l"), basedOn: VersionVector()))
        #expect(try devices[1].fetchAll(since: after.token).changes.keys.map(\.recordName) == ["late"])
    }

    @Test func recordFilesThatDoNotMatchTheJournalYetAreWaitedFor() throws {
        let devices = try Devices(copies: 2, options: FolderBackendTests.orderly, compactionThreshold: 1500)
        let simulator = try #require(devices.simulator)
        for index in 0..<6 {
            try devices[0].write(
                ReplicatedSave(record: Devices.note("n\(index)", String(repeating: "x", count: 300)), basedOn: VersionVector()))
        }
        try Self.sync(devices[0])
        #expect(try devices[0].journal(of: "devA").checkpoint() != nil)
        try simulator.scan(0)
        // The checkpoint and two of the six record files arrive.
        let checkpoint = try #require(try devices[0].journal(of: "devA").segments().first).path
        #expect(try simulator.deliver(String(checkpoint.dropFirst(devices[0].path.count + 1)), from: 0, to: 1))
        for name in ["n0", "n1"] { #expect(try simulator.deliver(Devices.recordFile(name, "devA"), from: 0, to: 1)) }
        let early = try devices[1].fetchAll(since: nil)
        #expect(early.changes.isEmpty, "half the records is not the record set")
        #expect(early.waiting.contains { $0.reason.contains("do not match") }, "\(early.waiting)")
        try simulator.quiesce()
        #expect(try devices[1].fetchAll(since: early.token).changes.count == 6)
    }

    @Test func aCloneIsToldItsDeviceIDIsInUse() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/backend"
        let original = Devices.backend(path, 0)
        _ = try original.createZoneIfNeeded()
        try original.write(ReplicatedSave(record: Devices.note("r", "one"), basedOn: VersionVector()))
        let clone = Devices.backend(path, 0, instance: "copied-home")
        #expect(throws: ReplicationError.deviceIDInUse("devices/devA/device.json was written by instance instance-0, not copied-home")) {
            try clone.createZoneIfNeeded()
        }
        #expect(throws: ReplicationError.self) {
            try clone.modify(saves: [ReplicatedSave(record: Devices.note("s", "x"), basedOn: VersionVector())], deletes: [])
        }
        try FileSystem.writeAtomically(
            path + "/devices/devA/journal/0000000000000001.sync-conflict-20261123-101500-BBBBBBB.log", Array("x".utf8))
        #expect(throws: ReplicationError.self) {
            try original.modify(saves: [ReplicatedSave(record: Devices.note("s", "x"), basedOn: VersionVector())], deletes: [])
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func zonesCreatedAtOnceReconcileToTheSmallestAndNothingIsLost(seed: UInt64) throws {
        let devices = try Devices(copies: 2, seed: seed, creatingZone: false)
        let simulator = try #require(devices.simulator)
        let zones = try (0..<2).map { try devices[$0].createZoneIfNeeded() }
        #expect(zones[0] != zones[1])
        for index in 0..<2 {
            try devices[index].write(ReplicatedSave(record: Devices.note("from\(index)", "typed on \(index)"), basedOn: VersionVector()))
        }
        try simulator.run(steps: 20)
        try simulator.quiesce()
        let winner = zones.min { $0.zoneID < $1.zoneID }!
        let loser = zones[0] == winner ? 1 : 0
        #expect(throws: BackendError.zoneChanged) {
            try devices[loser].modify(saves: [ReplicatedSave(record: Devices.note("x", "x"), basedOn: VersionVector())], deletes: [])
        }
        for index in 0..<2 { #expect(try devices[index].createZoneIfNeeded() == winner) }
        // The engine sends the loser's data again into the winner, as after a replaced backend.
        try devices[loser].write(ReplicatedSave(record: Devices.note("from\(loser)", "typed on \(loser)"), basedOn: VersionVector()))
        for _ in 0..<3 {
            try simulator.quiesce()
            for index in 0..<2 { try Self.sync(devices[index]) }
        }
        for index in 0..<2 {
            let fetched = try devices[index].fetchAll(since: nil)
            #expect(fetched.changes.keys.map(\.recordName).sorted() == ["from0", "from1"])
            #expect(fetched.waiting.isEmpty, "\(fetched.waiting)")
            #expect(try devices[index].zone() == winner)
        }
        // Both wrote zone.json at first: the service may keep a conflict copy of it, and of nothing else.
        let conflicts = try ReplicationSimulatorTests.files(simulator.root(0)).keys.filter {
            $0.contains("sync-conflict") || $0.contains("conflicted copy")
        }
        #expect(conflicts.allSatisfy { $0.hasPrefix("zone") }, "\(conflicts)")
    }
}

import Testing
@testable import ItsypadKit

/// How a device opens the backend in its own copy of a replicated folder: one case per backend format.
struct BackendFactory: Sendable, CustomTestStringConvertible {
    let name: String
    /// Why this backend is known not to work in a replicated folder; nil when it must.
    let knownIssue: Comment?
    let open: @Sendable (_ path: String) -> any SyncBackend

    var testDescription: String { name }

    static let format1 = BackendFactory(
        name: "format 1",
        knownIssue: "format 1 needs a coherent shared folder: every device appends to one journal and rewrites state.json, so a replicating service forks them",
        open: { DirectoryBackend(path: $0, lockTimeout: 1) })

    static let all = [format1]
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

    init(devices: Int, seed: UInt64, factory: BackendFactory, options: ReplicationSimulator.Options = ReplicationSimulator.Options()) throws {
        fleet = Fleet(devices)
        simulator = try ReplicationSimulator(copies: devices, in: folder.path, seed: seed, options: options)
        self.factory = factory
    }

    /// One `itsypad sync` of device `index` against its own copy.
    mutating func sync(_ index: Int, step: String) {
        do {
            let store = try DataStore(path: fleet[index].dataDir, lockTimeout: 1)
            try SyncEngine(store: store, backend: factory.open(simulator.root(index))).sync()
        } catch {
            errors.append("\(step): sync on dev\(index): \(error)")
        }
    }

    /// The first device creates the backend; once that has reached every copy, the others join.
    mutating func enableAll() throws {
        sync(0, step: "enable")
        try simulator.quiesce()
        for index in fleet.devices.indices.dropFirst() { sync(index, step: "enable") }
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

    /// Conflict copies the service made of the backend's own files (there should be none).
    func conflictCopies() throws -> [String] {
        try ReplicationSimulatorTests.files(simulator.root(0)).keys.filter { $0.contains(".sync-conflict-") || $0.contains("(conflicted copy") }.sorted()
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
        options.temporaryNaming = ReplicationSimulator.TemporaryNaming.allCases[Int(seed) % ReplicationSimulator.TemporaryNaming.allCases.count]
        options.dropConflictCopyChance = seed % 3 == 0 ? 0.5 : 0
        return options
    }

    @Test(arguments: BackendFactory.all, [1, 2, 3] as [UInt64])
    func threeDevicesConverge(_ factory: BackendFactory, seed: UInt64) throws {
        guard let knownIssue = factory.knownIssue else { return try run(factory, seed: seed) }
        withKnownIssue(knownIssue) { try run(factory, seed: seed) }
    }

    func run(_ factory: BackendFactory, seed: UInt64) throws {
        var devices = try ReplicatedFleet(devices: 3, seed: seed, factory: factory, options: Self.options(seed: seed))
        try devices.enableAll()
        var user = RandomUser(seed: seed)
        var replication = SeededGenerator(seed: seed &* 31)
        for step in 0..<90 {
            if let index = try user.act(in: devices.fleet, step: step) { devices.sync(index, step: "step \(step)") }
            try devices.simulator.run(steps: Int.random(in: 0...3, using: &replication))
        }
        try devices.quiesce()
        #expect(devices.errors.isEmpty, "syncs failed:\n\(devices.errors.joined(separator: "\n"))")
        try devices.fleet.expectConverged()
        try user.expectNothingLost(in: devices.fleet)
        #expect(try devices.conflictCopies().isEmpty)
    }
}

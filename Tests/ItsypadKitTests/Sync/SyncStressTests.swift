import Testing

@testable import ItsypadModel

#if canImport(Glibc)
import Glibc
#endif

/// Processes racing and dying: the real binary, several devices, one backend.
@Suite struct SyncProcessTests {
    func environment(_ device: Device) -> String { "ITSYPAD_DATA_DIR='\(device.dataDir)'" }

    @Test func concurrentSyncsOnTwoDevicesConverge() throws {
        let fleet = Fleet(2)
        fleet.enable(0)
        fleet.enable(1)
        let binary = Process.itsypad
        let script =
            (0..<2).map { index in
                "( for i in $(seq 1 15); do \(environment(fleet[index])) '\(binary)' clip add \"dev\(index) $i\" >/dev/null; \(environment(fleet[index])) '\(binary)' sync || echo \"fail $?\"; done ) &"
            }.joined(separator: "\n") + "\nwait"
        let result = try Process.run("/bin/bash", ["-c", script])
        #expect(!result.stdout.contains("fail"), "\(result.stdout) \(result.stderr)")
        fleet.converge()
        #expect(try fleet.clips(0).count == 30)
        try fleet.expectConverged()
    }

    /// Kills `itsypad sync` at random moments while it sends or fetches a large batch,
    /// then lets it finish: every device must end with everything.
    @Test(arguments: ["send", "fetch"])
    func killedSyncRecovers(_ phase: String) throws {
        let fleet = Fleet(2)
        fleet.enable(0)
        fleet.enable(1)
        let a = fleet[0]
        let clips = (0..<3000).map { i in
            "{\"id\":\"\(Identifier.make())\",\"text\":\"bulk \(i) \(String(repeating: "y", count: 200))\",\"timestamp\":\"2026-01-01T00:00:00.000Z\"}"
        }
        _ = a.output("settings", "set", "clipboard.maxEntries", "10000")
        _ = a.output("import", "-", stdin: "{\"format\":\"itsypad-export\",\"version\":1,\"clips\":[\(clips.joined(separator: ","))]}")
        if phase == "fetch" { fleet.sync(0) }
        let victim = phase == "send" ? fleet[0] : fleet[1]
        let script = """
            for k in $(seq 1 8); do
              \(environment(victim)) '\(Process.itsypad)' sync >/dev/null 2>&1 &
              pid=$!
              sleep 0.0$((RANDOM % 9 + 1))
              kill -9 $pid 2>/dev/null
              wait $pid 2>/dev/null
            done
            true
            """
        _ = try Process.run("/bin/bash", ["-c", script])
        fleet.converge()
        #expect(try fleet.clips(1).count == 3000)
        try fleet.expectConverged()
    }
}

/// Many random operations, killed and concurrent syncs on three devices (see
/// ``RandomSyncSimulation``); `Tests/Soak/sync-soak.sh` runs many more seeds.
@Suite struct SyncRandomizedTests {
    @Test(arguments: [SimulatedBackend.inMemory], 1...SyncRandomizedTests.seeds)
    func threeDevicesConverge(backend: SimulatedBackend, seed: UInt64) throws {
        let simulation = RandomSyncSimulation(seed: seed, backend: backend)
        let violations = try simulation.run()
        #expect(
            violations.isEmpty,
            "seed \(seed) on \(backend): \(violations.joined(separator: "\n"))\n\(simulation.trace.joined(separator: "\n"))")
    }

    static let seeds: UInt64 = 100
}

/// The same over a backend directory in a coherent folder, plain and encrypted, fewer seeds (each costs more).
@Suite struct SyncReplicatedRandomizedTests {
    @Test(arguments: cases)
    func threeDevicesConverge(backend: SimulatedBackend, seed: UInt64) throws {
        let simulation = RandomSyncSimulation(seed: seed, backend: backend)
        let violations = try simulation.run()
        #expect(
            violations.isEmpty,
            "seed \(seed) on \(backend): \(violations.joined(separator: "\n"))\n\(simulation.trace.joined(separator: "\n"))")
    }

    static let seeds: UInt64 = 20
    /// Half as many seeds encrypted: the sealing is the only difference.
    static let cases: [(SimulatedBackend, UInt64)] =
        (1...seeds).map { (.directory, $0) } + (1...seeds / 2).map { (.encryptedDirectory, $0) }
}

/// The long run, off unless `ITSYPAD_SOAK_SEEDS` is set: `Tests/Soak/sync-soak.sh`
/// runs it (optionally with `ITSYPAD_SOAK_FIRST`, `ITSYPAD_SOAK_STEPS`, `ITSYPAD_SOAK_DEVICES`, and
/// `ITSYPAD_SOAK_BACKEND` naming one backend, e.g. `directory`, or `directory, replicated folder`: the
/// workload of ``ReplicatedFolderSyncTests``, each device on its own copy kept by the replication simulator).
@Suite struct SyncSoakTests {
    static func setting(_ name: String) -> UInt64? { getenv(name).flatMap { UInt64(String(cString: $0)) } }

    static let seeds: [UInt64] = {
        guard let count = setting("ITSYPAD_SOAK_SEEDS"), count > 0 else { return [] }
        let first = setting("ITSYPAD_SOAK_FIRST") ?? 1_000
        return Array(first..<first + count)
    }()

    static let backendName = getenv("ITSYPAD_SOAK_BACKEND").map { String(cString: $0) }

    static let backends: [SimulatedBackend] = SimulatedBackend.allCases.filter { backendName == nil || $0.rawValue == backendName }

    static let replicatedFolder = "directory, replicated folder"

    @Test(.enabled(if: !seeds.isEmpty, "set ITSYPAD_SOAK_SEEDS to run"), arguments: backends, seeds)
    func manySeedsConverge(backend: SimulatedBackend, seed: UInt64) throws {
        let simulation = RandomSyncSimulation(
            seed: seed, devices: Int(SyncSoakTests.setting("ITSYPAD_SOAK_DEVICES") ?? 3),
            steps: Int(SyncSoakTests.setting("ITSYPAD_SOAK_STEPS") ?? 150), backend: backend)
        let violations = try simulation.run()
        #expect(
            violations.isEmpty,
            "seed \(seed) on \(backend): \(violations.joined(separator: "\n"))\n\(simulation.trace.joined(separator: "\n"))")
    }

    @Test(.enabled(if: !seeds.isEmpty && [nil, replicatedFolder].contains(backendName), "set ITSYPAD_SOAK_SEEDS to run"), arguments: seeds)
    func manySeedsConvergeInAReplicatedFolder(seed: UInt64) throws {
        var devices = try ReplicatedFleet(
            devices: Int(SyncSoakTests.setting("ITSYPAD_SOAK_DEVICES") ?? 3), seed: seed, factory: .plain,
            options: ReplicatedFolderSyncTests.options(seed: seed))
        try devices.enableAll()
        #expect(devices.errors.isEmpty, "seed \(seed): enabling failed:\n\(devices.errors.joined(separator: "\n"))")
        try ReplicatedFolderSyncTests().run(&devices, seed: seed)
    }
}

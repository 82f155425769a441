#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import ItsypadKit

/// Processes racing and dying: the real binary, several devices, one backend.
@Suite struct SyncProcessTests {
    func environment(_ device: Device) -> String { "ITSYPAD_DATA_DIR='\(device.dataDir)'" }

    @Test func concurrentSyncsOnTwoDevicesConverge() throws {
        let fleet = Fleet(2)
        fleet.enable(0)
        fleet.enable(1)
        let binary = Process.itsypad
        let script = (0..<2).map { index in
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

/// Many random operations and syncs on three devices: they converge and no typed line is lost.
@Suite struct SyncRandomizedTests {
    @Test(arguments: [(UInt64(1), false), (2, false), (3, true)])
    func threeDevicesConverge(seed: UInt64, encrypted: Bool) throws {
        let fleet = Fleet(3, backend: encrypted ? .encryptedDirectory : .directory)
        for index in 0..<3 { fleet.enable(index) }
        var user = RandomUser(seed: seed)
        for step in 0..<90 {
            if let index = try user.act(in: fleet, step: step) { fleet.sync(index) }
        }
        fleet.converge()
        try fleet.expectConverged()
        try user.expectNothingLost(in: fleet)
    }
}

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
    @Test(arguments: [1, 2])
    func threeDevicesConverge(seed: UInt64) throws {
        let fleet = Fleet(3)
        for index in 0..<3 { fleet.enable(index) }
        var random = SeededGenerator(seed: seed)
        var typed: [String] = []
        for step in 0..<90 {
            let index = Int.random(in: 0..<3, using: &random)
            let device = fleet[index]
            let tabs = try fleet.tabs(index).keys.sorted()
            let clips = try fleet.clips(index).keys.sorted()
            let token = "line-\(seed)-\(step)"
            switch Int.random(in: 0..<9, using: &random) {
            case 0:
                typed.append(token)
                _ = device.output("tab", "new", token)
            case 1, 2:
                guard let tab = tabs.randomElement(using: &random) else { continue }
                let content = device.output("tab", "show", tab)
                typed.append(token)
                // Append or prepend a line: concurrent edits may merge or conflict; neither may lose it.
                let edited = Bool.random(using: &random) ? content + "\n" + token : token + "\n" + content
                _ = device.output("tab", "edit", tab, edited)
            case 3:
                _ = device.output("clip", "add", token)
            case 4:
                guard let clip = clips.randomElement(using: &random) else { continue }
                _ = device.inProcess(["clip", "rm", clip])
            case 5:
                guard let clip = clips.randomElement(using: &random) else { continue }
                _ = device.inProcess(["clip", Bool.random(using: &random) ? "pin" : "unpin", clip])
            case 6:
                _ = device.output("settings", "set", "clipboard.retention", ["1d", "7d", "2w", "never"].randomElement(using: &random)!)
            default:
                fleet.sync(index)
            }
        }
        fleet.converge()
        try fleet.expectConverged()
        let everything = try fleet.tabs(0).values.joined(separator: "\n")
        let lost = typed.filter { !everything.contains($0) }
        #expect(lost.isEmpty, "typed lines lost: \(lost)")
    }
}

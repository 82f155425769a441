import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A device joining a backend whose sender compacted its journal, so that the join reads the
/// sender's record files over several pages, killed part way.
@Suite("End to end: a join killed part way")
struct JoinKillTests {
    typealias KillPoint = FirstPushTests.KillPoint

    /// `clips` clips sent and their journal compacted: a device joining reads them from record
    /// files, more than one page of them. The backend is `FirstPushTests.backend(of:)` the sender.
    static func compactedSender(clips: Int) -> Device {
        let sender = FirstPushTests.sender(clips: clips)
        #expect(sender.inProcess(["sync"]).0 == 0)
        #expect(sender.inProcess(["sync", "compact"]).0 == 0)
        return sender
    }

    /// A new device that keeps as many clips as a sender (`FirstPushTests.sender`).
    static func joiner() -> Device {
        let device = Device()
        #expect(device.inProcess(["settings", "set", "clipboard.maxEntries", "100000"]).0 == 0)
        return device
    }

    /// A new device whose `sync enable` of a copy of `backend` is killed at `point`, then run
    /// again: it exits 0 and the device holds every clip exactly once. Returns whether the kill landed.
    static func killedJoin(backend: String, clips: Int, at point: KillPoint) throws -> Bool {
        let device = Self.joiner()
        let copy = FirstPushTests.backend(of: device)
        let copied = try Process.run("/bin/cp", ["-a", backend, copy])
        #expect(copied.status == 0, "\(copied.stderr)")
        let killed = try device.runArguments(
            [
                "-f", "-qq", "-o", "/dev/null", "-e", "trace=\(point.call)", "-e",
                "inject=\(point.call):signal=KILL:when=\(point.nth)", Process.itsypad, "sync", "enable", copy,
            ], program: "/usr/bin/strace")
        let (status, _, err) = device.inProcess(["sync", "enable", copy])
        #expect(status == 0, "killed at \(point) (exit \(killed.status)), the next sync failed: \(err)")
        let listed = try JSONValue.parse(device.inProcess(["clip", "ls", "--json"]).1).arrayValue ?? []
        let texts = listed.compactMap { $0["text"]?.stringValue }.sorted()
        #expect(texts == (0..<clips).map { "clip \($0)" }.sorted(), "killed at \(point): the device has \(texts.count) of \(clips) clips")
        return killed.status == 128 + SIGKILL
    }

    /// Kills at random points of a join of 2,500 clips (two pages of record files), two at a time,
    /// as `FirstPushTests.killedAtRandomPoints` draws them; ITSYPAD_JOIN_KILLS sets how many.
    @Test("a join read from record files, killed at random points, finishes with every clip once", .needs(["strace"]))
    func killedAtRandomPoints() async throws {
        let kills = Int(FaultInjectionTests.setting("ITSYPAD_JOIN_KILLS") ?? "") ?? 12
        let clips = 2500
        var generator = SeededGenerator(seed: 36)
        let sender = Self.compactedSender(clips: clips)
        let backend = FirstPushTests.backend(of: sender)
        let counting = Self.joiner()
        let copy = FirstPushTests.backend(of: counting)
        #expect(try Process.run("/bin/cp", ["-a", backend, copy]).status == 0)
        let counted = try FirstPushTests.systemCalls(counting, ["sync", "enable", copy])
        let (points, landed) = try await FirstPushTests.kill(at: kills, pointsOf: counted, generator: &generator) { point in
            try Self.killedJoin(backend: backend, clips: clips, at: point)
        }
        #expect(landed.count >= kills, "only \(landed.count) of \(points) kills landed; counted \(counted)")
        withExtendedLifetime(sender) {}
    }
}

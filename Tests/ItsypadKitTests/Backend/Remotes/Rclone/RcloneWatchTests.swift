import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// `itsypad sync watch` through an rclone remote: one `rclone rcd` serves all its syncs, and is
/// stopped when the watch ends.
@Suite(.needs(RcloneServer.Kind.rcloneWebDAV.tools))
struct RcloneWatchTests {
    /// A watch of device 0 (interval 1 s) whose rclone, a wrapper on PATH, logs each process it starts to `processes`.
    static func watch(_ fleet: RcloneFleet, logging processes: String, in scratch: TemporaryDirectory) throws -> RunningWatcher {
        try FileSystem.makeDirectory(scratch.file("bin"))
        // exec keeps the process id: the one logged is the one that runs.
        scratch.write("bin/rclone", "#!/bin/sh\necho $$ >>'\(processes)'\nexec /usr/bin/rclone \"$@\"\n", mode: 0o700)
        let environment = fleet.environment.merging(["PATH": scratch.file("bin") + ":/usr/bin:/bin"]) { $1 }
        return try RunningWatcher(fleet.devices[0], ["--interval", "1"], environment: environment)
    }

    /// Device 1 adds a clip and syncs; true once the watch brought it to device 0.
    static func changeArrives(_ fleet: RcloneFleet, _ text: String) throws -> Bool {
        try fleet.devices[1].run("clip", "add", text)
        #expect(try fleet.run(fleet.devices[1], "sync").status == 0)
        return eventually(within: 60) { try fleet.devices[0].run("clip", "ls").stdout.contains(text) }
    }

    static func started(_ processes: String) throws -> [pid_t] {
        String(decoding: (try FileSystem.read(processes)) ?? [], as: UTF8.self).split(separator: "\n").compactMap { pid_t($0) }
    }

    /// Three changes of another device, each brought in by a sync of the watch (interval 1 s),
    /// start one rclone process, gone once the watch stopped.
    @Test func aWatchRunsOneRcloneProcessAcrossItsSyncs() throws {
        let fleet = try RcloneFleet(.rcloneWebDAV, devices: 2)
        let scratch = TemporaryDirectory()
        let processes = scratch.file("processes.log")
        let watch = try Self.watch(fleet, logging: processes, in: scratch)
        for round in 1...3 { #expect(try Self.changeArrives(fleet, "round \(round)"), "\(watch.stderr)") }
        #expect(watch.stop(SIGTERM) == 0, "\(watch.stderr)")
        let started = try Self.started(processes)
        #expect(started.count == 1, "\(started.count) rclone processes for three syncs of one watch")
        for pid in started {
            #expect(eventually { kill(pid, 0) != 0 }, "rclone \(pid) still runs after the watch stopped")
        }
    }

    /// A sync run beside the watch names its own rclone in `rcd.owner`, then removes the file: the
    /// watch's next sync names its rclone there again, so that a next sync stops it if the watch is killed.
    @Test func theWatchsRcloneIsNamedAgainAfterASyncBesideIt() throws {
        let fleet = try RcloneFleet(.rcloneWebDAV, devices: 2)
        let scratch = TemporaryDirectory()
        let processes = scratch.file("processes.log")
        let watch = try Self.watch(fleet, logging: processes, in: scratch)
        #expect(try Self.changeArrives(fleet, "before"), "\(watch.stderr)")
        // Exit 75 while the watch's own sync holds the data directory: tried again.
        #expect(eventually(within: 60) { try fleet.run(fleet.devices[0], "sync").status == 0 })
        #expect(try Self.changeArrives(fleet, "after"), "\(watch.stderr)")
        let directory = fleet.devices[0].dataDir + "/sync/rclone"
        let named = RcloneDaemon.Owner.read(directory + "/rcd.owner", in: FileTree(root: directory))
        #expect(named?.daemon.pid == (try Self.started(processes)).first, "rcd.owner names \(String(describing: named))")
        #expect(watch.stop(SIGTERM) == 0, "\(watch.stderr)")
    }
}

import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// `itsypad sync watch` through an rclone remote: one `rclone rcd` serves all its syncs, and is
/// stopped when the watch ends.
@Suite(.needs(RcloneServer.Kind.rcloneWebDAV.tools))
struct RcloneWatchTests {
    /// Three changes of another device, each brought in by a sync of the watch (interval 1 s),
    /// start one rclone process, gone once the watch stopped.
    @Test func aWatchRunsOneRcloneProcessAcrossItsSyncs() throws {
        let fleet = try RcloneFleet(.rcloneWebDAV, devices: 2)
        let (watched, other) = (fleet.devices[0], fleet.devices[1])
        let scratch = TemporaryDirectory()
        let processes = scratch.file("processes.log")
        try FileSystem.makeDirectory(scratch.file("bin"))
        // exec keeps the process id: the one logged is the one that runs.
        scratch.write("bin/rclone", "#!/bin/sh\necho $$ >>'\(processes)'\nexec /usr/bin/rclone \"$@\"\n", mode: 0o700)
        let environment = fleet.environment.merging(["PATH": scratch.file("bin") + ":/usr/bin:/bin"]) { $1 }
        let watch = try RunningWatcher(watched, ["--interval", "1"], environment: environment)
        for round in 1...3 {
            try other.run("clip", "add", "round \(round)")
            #expect(try fleet.run(other, "sync").status == 0)
            #expect(eventually(within: 60) { try watched.run("clip", "ls").stdout.contains("round \(round)") }, "\(watch.stderr)")
        }
        #expect(watch.stop(SIGTERM) == 0, "\(watch.stderr)")
        let started = String(decoding: (try FileSystem.read(processes)) ?? [], as: UTF8.self).split(separator: "\n")
        #expect(started.count == 1, "\(started.count) rclone processes for three syncs of one watch")
        for pid in started.compactMap({ pid_t($0) }) {
            #expect(eventually { kill(pid, 0) != 0 }, "rclone \(pid) still runs after the watch stopped")
        }
    }
}

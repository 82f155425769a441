import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A sync's `rclone rcd` outliving it (SIGKILL gives a sync no chance to stop its daemon) is
/// stopped by the next sync of that remote; one that serves a sync still running is left alone.
@Suite(.needs(RcloneServer.Kind.rcloneWebDAV.tools))
struct RcloneDaemonTests {
    /// Waits at most `seconds` for the test's child `pid` to exit; whether it did.
    static func exits(_ pid: pid_t, within seconds: Double) -> Bool {
        let deadline = Monotonic.seconds() + seconds
        var status: Int32 = 0
        repeat {
            if waitpid(pid, &status, WNOHANG) == pid { return true }
            usleep(10_000)
        } while Monotonic.seconds() < deadline
        return false
    }

    /// A process that has exited, as it was while it ran.
    static func goneProcess(scratch: TemporaryScratch) throws -> ProcessIdentity {
        let pid = try Process.spawn(
            "sleep", ["60"], stdin: "/dev/null", stdout: scratch.path + "/out", stderr: scratch.path + "/err", environment: nil)
        let identity = try #require(ProcessIdentity(pid: pid))
        kill(pid, SIGKILL)
        #expect(exits(pid, within: 10))
        return identity
    }

    @Test(arguments: [true, false])
    func aDaemonLeftBehindIsStoppedByTheNextSync(ownerGone: Bool) throws {
        let fleet = try RcloneFleet(.rcloneWebDAV, devices: 1)
        let device = fleet.devices[0]
        let scratch = TemporaryScratch()
        // An rcd whose log goes to a file, as a killed sync leaves it: nothing it writes ends it.
        let daemon = try Process.spawn(
            "rclone", ["rcd", "--rc-addr", "127.0.0.1:0"], stdin: "/dev/null", stdout: scratch.path + "/rcd.out",
            stderr: scratch.path + "/rcd.err",
            environment: Process.baseEnvironment.merging(["RCLONE_RC_USER": "u", "RCLONE_RC_PASS": "p"]) { $1 })
        defer {
            kill(daemon, SIGKILL)
            _ = Self.exits(daemon, within: 10)
        }
        let daemonIdentity = try #require(ProcessIdentity(pid: daemon))
        let owner = ownerGone ? try Self.goneProcess(scratch: scratch) : try #require(ProcessIdentity(pid: getpid()))
        let ownerFile = device.dataDir + "/sync/rclone/rcd.owner"
        try FileSystem.writeAtomically(
            ownerFile, Array("\(daemonIdentity) \(owner)\n".utf8))

        let synced = try fleet.run(device, "sync")
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(Self.exits(daemon, within: 10) == ownerGone, "stopped only when the sync it served is gone")
        #expect(try FileSystem.read(ownerFile) == nil, "the sync stopped its own daemon and removed the file naming it")
    }
}

/// A sync starts `rclone rcd` before it opens the mirror's backend, so that rclone's start-up
/// overlaps the sync's local work; a sync that fails meanwhile still stops it.
@Suite(.needs(RcloneServer.Kind.rcloneWebDAV.tools + ["strace"]))
struct RcloneDaemonStartTests {
    @Test func aSyncStartsRcloneBeforeOpeningTheBackendAndStopsItWhenThatFails() throws {
        let fleet = try RcloneFleet(.rcloneWebDAV, devices: 1)
        let device = fleet.devices[0]
        let scratch = TemporaryDirectory()
        let trace = scratch.file("trace")
        // Without its key the device cannot open its encrypted backend: the sync fails before any fetch.
        try FileSystem.remove(device.dataDir + "/sync-key")
        // The sync's own spawns, traced without following them (a process killed at once may never
        // run a line of a logging wrapper): `clone3({flags=CLONE_VM|CLONE_VFORK…}, …) = PID`.
        let result = try device.runArguments(
            ["-qq", "-e", "trace=clone,clone3,vfork", "-o", trace, Process.itsypad, "sync"], environment: fleet.environment,
            program: "/usr/bin/strace")
        #expect(result.status == 1, "\(result.stderr)")
        let spawned = String(decoding: (try FileSystem.read(trace)) ?? [], as: UTF8.self).split(separator: "\n")
            .filter { $0.contains("CLONE_VFORK") || $0.hasPrefix("vfork") }
            .compactMap { $0.split(separator: " ").last.flatMap { pid_t($0) } }
        #expect(spawned.count == 1, "\(spawned.count) processes started (rclone rcd only)")
        for pid in spawned { #expect(eventually { kill(pid, 0) != 0 }, "rclone \(pid) still runs after the sync failed") }
    }
}

import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A sync whose backend fails with a system error exits 75 only when a later sync may get past it
/// unchanged (a share gone or not reachable, a backend not there now); an I/O error, a refused
/// permission, a read-only or full file system exit 1. Either way stderr names the path and the
/// system's reason, and the change waiting to be sent stays queued and goes with the next sync.
/// The errors are injected with strace into every open of a file in the backend directory (EACCES
/// cannot be had with chmod as root).
@Suite(.serialized) struct BackendErrorExitTests {
    @Test(
        .needs(["strace"]),
        arguments: [
            ("EIO", ExitCode.failure, "Input/output error"), ("EACCES", ExitCode.failure, "Permission denied"),
            ("EROFS", ExitCode.failure, "Read-only file system"), ("ENOSPC", ExitCode.failure, "No space left on device"),
            ("ENOTCONN", ExitCode.temporary, "Transport endpoint is not connected"),
            ("ESTALE", ExitCode.temporary, "Stale file handle"), ("ENOENT", ExitCode.temporary, "unmounted"),
        ])
    func aBackendErrorExitsAsALaterSyncCanFixItAndKeepsTheQueue(error: String, status: Int32, reason: String) throws {
        let world = try HostileWorld()
        try world.setUp(world.victim, "tab", "new", "--name", "waiting", "to be sent")
        let sync = try world.runArguments(
            world.victim, ["sync"],
            under: [
                "strace", "-f", "-qq", "-o", "/dev/null", "-P", world.backend, "-e", "trace=openat", "-e", "inject=openat:error=\(error)",
            ])
        world.expectContained(sync)
        world.expectExit(sync, status, mentioning: [world.backend, reason])
        let pending = try JSONValue.parse(try world.run(world.victim, "sync", "status", "--json").stdout)["pending"]
        #expect(pending?["ScratchTab"]?.int64Value == 1, "the queue was not kept: \(String(describing: pending))")
        world.expectExit(try world.run(world.victim, "sync"), 0)
        world.expectExit(try world.run(world.peer, "sync"), 0)
        #expect(try world.tabs(world.peer).values.contains("to be sent"))
    }
}

import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A data directory or a backend on a full disk: a clear error, and nothing lost once there is room
/// again. Each test mounts a small tmpfs, which needs root (or CAP_SYS_ADMIN); without it they are
/// skipped with that reason.
@Suite(.enabled(if: SmallDisk.canMount, "mounting a tmpfs needs root (CAP_SYS_ADMIN); not available here"))
struct FullDiskTests {
    @Test func clipAddOnAFullDataDirectoryLosesNothing() throws {
        let world = try HostileWorld()
        let disk = try SmallDisk(in: world.input, megabytes: 2)
        defer { disk.unmount() }
        let device = disk.path + "/device"
        try world.setUp(device, "clip", "add", "before the disk filled")
        try world.setUp(device, "tab", "new", "a tab")
        try disk.fill()
        var failures = 0
        for index in 0..<5 {
            let add = try world.run(device, "clip", "add", "while full \(index) " + String(repeating: "x", count: 4000))
            world.expectContained(add)
            #expect(add.status == 0 || add.status == 1)
            if add.status == 1 {
                failures += 1
                #expect(add.stderr.contains("No space left"), "\(add.stderr)")
            }
        }
        #expect(failures > 0, "the disk never filled up")
        let listing = try world.run(device, "clip", "ls")
        world.expectExit(listing, 0)
        #expect(listing.stdout.contains("before the disk filled"))
        disk.free()
        let add = try world.run(device, "clip", "add", "after there is room")
        world.expectExit(add, 0)
        // Everything stored is queued: a later sync sends all of it.
        let enable = try world.run(device, "sync", "enable", world.backend)
        world.expectExit(enable, 0)
        #expect(try world.run(world.peer, "sync").status == 0)
        let local = Set(try world.clips(device).values)
        let sent = Set(try world.clips(world.peer).values)
        #expect(local.isSubset(of: sent), "stored but never sent: \(local.subtracting(sent))")
    }

    @Test func syncIntoAFullDataDirectoryLosesNothing() throws {
        let world = try HostileWorld()
        let disk = try SmallDisk(in: world.input, megabytes: 2)
        defer { disk.unmount() }
        let device = disk.path + "/device"
        try world.setUp(device, "tab", "new", "typed before the disk filled")
        for index in 0..<20 { try world.setUp(world.peer, "tab", "new", "peer tab \(index) " + String(repeating: "y", count: 20_000)) }
        try world.setUp(world.peer, "sync")
        try world.setUp(device, "settings", "set", "sync.backend", world.backend)
        try world.setUp(device, "settings", "set", "sync.enabled", "true")
        try disk.fill(leaving: 64 * 1024)
        let sync = try world.run(device, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 1, mentioning: ["No space left"])
        disk.free()
        let retry = try world.run(device, "sync")
        world.expectExit(retry, 0)
        #expect(try world.tabs(device).count == (try world.tabs(world.peer).count) + 1)
        #expect(try world.run(world.peer, "sync").status == 0)
        #expect(try world.tabs(world.peer).values.contains("typed before the disk filled"))
    }

    @Test func aFullBackendKeepsTheQueue() throws {
        let world = try HostileWorld()
        let disk = try SmallDisk(in: world.input, megabytes: 4)
        defer { disk.unmount() }
        let backend = disk.path + "/backend"
        let device = world.input + "/device"
        try world.setUp(device, "sync", "enable", backend)
        try disk.fill()
        for index in 0..<3 { try world.setUp(device, "tab", "new", "waiting \(index) " + String(repeating: "z", count: 30_000)) }
        let sync = try world.run(device, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 1, mentioning: ["full"])
        #expect(try world.run(device, "sync", "status").stdout.contains("pending:    3 tabs,"))
        disk.free()
        let retry = try world.run(device, "sync")
        world.expectExit(retry, 0)
        let newcomer = world.input + "/newcomer"
        #expect(try world.run(newcomer, "sync", "enable", backend).status == 0)
        #expect(try world.tabs(newcomer).count == 3)
    }

    /// A key rotation that fills the disk while writing the new zone's journal rotates nothing, and
    /// leaves no item failed once later syncs have settled everything.
    @Test func aRotationStoppedByAFullBackendLeavesNothingFailed() throws {
        let world = try HostileWorld()
        let disk = try SmallDisk(in: world.input, megabytes: 2)
        defer { disk.unmount() }
        let device = world.input + "/device"
        for index in 0..<3 { try world.setUp(device, "tab", "new", "tab \(index) " + String(repeating: "r", count: 40_000)) }
        try world.setUp(device, "clip", "add", "a clip")
        try world.setUp(device, "sync", "enable", disk.path + "/backend", "--encrypt")
        try disk.fill(leaving: 64 * 1024)
        let rotate = try world.run(device, "sync", "key", "rotate")
        world.expectContained(rotate)
        world.expectExit(rotate, 1, mentioning: ["nothing was rotated"])
        disk.free()
        for _ in 0..<2 { world.expectExit(try world.run(device, "sync"), 0) }
        let status = try world.run(device, "sync", "status", "--json")
        world.expectExit(status, 0)
        let failed = try JSONValue.parse(status.stdout)["failed"]?.arrayValue
        #expect(failed?.isEmpty == true, "still failed after syncs that succeeded: \(status.stdout)")
    }
}

/// A tmpfs of a few megabytes, mounted for one test.
struct SmallDisk {
    let path: String

    /// Whether this process may mount one (tried once, on a scratch directory).
    static let canMount: Bool = {
        let scratch = TemporaryDirectory()
        guard mount("tmpfs", scratch.path, "tmpfs", 0, "size=64k") == 0 else { return false }
        umount2(scratch.path, Int32(MNT_DETACH))
        return true
    }()

    init(in parent: String, megabytes: Int) throws {
        path = parent + "/disk"
        try FileSystem.makeDirectory(path)
        try #require(
            mount("tmpfs", path, "tmpfs", 0, "size=\(megabytes)m,mode=0700") == 0, "mount failed: \(String(cString: strerror(errno)))")
    }

    /// Fills the disk up to `leaving` bytes.
    func fill(leaving: Int = 0) throws {
        // Close-on-exec: a process another test starts meanwhile must not keep the filler (and its space) alive.
        let fd = open(path + "/filler", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        var info = statvfs()
        try #require(statvfs(path, &info) == 0)
        let target = Int(info.f_bavail) * Int(info.f_bsize) - leaving
        let chunk = [UInt8](repeating: 0, count: 4096)
        var written = 0
        while written < target {
            let count = chunk.withUnsafeBytes { write(fd, $0.baseAddress, min($0.count, target - written)) }
            if count <= 0 { break }
            written += count
        }
    }

    func free() { unlink(path + "/filler") }

    func unmount() { umount2(path, Int32(MNT_DETACH)) }
}

import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Temporary files a crash left (`.tmp-*`): those over a day old go, from the data directory on a
/// sync (once a day) and from the backend on a sync (this device's folders) and on `sync compact` (everywhere);
/// younger ones may still be being written, by this device or another, and stay.
@Suite struct TemporaryFileTests {
    /// A temporary file named as itsypad names them in `folder`, last modified `age` seconds ago.
    @discardableResult
    func plant(in folder: String, age: Int) throws -> String {
        let path = folder + "/" + FileSystem.temporaryName()
        try FileSystem.writeAtomically(path, Array("half written".utf8))
        try setAge(path, age)
        return path
    }

    func setAge(_ path: String, _ age: Int) throws {
        let then = timespec(tv_sec: time(nil) - age, tv_nsec: 0)
        let times = [then, then]
        try #require(utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW) == 0, "utimensat \(path)")
    }

    static let twoDays = 2 * 86_400
    static let anHour = 3_600

    @Test func abandonedTemporaryFilesGoAfterADay() throws {
        let world = try HostileWorld()
        let status = try world.run(world.victim, "sync", "status", "--json")
        let device = try #require(try JSONValue.parse(status.stdout)["deviceID"]?.stringValue)
        let ownFolder = world.backend + "/devices/" + device
        let bucket = try #require(
            try FileSystem.list(world.backend + "/records/ScratchTab").first.map { world.backend + "/records/ScratchTab/" + $0 })
        let stale = [world.victim, world.victim + "/tabs", world.victim + "/sync", ownFolder, ownFolder + "/journal"]
        let staleShared = [world.backend, bucket]
        let old = try (stale + staleShared).map { try plant(in: $0, age: Self.twoDays) }
        let fresh = try (stale + staleShared).map { try plant(in: $0, age: Self.anHour) }
        // A link of that name is not a temporary file of ours: neither it nor what it names goes.
        let link = ownFolder + "/" + FileSystem.temporaryName()
        try #require(symlink(world.target, link) == 0)
        try setAge(link, Self.twoDays)
        // The last sweep (by the set-up's sync) a day ago: this sync sweeps.
        try setLastSweep(of: world.victim, to: (Int64(time(nil)) - Int64(Self.twoDays)) * 1000)

        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 0)
        for path in old.prefix(stale.count) { #expect(!FileSystem.exists(path), "\(path) survived a sync") }
        for path in old.suffix(staleShared.count) { #expect(FileSystem.exists(path), "\(path): a sync walks no shared folder") }

        let compact = try world.run(world.victim, "sync", "compact")
        world.expectContained(compact)
        world.expectExit(compact, 0)
        for path in old { #expect(!FileSystem.exists(path), "\(path) survived sync compact") }
        for path in fresh { #expect(FileSystem.exists(path), "\(path) is younger than a day, yet was removed") }
        var info = stat()
        #expect(lstat(link, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK, "the link was removed")
        #expect(FileSystem.exists(world.target))
        try world.expectVictimIntact()
    }

    /// A sync sweeps the data directory at most once a day (the time kept in `sync/state.json`): one
    /// right after a sweep leaves a day-old file for later; once a day has passed, or the time kept
    /// is in the future (a clock set back), the next sync removes it.
    @Test(arguments: [-Self.twoDays, 10 * 86_400])
    func theDataDirectoryIsSweptAtMostOnceADay(lastSweepFromNow: Int) throws {
        let world = try HostileWorld()
        world.expectExit(try world.run(world.victim, "sync"), 0)
        let old = try plant(in: world.victim + "/sync", age: Self.twoDays)
        world.expectExit(try world.run(world.victim, "sync"), 0)
        #expect(FileSystem.exists(old), "a sync swept again within a day of the last sweep")
        try setLastSweep(of: world.victim, to: (Int64(time(nil)) + Int64(lastSweepFromNow)) * 1000)
        world.expectExit(try world.run(world.victim, "sync"), 0)
        #expect(!FileSystem.exists(old), "\(old) survived a sync due to sweep")
        world.expectExit(try world.run(world.victim, "sync"), 0)
        #expect(try lastSweep(of: world.victim).map { abs($0 / 1000 - Int64(time(nil))) < 600 } == true, "the sweep's time was not kept")
    }

    func lastSweep(of dataDir: String) throws -> Int64? {
        try JSONValue.parse(try #require(try FileSystem.read(dataDir + "/sync/state.json")))["lastTemporaryFileSweep"]?.int64Value
    }

    func setLastSweep(of dataDir: String, to time: Int64) throws {
        let path = dataDir + "/sync/state.json"
        guard case .object(var pairs) = try JSONValue.parse(try #require(try FileSystem.read(path))) else {
            Issue.record("\(path) holds no object")
            return
        }
        pairs.removeAll { $0.0 == "lastTemporaryFileSweep" }
        pairs.append(("lastTemporaryFileSweep", .integer(time)))
        try FileSystem.writeAtomically(path, JSONValue.object(pairs).serializedBytes())
    }

    @Test func compactionCountsTheTemporaryFilesItRemoves() throws {
        let backend = try TemporaryBackend()
        defer { backend.remove() }
        for folder in [backend.path, backend.layout.journalDirectory("devA")] { try plant(in: folder, age: Self.twoDays) }
        try plant(in: backend.path, age: Self.anHour)
        #expect(try backend.backend.compact().temporaryFilesRemoved == 2)
    }
}

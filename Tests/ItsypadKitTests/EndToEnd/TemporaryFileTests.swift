import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Temporary files a crash left (`.tmp-*`): those over a day old go, from the data directory on a
/// sync and from the backend on a sync (this device's folders) and on `sync compact` (everywhere);
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

    @Test func compactionCountsTheTemporaryFilesItRemoves() throws {
        let backend = try TemporaryBackend()
        defer { backend.remove() }
        for folder in [backend.path, backend.layout.journalDirectory("devA")] { try plant(in: folder, age: Self.twoDays) }
        try plant(in: backend.path, age: Self.anHour)
        #expect(try backend.backend.compact().temporaryFilesRemoved == 2)
    }
}

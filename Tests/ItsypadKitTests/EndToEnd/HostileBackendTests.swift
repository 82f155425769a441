import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A peer that can write the backend tries every name, number, file type and size it controls.
/// Each test runs the built binary and asserts containment, no crash or hang, the victim's data
/// intact, and the documented exit status with a reason.
@Suite struct HostileBackendTests {
    // MARK: Tokens

    @Test(arguments: [
        "1:ZONE:5:after:../../outside/target", "1:ZONE:9223372036854775807", "1:ZONE:1:at:9223372036854775807:0",
        "1:ZONE:1:at:1:9223372036854775807", "1:ZONE:-5", "1:ZONE:1:after:ScratchTab/..%00", "garbage\u{0}",
    ])
    func hostileTokensRecoverByThemselves(_ token: String) throws {
        let world = try HostileWorld()
        let statePath = world.victim + "/sync/state.json"
        var state = try JSONValue.parse(try #require(try FileSystem.read(statePath)))
        let zone = try #require(state["zoneID"]?.stringValue)
        guard case .object(var members) = state else {
            Issue.record("\(statePath) is not a JSON object")
            return
        }
        members.removeAll { $0.0 == "token" }
        members.append(("token", .string(token.replacing("ZONE", with: zone))))
        state = .object(members)
        try FileSystem.writeAtomically(statePath, Array(state.serialized().utf8))
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 0)
        try world.expectVictimIntact()
        #expect(try world.tabs(world.victim).values.contains("from the peer"))
    }

    // MARK: zone.json

    @Test(arguments: [
        ("a format that is a string", #"{"format":"4","zoneID":"Z","created":0}"#),
        ("zone with a colon", #"{"format":4,"zoneID":"a:b","created":0}"#),
        ("zone with traversal", #"{"format":4,"zoneID":"../../outside","created":0}"#),
        ("created Int64.min", #"{"format":4,"zoneID":"Z","created":-9223372036854775808}"#),
        ("format Int64.max", #"{"format":9223372036854775807,"zoneID":"Z","created":0}"#),
        ("deeply nested", String(repeating: "[", count: 100_000)),
        ("huge", "{\"format\":4,\"zoneID\":\"Z\",\"created\":0,\"pad\":\"" + String(repeating: "x", count: 1 << 20) + "\"}"),
    ])
    func hostileZoneFilesNeverTrap(_ label: String, _ content: String) throws {
        let world = try HostileWorld()
        try FileSystem.writeAtomically(world.backend + "/zone.json", Array(content.utf8))
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        #expect(sync.status == 0 || sync.status == 1, "\(label): \(sync.stderr)")
        if sync.status != 0 { world.expectExit(sync, 1) }
        try world.expectVictimIntact()
    }

    // MARK: Symlinks and FIFOs in the backend

    /// Each backend path a peer could replace by a symlink to a file or folder outside.
    static let backendPaths: [(String, @Sendable (HostileWorld) throws -> String, Bool)] = [
        (
            "a journal segment",
            { world in
                let journal = try world.peerFolder + "/journal"
                return journal + "/" + (try #require(try FileSystem.list(journal).last))
            }, false
        ),
        ("records/ScratchTab folder", { $0.backend + "/records/ScratchTab" }, true),
        (
            "a record file",
            { world in
                let id = try #require(try world.tabs(world.peer).first { $0.value == "from the peer" }?.key)
                let file = try #require(
                    try fannedOutRecordFiles(in: world.backend + "/records/ScratchTab").first { $0.contains("/" + id + ".") })
                return world.backend + "/records/ScratchTab/" + file
            }, false
        ),
        ("the peer's assets folder", { try $0.peerFolder + "/assets" }, true),
        ("the peer's lock", { try $0.peerFolder + "/lock" }, false),
        ("the peer's device.json", { try $0.peerFolder + "/device.json" }, false),
        ("zone.json", { $0.backend + "/zone.json" }, false),
        ("the peer's journal folder", { try $0.peerFolder + "/journal" }, true),
    ]

    @Test(arguments: backendPaths.indices)
    func symlinksInTheBackendAreNeverFollowed(_ index: Int) throws {
        let (label, path, isFolder) = Self.backendPaths[index]
        let world = try HostileWorld()
        // Pending work of every kind, a large tab included (it travels as an asset).
        try world.setUp(world.victim, "tab", "new", "pending")
        try world.setUp(world.victim, "tab", "new", stdin: String(repeating: "large ", count: 200_000))
        let target = try path(world)
        try world.replaceWithSymlink(target, to: isFolder ? world.outside + "/dir" : world.target)
        for device in [world.victim, world.peer] {
            let sync = try world.run(device, "sync")
            world.expectContained(sync)
            #expect(sync.status == 0 || sync.status == 1, "\(label): \(sync.stderr)")
            #expect(sync.status == 0 || sync.stderr.contains("Error:"), "\(label)")
        }
        let compact = try world.run(world.peer, "sync", "compact")
        world.expectContained(compact)
        try world.expectVictimIntact()
        // A dangling link must not be created by anything either.
        try world.replaceWithSymlink(target, to: world.outside + "/created")
        let again = try world.run(world.victim, "sync")
        world.expectContained(again)
        #expect(!FileSystem.exists(world.outside + "/created"), "\(label): a dangling link's target was created")
    }

    @Test(arguments: backendPaths.indices.filter { !backendPaths[$0].2 })
    func fifosInTheBackendAreRefusedWithoutHanging(_ index: Int) throws {
        let (label, path, _) = Self.backendPaths[index]
        let world = try HostileWorld()
        #expect(try world.run(world.victim, "tab", "new", "pending").status == 0)
        try world.replaceWithFIFO(try path(world))
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        #expect(sync.status == 0 || sync.status == 1, "\(label): exit \(sync.status): \(sync.stderr)")
        // Meanwhile the data directory is not held: a clipboard watcher keeps working.
        let add = try world.run(world.victim, "clip", "add", "copied meanwhile")
        #expect(add.status == 0, "\(label): \(add.stderr)")
        try world.expectVictimIntact()
    }

    /// An asset that is not a regular file of its reference's size is taken for one that has not
    /// arrived yet: never read, the tab that needs it waits, and everything else syncs.
    @Test func aFIFOAssetIsNotReadAndItsTabWaits() throws {
        let world = try HostileWorld()
        try world.setUp(world.peer, "tab", "new", stdin: String(repeating: "large ", count: 200_000))
        try world.setUp(world.peer, "sync")
        let asset = try #require(try FileSystem.list(world.peerFolder + "/assets").first)
        try world.replaceWithFIFO(world.peerFolder + "/assets/" + asset)
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 0)
        #expect(try !world.tabs(world.victim).values.contains { $0.hasPrefix("large ") })
        try world.expectVictimIntact()
    }

    @Test func anAssetLargerThanItsReferenceIsNotReadAndItsTabWaits() throws {
        let world = try HostileWorld()
        try world.setUp(world.peer, "tab", "new", stdin: String(repeating: "large ", count: 200_000))
        try world.setUp(world.peer, "sync")
        let asset = try world.peerFolder + "/assets/" + (try #require(try FileSystem.list(world.peerFolder + "/assets").first))
        try FileSystem.writeAtomically(asset, [UInt8](repeating: 0x41, count: 2_000_000))
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 0)
        #expect(try !world.tabs(world.victim).values.contains { $0.hasPrefix("large ") })
        try world.expectVictimIntact()
    }

    /// A peer's assets folder replaced by a file, a FIFO or a symbolic link stops only its assets:
    /// named in `sync status`, never opened, and everything else syncs, both ways.
    @Test(arguments: ["file", "FIFO", "symlink"])
    func aStrayAssetsFolderStopsOnlyItsAssets(_ kind: String) throws {
        let world = try HostileWorld()
        try world.setUp(world.peer, "clip", "add", "peer text clip")
        try world.setUp(world.peer, "tab", "new", "peer text tab")
        try world.setUp(world.peer, "settings", "set", "clipboard.maxEntries", "4321")
        try world.setUp(world.peer, "sync")
        try world.setUp(world.peer, "tab", "new", stdin: String(repeating: "large ", count: 200_000))
        try world.setUp(world.peer, "sync")
        let assets = try world.peerFolder + "/assets"
        switch kind {
        case "file":
            _ = try Process.run("/bin/rm", ["-rf", assets])
            try FileSystem.writeAtomically(assets, Array("not a folder\n".utf8))
        case "FIFO": try world.replaceWithFIFO(assets)
        default: try world.replaceWithSymlink(assets, to: world.outside + "/dir")
        }
        try world.setUp(world.victim, "clip", "add", "victim clip")
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 1, mentioning: ["/assets"])
        #expect(try world.clips(world.victim).values.contains("peer text clip"), "\(kind)")
        #expect(try world.tabs(world.victim).values.contains("peer text tab"), "\(kind)")
        #expect(try !world.tabs(world.victim).values.contains { $0.hasPrefix("large ") }, "\(kind)")
        #expect(try world.run(world.victim, "settings", "get", "clipboard.maxEntries").stdout == "4321\n", "\(kind)")
        let status = try world.run(world.victim, "sync", "status", "--json")
        let quarantined = try JSONValue.parse(status.stdout)["quarantined"]?.arrayValue ?? []
        #expect(
            quarantined.contains { $0["location"]?.stringValue?.hasSuffix("/assets") == true }, "\(kind): \(status.stdout)")
        // The peer whose folder it is syncs everything but its assets too.
        let peerSync = try world.run(world.peer, "sync")
        world.expectContained(peerSync)
        world.expectExit(peerSync, 1, mentioning: ["/assets"])
        #expect(try world.clips(world.peer).values.contains("victim clip"), "\(kind)")
        try world.expectVictimIntact()
    }

    // MARK: A backend that is not there

    @Test(arguments: ["deleted", "emptied"])
    func aMissingBackendIsNeverRecreatedBySync(_ how: String) throws {
        let world = try HostileWorld()
        #expect(try world.run(world.victim, "tab", "new", "made while it was gone").status == 0)
        _ = try Process.run("/bin/rm", ["-rf", world.backend])
        if how == "emptied" { try FileSystem.makeDirectory(world.backend) }
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, ExitCode.temporary, mentioning: [world.backend, "unmounted", "sync enable"])
        #expect((try? FileSystem.list(world.backend)) ?? [] == [], "nothing was created in place of the backend")
        #expect(FileSystem.exists(world.backend) == (how == "emptied"))
        #expect(try world.run(world.victim, "sync", "status").stdout.contains("pending:    1 tab,"))
        // Re-created on purpose, it gets everything again.
        let enable = try world.run(world.victim, "sync", "enable", world.backend)
        world.expectExit(enable, 0)
        let newcomer = world.newcomer
        #expect(try world.run(newcomer, "sync", "enable", world.backend).status == 0)
        #expect(Set(try world.tabs(newcomer).values).isSuperset(of: ["made while it was gone", "the victim's own tab", "from the peer"]))
        try world.expectVictimIntact()
    }

    @Test func enablingUnderAMissingParentIsATypo() throws {
        let world = try HostileWorld()
        let typo = world.scratch.path + "/no-such-parent/backend"
        let enable = try world.run(world.victim, "sync", "enable", typo)
        world.expectContained(enable)
        world.expectExit(enable, 1, mentioning: ["does not exist"])
        #expect(!FileSystem.exists(world.scratch.path + "/no-such-parent"))
        #expect(try world.run(world.victim, "settings", "get", "sync.backend").stdout.contains(world.backend), "the setting is unchanged")
    }

    @Test func aTokenFromAnotherZoneRecoversByItself() throws {
        let world = try HostileWorld()
        let statePath = world.victim + "/sync/state.json"
        let text = String(decoding: try #require(try FileSystem.read(statePath)), as: UTF8.self)
        let zone = try #require(try JSONValue.parse(text)["zoneID"]?.stringValue)
        try FileSystem.writeAtomically(statePath, Array(text.replacing("\"1:\(zone):", with: "\"1:OTHERZONE:").utf8))
        #expect(try world.run(world.peer, "tab", "new", "new on the peer").status == 0)
        #expect(try world.run(world.peer, "sync").status == 0)
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 0)
        #expect(try world.tabs(world.victim).values.contains("new on the peer"))
        #expect(try world.run(world.peer, "sync").status == 0)
        #expect(Set(try world.tabs(world.peer).values) == Set(try world.tabs(world.victim).values))
        try world.expectVictimIntact()
    }

    @Test func backendAccessibleByOthersIsWarnedAbout() throws {
        let world = try HostileWorld()
        try #require(chmod(world.backend, 0o777) == 0)
        let sync = try world.run(world.victim, "sync")
        #expect(sync.status == 0)
        #expect(sync.stderr.split(separator: "\n").filter { $0.contains("accessible by other users") }.count == 1, "\(sync.stderr)")
    }
}

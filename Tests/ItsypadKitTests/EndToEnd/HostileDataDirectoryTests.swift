import Testing

@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The data directory is read as untrusted too: a symlink, a FIFO, a damaged file or an extreme
/// number in any of its files gives a clear error (or is repaired, for caches), never a crash, a
/// hang, or a write outside it.
@Suite struct HostileDataDirectoryTests {
    /// Files and folders of the data directory, and whether each is a folder.
    static let dataPaths: [(String, Bool)] = [
        ("meta.json", false), ("lock", false), ("settings.json", false), ("tabs", true), ("tabs/TAB.json", false),
        ("clips", true), ("clips/log", false), ("clips/index", false), ("sync", true), ("sync/state.json", false),
        ("sync/pending.log", false), ("sync/log.jsonl", false),
    ]

    static let commands = [
        ["clip", "add", "copied"], ["tab", "new", "typed"], ["tab", "ls", "--json"], ["clip", "ls", "--json"], ["sync"],
        ["sync", "status"],
    ]

    func path(_ world: HostileWorld, _ relative: String) throws -> String {
        let tab = try #require(try world.tabs(world.victim).first { $0.value == "the victim's own tab" }?.key)
        return world.victim + "/" + relative.replacing("TAB", with: tab)
    }

    @Test(arguments: dataPaths.indices)
    func symlinksInTheDataDirectoryAreNeverFollowed(_ index: Int) throws {
        let (relative, isFolder) = Self.dataPaths[index]
        let world = try HostileWorld()
        try world.replaceWithSymlink(try path(world, relative), to: isFolder ? world.outside + "/dir" : world.target)
        for command in Self.commands {
            let result = try world.runArguments(world.victim, command)
            world.expectContained(result)
            #expect(
                result.status == 0 || result.status == 1,
                "\(relative): \(command.joined(separator: " ")) exit \(result.status): \(result.stderr)")
            if result.status == 1 { #expect(result.stderr.contains("Error:"), "\(relative): no reason given") }
        }
    }

    @Test(arguments: dataPaths.indices.filter { !dataPaths[$0].1 })
    func fifosInTheDataDirectoryAreRefusedWithoutHanging(_ index: Int) throws {
        let (relative, _) = Self.dataPaths[index]
        let world = try HostileWorld()
        try world.replaceWithFIFO(try path(world, relative))
        for command in Self.commands {
            let result = try world.runArguments(world.victim, command)
            world.expectContained(result)
            #expect(
                result.status == 0 || result.status == 1,
                "\(relative): \(command.joined(separator: " ")) exit \(result.status): \(result.stderr)")
        }
    }

    @Test func aSymlinkedIndexOrEngineStateIsReplacedNotFollowed() throws {
        let world = try HostileWorld()
        for relative in ["clips/index", "sync/state.json"] {
            try world.replaceWithSymlink(try path(world, relative), to: world.target)
        }
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 0)
        let listing = try world.run(world.victim, "clip", "ls")
        world.expectExit(listing, 0)
        #expect(listing.stdout.contains("the victim's own clip"))
        try world.expectVictimIntact()
    }

    // MARK: Numbers and damage in local files

    @Test(arguments: [
        ("lastModified Int64.min", #""lastModified": -9223372036854775808"#),
        ("lastModified Int64.max", #""lastModified": 9223372036854775807"#),
        ("lastModified 1e300", #""lastModified": 1e300"#),
        ("clock counter Int64.max", #""clock": "1732200000000.9223372036854775807.x""#),
        ("clock time Int64.min", #""clock": "-9223372036854775808.0.x""#),
    ])
    func extremeNumbersInATabFileAreCorruptionNotACrash(_ label: String, _ replacement: String) throws {
        let world = try HostileWorld()
        let file = try path(world, "tabs/TAB.json")
        var text = String(decoding: try #require(try FileSystem.read(file)), as: UTF8.self)
        let key = replacement.hasPrefix("\"clock\"") ? "\"clock\": " : "\"lastModified\": "
        let start = try #require(text.firstRange(of: key))
        let end = try #require(text[start.upperBound...].firstIndex(of: ","))
        text.replaceSubrange(start.lowerBound..<end, with: replacement)
        try FileSystem.writeAtomically(file, Array(text.utf8))
        for command in [["tab", "ls"], ["tab", "ls", "--json"], ["export"]] {
            let result = try world.runArguments(world.victim, command)
            world.expectContained(result)
            world.expectExit(result, 1, mentioning: ["corrupt", FileSystem.baseName(file)])
        }
        #expect(try FileSystem.read(file) == Array(text.utf8), "\(label): the damaged file is kept as it is")
        #expect(try world.run(world.victim, "clip", "ls").status == 0)
    }

    @Test func aGarbageIndexIsRebuiltNeverTrusted() throws {
        let world = try HostileWorld()
        let index = world.victim + "/clips/index"
        var bytes = try #require(try FileSystem.read(index))
        // The header (and its checksum) stays valid; the first slot's offset, length and time become garbage.
        for position in ClipIndexHeader.size + 16..<ClipIndexHeader.size + 40 { bytes[position] = 0xFF }
        try FileSystem.writeAtomically(index, bytes)
        for command in [["clip", "ls", "--json"], ["clip", "add", "after the damage"], ["export"], ["sync"]] {
            let result = try world.runArguments(world.victim, command)
            world.expectContained(result)
            world.expectExit(result, 0)
        }
        #expect(Set(try world.clips(world.victim).values).isSuperset(of: ["the victim's own clip", "after the damage"]))
    }

    @Test func aCorruptClipLogIsReportedAndKept() throws {
        let world = try HostileWorld()
        let log = world.victim + "/clips/log"
        let before = try #require(try FileSystem.read(log))
        let damaged = Array("{\"op\":\"add\",\"id\":\"not json\n".utf8) + before
        try FileSystem.writeAtomically(log, damaged)
        for command in [["clip", "ls"], ["clip", "add", "more"], ["sync"], ["export"]] {
            let result = try world.runArguments(world.victim, command)
            world.expectContained(result)
            world.expectExit(result, 1, mentioning: [log])
        }
        #expect(try FileSystem.read(log) == damaged, "nothing in the log was dropped")
    }

    @Test(arguments: ["-9223372036854775808", "9223372036854775807", "1e300"])
    func extremeTimestampsInTheClipLogAreCorruptionNotACrash(_ timestamp: String) throws {
        let world = try HostileWorld()
        let log = world.victim + "/clips/log"
        let line = "{\"op\":\"add\",\"id\":\"\(Identifier.make())\",\"ts\":\(timestamp),\"pinned\":false,\"text\":\"when?\"}\n"
        let damaged = try #require(try FileSystem.read(log)) + Array(line.utf8)
        try FileSystem.writeAtomically(log, damaged)
        for command in [["clip", "ls", "--json"], ["export"]] {
            let result = try world.runArguments(world.victim, command)
            world.expectContained(result)
            world.expectExit(result, 1, mentioning: [log])
        }
        #expect(try FileSystem.read(log) == damaged)
    }

    @Test func aTornLastLineOfTheClipLogIsFine() throws {
        let world = try HostileWorld()
        let log = world.victim + "/clips/log"
        try FileSystem.writeAtomically(log, try #require(try FileSystem.read(log)) + Array("{\"op\":\"add\",\"id\":".utf8))
        let add = try world.run(world.victim, "clip", "add", "after a crash")
        world.expectExit(add, 0)
        try world.expectVictimIntact()
    }

    @Test(arguments: [
        ("not JSON", "{\"zoneID\":"),
        ("deeply nested", String(repeating: "[", count: 100_000)),
        (
            "extreme numbers",
            #"{"zoneID":"Z","token":"1:Z:9223372036854775807","lastPush":-9223372036854775808,"lastPull":9223372036854775807,"failures":[{"type":"ScratchTab","id":"x","attempts":9223372036854775807,"error":"e"}]}"#
        ),
        ("a zone ID with traversal", #"{"zoneID":"../../outside","token":null}"#),
    ])
    func damagedEngineStateRecoversByItself(_ label: String, _ content: String) throws {
        let world = try HostileWorld()
        try world.setUp(world.victim, "tab", "new", "pending while damaged")
        try FileSystem.writeAtomically(world.victim + "/sync/state.json", Array(content.utf8))
        let status = try world.run(world.victim, "sync", "status")
        world.expectContained(status)
        world.expectExit(status, 0)
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 0)
        #expect(try world.run(world.peer, "sync").status == 0)
        #expect(try world.tabs(world.peer).values.contains("pending while damaged"), "\(label)")
        #expect(try world.tabs(world.victim).values.contains("from the peer"), "\(label)")
        let again = try world.run(world.victim, "sync")
        world.expectExit(again, 0)
        try world.expectVictimIntact()
    }

    @Test func extremeVersionsInThePendingLogDoNotTrap() throws {
        let world = try HostileWorld()
        let tab = try #require(try world.tabs(world.victim).first { $0.value == "the victim's own tab" }?.key)
        let lines = """
            {"op":"save","type":"ScratchTab","id":"\(tab)","v":9223372036854775807}
            {"op":"save","type":"ScratchTab","id":"\(tab)"}
            {"op":"done","type":"ScratchTab","id":"\(tab)","v":-9223372036854775808}

            """
        let fd = open(world.victim + "/sync/pending.log", O_WRONLY | O_APPEND)
        try #require(fd >= 0)
        try FileSystem.writeAll(fd: fd, Array(lines.utf8), at: Int(lseek(fd, 0, SEEK_END)), path: "pending.log")
        close(fd)
        for command in [["clip", "add", "x"], ["sync", "status"], ["sync"]] {
            let result = try world.runArguments(world.victim, command)
            world.expectContained(result)
            world.expectExit(result, 0)
        }
    }

    @Test(arguments: ["1e300", "-1e300", "9.3e18", "\"nan\""])
    func importOfExtremeLegacyDatesIsRefused(_ number: String) throws {
        let world = try HostileWorld()
        let dump = "{\"tabs\":[{\"id\":\"\(Identifier.make())\",\"content\":\"x\",\"lastModified\":\(number)}],\"clipboard\":[]}"
        try FileSystem.makeDirectory(world.input)
        try FileSystem.writeAtomically(world.input + "/dump.json", Array(dump.utf8))
        let result = try world.run(world.victim, "import", "--kvs", world.input + "/dump.json")
        world.expectContained(result)
        world.expectExit(result, 1)
        try world.expectVictimIntact()
    }
}

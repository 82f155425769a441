import Testing

@testable import ItsypadSupport

/// The replication simulator behaves like the services it stands for.
@Suite struct ReplicationSimulatorTests {
    typealias Simulator = ReplicationSimulator

    /// Every regular file of a copy, relative path → content.
    static func files(_ root: String, prefix: String = "") throws -> [String: String] {
        var result: [String: String] = [:]
        for name in try FileSystem.list(root, includingHidden: true) {
            let path = root + "/" + name
            if FileSystem.isDirectory(path) {
                result.merge(try files(path, prefix: prefix + name + "/")) { first, _ in first }
            } else if let bytes = try FileSystem.read(path) {
                result[prefix + name] = String(decoding: bytes, as: UTF8.self)
            }
        }
        return result
    }

    static func write(_ text: String, _ path: String, in simulator: Simulator, copy: Int) throws {
        let full = simulator.root(copy) + "/" + path
        try FileSystem.makeDirectory(FileSystem.directoryName(full))
        try FileSystem.writeAtomically(full, Array(text.utf8), syncingDirectory: false)
    }

    static func read(_ path: String, in simulator: Simulator, copy: Int) throws -> String? {
        try FileSystem.read(simulator.root(copy) + "/" + path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A simulator with nothing random left in delivery: no half-done transfers, no delays.
    static func simulator(
        _ directory: TemporaryDirectory, copies: Int = 2, seed: UInt64 = 1, configure: (inout Simulator.Options) -> Void = { _ in }
    ) throws -> Simulator {
        var options = Simulator.Options()
        options.halfDoneChance = 0
        options.maxDelay = 0
        configure(&options)
        return try Simulator(copies: copies, in: directory.path, seed: seed, options: options)
    }

    @Test func newChangedAndDeletedFilesReachEveryCopy() throws {
        let directory = TemporaryDirectory()
        let simulator = try Self.simulator(directory, copies: 3)
        try Self.write("one", "records/a.json", in: simulator, copy: 0)
        try Self.write("two", "b.log", in: simulator, copy: 1)
        try simulator.quiesce()
        for copy in 0..<3 { #expect(try Self.files(simulator.root(copy)) == ["records/a.json": "one", "b.log": "two"]) }
        try Self.write("one, edited", "records/a.json", in: simulator, copy: 2)
        try FileSystem.remove(simulator.root(0) + "/b.log")
        try simulator.quiesce()
        for copy in 0..<3 { #expect(try Self.files(simulator.root(copy)) == ["records/a.json": "one, edited"]) }
        #expect(simulator.isQuiet)
    }

    @Test(arguments: Simulator.ConflictNaming.allCases)
    func concurrentChangesKeepTheNewerAndAConflictCopy(_ naming: Simulator.ConflictNaming) throws {
        let directory = TemporaryDirectory()
        let simulator = try Self.simulator(directory) { $0.conflictNaming = naming }
        try Self.write("base", "j/1.json", in: simulator, copy: 0)
        try simulator.quiesce()
        try Self.write("older", "j/1.json", in: simulator, copy: 0)
        try simulator.scan(0)
        simulator.tick()
        try Self.write("newer", "j/1.json", in: simulator, copy: 1)
        try simulator.scan(1)
        try simulator.quiesce()
        let files = try Self.files(simulator.root(0))
        #expect(try Self.files(simulator.root(1)) == files)
        #expect(files.count == 2 && files["j/1.json"] == "newer")
        let conflictCopy = try #require(files.first { $0.key != "j/1.json" })
        #expect(conflictCopy.value == "older")
        switch naming {
        case .syncthing:
            // The time of the losing change (simulated), and the device that made it.
            #expect(
                conflictCopy.key.hasPrefix("j/1.sync-conflict-20261123-1015") && conflictCopy.key.hasSuffix("-AAAAAAA.json"),
                "\(conflictCopy.key)")
        case .dropbox:
            #expect(conflictCopy.key == "j/1 (conflicted copy 2026-11-23).json")
        }
        #expect(
            simulator.events.contains { event in
                if case .conflict("j/1.json", _, conflictCopy.key?) = event { true } else { false }
            })
    }

    @Test func aModificationBeatsAConcurrentDeletion() throws {
        let directory = TemporaryDirectory()
        let simulator = try Self.simulator(directory)
        try Self.write("base", "f.json", in: simulator, copy: 0)
        try simulator.quiesce()
        simulator.tick()
        try Self.write("edited", "f.json", in: simulator, copy: 0)
        try simulator.scan(0)
        simulator.tick()
        try FileSystem.remove(simulator.root(1) + "/f.json")
        try simulator.scan(1)
        try simulator.quiesce()
        for copy in 0..<2 { #expect(try Self.files(simulator.root(copy)) == ["f.json": "edited"]) }
    }

    @Test func identicalConcurrentContentIsNoConflict() throws {
        let directory = TemporaryDirectory()
        let simulator = try Self.simulator(directory)
        try Self.write("same bytes", "assets/abc", in: simulator, copy: 0)
        try Self.write("same bytes", "assets/abc", in: simulator, copy: 1)
        try simulator.quiesce()
        for copy in 0..<2 { #expect(try Self.files(simulator.root(copy)) == ["assets/abc": "same bytes"]) }
    }

    @Test func droppedConflictCopiesLoseTheOlderChangeSilently() throws {
        let directory = TemporaryDirectory()
        let simulator = try Self.simulator(directory) { $0.dropConflictCopyChance = 1 }
        try Self.write("from copy 0", "state.json", in: simulator, copy: 0)
        try simulator.scan(0)
        simulator.tick()
        try Self.write("from copy 1", "state.json", in: simulator, copy: 1)
        try simulator.scan(1)
        try simulator.quiesce()
        for copy in 0..<2 { #expect(try Self.files(simulator.root(copy)) == ["state.json": "from copy 1"]) }
        #expect(simulator.events.contains { if case .conflict(_, _, nil) = $0 { true } else { false } })
    }

    @Test func filesArriveInAnyOrder() throws {
        let directory = TemporaryDirectory()
        let simulator = try Self.simulator(directory)
        try Self.write("seq 1-2", "journal/0000000000000001.log", in: simulator, copy: 0)
        try Self.write("seq 3-4", "journal/0000000000000003.log", in: simulator, copy: 0)
        try Self.write("{\"asset\":\"cafe\"}", "records/t.json", in: simulator, copy: 0)
        try Self.write("blob", "assets/cafe", in: simulator, copy: 0)
        try simulator.scan(0)
        #expect(try simulator.deliver("journal/0000000000000003.log", from: 0, to: 1))
        #expect(try simulator.deliver("records/t.json", from: 0, to: 1))
        #expect(try Self.files(simulator.root(1)) == ["journal/0000000000000003.log": "seq 3-4", "records/t.json": "{\"asset\":\"cafe\"}"])
        #expect(try !simulator.deliver("journal/0000000000000003.log", from: 0, to: 1), "each version travels once")
        try simulator.deliverAll(from: 0, to: 1)
        #expect(try Self.files(simulator.root(1)) == Self.files(simulator.root(0)))
    }

    @Test(arguments: Simulator.TemporaryNaming.allCases)
    func halfDoneTransfersShowATemporaryOrHalfFile(_ naming: Simulator.TemporaryNaming) throws {
        let directory = TemporaryDirectory()
        let simulator = try Self.simulator(directory) { $0.temporaryNaming = naming }
        try Self.write("0123456789", "d/f.log", in: simulator, copy: 0)
        try simulator.scan(0)
        try simulator.deliverHalf("d/f.log", from: 0, to: 1)
        let expected: [String: String] =
            switch naming {
            case .syncthing: ["d/.syncthing.f.log.tmp": "01234"]
            case .syncthingWindows: ["d/~syncthing~f.log.tmp": "01234"]
            case .tilde: ["d/f.log.~tmp~": "01234"]
            case .inPlace: ["d/f.log": "01234"]
            }
        #expect(try Self.files(simulator.root(1)) == expected)
        try simulator.scan(1)
        #expect(try Self.files(simulator.root(0)) == ["d/f.log": "0123456789"], "a half-done transfer is never replicated onwards")
        try simulator.finishStaged()
        #expect(try Self.files(simulator.root(1)) == ["d/f.log": "0123456789"])
    }

    @Test func temporaryFilesAreNotReplicated() throws {
        let directory = TemporaryDirectory()
        let simulator = try Self.simulator(directory)
        for name in [".syncthing.x.tmp", "~syncthing~x.tmp", "x.~tmp~"] { try Self.write("partial", name, in: simulator, copy: 0) }
        try simulator.quiesce()
        #expect(try Self.files(simulator.root(1)).isEmpty)
    }

    /// Random writes, deletions and replication on three copies: once quiet, every copy holds the
    /// same files, and the same seed replays the same run.
    @Test(arguments: [1, 2, 3] as [UInt64])
    func randomRunsConvergeAndReplay(seed: UInt64) throws {
        func run() throws -> (files: [String: String], events: [Simulator.Event]) {
            let directory = TemporaryDirectory()
            let simulator = try Simulator(copies: 3, in: directory.path, seed: seed, options: Simulator.Options())
            var random = SeededGenerator(seed: seed &+ 100)
            for step in 0..<200 {
                let copy = Int.random(in: 0..<3, using: &random)
                let path = "dir\(Int.random(in: 0..<2, using: &random))/file\(Int.random(in: 0..<4, using: &random)).json"
                if random.chance(0.2) {
                    try FileSystem.remove(simulator.root(copy) + "/" + path)
                } else if random.chance(0.4) {
                    try Self.write("step \(step) on \(copy)", path, in: simulator, copy: copy)
                }
                try simulator.step()
            }
            #expect(simulator.events.contains { if case .conflict = $0 { true } else { false } }, "the run should include conflicts")
            #expect(
                simulator.events.contains { if case .temporaryFileLeft = $0 { true } else { false } }, "the run should abandon a transfer")
            try simulator.quiesce()
            #expect(simulator.isQuiet)
            let files = try Self.files(simulator.root(0))
            for copy in 1..<3 {
                let other = try Self.files(simulator.root(copy));
                #expect(
                    other == files,
                    "copy \(copy) differs from copy 0: \(other.filter { files[$0.key] != $0.value }) vs \(files.filter { other[$0.key] != $0.value })"
                )
            }
            #expect(!files.isEmpty)
            return (files, simulator.events)
        }
        let first = try run()
        let second = try run()
        #expect(first.files == second.files)
        #expect(first.events == second.events)
    }
}

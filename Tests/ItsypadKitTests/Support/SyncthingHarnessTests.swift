import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

extension Tag {
    /// Runs real Syncthing instances on 127.0.0.1 (seconds per test).
    @Tag static var syncthing: Self
}

/// The Syncthing harness really replicates, and real Syncthing behaves as the replication simulator assumes.
@Suite(.tags(.syncthing), .serialized, .timeLimit(.minutes(3)))
struct SyncthingHarnessTests {
    static func write(_ text: String, to path: String) throws {
        try FileSystem.makeDirectory(FileSystem.directoryName(path))
        try FileSystem.writeAtomically(path, Array(text.utf8))
    }

    static func read(_ path: String) throws -> String? {
        try FileSystem.read(path).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func aFileWrittenInOneCopyAppearsInTheOtherAndSoDoesItsDeletion() throws {
        let pair = try SyncthingPair.start()
        defer { pair.stop() }
        let written = Time.now()
        try Self.write("hello from A\n", to: pair.folders[0] + "/dir/hello.txt")
        try pair.waitUntilInSync()
        let arrived = Time.now()
        #expect(try Self.read(pair.folders[1] + "/dir/hello.txt") == "hello from A\n", "\(pair.log(1).suffix(2000))")
        print("syncthing on 127.0.0.1: a new file reached the other copy within \(arrived - written) ms")
        try FileSystem.remove(pair.folders[1] + "/dir/hello.txt")
        try pair.waitUntilInSync()
        #expect(!FileSystem.exists(pair.folders[0] + "/dir/hello.txt"))
    }

    /// Both copies change one file while the instances are not talking: one change wins on both
    /// copies and the other is kept as `name.sync-conflict-YYYYMMDD-HHMMSS-DEVICE.ext`.
    ///
    /// Not in the default run: it failed two runs in three on an idle machine (the two writes are a
    /// millisecond apart, and which one Syncthing keeps varies; under load the instances sometimes
    /// fail their Hello after a pause for longer than the test waits). itsypad relies on neither: its
    /// files have one writer each, which SyncthingSyncTests checks end to end.
    @Test(.enabled(if: getenv("ITSYPAD_SYNCTHING_CONFLICTS") != nil, "timing-dependent; set ITSYPAD_SYNCTHING_CONFLICTS=1 to run it"))
    func concurrentChangesLeaveAConflictCopy() throws {
        let pair = try SyncthingPair.start()
        defer { pair.stop() }
        try Self.write("base\n", to: pair.folders[0] + "/state.json")
        try pair.waitUntilInSync()
        try pair.pauseConnection(true)
        try Self.write("changed in A\n", to: pair.folders[0] + "/state.json")
        try Self.write("changed in B, later\n", to: pair.folders[1] + "/state.json")
        try pair.rescan()
        try pair.pauseConnection(false)
        try pair.waitUntilInSync()
        for folder in pair.folders {
            let names = try FileSystem.list(folder)
            #expect(try Self.read(folder + "/state.json") == "changed in B, later\n")
            let conflict = names.first { $0.hasPrefix("state.sync-conflict-") && $0.hasSuffix(".json") }
            #expect(try conflict.flatMap { try Self.read(folder + "/" + $0) } == "changed in A\n", "\(names)")
        }
    }
}

import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A device joining a backend holds what the pages it reads hold, not the whole backend: a join
/// of a backend with 50,000 more record files than it reads takes about the memory of one without.
@Suite("End to end: memory of a join")
struct JoinMemoryTests {
    /// Empty record files of `device` with new names, `count` of them, each in the folder its name
    /// hashes to: a backend that holds many more files than its journals name (the join reads none).
    static func plantRecordFiles(_ count: Int, of device: String, in backend: String) throws {
        let type = backend + "/records/" + RecordType.clip.rawValue
        for _ in 0..<count {
            let name = Identifier.make()
            let folder = type + "/" + FolderLayout.bucket(of: name)
            if !FileSystem.isDirectory(folder) { try FileSystem.makeDirectory(folder) }
            let fd = open(folder + "/" + name + "." + device + ".json", O_CREAT | O_WRONLY | O_EXCL, 0o600)
            #expect(fd >= 0, "planting a record file: errno \(errno)")
            close(fd)
        }
    }

    /// The peak memory (KiB) of a new device's `sync enable` of a copy of `backend`.
    static func joinPeak(_ backend: String) throws -> Int {
        let device = JoinKillTests.joiner()
        let copy = FirstPushTests.backend(of: device)
        #expect(try Process.run("/bin/cp", ["-a", backend, copy]).status == 0)
        let measured = try ImportSafetyTests.peakMemory(device, ["sync", "enable", copy])
        #expect(measured.result.status == 0, "\(measured.result.stderr)")
        #expect(device.inProcess(["clip", "ls"]).1.split(separator: "\n").count == 20)
        return measured.kib
    }

    @Test(.needs(["time"]))
    func aJoinHoldsWhatItReadsNotTheWholeBackend() throws {
        let sender = FirstPushTests.sender(clips: 20)
        #expect(sender.inProcess(["sync"]).0 == 0)
        let backend = FirstPushTests.backend(of: sender)
        let senderID = try #require(try FileSystem.list(backend + "/devices", includingHidden: false).first)
        let few = try Self.joinPeak(backend)
        // Named for the sender, whose journal names none of them.
        try Self.plantRecordFiles(50_000, of: senderID, in: backend)
        let many = try Self.joinPeak(backend)
        // Before, a new device's check for record files of its own listed every file of every
        // device (about 0.7 KiB a file at its peak): 34 MiB more here (release build).
        #expect(many - few < 8 << 10, "joining with 50,000 more record files: \(few) KiB, then \(many) KiB")
        withExtendedLifetime(sender) {}
    }

    /// Ending a join, the device looks for a version of its own only where it has a record file:
    /// before, it tried to open one for every record of the sender's files (and kept a note of each).
    @Test("ending a join looks for no file of its own per record read", .needs(["strace"]))
    func endingAJoinLooksForNoOwnFilePerRecord() throws {
        let clips = 2500
        let sender = JoinKillTests.compactedSender(clips: clips)
        let device = JoinKillTests.joiner()
        let copy = FirstPushTests.backend(of: device)
        #expect(try Process.run("/bin/cp", ["-a", FirstPushTests.backend(of: sender), copy]).status == 0)
        let failed = try FirstPushTests.systemCalls(device, ["sync", "enable", copy], failed: true)
        #expect(device.inProcess(["clip", "ls"]).1.split(separator: "\n").count == clips)
        // Before, at least one failed open a record (2,500 more than now); other lookups of files
        // that may be missing fail a few hundred times, whatever the number of records.
        #expect(failed["openat", default: 0] < clips / 2, "\(failed)")
    }
}

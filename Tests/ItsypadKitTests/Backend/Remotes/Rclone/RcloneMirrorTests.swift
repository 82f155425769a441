import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// `RcloneRemote`'s transfers, between mirrors of two devices and a remote that is a local folder
/// (rclone's `:local:` backend): what each fetch and send moves, and what they never touch.
@Suite(.needs(["rclone"]))
struct RcloneMirrorTests {
    let scratch = TemporaryDirectory()
    var remoteFolder: String { scratch.file("remote") }

    /// A device's remote that lists the whole remote at every fetch: these files change outside any
    /// journal (what a fetch of the folders journals name brings is `RcloneListingTests`').
    func remote(_ device: String) -> RcloneRemote {
        RcloneRemote(
            remote: ":local:" + remoteFolder, directory: scratch.file(device), environment: Process.baseEnvironment, timeout: 60,
            fullListingInterval: 0)
    }

    func write(_ remote: RcloneRemote, _ path: String, _ text: String) throws {
        try FileSystem.makeDirectory(FileSystem.directoryName(remote.mirror + "/" + path))
        try FileSystem.writeAtomically(remote.mirror + "/" + path, Array(text.utf8))
    }

    func read(_ root: String, _ path: String) -> String? {
        (try? FileSystem.read(root + "/" + path))?.map { String(decoding: $0, as: UTF8.self) }
    }

    /// A listing larger than a subprocess's usual output (1 MiB: 4,500 files of long names) is
    /// read whole: a listing cut short took the files left out for removed, and a device joining
    /// a backend of 10,000 records missed some.
    @Test func aListingOfMoreThanAMebibyteIsReadWhole() throws {
        let b = remote("b")
        try b.prepare()
        let names = (0..<4500).map { "records/T/\(String($0 % 256, radix: 16))/r\($0)\(String(repeating: "x", count: 220)).B.json" }
        for name in names { try write(b, name, "b") }
        #expect(try b.send(message: ""))
        let a = remote("a")
        #expect(try a.fetch(as: "A") == .changed)
        let missing = names.filter { read(a.mirror, $0) != "b" }
        #expect(missing.isEmpty, "\(missing.count) of \(names.count) files did not arrive")
    }

    @Test func eachDeviceSendsItsOwnFilesAndFetchesTheOthers() throws {
        let a = remote("a"), b = remote("b")
        try a.prepare()
        try write(a, "zone.json", "zone")
        try write(a, "devices/A/device.json", "a device")
        try write(a, "devices/A/journal/0000000000000001.log", "a journal\n")
        try write(a, "records/T/ab/r.A.json", "a record")
        #expect(try a.send(message: ""))
        #expect(read(remoteFolder, "records/T/ab/r.A.json") == "a record")

        #expect(try b.fetch(as: "B") == .changed)
        #expect(read(b.mirror, "devices/A/journal/0000000000000001.log") == "a journal\n")
        #expect(try b.fetch(as: "B") == .unchanged || read(b.mirror, "zone.json") == "zone")
        try write(b, "devices/B/device.json", "b device")
        try write(b, "records/T/ab/r.B.json", "b record")
        #expect(try b.send(message: ""))

        #expect(try a.fetch(as: "A") == .changed)
        #expect(read(a.mirror, "records/T/ab/r.B.json") == "b record")
        // B removes its record file (superseded): the remote and A's mirror lose it too; A's stays.
        #expect(unlink(b.mirror + "/records/T/ab/r.B.json") == 0)
        #expect(try b.send(message: ""))
        #expect(!FileSystem.exists(remoteFolder + "/records/T/ab/r.B.json"))
        _ = try a.fetch(as: "A")
        #expect(!FileSystem.exists(a.mirror + "/records/T/ab/r.B.json"))
        #expect(read(remoteFolder, "records/T/ab/r.A.json") == "a record")
        #expect(read(b.mirror, "records/T/ab/r.A.json") == "a record")
    }

    @Test func anUploadCutShortIsSentAgain() throws {
        let a = remote("a")
        try a.prepare()
        try write(a, "devices/A/journal/0000000000000001.log", "line one\nline two\n")
        #expect(try a.send(message: ""))
        // What a killed upload leaves on the remote: the first bytes of the file.
        try FileSystem.writeAtomically(remoteFolder + "/devices/A/journal/0000000000000001.log", Array("line o".utf8))
        _ = try a.fetch(as: "A")
        #expect(try a.send(message: ""))
        #expect(read(remoteFolder, "devices/A/journal/0000000000000001.log") == "line one\nline two\n")
    }

    @Test func aChangeNotSentYetIsNeverReplacedByADownload() throws {
        let a = remote("a")
        try a.prepare()
        try write(a, "devices/A/device.json", "written here, not sent")
        try FileSystem.makeDirectory(remoteFolder + "/devices/A")
        try FileSystem.writeAtomically(remoteFolder + "/devices/A/device.json", Array("planted there".utf8))
        _ = try a.fetch(as: "A")
        #expect(read(a.mirror, "devices/A/device.json") == "written here, not sent")
        #expect(try a.send(message: ""))
        #expect(read(remoteFolder, "devices/A/device.json") == "written here, not sent")
    }

    @Test func aFileRewrittenWithinTheSameSecondIsFetchedAgain() throws {
        let a = remote("a"), b = remote("b")
        try a.prepare()
        try write(a, "devices/A/device.json", "version 1")
        #expect(try a.send(message: ""))
        #expect(try b.fetch(as: "B") == .changed)
        try write(a, "devices/A/device.json", "version 2")
        #expect(try a.send(message: ""))
        // Same size, and (listed to the second) most likely the same time: fetched again all the same.
        _ = try b.fetch(as: "B")
        #expect(read(b.mirror, "devices/A/device.json") == "version 2")
    }

    @Test func namesThatAreNoPartOfTheBackendAreNeverTransferred() throws {
        let a = remote("a"), b = remote("b")
        try a.prepare()
        let foreign = ["devices/A/lock", ".tmp-00ff", "notes.txt", "records/T/ab/.tmp-1", "devices/A/x.sync-conflict.json"]
        for path in foreign + ["devices/A/device.json"] { try write(a, path, "x") }
        #expect(try a.send(message: ""))
        for path in foreign { #expect(!FileSystem.exists(remoteFolder + "/" + path), "\(path) was sent") }
        for path in foreign {
            try FileSystem.makeDirectory(FileSystem.directoryName(remoteFolder + "/" + path))
            try FileSystem.writeAtomically(remoteFolder + "/" + path, Array("planted".utf8))
        }
        _ = try b.fetch(as: "B")
        for path in foreign { #expect(!FileSystem.exists(b.mirror + "/" + path), "\(path) was fetched") }
        #expect(read(b.mirror, "devices/A/device.json") == "x")
    }

    @Test func aMirrorMadeAnewIsFilledAgain() throws {
        let a = remote("a"), b = remote("b")
        try a.prepare()
        try write(a, "devices/A/device.json", "a device")
        #expect(try a.send(message: ""))
        _ = try b.fetch(as: "B")
        _ = try Process.run("/bin/rm", ["-rf", b.mirror])
        _ = try b.fetch(as: "B")
        #expect(read(b.mirror, "devices/A/device.json") == "a device")
    }

    /// A data directory copied elsewhere (`cp -a`) brings a mirror with another inode than its
    /// manifest names, holding this device's folder: the copy is told before anything is sent, and
    /// once it syncs as a new device it takes the remote's files of the old id, never sending its
    /// stale copies of them over the original's.
    @Test func aCopiedMirrorIsToldAndNeverSendsTheOriginalsFiles() throws {
        let a = remote("a")
        try a.prepare()
        _ = try a.fetch(as: "A")
        try write(a, "devices/A/device.json", "a device")
        try write(a, "devices/A/journal/0000000000000001.log", "line one\n")
        #expect(try a.send(message: ""))
        #expect(try Process.run("/bin/cp", ["-a", scratch.file("a"), scratch.file("copy")]).status == 0)
        try write(a, "devices/A/journal/0000000000000001.log", "line one\nline two of the original\n")
        #expect(try a.send(message: ""))
        let copy = remote("copy")
        #expect(throws: ReplicationError.self) { try copy.fetch(as: "A") }
        #expect(read(copy.mirror, "devices/A/journal/0000000000000001.log") == "line one\n", "nothing changed before the new id")
        #expect(try copy.fetch(as: "N") == .changed)
        #expect(read(copy.mirror, "devices/A/journal/0000000000000001.log") == "line one\nline two of the original\n")
        try write(copy, "devices/N/device.json", "the copy as a new device")
        #expect(try copy.send(message: ""))
        #expect(read(remoteFolder, "devices/A/journal/0000000000000001.log") == "line one\nline two of the original\n")
        #expect(read(remoteFolder, "devices/N/device.json") == "the copy as a new device")
        // The original goes on as it was.
        #expect(try a.fetch(as: "A") == .changed)
        #expect(read(a.mirror, "devices/N/device.json") == "the copy as a new device")
    }

    /// A clone whose mirror kept its inode (a cloned disk or virtual machine) keeps its manifest
    /// too: once the two append different lines to the device's journal, the one that sees the
    /// other's on the remote is told before it sends anything over it.
    @Test(arguments: [false, true])
    func aCloneThatKeptItsInodesIsToldByItsJournal(cloneSendsFirst: Bool) throws {
        let a = remote("a")
        try a.prepare()
        try write(a, "devices/A/device.json", "a device")
        try write(a, "devices/A/journal/0000000000000001.log", "line one\n")
        #expect(try a.send(message: ""))
        _ = try a.fetch(as: "A")
        #expect(try Process.run("/bin/cp", ["-a", scratch.file("a"), scratch.file("clone")]).status == 0)
        let clone = remote("clone")
        // What a disk image brings: the manifest names the clone's mirror.
        let manifest = scratch.file("clone") + "/manifest"
        let inode = try #require(try FileTree(root: clone.directory).status(clone.mirror)).inode
        let lines = try #require(try FileSystem.read(manifest)).split(separator: UInt8(ascii: "\n"))
        let header =
            (["mirror", String(inode)]
            + lines[0].split(separator: UInt8(ascii: "\t")).dropFirst(2).map { String(decoding: $0, as: UTF8.self) })
            .joined(separator: "\t")
        try FileSystem.writeAtomically(
            manifest,
            Array((([header] + lines.dropFirst().map { String(decoding: $0, as: UTF8.self) }).joined(separator: "\n") + "\n").utf8))
        let (first, second) = cloneSendsFirst ? (clone, a) : (a, clone)
        try write(first, "devices/A/journal/0000000000000001.log", "line one\nline two of the first\n")
        _ = try first.fetch(as: "A")
        #expect(try first.send(message: ""))
        let sent = read(remoteFolder, "devices/A/journal/0000000000000001.log")
        try write(second, "devices/A/journal/0000000000000001.log", "line one\nline two of the second, longer\n")
        #expect(throws: ReplicationError.self) { try second.fetch(as: "A") }
        #expect(read(remoteFolder, "devices/A/journal/0000000000000001.log") == sent, "nothing sent over the first's")
        // The first's own upload, seen again, is no alarm.
        #expect(try first.fetch(as: "A") == .unchanged)
        // Syncing as a new device, the second takes the first's files of the old id and sends none of them.
        #expect(try second.fetch(as: "N") == .changed)
        #expect(read(second.mirror, "devices/A/journal/0000000000000001.log") == sent)
        #expect(try second.send(message: ""))
        #expect(read(remoteFolder, "devices/A/journal/0000000000000001.log") == sent)
    }

    /// A sync killed before its mirror's manifest was first written leaves no file of this device in
    /// the mirror (the engine writes only after a fetch): no copy is seen there.
    @Test func aMirrorWhoseManifestIsLostBeforeThisDeviceWroteIsNoCopy() throws {
        let a = remote("a")
        try a.prepare()
        #expect(unlink(scratch.file("a") + "/manifest") == 0)
        _ = try a.fetch(as: "A")
        try write(a, "devices/A/device.json", "a device")
        #expect(try a.send(message: ""))
        #expect(try a.fetch(as: "A") == .unchanged)
    }

    @Test(arguments: [
        ("Failed to create file system: read metadata failed: Unauthorized: 401 Unauthorized", false),
        ("Failed to create file system for \"nosuch:x\": didn't find section in config file", false),
        ("ssh: handshake failed: ssh: unable to authenticate, attempted methods [none publickey]", false),
        ("Propfind \"http://127.0.0.1:1/x\": dial tcp 127.0.0.1:1: connect: connection refused", true),
        ("Propfind \"http://127.0.0.1:14033/x\": dial tcp 127.0.0.1:14033: connect: connection refused", true),
        ("Failed to copy: 429 Too Many Requests", true),
        ("couldn't connect SSH: dial tcp 127.0.0.1:22: i/o timeout", true),
        ("Failed to copy: 503 Service Unavailable", true),
        // A file its writer rewrote while it was downloaded.
        ("corrupted on transfer: sizes differ 424 vs 509", true),
    ])
    func failuresAreRetryableOnlyWhenRetryingCanFixThem(_ message: String, _ retryable: Bool) {
        #expect(RcloneRemote.isTransient(message) == retryable)
    }
}

import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The one way into the data directory and a backend: nothing reached through a symlink,
/// no FIFO or device opened, no name that leaves its directory.
@Suite struct FileTreeTests {
    let scratch = TemporaryDirectory()
    var root: String { scratch.path + "/tree" }
    var outside: String { scratch.path + "/outside" }
    var tree: FileTree { FileTree(root: root) }

    init() throws {
        try FileSystem.makeDirectory(root + "/sub")
        try FileSystem.makeDirectory(outside)
        try FileSystem.writeAtomically(outside + "/target", Array("outside".utf8))
    }

    var targetIntact: Bool { (try? FileSystem.read(outside + "/target")) == Array("outside".utf8) }

    func symlink(_ target: String, at path: String) throws {
        try #require(Glibc.symlink(target, path) == 0)
    }

    func expectMalformed(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(sourceLocation: sourceLocation) { try body() } throws: { error in
            (error as? FileSystemError)?.isMalformed == true
        }
    }

    @Test func readsWritesListsAndRemovesPlainFiles() throws {
        try tree.writeAtomically(root + "/sub/file", Array("hello".utf8))
        #expect(try tree.read(root + "/sub/file") == Array("hello".utf8))
        #expect(try tree.list(root + "/sub") == ["file"])
        #expect(try tree.status(root + "/sub/file")?.isRegular == true)
        #expect(try tree.remove(root + "/sub/file"))
        #expect(try tree.read(root + "/sub/file") == nil)
        #expect(try tree.list(root + "/missing") == nil)
        try tree.writeAtomically(root + "/made/on/the/way", [1])
        #expect(try tree.status(root + "/made/on")?.isDirectory == true)
        #expect(try tree.status(root + "/made")?.permissions == 0o700)
    }

    @Test func linksAreExclusiveAndNeverReachThroughASymlink() throws {
        try tree.writeAtomically(root + "/sub/file", Array("hello".utf8))
        #expect(try tree.link(root + "/sub/file", to: root + "/made/second"))
        #expect(try tree.read(root + "/made/second") == Array("hello".utf8))
        #expect(try !tree.link(root + "/sub/file", to: root + "/made/second"))
        try symlink(outside, at: root + "/linked")
        expectMalformed { _ = try tree.link(root + "/linked/target", to: root + "/stolen") }
        expectMalformed { _ = try tree.link(root + "/sub/file", to: root + "/linked/planted") }
        #expect(try tree.status(root + "/stolen") == nil)
        #expect(try FileSystem.list(outside) == ["target"])
    }

    @Test func removeDirectoryRemovesOnlyAnEmptyDirectoryAndNeverALinksTarget() throws {
        #expect(try tree.removeDirectory(root + "/sub"))
        #expect(try !tree.removeDirectory(root + "/sub"))
        try symlink(outside, at: root + "/linked")
        #expect(throws: FileSystemError.self) { try tree.removeDirectory(root + "/linked") }
        try tree.writeAtomically(root + "/full/file", [1])
        #expect(throws: FileSystemError.self) { try tree.removeDirectory(root + "/full") }
        #expect(FileSystem.isDirectory(outside) && targetIntact)
    }

    @Test func aSymlinkedFileIsNeitherReadNorWrittenThrough() throws {
        try symlink(outside + "/target", at: root + "/link")
        expectMalformed { _ = try tree.read(root + "/link") }
        expectMalformed { _ = try AppendFile(path: root + "/link", in: tree).append(Array("x\n".utf8)) }
        expectMalformed { _ = try tree.openFile(root + "/link", flags: O_WRONLY | O_TRUNC) }
        // Replacing the link replaces the link itself, never its target.
        try tree.writeAtomically(root + "/link", Array("new".utf8))
        #expect(try tree.status(root + "/link")?.isRegular == true)
        #expect(targetIntact)
    }

    @Test func aSymlinkedDirectoryOnTheWayIsRefused() throws {
        try symlink(outside, at: root + "/linked")
        expectMalformed { _ = try tree.read(root + "/linked/target") }
        expectMalformed { try tree.writeAtomically(root + "/linked/new", [1]) }
        expectMalformed { _ = try tree.list(root + "/linked") }
        expectMalformed { try tree.remove(root + "/linked/target") }
        expectMalformed { try tree.makeDirectory(root + "/linked/deeper") }
        expectMalformed { try tree.writeAtomically([(name: "x", bytes: [1])], in: root + "/linked") }
        #expect(targetIntact)
        #expect(try FileSystem.list(outside) == ["target"])
    }

    @Test func theRootItselfMayBeASymlink() throws {
        let alias = scratch.path + "/alias"
        try symlink(root, at: alias)
        let aliased = FileTree(root: alias)
        try aliased.writeAtomically(alias + "/sub/file", [7])
        #expect(try aliased.read(alias + "/sub/file") == [7])
    }

    @Test func aLockSymlinkNeverCreatesItsTarget() throws {
        try symlink(outside + "/created-by-lock", at: root + "/lock")
        expectMalformed { _ = try FileLock(path: root + "/lock", in: tree, mode: .exclusive, timeout: 0.1) }
        #expect(!FileSystem.exists(outside + "/created-by-lock"))
    }

    @Test func aFIFOIsRefusedWithoutBlocking() throws {
        try #require(mkfifo(root + "/fifo", 0o600) == 0)
        expectMalformed { _ = try tree.read(root + "/fifo") }
        expectMalformed { _ = try tree.openFile(root + "/fifo", flags: O_WRONLY) }
        expectMalformed { _ = try AppendFile(path: root + "/fifo", in: tree) }
        expectMalformed { _ = try FileLock(path: root + "/fifo", in: tree, mode: .exclusive, timeout: 0.1) }
        expectMalformed { try tree.forEachLine(root + "/fifo") { _, _ in } }
        #expect(tree.fileSize(root + "/fifo") == nil)
    }

    @Test func aDirectoryWhereAFileBelongsIsMalformed() throws {
        try FileSystem.makeDirectory(root + "/record.json")
        expectMalformed { _ = try tree.read(root + "/record.json") }
        expectMalformed { try tree.remove(root + "/record.json") }
        expectMalformed { _ = try AppendFile(path: root + "/record.json", in: tree) }
        try FileSystem.writeAtomically(root + "/plain", [1])
        expectMalformed { _ = try tree.read(root + "/plain/below") }
    }

    @Test(arguments: [
        "../outside/target", "sub/../../outside/target", "/etc/passwd", "sub//file", "sub/./file", "nul\u{0}.json",
        String(repeating: "a", count: 256),
    ])
    func namesThatLeaveTheirDirectoryAreRefused(_ name: String) throws {
        let path = root + "/" + name
        expectMalformed { _ = try tree.read(path) }
        expectMalformed { try tree.writeAtomically(path, [1]) }
        expectMalformed { try tree.remove(path) }
        #expect(targetIntact)
    }

    @Test func aPathOutsideTheRootIsRefused() {
        expectMalformed { _ = try tree.read(outside + "/target") }
        expectMalformed { try tree.writeAtomically(scratch.path + "/tree2/x", [1]) }
    }

    @Test func aBatchReadGivesEachFileItsOwnOutcome() throws {
        try tree.writeAtomically(root + "/sub/plain", Array("hello".utf8))
        try tree.writeAtomically(root + "/sub/big", [UInt8](repeating: 1, count: 100))
        try symlink(outside + "/target", at: root + "/sub/link")
        try #require(mkfifo(root + "/sub/fifo", 0o600) == 0)
        try FileSystem.makeDirectory(root + "/sub/folder")
        var outcomes: [String: Result<[UInt8]?, any Error>] = [:]
        let names = ["plain", "missing", "big", "link", "fifo", "folder", "../outside"]
        try tree.readFiles(names, in: root + "/sub", limit: 99) { name, result in outcomes[name] = result }
        #expect(outcomes.count == names.count)
        #expect(try outcomes["plain"]?.get() == Array("hello".utf8))
        #expect(try outcomes["missing"]?.get() == .some(nil))
        for name in ["big", "link", "fifo", "folder", "../outside"] {
            #expect(throws: (any Error).self, "\(name)") { try outcomes[name]?.get() }
            if case .failure(let error) = outcomes[name] { #expect((error as? FileSystemError)?.isMalformed == true, "\(name)") }
        }
        #expect(targetIntact)
        // A missing directory holds no files; a symlinked one is refused as a whole.
        var missing: [String: [UInt8]?] = [:]
        try tree.readFiles(["plain"], in: root + "/nowhere") { name, result in missing[name] = try result.get() }
        #expect(missing.count == 1 && missing["plain"] == .some(nil))
        try symlink(root + "/sub", at: root + "/linked")
        expectMalformed { try tree.readFiles(["plain"], in: root + "/linked") { _, _ in } }
    }

    @Test func anOpenDirectoryReadsAndWritesItsFilesWithoutFollowingLinks() throws {
        let directory = try tree.directory(root + "/made/here", creating: true)
        try directory.write("one", Array("first".utf8))
        var buffer = [UInt8](repeating: 7, count: 100)
        #expect(try directory.read("one", into: &buffer) && buffer == Array("first".utf8))
        #expect(try !directory.read("missing", into: &buffer))
        #expect(throws: (any Error).self) { try directory.read("one", into: &buffer, limit: 4) }
        try symlink(outside + "/target", at: root + "/made/here/link")
        expectMalformed { try directory.write("link", [1]) }
        expectMalformed { _ = try directory.read("link", into: &buffer) }
        #expect(throws: (any Error).self) { try directory.write("../escape", [1]) }
        #expect(targetIntact && !FileSystem.exists(root + "/made/escape"))
        // A directory that is not there holds no files, and takes none.
        let missing = try tree.directory(root + "/nowhere")
        #expect(try !missing.read("one", into: &buffer))
        #expect(throws: (any Error).self) { try missing.write("one", [1]) }
    }

    @Test(arguments: [
        ("a", true), ("...", true), (".hidden", true), ("..x", true), ("é", true), (String(repeating: "a", count: 255), true),
        (String(repeating: "é", count: 127), true), ("", false), (".", false), ("..", false), ("a/b", false), ("/", false),
        ("a\u{0}b", false), (String(repeating: "a", count: 256), false), (String(repeating: "é", count: 128), false),
    ])
    func plainNamesStayInTheirDirectory(_ name: String, _ plain: Bool) {
        #expect(FileTree.isPlainName(name) == plain)
        // A name cut out of a longer string is judged by its own bytes.
        #expect(FileTree.isPlainName(String(("x/" + name).dropFirst(2))) == plain)
    }

    /// A batch of files, few (synced one by one) or many (one syncfs; written from several threads past 512).
    static func batch(_ count: Int, tag: String) -> [(name: String, bytes: [UInt8])] {
        (0..<count).map { (name: "f\($0).json", bytes: Array("\(tag) \($0)".utf8)) }
    }

    @Test(arguments: [1, FileTree.filesSyncedOneByOne + 1, 1_100])
    func aBatchFillsAMissingOrEmptyDirectoryAndLeavesNoStage(_ count: Int) throws {
        let files = Self.batch(count, tag: "new")
        // A stage left by a crash, with a file of its own, is dropped, not moved in.
        try FileSystem.makeDirectory(root + "/.tmp-fresh")
        try FileSystem.writeAtomically(root + "/.tmp-fresh/stray", [1])
        try tree.writeAtomically(files, in: root + "/fresh")
        try tree.writeAtomically(files, in: root + "/sub")
        for directory in ["fresh", "sub"] {
            #expect(try tree.list(root + "/" + directory, includingHidden: true) == files.map(\.name).sorted())
            #expect(try tree.read(root + "/" + directory + "/f0.json") == Array("new 0".utf8))
            #expect(try tree.status(root + "/" + directory)?.permissions == 0o700)
        }
        #expect(try tree.list(root, includingHidden: true) == ["fresh", "sub"])
    }

    @Test(arguments: [1, FileTree.filesSyncedOneByOne + 1, 1_100])
    func aBatchIntoAFullDirectoryReplacesItsFilesAndKeepsTheOthers(_ count: Int) throws {
        try tree.writeAtomically(Self.batch(count + 2, tag: "old"), in: root + "/sub")
        try tree.writeAtomically(root + "/sub/.hidden", [9])
        try tree.writeAtomically(Self.batch(count, tag: "new"), in: root + "/sub")
        let listed = try #require(try tree.list(root + "/sub", includingHidden: true))
        #expect(listed == ([".hidden"] + Self.batch(count + 2, tag: "").map(\.name)).sorted())
        #expect(try tree.read(root + "/sub/f0.json") == Array("new 0".utf8))
        #expect(try tree.read(root + "/sub/f\(count + 1).json") == Array("old \(count + 1)".utf8))
        #expect(try tree.list(root, includingHidden: true) == ["sub"])
    }

    @Test(arguments: [1, FileTree.filesSyncedOneByOne + 1, 1_100])
    func aBatchIntoTheRootItselfStagesInsideIt(_ count: Int) throws {
        let subtree = FileTree(root: root + "/sub")
        try subtree.writeAtomically(Self.batch(count, tag: "new"), in: root + "/sub")
        #expect(try subtree.list(root + "/sub", includingHidden: true) == Self.batch(count, tag: "").map(\.name).sorted())
        #expect(try subtree.read(root + "/sub/f0.json") == Array("new 0".utf8))
    }

    @Test func aBatchIntoASymlinkedDirectoryIsRefusedAndLeavesNoStage() throws {
        try symlink(outside, at: root + "/linked")
        expectMalformed { try tree.writeAtomically(Self.batch(FileTree.filesSyncedOneByOne + 1, tag: "x"), in: root + "/linked") }
        #expect(try tree.list(root, includingHidden: true) == ["linked", "sub"])
        #expect(try FileSystem.list(outside) == ["target"])
        #expect(targetIntact)
    }

    /// Files in folders made on the way (each opened from its parent) replace what was there, with
    /// mode 0600 and no temporary file left; a symlinked folder on the way is refused, never followed.
    @Test(arguments: [3, FileTree.filesSyncedOneByOne + 1])
    func replacedFilesLandInTheirFoldersAndNeverThroughALink(count: Int) throws {
        try tree.writeAtomically(root + "/records/t/00/old", Array("old".utf8))
        let files = (0..<count).map { (path: root + "/records/t/0\($0 % 3)/f\($0)", bytes: Array("file \($0)".utf8)) }
        try tree.makeDirectory(root + "/records/t/01")
        try symlink(outside + "/target", at: root + "/records/t/01/linked")
        try tree.replaceFiles(
            files + [(root + "/records/t/00/old", Array("new".utf8)), (root + "/records/t/01/linked", Array("mine".utf8))],
            in: tree.directories(creating: true))
        for file in files { #expect(try tree.read(file.path) == file.bytes) }
        #expect(try tree.read(root + "/records/t/00/old") == Array("new".utf8))
        // A link at a file's name is replaced by a file, never written through.
        #expect(try tree.read(root + "/records/t/01/linked") == Array("mine".utf8))
        #expect(targetIntact)
        #expect(try tree.status(root + "/records/t/01/f1")?.permissions == 0o600)
        #expect(try tree.status(root + "/records/t/02")?.permissions == 0o700)
        for folder in ["00", "01", "02"] {
            #expect(
                try tree.list(root + "/records/t/" + folder, includingHidden: true)?.contains { $0.hasPrefix(FileSystem.temporaryPrefix) }
                    == false)
        }
        try symlink(outside, at: root + "/records/t/03")
        expectMalformed { try tree.replaceFiles([(root + "/records/t/03/planted", [1])], in: tree.directories(creating: true)) }
        expectMalformed { try tree.replaceFiles([(root + "/records/t/03/deeper/planted", [1])], in: tree.directories(creating: true)) }
        #expect(try FileSystem.list(outside) == ["target"])
    }

    @Test func aMoveOfSomeNamesLeavesTheRestOfTheSource() throws {
        try tree.writeAtomically(Self.batch(3, tag: "x"), in: root + "/source")
        try tree.move(["f0.json", "f1.json", "absent"], from: root + "/source", to: root + "/target")
        #expect(try tree.list(root + "/source") == ["f2.json"])
        #expect(try tree.list(root + "/target") == ["f0.json", "f1.json"])
    }

    @Test func aDirectoryMovesOnlyToWhereNothingIs() throws {
        try tree.writeAtomically(Self.batch(2, tag: "x"), in: root + "/source")
        try tree.writeAtomically(root + "/full/file", [1])
        try symlink(outside, at: root + "/linked")
        for refused in ["full", "linked", "full/file"] {
            #expect(try !tree.moveDirectory(root + "/source", to: root + "/" + refused), "\(refused)")
        }
        #expect(try !tree.moveDirectory(root + "/absent", to: root + "/elsewhere"))
        #expect(try tree.moveDirectory(root + "/source", to: root + "/sub"))
        #expect(try tree.moveDirectory(root + "/sub", to: root + "/made/on/the/way"))
        #expect(try tree.list(root + "/made/on/the/way") == ["f0.json", "f1.json"])
        #expect(try tree.list(root, includingHidden: true) == ["full", "linked", "made"])
        #expect(try FileSystem.list(outside) == ["target"])
    }

    @Test func sizesAreCheckedBeforeReading() throws {
        try tree.writeAtomically(root + "/big", [UInt8](repeating: 1, count: 100))
        #expect(try tree.read(root + "/big", limit: 100)?.count == 100)
        #expect { try tree.read(root + "/big", limit: 99) } throws: { error in
            (error as? FileSystemError)?.code == FileSystemError.tooLarge
        }
    }

    @Test(arguments: [(Int.max, Int64.max), (Int.min, Int64.min), (Int.max / 1000, Int64.max)])
    func extremeModificationTimesSaturate(_ seconds: Int, _ expected: Int64) {
        var info = stat()
        info.st_mtim.tv_sec = seconds
        info.st_mtim.tv_nsec = 999_999_999
        #expect(FileStatus(info).modifiedMilliseconds == expected)
    }
}

import Testing

@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite struct TabIndexTests {
    let device = Device()
    var tabs: String { device.dataDir + "/tabs" }

    func new(_ name: String, at time: Int64) -> String {
        device.inProcess(["tab", "new", "--name", name, "content of \(name)"], now: time).1.trimmingNewline
    }

    /// `tab ls` as the files say, without the index.
    func listingFromFiles() throws -> String {
        try TabStore(directory: tabs).all().map { String(decoding: TabIndex.row(for: $0), as: UTF8.self) + "\n" }.joined()
    }

    @Test func staysCurrentAcrossNewEditAndRemove() throws {
        let a = new("alpha", at: 1_000)
        _ = new("beta", at: 2_000)
        #expect(device.inProcess(["tab", "ls"]).1 == (try listingFromFiles()))
        #expect(TabIndex.load(directory: tabs, in: FileTree(root: tabs)) != nil)
        #expect(device.inProcess(["tab", "edit", a, "--name", "gamma"], now: 3_000).0 == 0)
        // Updated in place by the edit, not rebuilt: still current, and gamma is now first.
        let index = try #require(TabIndex.load(directory: tabs, in: FileTree(root: tabs)))
        #expect(index.records.map { String(decoding: $0.name, as: UTF8.self) } == ["gamma", "beta"])
        #expect(device.inProcess(["tab", "show", "gamma"]).1 == "content of alpha")
        #expect(device.inProcess(["tab", "rm", "beta"]).0 == 0)
        #expect(try #require(TabIndex.load(directory: tabs, in: FileTree(root: tabs))).records.count == 1)
        #expect(device.inProcess(["tab", "ls"]).1 == (try listingFromFiles()))
    }

    @Test func isRebuiltWhenTheFilesChangeBehindItsBack() throws {
        let a = new("alpha", at: 1_000)
        _ = device.inProcess(["tab", "ls"])
        // Another writer replaces a tab file (as sync does): the directory changes, the index follows.
        var tab = try #require(try TabStore(directory: tabs).tab(id: a))
        tab.name = "renamed"
        try FileSystem.writeAtomically(tabs + "/" + a + ".json", TabStore.fileContent(tab))
        #expect(device.inProcess(["tab", "show", "renamed"]).1 == "content of alpha")
        #expect(device.inProcess(["tab", "show", "alpha"]).0 == 1)
        #expect(device.inProcess(["tab", "ls"]).1 == (try listingFromFiles()))
    }

    @Test func aNameEditedInPlaceIsCaughtWhenResolving() throws {
        let a = new("alpha", at: 1_000)
        _ = device.inProcess(["tab", "ls"])
        // Rewritten in place: the directory does not change, so the index still says "alpha".
        var tab = try #require(try TabStore(directory: tabs).tab(id: a))
        tab.name = "omega"
        let fd = open(tabs + "/" + a + ".json", O_WRONLY | O_TRUNC)
        try FileSystem.writeAll(fd: fd, TabStore.fileContent(tab), at: 0, path: "tab")
        close(fd)
        #expect(device.inProcess(["tab", "show", "alpha"]).0 == 1)
        #expect(device.inProcess(["tab", "show", "omega"]).1 == "content of alpha")
    }

    /// `tab ls` prints the rows section as it is read: a byte changed in it (in place, so the
    /// directory does not change) must be caught by its checksum, not printed.
    @Test(arguments: [0, 5, 40])
    func aRowByteChangedInPlaceIsNotListed(_ offsetInRows: Int) throws {
        _ = new("alpha", at: 1_000)
        _ = new("beta", at: 2_000)
        let expected = try listingFromFiles()
        #expect(device.inProcess(["tab", "ls"]).1 == expected)
        let path = tabs + "/" + TabIndex.fileName
        var bytes = try #require(try FileSystem.read(path))
        let rowsStart = 96
        #expect(Array(bytes[rowsStart..<rowsStart + expected.utf8.count]) == Array(expected.utf8), "the rows follow the header")
        bytes[rowsStart + offsetInRows] ^= 0x20
        let fd = open(path, O_WRONLY)
        try FileSystem.writeAll(fd: fd, bytes, at: 0, path: "index")
        close(fd)
        #expect(try TabIndexTests.listing(tabs) == nil)
        #expect(TabIndex.load(directory: tabs, in: FileTree(root: tabs)) == nil)
        #expect(device.inProcess(["tab", "ls"]).1 == expected)
        #expect(try TabIndexTests.listing(tabs) == Array(expected.utf8))
    }

    /// What `TabIndex.writeListing` writes for `tabs`, or nil when it writes nothing (no current index).
    static func listing(_ tabs: String) throws -> [UInt8]? {
        var written: [UInt8] = []
        guard try TabIndex.writeListing(directory: tabs, in: FileTree(root: tabs), to: { written += $0 }) else { return nil }
        return written
    }

    @Test("the checksum over pieces of whole blocks equals the checksum over the whole", arguments: [0, 1, 31, 32, 33, 64, 100, 1000])
    func checksumInPieces(_ count: Int) {
        var generator = SeededGenerator(seed: UInt64(count))
        let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes.withUnsafeBytes { whole in
            for piece in [32, 64, 96] {
                var checksum = TabIndex.Checksum()
                var offset = 0
                while offset < count {
                    let end = min(offset + piece, count)
                    checksum.add(UnsafeRawBufferPointer(rebasing: whole[offset..<end]))
                    offset = end
                }
                #expect(checksum.value == TabIndex.checksum(whole), "pieces of \(piece)")
            }
        }
    }

    @Test func aListingLongerThanOneReadIsWrittenWhole() throws {
        // About 84 KiB of rows: more than the 64 KiB that writeListing reads at a time.
        let names = (0..<800).map { "a tab with a long enough name to fill its row quickly, number \($0)" }
        for (index, name) in names.enumerated() { _ = new(name, at: Int64(1_000 + index)) }
        let expected = try listingFromFiles()
        #expect(expected.utf8.count > 64 << 10)
        #expect(device.inProcess(["tab", "ls"]).1 == expected)
        #expect(try TabIndexTests.listing(tabs) == Array(expected.utf8))
    }

    @Test(arguments: [[UInt8](), Array("ITSYTAB1 garbage".utf8), [UInt8](repeating: 0, count: 200)])
    func aDamagedIndexIsRebuilt(_ damage: [UInt8]) throws {
        _ = new("alpha", at: 1_000)
        _ = new("beta", at: 2_000)
        _ = device.inProcess(["tab", "ls"])
        let fd = open(tabs + "/index", O_WRONLY | O_TRUNC)
        try FileSystem.writeAll(fd: fd, damage, at: 0, path: "index")
        close(fd)
        #expect(device.inProcess(["tab", "ls"]).1 == (try listingFromFiles()))
        #expect(device.inProcess(["tab", "show", "beta"]).1 == "content of beta")
    }
}

/// `TabIndex.lookUp` reads the keyed sections a few bytes at a time; it must
/// answer exactly as `matches` on the whole index, or not at all.
@Suite struct TabIndexLookUpTests {
    let directory = TemporaryDirectory()
    var tree: FileTree { FileTree(root: directory.path) }

    func saved(_ names: [String]) throws -> (index: TabIndex, ids: [PackedID]) {
        var generator = SeededGenerator(seed: 3)
        let ids = names.map { _ in PackedID(Identifier.make())! }
        let records = zip(ids, names).enumerated().map { position, pair in
            TabIndex.Record(
                id: pair.0, lastModified: Int64(generator.next() % 50), name: Array(pair.1.utf8), row: Array("row \(position)".utf8))
        }
        try TabIndex(records: records).save(directory: directory.path, in: tree)
        return (try #require(TabIndex.load(directory: directory.path, in: tree)), ids)
    }

    @Test func answersAsTheWholeIndexDoes() throws {
        var names =
            [
                "note 1", "note 2", "café", "cafe\u{301}", "K", "\u{212A}", "dup", "dup", "", "Note 1", "заметка", "ЗАМЕТКА", "笔记", "Å",
                "\u{212B}",
            ]
            + (0..<300).map { "n\($0)" } + (0..<100).map { "заметка \($0)" }
        names.append("placeholder")
        var (index, ids) = try saved(names)
        // A name that is also another tab's id prefix: both are matches.
        names[names.count - 1] = String(ids[5].string.prefix(6))
        (index, ids) = try saved(names)
        let references =
            names
            + ids.prefix(30).flatMap { id -> [String] in
                let text = id.string
                return [
                    text, String(text.prefix(4)), String(text.prefix(9)), String(text.prefix(8)), text.uppercased(),
                    String(text.prefix(13)),
                ]
            } + ["zzzz", "0000", "ffff", "missing", "note", "n1", "\u{212A}", "\u{212A}elvin", "café", "заметка 7", "笔"]
        var answered = 0
        for reference in references {
            let expected = index.matches(reference)
            // Every reference is answered from the keyed sections, in any script.
            let keyed = TabIndex.lookUp(reference, directory: directory.path, in: tree)
            #expect(keyed == expected, "\(reference)")
            if keyed != nil { answered += 1 }
        }
        #expect(answered == references.count)
        #expect(index.matches("\u{212B}").count == 2, "the Angstrom sign equals Å by Swift's rule")
        #expect(index.matches("dup").count == 2)
        #expect(index.matches("K").count == 2, "the Kelvin sign equals K by Swift's rule")
    }

    @Test func aStaleOrDamagedIndexIsNotAsked() throws {
        let (index, _) = try saved(["one", "two"])
        #expect(TabIndex.lookUp("one", directory: directory.path, in: tree) == index.matches("one"))
        let path = directory.path + "/" + TabIndex.fileName
        let bytes = try #require(try FileSystem.read(path))
        // Cut short in place, as a crash while writing it would leave it (the directory does not change).
        #expect(truncate(path, off_t(bytes.count - 1)) == 0)
        #expect(TabIndex.lookUp("one", directory: directory.path, in: tree) == nil)
        #expect(TabIndex.load(directory: directory.path, in: tree) == nil)
        _ = try saved(["one", "two"])
        try FileSystem.writeAtomically(directory.path + "/other", [0x41], mode: 0o600)
        #expect(TabIndex.lookUp("one", directory: directory.path, in: tree) == nil, "the directory changed since the index was written")
    }
}

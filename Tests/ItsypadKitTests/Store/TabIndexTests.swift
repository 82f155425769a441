#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import ItsypadKit

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

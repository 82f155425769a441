import Testing

@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The tags accepted pushes keep out of the tab files (`TabTagStore`), read for the stamp each file holds.
@Suite struct TabTagStoreTests {
    let scratch = TemporaryDirectory()

    private func store() throws -> DataStore { try DataStore(path: scratch.path + "/data", lockTimeout: 1) }

    private static func tab(_ index: Int, sync: TabSyncMetadata? = nil) -> Tab {
        let clock = HybridTimestamp(physical: 1_000 + Int64(index), device: "d")
        return Tab(
            id: Identifier.make(), name: "tab \(index)", nameLocked: false, content: "line one\nline \(index)\n", language: "plain",
            languageLocked: false, lastModified: 1_000 + Int64(index), fileURL: nil, clock: clock, sync: sync)
    }

    /// A line is written by hand (a push appends one a tab): the bytes `JSONCoding` writes, read back as written.
    @Test("a line of the store is written as JSONCoding writes it")
    func lineWriterAgrees() throws {
        let texts = RecordEncodingTests.hostileStrings
        var lines = [TabTagStore.Line(id: "a", stamp: "s", tag: "t", clock: nil, ancestor: nil)]
        for text in texts {
            lines.append(TabTagStore.Line(id: text, stamp: text, tag: text, clock: text, ancestor: text))
            lines.append(TabTagStore.Line(id: "id", stamp: "s", tag: "dev-a:3", clock: nil, ancestor: text))
            lines.append(TabTagStore.Line(id: "id", stamp: "s", tag: "dev-a:3", clock: text, ancestor: nil))
        }
        for line in lines {
            var bytes: [UInt8] = []
            line.append(to: &bytes)
            #expect(bytes == (try JSONCoding.encodeValue(line, keys: .asEncoded).serializedBytes()))
            #expect(try JSONCoding.decode(TabTagStore.Line.self, from: bytes) == line)
        }
    }

    /// Saves `tab`, then accepts it as a push does: an entry for its file's stamp, no tab file written.
    private func saveAndAccept(_ tab: Tab, tag: String, in store: DataStore) throws {
        try store.tabs.save(tab)
        let stamp = try #require(try store.tabs.stampedEntry(id: tab.id)?.stamp)
        try #require(store.tabs.tags).append([(tab.id, TabTagStore.Entry(stamp: stamp, tag: tag, clock: tab.clock.description))])
    }

    @Test("an accepted tab reads with the entry's tag and its own content as the ancestor, however it is read")
    func acceptedTabReadsWithItsTag() throws {
        let store = try store()
        let tabs = (0..<3).map { Self.tab($0) }
        for (index, tab) in tabs.enumerated() { try saveAndAccept(tab, tag: "tag \(index)", in: store) }
        for (index, tab) in tabs.enumerated() {
            let expected = TabSyncMetadata(tag: "tag \(index)", ancestor: tab.content, clock: tab.clock)
            #expect(try store.tabs.tab(id: tab.id)?.sync == expected)
            #expect(try store.tabs.all().first { $0.id == tab.id }?.sync == expected)
            #expect(
                try store.tabs.entries(ids: tabs.map(\.id))[tab.id]
                    == .some(
                        .live(
                            {
                                var t = tab; t.sync = expected; return t
                            }())))
            #expect(
                try store.tabs.lookUp(reading: [tab.id])(tab.id)
                    == .live(
                        {
                            var t = tab; t.sync = expected; return t
                        }()))
        }
        // Merged into the table, the same.
        try store.tabs.tags!.merge { _ in true }
        #expect(!store.tree.exists(store.layout.tabTagsLog))
        for (index, tab) in tabs.enumerated() { #expect(try store.tabs.tab(id: tab.id)?.sync?.tag == "tag \(index)") }
    }

    /// Every later write of a tab file is a new stamp: the entry no longer applies, and the tab reads
    /// with the `sync` its file holds (what the writer set), never the entry's tag beside new content.
    enum Rewrite: String, CaseIterable { case edited, forgotten, replaced, pulled, mergedIntoTheTable }

    @Test("a tab written again after its acceptance reads with its file's sync, not the stale entry", arguments: Rewrite.allCases)
    func rewriteOutdatesTheEntry(_ rewrite: Rewrite) throws {
        let store = try store()
        let tab = Self.tab(1)
        try saveAndAccept(tab, tag: "accepted", in: store)
        var written = try #require(try store.tabs.tab(id: tab.id))
        #expect(written.sync?.tag == "accepted")
        switch rewrite {
        case .edited:
            // An edit keeps the synced version it was made on top of (read from the entry) in its file.
            written.content += "an edit\n"
            written.stamp(HybridTimestamp(physical: 5_000, device: "d"), choosing: [])
        case .forgotten:
            written.sync = nil
        case .replaced:
            written.sync = TabSyncMetadata(tag: "replacing", ancestor: written.sync!.ancestor, clock: written.sync!.clock)
        case .pulled:
            written.content = "the backend's\n"
            written.sync = TabSyncMetadata(tag: "pulled", ancestor: "the backend's\n", clock: HybridTimestamp(physical: 6_000, device: "e"))
        case .mergedIntoTheTable:
            written.sync = nil
        }
        try store.tabs.save(written)
        if rewrite == .mergedIntoTheTable { try store.tabs.tags!.merge { _ in true } }
        let read = try #require(try store.tabs.tab(id: tab.id))
        #expect(read.sync == written.sync, "\(rewrite): \(String(describing: read.sync))")
        #expect(read.content == written.content)
        #expect(try store.tabs.all().first?.sync == written.sync)
    }

    /// A damaged store loses nothing: every tab reads, at worst as never synced (sent again without a
    /// tag, it comes back as the backend's own version).
    enum Damage: String, CaseIterable { case truncatedTable, garbageTable, tornLog, unsortedTable, symlinkedTable, directoryAsLog }

    @Test("a truncated or corrupt tag store leaves every tab readable, at worst unsynced", arguments: Damage.allCases)
    func damagedStoreLosesNothing(_ damage: Damage) throws {
        let store = try store()
        let tabs = (0..<40).map { Self.tab($0) }
        for (index, tab) in tabs.enumerated() { try saveAndAccept(tab, tag: "tag \(index)", in: store) }
        let layout = store.layout
        if damage != .tornLog { try store.tabs.tags!.merge { _ in true } }
        let table = try FileSystem.read(layout.tabTags) ?? []
        switch damage {
        case .truncatedTable:
            try FileSystem.writeAtomically(layout.tabTags, Array(table.prefix(table.count / 2)))
        case .garbageTable:
            try FileSystem.writeAtomically(layout.tabTags, Array("{\"id\":\"not json at all\n\u{0}\u{1}\n".utf8) + Array(table.reversed()))
        case .tornLog:
            let log = try FileSystem.read(layout.tabTagsLog) ?? []
            try FileSystem.writeAtomically(layout.tabTagsLog, Array(log.prefix(log.count - 10)))
        case .unsortedTable:
            let lines = table.split(separator: 0x0A).reversed().flatMap { $0 + [0x0A] }
            try FileSystem.writeAtomically(layout.tabTags, Array(lines))
        case .symlinkedTable:
            let elsewhere = scratch.path + "/elsewhere"
            try FileSystem.writeAtomically(elsewhere, table)
            _ = try store.tree.remove(layout.tabTags)
            #expect(symlink(elsewhere, layout.tabTags) == 0)
        case .directoryAsLog:
            _ = try store.tree.remove(layout.tabTags)
            #expect(mkdir(layout.tabTagsLog, 0o700) == 0)
        }
        let all = try store.tabs.all()
        #expect(all.map(\.content).sorted() == tabs.map(\.content).sorted(), "\(damage)")
        for tab in tabs {
            let read = try #require(try store.tabs.tab(id: tab.id), "\(damage)")
            #expect(read.content == tab.content)
            // Either the tag it was accepted with, or none: never another tab's.
            if let sync = read.sync { #expect(sync.ancestor == tab.content && sync.tag.hasPrefix("tag ")) }
            let index = tabs.firstIndex(of: tab)!
            if let sync = read.sync { #expect(sync.tag == "tag \(index)", "\(damage)") }
        }
    }

    @Test("the table's search finds each of many entries, and the log's later entries win")
    func searchFindsEveryEntry() throws {
        let store = try store()
        let tags = try #require(store.tabs.tags)
        let ids = (0..<1500).map { _ in Identifier.make() }
        try tags.append(ids.enumerated().map { ($1, TabTagStore.Entry(stamp: "s\($0)", tag: "t\($0)", clock: nil)) })
        try tags.merge { _ in true }
        try tags.append([(ids[7], TabTagStore.Entry(stamp: "s7b", tag: "later", ancestor: "sent", clock: "c"))])
        let all = tags.all()
        #expect(all.count == ids.count)
        for (index, id) in ids.enumerated() {
            let found = tags.entries([id])[id]
            #expect(found == all[id])
            #expect(found?.tag == (index == 7 ? "later" : "t\(index)"))
        }
        #expect(tags.entries([Identifier.make()]).isEmpty)
        // A merge drops the entries of tabs that have no file any more.
        try tags.merge { $0 != ids[3] }
        #expect(tags.all().count == ids.count - 1 && tags.entries([ids[3]]).isEmpty)
        #expect(tags.entries([ids[7]])[ids[7]]?.ancestor == "sent")
    }

    @Test("every write of a tab file has a stamp of its own")
    func everyWriteIsStamped() throws {
        let store = try store()
        let tab = Self.tab(1)
        var stamps = Set<String>()
        for _ in 0..<5 {
            try store.tabs.save(tab)
            stamps.insert(try #require(try store.tabs.stampedEntry(id: tab.id)?.stamp))
        }
        try store.tabs.save([tab])
        stamps.insert(try #require(try store.tabs.stampedEntry(id: tab.id)?.stamp))
        #expect(stamps.count == 6)
    }
}

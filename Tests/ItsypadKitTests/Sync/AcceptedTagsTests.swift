import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSync

/// The fetch after a push, in the run that pushed, leaves the tabs as a fetch by another run leaves
/// them (through the in-memory backend, which returns the run's own versions: a folder backend
/// passes over them). The run once passed over them by the tags its acceptance kept
/// (`TabRecords.acceptedTags`), folded into the general path once no folder backend returned them.
@Suite struct AcceptedTagsTests {
    /// Each tab of a first push, as its device holds it after the fetch that follows.
    static func tabsAfterThePull(inThePushingRun: Bool) throws -> [String] {
        let fleet = Fleet(1, backend: .inMemory)
        let a = fleet[0]
        fleet.enable(0)
        let ids = (0..<30).map { "00000000-0000-4000-8000-0000000000\($0 + 10)" }
        let tabs = ids.enumerated().map { index, id in
            "{\"id\":\"\(id)\",\"content\":\"tab \(index)\",\"lastModified\":\"2026-01-01T00:00:00.000Z\"}"
        }
        _ = a.output("import", "-", stdin: "{\"format\":\"itsypad-export\",\"version\":1,\"tabs\":[\(tabs.joined(separator: ","))]}")
        let backend = try #require(fleet.memoryBackend)
        do {
            let engine = try SyncEngine(store: try DataStore(path: a.dataDir, lockTimeout: 1), backend: backend)
            try engine.push()
            if inThePushingRun { try engine.pull() }
        }
        if !inThePushingRun { try SyncEngine(store: try DataStore(path: a.dataDir, lockTimeout: 1), backend: backend).pull() }
        let store = try DataStore(path: a.dataDir, lockTimeout: 1).tabs
        let held = try ids.map { id in
            let tab = try #require(try store.tab(id: id))
            return "\(id) \(tab.content) tagged: \(tab.sync?.tag.isEmpty == false) ancestor: \(tab.sync?.ancestor ?? "none") "
                + "unsynced: \(tab.hasUnsyncedChanges)"
        }
        return held + [a.output("sync", "status").split(separator: "\n").filter { $0.hasPrefix("pending:") }.joined()]
    }

    @Test func theFetchAfterAPushLeavesWhatAnotherRunsFetchLeaves() throws {
        let fast = try Self.tabsAfterThePull(inThePushingRun: true)
        #expect(fast == (try Self.tabsAfterThePull(inThePushingRun: false)))
        #expect(fast.last == "pending:    0 tabs, 0 clips, 0 settings")
        #expect(fast.first == "00000000-0000-4000-8000-000000000010 tab 0 tagged: true ancestor: tab 0 unsynced: false")
    }
}

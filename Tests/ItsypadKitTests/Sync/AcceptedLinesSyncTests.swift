import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport
@testable import ItsypadSync

/// The fetch after a push passes over the lines the push committed once the engine recorded them
/// (`SyncBackend.accepted`, `AcceptedLines`): what it must still bring is brought.
@Suite struct AcceptedLinesSyncTests {
    /// A device pushes an edit of a tab while another device's concurrent edit of it has not
    /// reached its copy; the other's version arrives before the fetch that follows the push, in the
    /// same run. That fetch passes over the pusher's own line, reads the other's, and finds the
    /// pusher's version in its record file: the two are merged at once, and on both devices after
    /// their syncs.
    @Test func aConcurrentVersionOfAPassedOverLineIsMerged() throws {
        let (sharing, id, start) = try ReplicatedFleet.twoSharingATab("first line\nmiddle\nlast line")
        var devices = sharing
        devices.edit(1, tab: id, "first line, edited on dev1\nmiddle\nlast line", at: start + 1_000)
        _ = devices.fleet[0].output("tab", "edit", id, "first line\nmiddle\nlast line, edited on dev0", now: start + 2_000)
        let merged = "first line, edited on dev1\nmiddle\nlast line, edited on dev0"
        do {
            let store = try DataStore(path: devices.fleet[0].dataDir, lockTimeout: 1)
            let backend = try devices.factory.open(devices.simulator.root(0), store)
            let folder = try #require((backend as? ReplicatedSyncBackend)?.replicated as? FolderBackend)
            let engine = try SyncEngine(store: store, backend: backend)
            defer { engine.close() }
            try engine.pull()
            try engine.push()
            #expect(
                try folder.acceptedLinesToPassOver(zone: folder.readZone().zoneID) != nil, "the fetch after the push passes over its line")
            try devices.simulator.scan(1)
            try devices.simulator.deliverAll(from: 1, to: 0)
            try engine.pull()
        }
        let afterThePull = try devices.fleet.tabs(0)
        #expect(
            afterThePull[id] == "first line, edited on dev1|" + merged,
            "the fetch after the push merged the concurrent versions: \(afterThePull)")
        try devices.quiesce()
        #expect(devices.errors.isEmpty, "\(devices.errors)")
        try devices.fleet.expectConverged()
        let joined = try devices.fleet.tabs(1)
        #expect(joined[id] == "first line, edited on dev1|" + merged, "\(joined)")
    }

    /// The acceptance of a pushed batch fails (the sync ends with the error), and the same
    /// backend is used again in this process (`sync watch`): its fetch brings the batch's version
    /// back, which settles the change still queued, as after a run that did not hear back. Passed
    /// over, the change would be sent again over its own version and met as a conflict.
    @Test func aBatchWhoseAcceptanceFailedIsFetchedAgain() throws {
        let fleet = try NoteFleet(1, backend: .directory)
        let (store, shelf) = (fleet.stores[0], fleet.shelves[0])
        let types = fleet.types(0, knowsNotes: true)
        let backend = try fleet.backend(0, types: types)
        _ = try backend.createZoneIfNeeded()
        try shelf.write("n", "written once", clock: 1, store: store)
        shelf.failingAcceptances = 1
        do {
            let engine = try SyncEngine(store: store, backend: backend, types: types)
            defer { engine.close() }
            #expect(throws: ItsypadError.self) { try engine.sync() }
        }
        #expect(shelf.tags["n"] == nil, "the failed acceptance recorded nothing")
        let engine = try SyncEngine(store: store, backend: backend, types: types)
        defer { engine.close() }
        try engine.sync()
        #expect(engine.report.conflicts == 0, "the queued change was sent again over its own version")
        #expect(engine.report.pushed == 0)
        #expect(shelf.tags["n"] != nil)
        #expect(try store.pending().changes().isEmpty)
    }
}

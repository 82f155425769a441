import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport
@testable import ItsypadSync

/// The backends a record type added in the tests syncs through.
enum NoteBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inMemory
    /// A backend directory (a journal per device, concurrent versions merged).
    case directory

    var testDescription: String { rawValue }
}

/// Devices whose engines sync the standard types and, when told, notes: a type defined only here.
final class NoteFleet {
    let kind: NoteBackend
    let backendDirectory = TemporaryDirectory()
    let memory: InMemoryBackend?
    let directories: [TemporaryDirectory]
    let stores: [DataStore]
    let shelves: [NoteShelf]
    var backendPath: String { backendDirectory.path + "/backend" }

    init(_ count: Int, backend kind: NoteBackend) throws {
        self.kind = kind
        memory = kind == .inMemory ? InMemoryBackend() : nil
        directories = (0..<count).map { _ in TemporaryDirectory() }
        stores = try directories.map { try DataStore(path: $0.path + "/data", lockTimeout: 1) }
        shelves = (0..<count).map { _ in NoteShelf() }
    }

    /// Device `index`'s record types: the standard list, plus notes for a version that knows them.
    func types(_ index: Int, knowsNotes: Bool) -> [any SyncedRecordType] {
        SyncedTypes.standard + (knowsNotes ? [NoteRecords(shelf: shelves[index])] : [])
    }

    func backend(_ index: Int, types: [any SyncedRecordType]) throws -> SyncBackend {
        switch kind {
        case .inMemory:
            return memory!
        case .directory:
            let store = stores[index]
            let replicated = FolderBackend(
                path: backendPath, deviceID: store.deviceID, instance: try BackendOpener.instance(of: store),
                deviceName: "dev\(index)", lockTimeout: 1)
            return ReplicatedSyncBackend(replicated, types: types)
        }
    }

    /// One `itsypad sync` of device `index` (the zone created if needed, as `sync enable` does); returns its report.
    /// `pushFirst`: sends before fetching, so that a concurrent version is met as a conflict on sending.
    @discardableResult
    func sync(_ index: Int, knowsNotes: Bool = true, pushFirst: Bool = false) throws -> SyncReport {
        let types = types(index, knowsNotes: knowsNotes)
        let backend = try backend(index, types: types)
        _ = try backend.createZoneIfNeeded()
        let engine = try SyncEngine(store: stores[index], backend: backend, types: types)
        defer { engine.close() }
        if pushFirst {
            try engine.push()
            try engine.pull()
        } else {
            try engine.sync()
        }
        return engine.report
    }

    func notes(_ index: Int) -> [String: String] { shelves[index].notes.mapValues(\.text) }
}

@Suite struct AddedRecordTypeTests {
    @Test(arguments: NoteBackend.allCases)
    func aNoteIsCreatedEditedAndRemovedOnEveryDevice(_ backend: NoteBackend) throws {
        let fleet = try NoteFleet(2, backend: backend)
        let id = Identifier.make()
        try fleet.shelves[0].write(id, "first", clock: 1, store: fleet.stores[0])
        try fleet.sync(0)
        try fleet.sync(1)
        #expect(fleet.notes(1) == [id: "first"])

        try fleet.shelves[1].write(id, "edited on dev1", clock: 2, store: fleet.stores[1])
        try fleet.sync(1)
        try fleet.sync(0)
        #expect(fleet.notes(0) == [id: "edited on dev1"])

        try fleet.shelves[0].remove(id, store: fleet.stores[0])
        try fleet.sync(0)
        try fleet.sync(1)
        #expect(fleet.notes(1).isEmpty)
        #expect(try fleet.stores[0].pending().changes().isEmpty && fleet.stores[1].pending().changes().isEmpty)
    }

    @Test(arguments: NoteBackend.allCases)
    func concurrentEditsOfANoteConvergeOnTheNewer(_ backend: NoteBackend) throws {
        let fleet = try NoteFleet(2, backend: backend)
        let id = Identifier.make()
        try fleet.shelves[0].write(id, "base", clock: 1, store: fleet.stores[0])
        try fleet.sync(0)
        try fleet.sync(1)
        try fleet.shelves[0].write(id, "older edit", clock: 10, store: fleet.stores[0])
        try fleet.shelves[1].write(id, "newer edit", clock: 20, store: fleet.stores[1])
        try fleet.sync(0)
        #expect(try fleet.sync(1).conflicts == 1, "dev1's edit met dev0's when fetching")
        try fleet.sync(0)
        #expect(fleet.notes(0) == [id: "newer edit"])
        #expect(fleet.notes(1) == [id: "newer edit"])

        // The other way round, met when sending: the device that sends second holds the older edit, which gives way.
        try fleet.shelves[0].write(id, "newest edit", clock: 40, store: fleet.stores[0])
        try fleet.shelves[1].write(id, "stale edit", clock: 30, store: fleet.stores[1])
        try fleet.sync(0)
        #expect(try fleet.sync(1, pushFirst: true).conflicts >= 1, "dev1's save met dev0's version on the backend")
        try fleet.sync(0)
        #expect(fleet.notes(0) == [id: "newest edit"])
        #expect(fleet.notes(1) == [id: "newest edit"])
        #expect(try fleet.stores[1].pending().changes().isEmpty)
    }

    /// A version that does not sync notes skips them but remembers their type; once upgraded,
    /// it fetches everything again and has every note, though its token had moved past them.
    @Test(arguments: NoteBackend.allCases)
    func notesAreFetchedAgainAfterAnUpgrade(_ backend: NoteBackend) throws {
        let fleet = try NoteFleet(2, backend: backend)
        let first = Identifier.make(), second = Identifier.make()
        try fleet.shelves[0].write(first, "one", clock: 1, store: fleet.stores[0])
        let clock = HybridTimestamp(physical: Time.now(), device: fleet.stores[0].deviceID)
        try fleet.stores[0].saveTab(
            Tab(
                id: Identifier.make(), name: "t", nameLocked: false, content: "tab content", language: "plain",
                languageLocked: false, lastModified: clock.physical, fileURL: nil, clock: clock))
        try fleet.sync(0)
        try fleet.sync(1, knowsNotes: false)
        #expect(try fleet.stores[1].tabs.all().map(\.content) == ["tab content"])
        #expect(try EngineState.load(from: fleet.stores[1]).unknownTypes == ["Note"])
        try fleet.shelves[0].write(second, "two", clock: 2, store: fleet.stores[0])
        try fleet.sync(0)
        try fleet.sync(1, knowsNotes: false)
        #expect(fleet.notes(1).isEmpty)

        try fleet.sync(1)
        #expect(fleet.notes(1) == [first: "one", second: "two"])
        #expect(try EngineState.load(from: fleet.stores[1]).unknownTypes.isEmpty)
    }

    /// A queued change of a type this version does not sync stays queued (a downgrade), and goes once a version that syncs it runs.
    @Test(arguments: NoteBackend.allCases)
    func aQueuedNoteWaitsForAVersionThatSyncsNotes(_ backend: NoteBackend) throws {
        let fleet = try NoteFleet(2, backend: backend)
        let id = Identifier.make()
        try fleet.sync(0)
        try fleet.shelves[0].write(id, "queued", clock: 1, store: fleet.stores[0])
        try fleet.sync(0, knowsNotes: false)
        #expect(try fleet.stores[0].pending().changes().map(\.key) == [NoteRecords.key(id)])
        try fleet.stores[0].pending().compact { _ in true }
        #expect(try fleet.stores[0].pending().changes().map(\.key) == [NoteRecords.key(id)])
        try fleet.sync(0)
        try fleet.sync(1)
        #expect(fleet.notes(1) == [id: "queued"])
    }
}

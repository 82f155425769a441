import Testing

@testable import ItsypadBackend
@testable import ItsypadSync

/// The engine against a backend that fails on demand (the in-memory backend's injected faults).
@Suite struct SyncFaultTests {
    @Test func aBrieflyUnreachableBackendIsRetried() throws {
        let fleet = Fleet(2, backend: .inMemory)
        let a = fleet[0], b = fleet[1]
        fleet.enable(0)
        fleet.enable(1)
        let clip = a.output("clip", "add", "sent despite a hiccup")
        try #require(fleet.memoryBackend).injectFault(.unavailable("share briefly unmounted"), calls: 2)
        fleet.sync(0)
        fleet.sync(1)
        #expect(b.output("clip", "show", clip) == "sent despite a hiccup")
    }

    @Test func aBackendLockedPastEveryRetryKeepsTheChangeForTheNextSync() throws {
        let fleet = Fleet(2, backend: .inMemory)
        let a = fleet[0], b = fleet[1]
        fleet.enable(0)
        fleet.enable(1)
        let clip = a.output("clip", "add", "waiting")
        try #require(fleet.memoryBackend).injectFault(.locked, calls: SyncEngine.attempts)
        #expect(throws: BackendError.locked) { try fleet.engine(0).sync() }
        #expect(a.output("sync", "status").contains("pending:    0 tabs, 1 clip, 0 settings"))
        fleet.sync(0)
        fleet.sync(1)
        #expect(b.output("clip", "show", clip) == "waiting")
    }

    @Test func aWipedBackendGetsEverythingAgainAndLocalDataStays() throws {
        let fleet = Fleet(2, backend: .inMemory)
        let a = fleet[0], b = fleet[1]
        _ = a.output("tab", "new", "from a")
        _ = b.output("clip", "add", "from b")
        fleet.enable(0)
        fleet.enable(1)
        fleet.converge()
        try #require(fleet.memoryBackend).deleteZone()
        _ = b.output("tab", "new", "made after the wipe")
        fleet.enable(1)
        fleet.converge()
        #expect(try fleet.tabs(0).count == 2)
        #expect(try fleet.clips(0).count == 1)
        try fleet.expectConverged()
    }
}

import Testing

@testable import ItsypadBackend

/// What the in-memory backend does beyond the conformance suite: its test hooks and its own clock-based sweep.
@Suite("In-memory backend")
struct InMemoryBackendTests {
    @Test("an injected fault fails that many calls of any kind, then the backend works again")
    func faults() throws {
        let backend = InMemoryBackend(now: { testNow })
        _ = try backend.createZoneIfNeeded()
        backend.injectFault(.unavailable("share unmounted"), calls: 2)
        backend.injectFault(.locked)
        #expect(throws: BackendError.unavailable("share unmounted")) { try backend.fetchChanges(since: nil, limit: 10) }
        #expect(throws: BackendError.unavailable("share unmounted")) { try backend.save(tab("a")) }
        #expect(throws: BackendError.locked) { try backend.zone() }
        #expect(try backend.save(tab("a")).count == 1)
        #expect(try backend.fetchAll(since: nil).changes.map(\.recordName) == ["a"])
    }

    @Test("a deleted zone loses its records and tokens; the next zone never repeats a tag")
    func deleteZone() throws {
        let backend = InMemoryBackend(now: { testNow })
        _ = try backend.createZoneIfNeeded()
        let first = try backend.save(tab("a"), tab("b"))
        backend.deleteZone()
        #expect(throws: BackendError.zoneNotFound) { try backend.zone() }
        _ = try backend.createZoneIfNeeded()
        #expect(try backend.fetchAll(since: nil).changes == [])
        let again = try backend.save(tab("a"))
        #expect(!first.map(\.recordChangeTag).contains(again[0].recordChangeTag))
    }

    @Test("a token ahead of the backend (from a newer copy) is expired")
    func tokenAhead() throws {
        let backend = InMemoryBackend(now: { testNow })
        let zoneID = try backend.createZoneIfNeeded().zoneID
        try backend.save(tab("a"))
        for token in [
            InMemoryToken(zoneID: zoneID, seq: 50),
            InMemoryToken(zoneID: zoneID, seq: 50, fullFetchCursor: RecordID(recordType: "ScratchTab", recordName: "a")),
        ] {
            #expect(throws: BackendError.tokenExpired) { try backend.fetchChanges(since: token.token, limit: 10) }
        }
    }

    @Test("compaction removes unreferenced assets stored over an hour ago; referenced and recent ones stay")
    func assetSweep() throws {
        let clock = TestClock()
        let backend = InMemoryBackend(now: { clock.now })
        _ = try backend.createZoneIfNeeded()
        let assets = try SweptAssets(in: backend)
        clock.advance(by: 2 * 60 * 60 * 1000)
        let recent = try backend.putAsset(Array("recent".utf8))

        let report = try backend.compact()
        #expect(report.assetsRemoved == 2)
        #expect(report.segmentsRemoved == 1 && report.journalBytesRemoved > 0)
        try assets.expectSwept(from: backend, keeping: recent)
    }
}

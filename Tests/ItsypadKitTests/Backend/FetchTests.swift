import Testing

@testable import ItsypadBackend

@Suite("Fetch")
struct FetchTests {
    @Test("a replaced zone.json makes a new zone, but seqs continue so tags stay unique")
    func zoneReplaced() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        try fixture.backend.save(tab("a"))
        let before = try fixture.backend.zone()
        try FileIO.removeFile(fixture.layout.zoneFile)
        #expect(try fixture.backend.createZoneIfNeeded().zoneID != before.zoneID)
        #expect(try fixture.backend.save(tab("b")).first?.recordChangeTag == "2")
    }

    @Test("a token ahead of the backend (restored from an older copy) is expired")
    func tokenAhead() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        try fixture.backend.save(tab("a"))
        let zoneID = try fixture.backend.zone().zoneID
        let ahead = TokenContents(zoneID: zoneID, seq: 50).token
        #expect(throws: BackendError.tokenExpired) { try fixture.backend.fetchChanges(since: ahead, limit: 10) }
        let aheadFull = TokenContents(zoneID: zoneID, seq: 50, fullFetchCursor: RecordID(recordType: "ScratchTab", recordName: "a")).token
        #expect(throws: BackendError.tokenExpired) { try fixture.backend.fetchChanges(since: aheadFull, limit: 10) }
    }

    @Test("a stale journal hint is ignored in favour of the seq")
    func staleHint() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        try fixture.backend.save(tab("a"))
        try fixture.backend.save(tab("b"))
        let zoneID = try fixture.backend.zone().zoneID
        // Points into the middle of the first line.
        let token = TokenContents(zoneID: zoneID, seq: 1, hint: JournalPosition(segment: 1, offset: 5)).token
        #expect(try fixture.backend.fetchChanges(since: token, limit: 10).changes.map(\.recordName) == ["b"])
    }
}

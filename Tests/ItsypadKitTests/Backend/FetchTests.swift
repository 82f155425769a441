import Testing
@testable import ItsypadKit

@Suite("Fetch")
struct FetchTests {
    @Test("an incremental fetch returns only the changes after the token, in order")
    func incremental() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let backend = fixture.backend
        let first = try backend.save(tab("a"), tab("b"))
        let token = try backend.currentToken()
        let edited = try #require(try backend.save(tab("a", text: "edit", tag: first[0].recordChangeTag)).first)
        _ = try backend.modify(saves: [RecordSave(record: tab("c"))], deletes: [RecordDelete(recordType: "ScratchTab", recordName: "b")], device: "B")
        let page = try backend.fetchChanges(since: token, limit: 100)
        #expect(page.moreComing == false)
        #expect(page.changes.count == 3)
        #expect(page.changes[0] == .saved(edited))
        #expect(page.changes[1].savedRecord?.recordChangeTag == "4")
        #expect(page.changes[2] == .deleted(recordType: "ScratchTab", recordName: "b"))
        // Nothing new since the returned token.
        let again = try backend.fetchChanges(since: page.token, limit: 100)
        #expect(again.changes == [])
        #expect(again.moreComing == false)
    }

    @Test("incremental fetches are paged by limit, splitting batches where needed")
    func paging() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let backend = fixture.backend
        let token = try backend.currentToken()
        // Batches of 7, 7, 7 and 4 changes.
        for batch in 0..<4 {
            let count = batch == 3 ? 4 : 7
            try backend.save(contentsOf: (0..<count).map { tab("r\(batch)-\($0)") })
        }
        var pages: [[Change]] = []
        var next: ChangeToken? = token
        var moreComing = true
        while moreComing {
            let page = try backend.fetchChanges(since: next, limit: 10)
            pages.append(page.changes)
            next = page.token
            moreComing = page.moreComing
        }
        #expect(pages.map(\.count) == [10, 10, 5])
        let tags = pages.flatMap { $0 }.compactMap { $0.savedRecord?.recordChangeTag }
        #expect(tags == (1...25).map(String.init))
    }

    @Test("a nil token returns every current record, without deletions, in pages")
    func fullFetch() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let backend = fixture.backend
        try backend.save(contentsOf: (10..<22).map { tab("r\($0)") })
        _ = try backend.modify(saves: [], deletes: [RecordDelete(recordType: "ScratchTab", recordName: "r13")], device: "A")
        var other = BackendRecord(recordName: "n1", recordType: "Clipping")
        other.fields["text"] = .string("copied")
        try backend.save(other)

        let result = try backend.fetchAll(since: nil, limit: 5)
        #expect(result.pages == 3)
        let names = result.changes.map { "\($0.savedRecord?.recordType ?? "deleted")/\($0.recordName)" }
        #expect(names == ["Clipping/n1"] + (10..<22).filter { $0 != 13 }.map { "ScratchTab/r\($0)" })
        // The final token is the latest seq: nothing more to fetch.
        #expect(try backend.fetchChanges(since: result.token, limit: 10).changes == [])
        try backend.save(tab("later"))
        #expect(try backend.fetchChanges(since: result.token, limit: 10).changes.map(\.recordName) == ["later"])
    }

    @Test("changes made while paging through a full fetch come with the next incremental fetch")
    func fullFetchWhileWriting() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let backend = fixture.backend
        let saved = try backend.save(contentsOf: (0..<6).map { tab("r\($0)") })
        let firstPage = try backend.fetchChanges(since: nil, limit: 3)
        #expect(firstPage.moreComing)
        #expect(firstPage.changes.map(\.recordName) == ["r0", "r1", "r2"])
        // Another device edits a record already sent and deletes one not yet sent.
        _ = try fixture.sibling().modify(
            saves: [RecordSave(record: tab("r0", text: "edit", tag: saved[0].recordChangeTag))],
            deletes: [RecordDelete(recordType: "ScratchTab", recordName: "r4")],
            device: "B"
        )
        let rest = try backend.fetchAll(since: firstPage.token, limit: 3)
        #expect(rest.changes.map(\.recordName) == ["r3", "r5"])
        let catchUp = try backend.fetchAll(since: rest.token)
        #expect(catchUp.changes.map(\.recordName) == ["r0", "r4"])
        #expect(catchUp.changes.last == .deleted(recordType: "ScratchTab", recordName: "r4"))
    }

    @Test("a token from a replaced backend (new zone.json) throws zoneChanged")
    func zoneChanged() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        try fixture.backend.save(tab("a"))
        let token = try fixture.backend.currentToken()
        try FileIO.removeFile(fixture.layout.zoneFile)
        let replaced = try fixture.backend.createZoneIfNeeded()
        #expect(!token.rawValue.contains(replaced.zoneID))
        #expect(throws: BackendError.zoneChanged) { try fixture.backend.fetchChanges(since: token, limit: 10) }
        // Seqs continue, so tags stay unique across the replacement.
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
        #expect(throws: BackendError.tokenExpired) { try fixture.backend.fetchChanges(since: ChangeToken(rawValue: "nonsense"), limit: 10) }
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

extension DirectoryBackend {
    @discardableResult
    func save(contentsOf records: [BackendRecord], device: String = "deviceA") throws -> [BackendRecord] {
        let result = try modify(saves: records.map(RecordSave.init(record:)), deletes: [], device: device)
        #expect(result.failures == [])
        return result.saved
    }
}

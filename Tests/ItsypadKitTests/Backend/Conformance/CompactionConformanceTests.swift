import Testing

@testable import ItsypadBackend

/// `compact()`: older tokens expire, the records stay, and a full fetch recovers.
@Suite("Conformance: compaction and expiry")
struct CompactionConformanceTests {
    @Test("after compaction an older token is expired, a current one still works, and the records stay", arguments: SyncBackendFactory.all)
    func tokens(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        let old = try backend.currentToken()
        let saved = try backend.save(tab("a"), tab("b"))
        try backend.delete("b")
        let current = try backend.currentToken()

        _ = try backend.compact()
        #expect(throws: BackendError.tokenExpired) { try backend.fetchChanges(since: old, limit: 10) }
        #expect(try backend.fetchChanges(since: current, limit: 10).changes == [])
        #expect(try backend.fetchAll(since: nil).changes == [.saved(saved[0])])

        // Tags stay valid: the kept record can be edited with its tag, and the edit follows the current token.
        let edited = try backend.save(tab("a", text: "edit", tag: saved[0].recordChangeTag))
        #expect(edited.first?.recordChangeTag != saved[0].recordChangeTag)
        #expect(try backend.fetchChanges(since: current, limit: 10).changes == edited.map(Change.saved))

        // Compacting again, with nothing new or with the edit, keeps the records and keeps old tokens expired.
        _ = try backend.compact()
        _ = try backend.compact()
        #expect(throws: BackendError.tokenExpired) { try backend.fetchChanges(since: old, limit: 10) }
        #expect(try backend.fetchAll(since: nil).changes == edited.map(Change.saved))
    }

    @Test("a device whose token expired gets everything from a full fetch and can go on incrementally", arguments: SyncBackendFactory.all)
    func recoverAfterExpiry(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        try backend.save(contentsOf: (0..<5).map { tab("r\($0)") })
        let stale = try backend.currentToken()
        try backend.save(tab("r5"))
        try backend.delete("r0")
        _ = try backend.compact()
        #expect(throws: BackendError.tokenExpired) { try backend.fetchChanges(since: stale, limit: 10) }

        let everything = try backend.fetchAll(since: nil, limit: 2)
        #expect(everything.changes.map(\.recordName).sorted() == ["r1", "r2", "r3", "r4", "r5"])
        try backend.delete("r1")
        #expect(try backend.fetchAll(since: everything.token).changes == [.deleted(recordType: "ScratchTab", recordName: "r1")])
    }

    @Test("a token from the middle of a full fetch expires with compaction too", arguments: SyncBackendFactory.all)
    func fullFetchTokenExpires(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        try backend.save(contentsOf: (0..<4).map { tab("r\($0)") })
        let firstPage = try backend.fetchChanges(since: nil, limit: 2)
        #expect(firstPage.moreComing)
        try backend.save(tab("r4"))
        _ = try backend.compact()
        #expect(throws: BackendError.tokenExpired) { try backend.fetchChanges(since: firstPage.token, limit: 2) }
    }

    @Test("compaction keeps the assets that records reference", arguments: SyncBackendFactory.all)
    func referencedAssetsStay(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        let content = Array("kept".utf8)
        var record = tab("clip")
        record.fields["content"] = .asset(try backend.putAsset(content))
        try backend.save(record)
        // Long past any grace period for assets uploaded but not yet referenced.
        fixture.clock.advance(by: 24 * 60 * 60 * 1000)
        _ = try backend.compact()
        let stored = try #require(try backend.fetchAll(since: nil).changes.first?.savedRecord)
        guard case .asset(let reference) = stored.fields["content"] else {
            Issue.record("the record lost its asset field")
            return
        }
        #expect(try backend.readAsset(reference) == content)
    }
}

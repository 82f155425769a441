import Testing

@testable import ItsypadBackend

/// Compaction as the engine runs it (`finishSync` at the end of a sync, then `compact()`): the
/// records stay, tokens expire as the backend states (`SyncBackendFactory.tokensExpire`), and a
/// full fetch recovers.
@Suite("Conformance: compaction and expiry")
struct CompactionConformanceTests {
    @Test("after compaction the records stay and tags stay valid; tokens expire as the backend states", arguments: SyncBackendFactory.all)
    func tokens(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        let old = try backend.currentToken()
        let saved = try backend.save(tab("a"), tab("b"))
        try backend.delete("b")
        let current = try backend.currentToken()

        try fixture.compact(acknowledging: current)
        switch factory.tokensExpire {
        case .atCompaction:
            #expect(throws: BackendError.tokenExpired) { try backend.fetchChanges(since: old, limit: 10) }
            #expect(try backend.fetchChanges(since: current, limit: 10).changes == [])
        case .afterRetention:
            // Behind the checkpoint (which follows the removal of b's tombstone, once every device
            // has read it), the record files are read instead: the current record comes again.
            #expect(try backend.fetchAll(since: old).changes == [.saved(saved[0])])
            #expect(try backend.fetchAll(since: current).changes == [.saved(saved[0])])
        }
        #expect(try factory.fullFetch(backend) == [saved[0]])

        // Tags stay valid: the kept record can be edited with its tag, and the edit follows the current token.
        let edited = try backend.save(tab("a", text: "edit", tag: saved[0].recordChangeTag))
        #expect(edited.first?.recordChangeTag != saved[0].recordChangeTag)
        #expect(try backend.fetchChanges(since: current, limit: 10).changes == edited.map(Change.saved))

        // Compacting again, with nothing new or with the edit, keeps the records.
        try fixture.compact(acknowledging: try backend.currentToken())
        try fixture.compact(acknowledging: try backend.currentToken())
        #expect(try factory.fullFetch(backend) == edited)
        switch factory.tokensExpire {
        case .atCompaction:
            #expect(throws: BackendError.tokenExpired) { try backend.fetchChanges(since: old, limit: 10) }
        case .afterRetention(let retention):
            #expect(try backend.fetchAll(since: current).changes.applied == edited)
            // Not syncing for longer than the retention expires every token, the current one too.
            fixture.clock.advance(by: retention + 1)
            #expect(throws: BackendError.tokenExpired) { try backend.fetchChanges(since: current, limit: 10) }
        }
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
        try factory.expireTokens(fixture, acknowledging: try backend.currentToken())
        #expect(throws: BackendError.tokenExpired) { try backend.fetchChanges(since: stale, limit: 10) }

        let everything = try backend.fetchAll(since: nil, limit: 2)
        #expect(factory.records(ofFullFetch: everything.changes).map(\.recordName) == ["r1", "r2", "r3", "r4", "r5"])
        // The sync that fetched everything ends as every sync does.
        try backend.finishSync(acknowledging: everything.token)
        try backend.delete("r1")
        #expect(try backend.fetchAll(since: everything.token).changes == [.deleted(recordType: "ScratchTab", recordName: "r1")])
    }

    @Test("a token from the middle of a full fetch expires as the others do", arguments: SyncBackendFactory.all)
    func fullFetchTokenExpires(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        // Two batches, so that a page can end between them.
        try backend.save(tab("r0"), tab("r1"))
        try backend.save(tab("r2"), tab("r3"))
        let firstPage = try backend.fetchChanges(since: nil, limit: 2)
        #expect(firstPage.moreComing)
        try backend.save(tab("r4"))
        try factory.expireTokens(fixture, acknowledging: try backend.currentToken())
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
        try fixture.compact(acknowledging: try backend.currentToken())
        let stored = try #require(try factory.fullFetch(backend).first)
        guard case .asset(let reference) = stored.fields["content"] else {
            Issue.record("the record lost its asset field")
            return
        }
        #expect(try backend.readAsset(reference) == content)
    }
}

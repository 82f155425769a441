import Testing

@testable import ItsypadBackend

/// `fetchChanges`: incremental and full fetches, paging, and the tokens that carry a device from one to the next.
@Suite("Conformance: change tokens and paging")
struct TokenConformanceTests {
    @Test("an incremental fetch returns exactly the changes after the token, in commit order", arguments: SyncBackendFactory.all)
    func incremental(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        let first = try backend.save(tab("a"), tab("b"))
        let token = try backend.currentToken()
        let edited = try #require(try backend.save(tab("a", text: "edit", tag: first[0].recordChangeTag)).first)
        let result = try backend.modify(
            saves: [RecordSave(record: tab("c"))], deletes: [RecordDelete(recordType: "ScratchTab", recordName: "b")], device: "B")
        let page = try backend.fetchChanges(since: token, limit: 100)
        #expect(page.moreComing == false)
        #expect(page.changes == [.saved(edited)] + result.saved.map(Change.saved) + [.deleted(recordType: "ScratchTab", recordName: "b")])
        // Nothing new since the returned token.
        let again = try backend.fetchChanges(since: page.token, limit: 100)
        #expect(again.changes == [])
        #expect(again.moreComing == false)
    }

    @Test(
        "a record changed twice after the token comes twice, the later change last (or once, as it is now)",
        arguments: SyncBackendFactory.all)
    func changedTwice(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        let first = try #require(try backend.save(tab("a", text: "v1")).first)
        let token = try backend.currentToken()
        let second = try #require(try backend.save(tab("a", text: "v2", tag: first.recordChangeTag)).first)
        let third = try #require(try backend.save(tab("a", text: "v3", tag: second.recordChangeTag)).first)
        let deletion = Change.deleted(recordType: "ScratchTab", recordName: "a")
        #expect(
            try backend.fetchAll(since: token).changes == (factory.reportsEachChange ? [.saved(second), .saved(third)] : [.saved(third)]))
        try backend.delete("a")
        #expect(
            try backend.fetchAll(since: token).changes
                == (factory.reportsEachChange ? [.saved(second), .saved(third), deletion] : [deletion]))
    }

    @Test("deletions are reported incrementally but not by a full fetch", arguments: SyncBackendFactory.all)
    func deletions(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        let kept = try backend.save(tab("kept"), tab("gone"))[0]
        let token = try backend.currentToken()
        try backend.delete("gone")
        #expect(try backend.fetchAll(since: token).changes == [.deleted(recordType: "ScratchTab", recordName: "gone")])
        #expect(try factory.fullFetch(backend) == [kept])
    }

    @Test("a nil token returns every current record, without deletions, in pages", arguments: SyncBackendFactory.all)
    func fullFetch(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        try backend.save(contentsOf: (10..<22).map { tab("r\($0)") })
        try backend.delete("r13")
        var other = BackendRecord(recordName: "n1", recordType: "Clipping")
        other.fields["text"] = .string("copied")
        try backend.save(other)

        let pages = try backend.pages(since: nil, limit: 5)
        // Ending between batches: the batch of 12 saves, then the deletion and the other save.
        #expect(pages.map(\.changes.count).filter { $0 > 0 } == (factory.pagesEndBetweenBatches ? [12, 2] : [5, 5, 2]))
        let ids = factory.records(ofFullFetch: pages.flatMap(\.changes)).map(\.id.description)
        #expect(ids == ["Clipping/n1"] + (10..<22).filter { $0 != 13 }.map { "ScratchTab/r\($0)" })
        // The final token is after the latest change: nothing more to fetch, and later changes follow.
        let token = try #require(pages.last?.token)
        #expect(try backend.fetchChanges(since: token, limit: 10).changes == [])
        try backend.save(tab("later"))
        #expect(try backend.fetchChanges(since: token, limit: 10).changes.map(\.recordName) == ["later"])
    }

    @Test("incremental pages respect the limit, even inside a batch, and lose or repeat nothing", arguments: SyncBackendFactory.all)
    func incrementalPaging(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        let token = try backend.currentToken()
        // Batches of 7, 7, 7 and 4 changes.
        var committed: [Change] = []
        for batch in 0..<4 {
            let count = batch == 3 ? 4 : 7
            committed += try backend.save(contentsOf: (0..<count).map { tab("r\(batch)-\($0)") }).map(Change.saved)
        }
        let pages = try backend.pages(since: token, limit: 10)
        if factory.pagesEndBetweenBatches {
            // Whole batches, as many as reach the limit. A page that reaches it says more may come
            // without looking further, so the last page may be empty.
            #expect(pages.map(\.changes.count).filter { $0 > 0 } == [14, 11])
        } else {
            #expect(pages.map(\.changes.count) == [10, 10, 5])
            #expect(pages.map(\.moreComing) == [true, true, false])
        }
        #expect(pages.flatMap(\.changes) == committed)
    }

    @Test(
        "each page's token stays valid on its own: fetching from it again gives the same rest, then later changes",
        arguments: SyncBackendFactory.all)
    func pageTokensStayValid(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        let start = try backend.currentToken()
        // In batches of 2, so that pages of 4 end between batches too.
        for first in stride(from: 0, to: 9, by: 2) {
            try backend.save(contentsOf: (first..<min(first + 2, 9)).map { tab("r\($0)") })
        }
        let incremental = try backend.pages(since: start, limit: 4)
        let full = try backend.pages(since: nil, limit: 4)
        #expect(incremental.count == 3 && full.count == 3)
        for pages in [incremental, full] {
            for (index, page) in pages.enumerated() {
                #expect(try backend.pages(since: page.token, limit: 4).flatMap(\.changes) == pages[(index + 1)...].flatMap(\.changes))
            }
        }
        let later = try backend.save(tab("later")).map(Change.saved)
        for (index, page) in incremental.enumerated() {
            #expect(try backend.fetchAll(since: page.token, limit: 4).changes == incremental[(index + 1)...].flatMap(\.changes) + later)
        }
        #expect(try backend.fetchAll(since: try #require(full.last).token).changes == later)
    }

    @Test("changes made while paging through a full fetch come with the next incremental fetch", arguments: SyncBackendFactory.all)
    func fullFetchWhileWriting(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        // In two batches, so that a page of 3 ends between them.
        let saved = try backend.save(contentsOf: (0..<3).map { tab("r\($0)") }) + backend.save(contentsOf: (3..<6).map { tab("r\($0)") })
        let firstPage = try backend.fetchChanges(since: nil, limit: 3)
        #expect(firstPage.moreComing)
        let sent = Set(firstPage.changes.map(\.recordName))
        let alreadySent = try #require(saved.first { sent.contains($0.recordName) })
        let notYetSent = try #require(saved.first { !sent.contains($0.recordName) })
        // Another device edits a record already sent and deletes one not yet sent.
        let edit = try backend.modify(
            saves: [RecordSave(record: tab(alreadySent.recordName, text: "edit", tag: alreadySent.recordChangeTag))],
            deletes: [RecordDelete(recordType: "ScratchTab", recordName: notYetSent.recordName)],
            device: "B"
        ).saved
        let rest = try backend.fetchAll(since: firstPage.token, limit: 3)
        let catchUp = try backend.fetchAll(since: rest.token)
        // Whichever fetch brings them, the device ends with the edit and without the deleted record.
        let current = saved.filter { ![alreadySent.recordName, notYetSent.recordName].contains($0.recordName) } + edit
        #expect((firstPage.changes + rest.changes + catchUp.changes).applied == current.sorted { $0.id < $1.id })
        if !factory.fullFetchReadsJournal {
            #expect(
                Set(rest.changes.map(\.recordName)) == Set(saved.map(\.recordName)).subtracting(sent).subtracting([notYetSent.recordName]))
            #expect(catchUp.changes.map(\.recordName) == [alreadySent.recordName, notYetSent.recordName])
            #expect(catchUp.changes.last == .deleted(recordType: "ScratchTab", recordName: notYetSent.recordName))
        }
    }

    @Test("a token the backend cannot use is expired", arguments: SyncBackendFactory.all)
    func unusableToken(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        try fixture.backend.save(tab("a"))
        for raw in ["nonsense", ""] {
            #expect(throws: BackendError.tokenExpired) { try fixture.backend.fetchChanges(since: ChangeToken(rawValue: raw), limit: 10) }
        }
    }
}

import Testing

@testable import ItsypadBackend
@testable import ItsypadModel

/// `modify` as one all-or-nothing batch: per-record errors, request limits, and untrusted names.
@Suite("Conformance: batches")
struct BatchConformanceTests {
    @Test("one failing record fails the whole batch; the others report batchRequestFailed", arguments: SyncBackendFactory.all)
    func atomicity(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        let existing = try backend.save(tab("a"), tab("b"))
        let before = try backend.fetchAll(since: nil)

        let result = try backend.modify(
            saves: [RecordSave(record: tab("new")), RecordSave(record: tab("a", text: "edit", tag: "999"))],
            deletes: [RecordDelete(recordType: "ScratchTab", recordName: "b", ifTag: existing[1].recordChangeTag)],
            device: "A"
        )
        #expect(
            result.failures == [
                RecordFailure(recordType: "ScratchTab", recordName: "new", error: .batchRequestFailed),
                RecordFailure(recordType: "ScratchTab", recordName: "a", error: .serverRecordChanged(server: existing[0])),
                RecordFailure(recordType: "ScratchTab", recordName: "b", error: .batchRequestFailed),
            ])
        #expect(result.saved.isEmpty && result.deleted.isEmpty)
        #expect(try backend.fetchAll(since: nil).changes.sortedByID == before.changes.sortedByID)
        #expect(try backend.fetchChanges(since: before.token, limit: 10).changes == [])
    }

    @Test("a record over 1 MiB fails with limitExceeded and takes its batch down", arguments: SyncBackendFactory.all)
    func recordLimit(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let big = tab("big", text: String(repeating: "x", count: fixture.backend.limits.maxRecordBytes))
        var result = try fixture.backend.modify(
            saves: [RecordSave(record: big), RecordSave(record: tab("small"))], deletes: [], device: "A")
        #expect(result.failures.map(\.error) == [.limitExceeded, .batchRequestFailed])
        // Alone it still gets the per-record error, since splitting cannot help.
        let huge = tab("huge", text: String(repeating: "x", count: 3 * fixture.backend.limits.maxRecordBytes))
        result = try fixture.backend.modify(saves: [RecordSave(record: huge)], deletes: [], device: "A")
        #expect(result.failures.map(\.error) == [.limitExceeded])
        // Just under the limit is fine.
        let fits = tab("fits", text: String(repeating: "x", count: factory.largestFittingText(fixture.backend.limits)))
        #expect(try fixture.backend.save(fits).count == 1)
        #expect(try fixture.backend.fetchAll(since: nil).changes.map(\.recordName) == ["fits"])
    }

    @Test("requests over the backend's record count or 2 MiB throw limitExceeded and commit nothing", arguments: SyncBackendFactory.all)
    func requestLimits(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        let start = try backend.currentToken()
        // 400 for CloudKit's shape, 2,000 for a backend directory (a batch is one journal line).
        let limit = backend.limits.maxRecordsPerRequest
        let tooMany = (0...limit).map { RecordSave(record: tab("r\($0)")) }
        #expect(throws: BackendError.limitExceeded) { try backend.modify(saves: tooMany, deletes: [], device: "A") }
        let deletes = (0..<101).map { RecordDelete(recordType: "ScratchTab", recordName: "d\($0)") }
        #expect(throws: BackendError.limitExceeded) {
            try backend.modify(saves: Array(tooMany.prefix(limit - 100)), deletes: deletes, device: "A")
        }
        let large = (0..<3).map { RecordSave(record: tab("l\($0)", text: String(repeating: "y", count: 800_000))) }
        #expect(throws: BackendError.limitExceeded) { try backend.modify(saves: large, deletes: [], device: "A") }
        #expect(try backend.fetchChanges(since: start, limit: 10).changes == [])
        // Exactly the limit is allowed.
        #expect(try backend.modify(saves: Array(tooMany.prefix(limit)), deletes: [], device: "A").saved.count == limit)
    }

    static let invalidSaves: [(BackendRecord, String)] = [
        (tab(".hidden"), "record name"),
        (tab("a/b"), "record name"),
        (tab(".."), "record name"),
        (tab("../zone"), "record name"),
        (tab("a\u{0}b"), "record name"),
        (tab(""), "record name"),
        (BackendRecord(recordName: "a", recordType: "Scratch/Tab"), "record type"),
        (BackendRecord(recordName: "a", recordType: ".."), "record type"),
        (BackendRecord(recordName: "a", recordType: "Scratch\u{0}Tab"), "record type"),
        (BackendRecord(recordName: "a", recordType: "ScratchTab", fields: ["bad-name": .int64(1)]), "field name"),
        (BackendRecord(recordName: "a", recordType: "ScratchTab", fields: ["ratio": .double(.nan)]), "finite"),
        (BackendRecord(recordName: "a", recordType: "ScratchTab", fields: ["ratio": .double(.infinity)]), "finite"),
        (
            BackendRecord(
                recordName: "a", recordType: "ScratchTab", fields: ["content": .asset(AssetReference(fileChecksum: "XYZ", size: 1))]),
            "asset"
        ),
        (
            BackendRecord(
                recordName: "a", recordType: "ScratchTab",
                fields: ["content": .asset(AssetReference(fileChecksum: "../zone.json", size: 1))]), "asset"
        ),
    ]

    @Test("invalid names and fields are refused per record, and take the batch down", arguments: SyncBackendFactory.all, invalidSaves)
    func invalidSave(_ factory: SyncBackendFactory, invalid: (record: BackendRecord, reasonMentions: String)) throws {
        let (record, reasonMentions) = invalid
        let fixture = try factory.make()
        defer { fixture.remove() }
        let result = try fixture.backend.modify(
            saves: [RecordSave(record: tab("fine")), RecordSave(record: record)], deletes: [], device: "A")
        #expect(result.failures.count == 2)
        #expect(result.failures.first?.error == .batchRequestFailed)
        guard case .invalid(let reason) = result.failures.last?.error else {
            Issue.record("expected .invalid, got \(String(describing: result.failures.last?.error))")
            return
        }
        #expect(reason.contains(reasonMentions))
        #expect(try fixture.backend.fetchAll(since: nil).changes == [])
    }

    @Test(
        "the longest valid names and types, and names of dots and dashes, are stored, fetched and deleted",
        arguments: SyncBackendFactory.all)
    func boundaryNames(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let longType = String(repeating: "T", count: 255)
        let records = [
            BackendRecord(recordName: String(repeating: "n", count: factory.maxRecordNameLength), recordType: longType),
            BackendRecord(recordName: "a..b", recordType: "ScratchTab"),
            BackendRecord(recordName: "-_.x.json", recordType: "ScratchTab"),
        ]
        let saved = try fixture.backend.save(contentsOf: records)
        #expect(try fixture.backend.fetchAll(since: nil).changes.sortedByID == saved.map(Change.saved).sortedByID)
        let deletes = records.map { RecordDelete(recordType: $0.recordType, recordName: $0.recordName) }
        #expect(try fixture.backend.modify(saves: [], deletes: deletes, device: "A").failures == [])
        #expect(try factory.fullFetch(fixture.backend) == [])

        // One character more than the backend's longest name is refused per record, saved or deleted.
        let tooLong = String(repeating: "n", count: factory.maxRecordNameLength + 1)
        let results = [
            try fixture.backend.modify(saves: [RecordSave(record: tab(tooLong))], deletes: [], device: "A"),
            try fixture.backend.modify(saves: [], deletes: [RecordDelete(recordType: "ScratchTab", recordName: tooLong)], device: "A"),
        ]
        for result in results {
            guard case .invalid(let reason) = result.failures.first?.error, result.failures.count == 1 else {
                Issue.record("expected one .invalid failure, got \(result.failures)")
                continue
            }
            #expect(reason.contains("record name"))
        }
    }

    static let invalidDeletes = [
        RecordDelete(recordType: "ScratchTab", recordName: "a/b"),
        RecordDelete(recordType: "ScratchTab", recordName: ".."),
        RecordDelete(recordType: "ScratchTab", recordName: "a\u{0}b"),
        RecordDelete(recordType: "..", recordName: "a"),
        RecordDelete(recordType: "records/ScratchTab", recordName: "a"),
    ]

    @Test("deletes of invalid names are refused per record", arguments: SyncBackendFactory.all, invalidDeletes)
    func invalidDelete(_ factory: SyncBackendFactory, delete: RecordDelete) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        try fixture.backend.save(tab("a"))
        let result = try fixture.backend.modify(saves: [], deletes: [delete], device: "A")
        guard case .invalid = result.failures.first?.error, result.failures.count == 1 else {
            Issue.record("expected one .invalid failure, got \(result.failures)")
            return
        }
        #expect(try fixture.backend.fetchAll(since: nil).changes.map(\.recordName) == ["a"])
    }

    @Test("the same record twice in one request is invalid", arguments: SyncBackendFactory.all)
    func duplicates(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let result = try fixture.backend.modify(
            saves: [RecordSave(record: tab("a")), RecordSave(record: tab("a", text: "again"))],
            deletes: [RecordDelete(recordType: "ScratchTab", recordName: "a")],
            device: "A"
        )
        #expect(result.failures.count == 3)
        #expect(result.failures[0].error == .batchRequestFailed)
        #expect(result.failures[1].error == .invalid("ScratchTab/a appears more than once in the request"))
        #expect(result.failures[2].error == .invalid("ScratchTab/a appears more than once in the request"))
        #expect(try fixture.backend.fetchAll(since: nil).changes == [])
    }

    @Test("an empty request does nothing", arguments: SyncBackendFactory.all)
    func emptyRequest(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let start = try fixture.backend.currentToken()
        let result = try fixture.backend.modify(saves: [], deletes: [], device: "A")
        #expect(result.saved.isEmpty && result.deleted.isEmpty && result.failures.isEmpty)
        #expect(try fixture.backend.fetchChanges(since: start, limit: 10).changes == [])
    }

    @Test("concurrent writers never reuse a tag or lose a batch", arguments: SyncBackendFactory.all)
    func concurrentWriters(_ factory: SyncBackendFactory) async throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        let start = try backend.currentToken()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<2 {
                group.addTask {
                    for index in 0..<10 {
                        try backend.save(tab("w\(writer)-\(index)"), device: "w\(writer)")
                    }
                }
            }
            try await group.waitForAll()
        }
        let changes = try backend.fetchAll(since: start).changes
        #expect(changes.count == 20)
        #expect(Set(changes.compactMap { $0.savedRecord?.recordChangeTag }).count == 20)
        #expect(Set(changes.map(\.recordName)).count == 20)
        #expect(try backend.fetchAll(since: nil).changes.count == 20)
    }
}

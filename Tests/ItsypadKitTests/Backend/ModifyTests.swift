import Testing
@testable import ItsypadKit

@Suite("Modify")
struct ModifyTests {
    @Test("a saved record comes back from a fetch with its tag and stamps")
    func roundTrip() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let saved = try fixture.backend.save(tab("tab-1", text: "Notes"), device: "laptop")
        let expected = BackendRecord(
            recordName: "tab-1", recordType: "ScratchTab", recordChangeTag: "1",
            fields: tab("tab-1", text: "Notes").fields,
            created: Stamp(timestamp: testNow, deviceID: "laptop"),
            modified: Stamp(timestamp: testNow, deviceID: "laptop")
        )
        #expect(saved == [expected])
        #expect(try fixture.backend.fetchAll(since: nil).changes == [.saved(expected)])
        let file = try JSONCoding.decode(BackendRecord.self, from: readBytes(fixture.recordFile("ScratchTab", "tab-1")))
        #expect(file == expected)
    }

    @Test("ifServerRecordUnchanged: the four save cases")
    func saveConflicts() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let backend = fixture.backend
        let first = try #require(try backend.save(tab("a", text: "v1")).first)

        // Tag nil but the record exists.
        var result = try backend.modify(saves: [RecordSave(record: tab("a", text: "dup"))], deletes: [], device: "B")
        #expect(result.failures == [RecordFailure(recordType: "ScratchTab", recordName: "a", error: .serverRecordChanged(server: first))])

        // Tag equals the current one.
        let second = try #require(try backend.save(tab("a", text: "v2", tag: first.recordChangeTag)).first)
        #expect(second.recordChangeTag == "2")

        // Tag differs (stale).
        result = try backend.modify(saves: [RecordSave(record: tab("a", text: "stale", tag: "1"))], deletes: [], device: "B")
        #expect(result.failures == [RecordFailure(recordType: "ScratchTab", recordName: "a", error: .serverRecordChanged(server: second))])
        #expect(result.saved.isEmpty)

        // Tag given but the record was deleted.
        _ = try backend.modify(saves: [], deletes: [RecordDelete(recordType: "ScratchTab", recordName: "a")], device: "B")
        result = try backend.modify(saves: [RecordSave(record: tab("a", text: "revived", tag: "2"))], deletes: [], device: "B")
        #expect(result.failures == [RecordFailure(recordType: "ScratchTab", recordName: "a", error: .unknownItem)])

        // Re-created without a tag, as Apple's sample does after unknownItem.
        #expect(try backend.save(tab("a", text: "revived")).first?.recordChangeTag == "4")
    }

    @Test("created is kept from the first version; modified follows every save")
    func stamps() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let first = try #require(try fixture.backend.save(tab("a"), device: "A").first)
        let later = fixture.sibling(now: testNow + 5000)
        let second = try #require(try later.save(tab("a", text: "edit", tag: first.recordChangeTag), device: "B").first)
        #expect(second.created == Stamp(timestamp: testNow, deviceID: "A"))
        #expect(second.modified == Stamp(timestamp: testNow + 5000, deviceID: "B"))
    }

    @Test("a delete with a stale tag conflicts; an unconditional or current-tag delete succeeds")
    func deleteConflict() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let backend = fixture.backend
        let saved = try backend.save(tab("a"), tab("b"))
        let edited = try #require(try backend.save(tab("a", text: "edit", tag: saved[0].recordChangeTag)).first)

        var result = try backend.modify(saves: [], deletes: [RecordDelete(recordType: "ScratchTab", recordName: "a", ifTag: saved[0].recordChangeTag)], device: "B")
        #expect(result.failures == [RecordFailure(recordType: "ScratchTab", recordName: "a", error: .serverRecordChanged(server: edited))])
        #expect(try FileIO.status(fixture.recordFile("ScratchTab", "a")) != nil)

        result = try backend.modify(saves: [], deletes: [
            RecordDelete(recordType: "ScratchTab", recordName: "a", ifTag: edited.recordChangeTag),
            RecordDelete(recordType: "ScratchTab", recordName: "b"),
        ], device: "B")
        #expect(result.failures == [])
        #expect(result.deleted == [RecordID(recordType: "ScratchTab", recordName: "a"), RecordID(recordType: "ScratchTab", recordName: "b")])
        #expect(try backend.fetchAll(since: nil).changes == [])
        #expect(try FileIO.status(fixture.recordFile("ScratchTab", "a")) == nil)
    }

    @Test("deleting a missing record succeeds and writes nothing to the journal")
    func idempotentDelete() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        try fixture.backend.save(tab("a"))
        let token = try fixture.backend.currentToken()
        let result = try fixture.backend.modify(saves: [], deletes: [RecordDelete(recordType: "ScratchTab", recordName: "never", ifTag: "9")], device: "A")
        #expect(result.failures == [])
        #expect(result.deleted == [RecordID(recordType: "ScratchTab", recordName: "never")])
        #expect(try fixture.backend.fetchChanges(since: token, limit: 10).changes == [])
        #expect(try fixture.state().appliedSeq == 1)
    }

    @Test("one failing record fails the whole batch; the others report batchRequestFailed")
    func batchAtomicity() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let backend = fixture.backend
        let existing = try backend.save(tab("a"), tab("b"))
        let before = try backend.fetchAll(since: nil).changes
        let journalBefore = try fixture.segmentPaths().map(readText)

        let result = try backend.modify(
            saves: [RecordSave(record: tab("new")), RecordSave(record: tab("a", text: "edit", tag: "999"))],
            deletes: [RecordDelete(recordType: "ScratchTab", recordName: "b", ifTag: existing[1].recordChangeTag)],
            device: "A"
        )
        #expect(result.failures == [
            RecordFailure(recordType: "ScratchTab", recordName: "new", error: .batchRequestFailed),
            RecordFailure(recordType: "ScratchTab", recordName: "a", error: .serverRecordChanged(server: existing[0])),
            RecordFailure(recordType: "ScratchTab", recordName: "b", error: .batchRequestFailed),
        ])
        #expect(result.saved.isEmpty && result.deleted.isEmpty)
        #expect(try backend.fetchAll(since: nil).changes == before)
        #expect(try fixture.segmentPaths().map(readText) == journalBefore)
        #expect(try FileIO.status(fixture.recordFile("ScratchTab", "new")) == nil)
    }

    @Test("a record over 1 MiB fails with limitExceeded and takes its batch down")
    func recordLimit() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let big = tab("big", text: String(repeating: "x", count: BackendLimits.maxRecordBytes))
        var result = try fixture.backend.modify(saves: [RecordSave(record: big), RecordSave(record: tab("small"))], deletes: [], device: "A")
        #expect(result.failures.map(\.error) == [.limitExceeded, .batchRequestFailed])
        // Alone it still gets the per-record error, since splitting cannot help.
        let huge = tab("huge", text: String(repeating: "x", count: 3 * BackendLimits.maxRecordBytes))
        result = try fixture.backend.modify(saves: [RecordSave(record: huge)], deletes: [], device: "A")
        #expect(result.failures.map(\.error) == [.limitExceeded])
        // Just under the limit is fine.
        let fits = tab("fits", text: String(repeating: "x", count: BackendLimits.maxRecordBytes - 400))
        #expect(try fixture.backend.save(fits).count == 1)
        #expect(try fixture.backend.fetchAll(since: nil).changes.map(\.recordName) == ["fits"])
    }

    @Test("requests over 400 records or 2 MiB throw limitExceeded before writing anything")
    func requestLimits() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let before = try treeListing(fixture.path)
        let tooMany = (0...400).map { RecordSave(record: tab("r\($0)")) }
        #expect(throws: BackendError.limitExceeded) { try fixture.backend.modify(saves: tooMany, deletes: [], device: "A") }
        let mixed = Array(tooMany.prefix(300))
        let deletes = (0..<101).map { RecordDelete(recordType: "ScratchTab", recordName: "d\($0)") }
        #expect(throws: BackendError.limitExceeded) { try fixture.backend.modify(saves: mixed, deletes: deletes, device: "A") }
        let large = (0..<3).map { RecordSave(record: tab("l\($0)", text: String(repeating: "y", count: 800_000))) }
        #expect(throws: BackendError.limitExceeded) { try fixture.backend.modify(saves: large, deletes: [], device: "A") }
        #expect(try treeListing(fixture.path) == before)
        // Exactly 400 is allowed.
        #expect(try fixture.backend.modify(saves: Array(tooMany.prefix(400)), deletes: [], device: "A").saved.count == 400)
    }

    @Test("invalid names, fields and duplicates are rejected per record", arguments: [
        (tab(".hidden"), "record name"),
        (BackendRecord(recordName: "a", recordType: "Scratch/Tab"), "record type"),
        (BackendRecord(recordName: "a", recordType: "ScratchTab", fields: ["bad-name": .int64(1)]), "field name"),
        (BackendRecord(recordName: "a", recordType: "ScratchTab", fields: ["ratio": .double(.nan)]), "finite"),
        (BackendRecord(recordName: "a", recordType: "ScratchTab", fields: ["content": .asset(AssetReference(fileChecksum: "XYZ", size: 1))]), "asset"),
    ])
    func invalidRecords(record: BackendRecord, reasonMentions: String) throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let result = try fixture.backend.modify(saves: [RecordSave(record: record)], deletes: [], device: "A")
        let failure = try #require(result.failures.first)
        guard case .invalid(let reason) = failure.error else {
            Issue.record("expected .invalid, got \(failure.error)")
            return
        }
        #expect(reason.contains(reasonMentions))
    }

    @Test("the same record twice in one request is invalid")
    func duplicates() throws {
        let fixture = try TemporaryBackend()
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
    }

    @Test("a record may only reference uploaded assets")
    func assetMustBeUploaded() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let content = Array("clipboard".utf8)
        let reference = AssetReference(fileChecksum: SHA256.hexDigest(of: [UInt8](content)), size: content.count)
        var record = tab("clip")
        record.fields["content"] = .asset(reference)
        let result = try fixture.backend.modify(saves: [RecordSave(record: record)], deletes: [], device: "A")
        #expect(result.failures.count == 1)
        #expect(try fixture.backend.putAsset(content) == reference)
        #expect(try fixture.backend.save(record).first?.fields["content"] == .asset(reference))
    }

    @Test("an empty request does nothing")
    func emptyRequest() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let result = try fixture.backend.modify(saves: [], deletes: [], device: "A")
        #expect(result.saved.isEmpty && result.deleted.isEmpty && result.failures.isEmpty)
        #expect(try fixture.segmentPaths() == [])
    }

    @Test("a corrupt record file fails the writer and is left untouched")
    func corruptRecordFile() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let saved = try fixture.backend.save(tab("a"))
        let file = fixture.recordFile("ScratchTab", "a")
        try writeText("{\"recordName\":", to: file)
        let journalBefore = try fixture.segmentPaths().map(readText)
        #expect(throws: BackendError.corrupt(path: file, reason: "not valid JSON")) {
            try fixture.backend.modify(saves: [RecordSave(record: tab("a", text: "x", tag: saved[0].recordChangeTag))], deletes: [], device: "A")
        }
        #expect(throws: BackendError.corrupt(path: file, reason: "not valid JSON")) { try fixture.backend.fetchChanges(since: nil, limit: 10) }
        #expect(throws: BackendError.corrupt(path: file, reason: "not valid JSON")) { try fixture.backend.compact() }
        #expect(try readText(file) == "{\"recordName\":")
        // The journal may hold the last good version, so compaction must not have dropped it.
        #expect(try fixture.segmentPaths().map(readText) == journalBefore)
    }
}

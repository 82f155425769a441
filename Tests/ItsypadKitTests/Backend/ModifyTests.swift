import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

@Suite("Modify")
struct ModifyTests {
    @Test("record files and the journal follow committed batches only")
    func files() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let backend = fixture.backend
        let beforeAnything = try treeListing(fixture.path)
        let tooMany = (0...400).map { RecordSave(record: tab("r\($0)")) }
        #expect(throws: BackendError.limitExceeded) { try backend.modify(saves: tooMany, deletes: [], device: "A") }
        #expect(try backend.modify(saves: [], deletes: [], device: "A").failures == [])
        #expect(try treeListing(fixture.path) == beforeAnything, "refused and empty requests write nothing, not even a journal segment")

        let saved = try backend.save(tab("a", text: "Notes"), tab("b"), device: "laptop")
        #expect(try JSONCoding.decode(BackendRecord.self, from: readBytes(fixture.recordFile("ScratchTab", "a"))) == saved[0])
        let journal = try fixture.segmentPaths().map(readText)
        let failed = try backend.modify(
            saves: [RecordSave(record: tab("new")), RecordSave(record: tab("a", text: "stale", tag: "999"))], deletes: [], device: "A")
        #expect(failed.failures.count == 2)
        _ = try backend.modify(saves: [], deletes: [RecordDelete(recordType: "ScratchTab", recordName: "never")], device: "A")
        #expect(try fixture.segmentPaths().map(readText) == journal, "a failed batch and a delete of a missing record add no journal line")
        #expect(try FileIO.status(fixture.recordFile("ScratchTab", "new")) == nil)
        #expect(try fixture.state().appliedSeq == 2)

        try backend.delete("a")
        #expect(try FileIO.status(fixture.recordFile("ScratchTab", "a")) == nil)
        #expect(try FileIO.status(fixture.recordFile("ScratchTab", "b")) != nil)
    }

    @Test("a corrupt record file is quarantined by readers, replaced by a writer's save, and does not block compaction")
    func corruptRecordFile() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let saved = try fixture.backend.save(tab("a"), tab("b"))
        let file = fixture.recordFile("ScratchTab", "a")
        try writeText("{\"recordName\":", to: file)
        let page = try fixture.backend.fetchChanges(since: nil, limit: 10)
        #expect(page.changes.map(\.recordName) == ["b"])
        #expect(
            page.quarantined == [
                QuarantinedItem(id: RecordID(recordType: "ScratchTab", recordName: "a"), location: file, reason: "not valid JSON")
            ])
        #expect(throws: BackendError.corrupt(path: file, reason: "not valid JSON")) {
            try fixture.backend.fetchRecord(RecordID(recordType: "ScratchTab", recordName: "a"))
        }
        #expect(try fixture.backend.compact().segmentsRemoved == 1)
        #expect(try readText(file) == "{\"recordName\":", "readers and compaction leave it alone")

        // A malformed version counts as absent: the device that has the record saves it again.
        let stale = try fixture.backend.modify(
            saves: [RecordSave(record: tab("a", text: "x", tag: saved[0].recordChangeTag))], deletes: [], device: "A")
        #expect(stale.failures.map(\.error) == [.unknownItem])
        try fixture.backend.save(tab("a", text: "x"))
        #expect(try fixture.backend.fetchRecord(RecordID(recordType: "ScratchTab", recordName: "a"))?.fields["name"] == .string("x"))
    }
}

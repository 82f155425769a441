import Testing

@testable import ItsypadBackend

/// Change tags and `ifServerRecordUnchanged`: what every `SyncBackend` must do with the tag a save or delete carries.
@Suite("Conformance: change tags")
struct ChangeTagConformanceTests {
    @Test("a saved record comes back from a fetch with its new tag and the backend's stamps", arguments: SyncBackendFactory.all)
    func roundTrip(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        var sent = tab("tab-1", text: "Notes")
        // Stamps are the backend's to set: whatever the device sends is replaced.
        sent.created = Stamp(timestamp: 1, deviceID: "forged")
        let saved = try #require(try fixture.backend.save(sent, device: "laptop").first)
        let expected = BackendRecord(
            recordName: "tab-1", recordType: "ScratchTab", recordChangeTag: saved.recordChangeTag,
            fields: sent.fields,
            created: Stamp(timestamp: testNow, deviceID: factory.stampedDevice("laptop")),
            modified: Stamp(timestamp: testNow, deviceID: factory.stampedDevice("laptop"))
        )
        #expect(saved.recordChangeTag != nil)
        #expect(saved == expected)
        #expect(try fixture.backend.fetchAll(since: nil).changes == [.saved(expected)])
    }

    @Test("every save gives the record a tag it never had before", arguments: SyncBackendFactory.all)
    func newTagOnEverySave(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        var tags: [String?] = []
        var current = try #require(try fixture.backend.save(tab("a")).first)
        tags.append(current.recordChangeTag)
        for edit in 1...3 {
            current = try #require(try fixture.backend.save(tab("a", text: "edit \(edit)", tag: current.recordChangeTag)).first)
            tags.append(current.recordChangeTag)
        }
        #expect(!tags.contains(nil))
        #expect(Set(tags).count == 4)
        #expect(try fixture.backend.fetchAll(since: nil).changes == [.saved(current)])
    }

    @Test("ifServerRecordUnchanged: the four save cases", arguments: SyncBackendFactory.all)
    func saveConflicts(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        let first = try #require(try backend.save(tab("a", text: "v1")).first)

        // Tag nil but the record exists: creating it again conflicts, carrying the current record.
        var result = try backend.modify(saves: [RecordSave(record: tab("a", text: "dup"))], deletes: [], device: "B")
        #expect(result.failures == [RecordFailure(recordType: "ScratchTab", recordName: "a", error: .serverRecordChanged(server: first))])

        // Tag equals the current one.
        let second = try #require(try backend.save(tab("a", text: "v2", tag: first.recordChangeTag)).first)
        #expect(second.recordChangeTag != first.recordChangeTag)

        // Tag differs (stale): the failure carries the current record and its tag to merge into.
        result = try backend.modify(
            saves: [RecordSave(record: tab("a", text: "stale", tag: first.recordChangeTag))], deletes: [], device: "B")
        #expect(result.failures == [RecordFailure(recordType: "ScratchTab", recordName: "a", error: .serverRecordChanged(server: second))])
        #expect(result.saved.isEmpty)

        // Tag given but the record was deleted.
        try backend.delete("a")
        result = try backend.modify(
            saves: [RecordSave(record: tab("a", text: "revived", tag: second.recordChangeTag))], deletes: [], device: "B")
        #expect(result.failures == [RecordFailure(recordType: "ScratchTab", recordName: "a", error: .unknownItem)])

        // Re-created without a tag, as Apple's sample does after unknownItem.
        let revived = try #require(try backend.save(tab("a", text: "revived")).first)
        #expect(![first.recordChangeTag, second.recordChangeTag].contains(revived.recordChangeTag))
        #expect(try backend.fetchAll(since: nil).changes == [.saved(revived)])
    }

    @Test("created is kept from the first version; modified follows every save", arguments: SyncBackendFactory.all)
    func stamps(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let first = try #require(try fixture.backend.save(tab("a"), device: "A").first)
        fixture.clock.advance(by: 5000)
        let second = try #require(try fixture.backend.save(tab("a", text: "edit", tag: first.recordChangeTag), device: "B").first)
        #expect(second.created == Stamp(timestamp: testNow, deviceID: factory.stampedDevice("A")))
        #expect(second.modified == Stamp(timestamp: testNow + 5000, deviceID: factory.stampedDevice("B")))
    }

    @Test("a delete with a stale tag conflicts; an unconditional or current-tag delete succeeds", arguments: SyncBackendFactory.all)
    func conditionalDelete(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        let saved = try backend.save(tab("a"), tab("b"))
        let edited = try #require(try backend.save(tab("a", text: "edit", tag: saved[0].recordChangeTag)).first)

        var result = try backend.modify(
            saves: [], deletes: [RecordDelete(recordType: "ScratchTab", recordName: "a", ifTag: saved[0].recordChangeTag)], device: "B")
        #expect(result.failures == [RecordFailure(recordType: "ScratchTab", recordName: "a", error: .serverRecordChanged(server: edited))])
        #expect(result.deleted.isEmpty)
        #expect(try backend.fetchAll(since: nil).changes.sortedByID == [.saved(edited), .saved(saved[1])])

        result = try backend.modify(
            saves: [],
            deletes: [
                RecordDelete(recordType: "ScratchTab", recordName: "a", ifTag: edited.recordChangeTag),
                RecordDelete(recordType: "ScratchTab", recordName: "b"),
            ], device: "B")
        #expect(result.failures == [])
        #expect(
            result.deleted == [RecordID(recordType: "ScratchTab", recordName: "a"), RecordID(recordType: "ScratchTab", recordName: "b")])
        #expect(try factory.fullFetch(backend) == [])
    }

    @Test(
        "deleting a missing record succeeds, even with a tag, and is no change (or a deletion, where it may exist elsewhere)",
        arguments: SyncBackendFactory.all)
    func idempotentDelete(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        try fixture.backend.save(tab("a"))
        let token = try fixture.backend.currentToken()
        let result = try fixture.backend.modify(
            saves: [], deletes: [RecordDelete(recordType: "ScratchTab", recordName: "never", ifTag: "9")], device: "A")
        #expect(result.failures == [])
        #expect(result.deleted == [RecordID(recordType: "ScratchTab", recordName: "never")])
        let deletion = Change.deleted(recordType: "ScratchTab", recordName: "never")
        #expect(
            try fixture.backend.fetchChanges(since: token, limit: 10).changes == (factory.writesDeletionsOfAbsentRecords ? [deletion] : []))
    }
}

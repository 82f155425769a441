import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadSync

@Suite struct RecordMappingTests {
    let id = Identifier.make()

    @Test func aTombstoneNamesTheRecordAndWhatTheDeletionHadSeen() throws {
        let key = RecordKey(.tab, id)
        let history = EditHistory([HybridTimestamp(physical: 5, device: "a")])
        let record = RecordMapping.tombstone(for: key, history: history, tag: "3")
        #expect(record.id == RecordMapping.tombstoneID(for: key))
        #expect(record.recordName == "ScratchTab." + id)
        let parsed = try #require(SyncedTypeTable(SyncedTypes.standard).tombstone(from: record))
        #expect(parsed.key == key && parsed.history == history)
    }

    @Test func aTombstoneWhoseNameDisagreesWithItsFieldsIsIgnored() {
        var record = RecordMapping.tombstone(for: RecordKey(.clip, id), history: EditHistory(), tag: nil)
        record.recordName = "ClipboardEntry." + Identifier.make()
        #expect(RecordMapping.tombstone(from: record) == nil)
    }

    /// Records written before histories were kept still read: a tab counts as its own edit, a clip has none.
    @Test func recordsWithoutHistoriesRead() throws {
        let clock = HybridTimestamp(physical: 1_800_000_000_000, device: "old")
        let tab = BackendRecord(
            recordName: id, recordType: "ScratchTab", recordChangeTag: "4",
            fields: [
                "name": .string("n"), "content": .string("c"), "lastModified": .timestamp(1_800_000_000_000),
                "clock": .string(clock.description),
            ])
        let parsed = try #require(try RecordMapping.tab(from: tab, backend: InMemoryBackend()))
        #expect(parsed.history == EditHistory([clock]))
        #expect(parsed.sync == TabSyncMetadata(tag: "4", ancestor: "c", clock: clock))
        let clip = BackendRecord(
            recordName: id, recordType: "ClipboardEntry", recordChangeTag: "5",
            fields: ["text": .string("t"), "timestamp": .timestamp(1), "pinned": .int64(1)])
        let (entry, history) = try #require(RecordMapping.clip(from: clip))
        #expect(entry.pinned && history == EditHistory())
    }
}

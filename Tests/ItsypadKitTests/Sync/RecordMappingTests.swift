import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadSupport
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

    /// A binary clip's record describes its bytes and names their asset; reading them back checks them.
    @Test func aBinaryClipTravelsAsADescribedAsset() throws {
        let backend = InMemoryBackend()
        _ = try backend.createZoneIfNeeded()
        let bytes = TestImages.png(width: 3, height: 2, payload: 100)
        let entry = ClipEntry(id: id, text: "", timestamp: 7, binary: ClipBinary(describing: bytes, type: "image/png"))
        let asset = try backend.putAsset(bytes)
        let record = RecordMapping.record(for: entry, tag: nil, history: EditHistory(), content: asset)
        #expect(record.fields["text"] == nil && record.fields["contentType"] == .string("image/png"))
        #expect(RecordMapping.clipProblem(with: record) == nil && RecordMapping.clipContent(of: record) == asset)
        var read = try #require(RecordMapping.clip(from: record)).entry
        #expect(read.binary?.sha256 == entry.binary?.sha256 && read.binary?.width == nil)
        #expect(try RecordMapping.clipBytes(&read, of: record, backend: backend) == bytes)
        #expect(read == entry)
        // An asset that is not the clip described is refused.
        var other = record
        other.fields["contentAsset"] = .asset(try backend.putAsset(bytes + [0]))
        var entryOfOther = try #require(RecordMapping.clip(from: other)).entry
        #expect(throws: BackendError.self) { try RecordMapping.clipBytes(&entryOfOther, of: other, backend: backend) }
    }

    @Test(
        "a binary clip record without what it needs is refused",
        arguments: [
            ("contentType", FieldValue.string("image/png\n"), "contentType"), ("contentType", .string("text/plain"), "contentType"),
            ("contentAsset", nil, "no content"), ("contentSize", nil, "no content"), ("contentSHA256", .string("abc"), "SHA-256"),
        ] as [(String, FieldValue?, String)])
    func binaryClipProblems(_ change: (field: String, value: FieldValue?, problem: String)) throws {
        let bytes: [UInt8] = [1, 2, 3]
        let entry = ClipEntry(id: id, text: "", timestamp: 7, binary: ClipBinary(describing: bytes, type: "application/octet-stream"))
        var record = RecordMapping.record(
            for: entry, tag: nil, history: EditHistory(), content: AssetReference(fileChecksum: SHA256.hexDigest(of: bytes), size: 3))
        record.fields[change.field] = change.value
        #expect(RecordMapping.clipProblem(with: record)?.contains(change.problem) == true)
    }
}

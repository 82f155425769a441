import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport
@testable import ItsypadSync

/// Converting a format 1 backend to format 2 keeps every live record and asset; format 1 devices then refuse it.
@Suite struct ReplicatedMigrationTests {
    @Test func aFormat1BackendIsConvertedWithEveryRecordAndAsset() throws {
        let old = try TemporaryBackend()
        defer { old.remove() }
        let blob = Array(repeating: UInt8(ascii: "b"), count: 950_000)
        let reference = try old.backend.putAsset(blob)
        var big = tab("big")
        big.fields["contentAsset"] = .asset(reference)
        let clip = { (name: String, text: String) in
            BackendRecord(
                recordName: name, recordType: "ClipboardEntry",
                fields: ["text": .string(text), "timestamp": .timestamp(testNow), "pinned": .int64(0)])
        }
        let setting = BackendRecord(
            recordName: "clipboard.maxEntries", recordType: "Setting", fields: ["value": .string("5000"), "clock": .string("1.0.dev")])
        try old.backend.save(tab("notes", text: "one"), big, clip("c1", "kept"), clip("c2", "deleted later"), setting)
        let notes = try #require(try old.backend.fetchAll(since: nil).changes.compactMap(\.savedRecord).first { $0.recordName == "notes" })
        var edited = notes
        edited.fields["name"] = .string("two")
        try old.backend.save(edited)
        _ = try old.backend.modify(saves: [], deletes: [RecordDelete(recordType: "ClipboardEntry", recordName: "c2")], device: "deviceA")
        let before = try old.backend.fetchAll(since: nil).changes.compactMap(\.savedRecord)
        #expect(before.count == 4)

        let zoneID = try old.backend.zone().zoneID
        let converted = ReplicatedDevices.backend(old.path, 0)
        let zone = try converted.createZoneIfNeeded()
        #expect(zone.zoneID == zoneID)
        #expect(zone.format == ReplicatedLayout.format)
        let after = try converted.fetchAll(since: nil)
        #expect(after.waiting.isEmpty)
        #expect(after.changes.values.allSatisfy { $0.siblings.count == 1 })
        let fields = Dictionary(uniqueKeysWithValues: after.changes.map { ($0.key, $0.value.siblings[0].record.fields) })
        #expect(fields == Dictionary(uniqueKeysWithValues: before.map { ($0.id, $0.fields) }))
        #expect(try converted.readAsset(reference) == blob)
        // Only format 2's files remain, and a format 1 device refuses the newer format.
        let files = try ReplicationSimulatorTests.files(old.path).keys
        #expect(
            !files.contains { $0 == "state.json" || $0 == "lock" || $0.hasPrefix("journal/") || $0.hasPrefix("assets/") },
            "\(files.sorted())")
        #expect(throws: BackendError.newerFormat(found: 4)) { try old.sibling().zone() }
        // Another format 2 device finds it converted and reads it all.
        let other = ReplicatedDevices.backend(old.path, 1)
        #expect(try other.createZoneIfNeeded() == zone)
        #expect(try other.fetchAll(since: nil).changes.count == 4)
    }

    @Test func aConversionThatStoppedBeforeItsCommitStartsAgain() throws {
        let old = try TemporaryBackend()
        defer { old.remove() }
        try old.backend.save(tab("notes", text: "one"))
        // Leftovers of a conversion that stopped: another device's folder and a half-written journal.
        try FileSystem.makeDirectory(old.path + "/devices")
        try FileSystem.makeDirectory(old.path + "/devices/devZ")
        try FileSystem.writeAtomically(old.path + "/devices/devZ/device.json", Array("{".utf8))
        let converted = ReplicatedDevices.backend(old.path, 0)
        _ = try converted.createZoneIfNeeded()
        #expect(try converted.fetchAll(since: nil).changes.keys.map(\.recordName) == ["notes"])
        #expect(try converted.layout.devices() == ["devA"])
    }

    /// A crash after the commit, before this device's record files were written: the next open
    /// writes them, so that a deletion of what is there finds it (and is not taken as done).
    @Test func recordFilesACrashLeftBehindAreWrittenBeforeAnythingReadsThem() throws {
        let old = try TemporaryBackend()
        defer { old.remove() }
        try old.backend.save(
            BackendRecord(
                recordName: "c1", recordType: "ClipboardEntry",
                fields: ["text": .string("kept"), "timestamp": .timestamp(testNow), "pinned": .int64(0)]))
        let converted = ReplicatedDevices.backend(old.path, 0)
        _ = try converted.createZoneIfNeeded()
        let id = RecordID(recordType: "ClipboardEntry", recordName: "c1")
        try FileSystem.remove(converted.layout.recordFile(id, device: converted.deviceID))
        var document = try converted.deviceDocument()
        document.appliedSeq = 0
        try converted.writeDeviceDocument(document)

        let engineView = ReplicatedSyncBackend(ReplicatedDevices.backend(old.path, 0))
        _ = try engineView.zone()
        #expect(FileSystem.exists(converted.layout.recordFile(id, device: converted.deviceID)))
        let result = try engineView.modify(
            saves: [], deletes: [RecordDelete(recordType: id.recordType, recordName: id.recordName)], device: "devA")
        #expect(result.deleted == [id])
        #expect(try converted.siblings(of: id).map(\.isDeleted) == [true])
    }
}

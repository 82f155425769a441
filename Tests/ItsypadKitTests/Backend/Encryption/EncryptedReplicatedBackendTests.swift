import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadSupport
@testable import ItsypadSync

/// An encrypted folder backend: every version and asset a device writes is sealed and bound to
/// its zone, record, writer and version; a wrong or missing key writes nothing; a version changed,
/// moved or replayed in the backend is never taken for a current one.
@Suite struct EncryptedReplicatedBackendTests {
    typealias Devices = ReplicatedDevices
    let directory = TemporaryDirectory()
    let cipher = try! RecordCipher(masterKey: try! SecretBytes.random(count: RecordCipher.masterKeyByteCount))
    var path: String { directory.path + "/backend" }
    static let r = RecordID(recordType: "ScratchTab", recordName: "r")

    func device(_ index: Int, cipher: RecordCipher? = nil, compactionThreshold: Int = 1 << 30) -> FolderBackend {
        Devices.backend(path, index, compactionThreshold: compactionThreshold, cipher: cipher ?? self.cipher)
    }

    /// Every file of the backend and its content.
    func files() throws -> [String: String] { try ReplicationSimulatorTests.files(path) }

    /// Replaces `old` by `new` in every file of the backend that holds it (journals and record files alike).
    func replaceEverywhere(_ old: String, _ new: String) throws {
        for (file, text) in try files() where text.contains(old) {
            try writeText(text.split(separator: old, omittingEmptySubsequences: false).joined(separator: new), to: path + "/" + file)
        }
    }

    func sealedText(of id: RecordID, writer: Int) throws -> String {
        let document = try JSONCoding.decode(
            VersionDocument.self, from: try readBytes(FolderLayout(root: path).recordFile(id, device: Devices.deviceID(writer))))
        guard case .string(let sealed)? = document.record.fields[RecordCipher.sealedFieldName] else { throw CancellationError() }
        return sealed
    }

    @Test func theZoneIsFormat3InFormat4sLayoutAndNothingWrittenIsInTheClear() throws {
        let a = device(0), b = device(1)
        let zone = try a.createZoneIfNeeded()
        #expect(zone.format == ZoneDocument.encryptedFormat && zone.keyCheckValue == cipher.keyCheckValue)
        let members = try JSONValue.parse(try readBytes(path + "/zone.json"))
        #expect(members["layout"]?.int64Value == 4 && members["format"]?.int64Value == 3)
        let asset = try a.putAsset(Array("asset-secret-1".utf8))
        let first = try a.write(
            ReplicatedSave(
                record: BackendRecord(
                    recordName: "r", recordType: "ScratchTab",
                    fields: ["content": .string("content-secret-2"), "contentAsset": .asset(asset)]),
                basedOn: VersionVector()))
        _ = try a.write(ReplicatedSave(record: Devices.note("r", "content-secret-3"), basedOn: first[0].version, base: first[0].asBase))
        let gone = try a.write(ReplicatedSave(record: Devices.note("gone", "content-secret-4"), basedOn: VersionVector()))
        #expect(
            try a.modify(
                saves: [], deletes: [ReplicatedDelete(id: RecordID(recordType: "ScratchTab", recordName: "gone"), basedOn: gone[0].version)]
            )
            .failures.isEmpty)

        _ = try b.createZoneIfNeeded()
        let fetched = try b.fetchAll(since: nil)
        let current = try #require(fetched.changes[Self.r]?.siblings.first)
        #expect(Devices.text(current) == "content-secret-3" && current.base?.fields["content"] == .string("content-secret-2"))
        #expect(try #require(fetched.changes[RecordID(recordType: "ScratchTab", recordName: "gone")]).isDeleted)
        #expect(try b.readAsset(asset) == Array("asset-secret-1".utf8))
        #expect(fetched.quarantined.isEmpty)

        let everything = try files()
        #expect(
            everything.keys.contains { $0.hasPrefix("devices/devA/journal/") }
                && everything.keys.contains { $0.hasPrefix("devices/devA/assets/") })
        #expect(
            everything.filter { $0.value.contains("secret") || $0.value.contains("device 0") || $0.value.contains("device 1") }.isEmpty,
            "in the clear: \(everything.filter { $0.value.contains("secret") }.keys.sorted())")
    }

    @Test func aWrongOrMissingKeyOrAPlainZoneIsRefusedBeforeAnythingIsWritten() throws {
        _ = try device(0).createZoneIfNeeded()
        _ = try device(0).write(ReplicatedSave(record: Devices.note("r", "one"), basedOn: VersionVector()))
        let before = try files()
        let other = try RecordCipher(masterKey: try SecretBytes.random(count: RecordCipher.masterKeyByteCount))
        #expect(throws: EncryptionError.wrongKey) { try device(1, cipher: other).zone() }
        #expect(throws: EncryptionError.wrongKey) { try device(1, cipher: other).createZoneIfNeeded() }
        let plain = FolderBackend(path: path, deviceID: "devB", instance: "instance-1", deviceName: "device 1", lockTimeout: 1)
        #expect(throws: EncryptionError.missingKey) { try plain.zone() }
        #expect(throws: EncryptionError.missingKey) { try plain.fetchChanges(since: nil, limit: 10) }
        #expect(try files() == before)

        let plainPath = directory.path + "/plain"
        _ = try FolderBackend(
            path: plainPath, deviceID: "devA", instance: "instance-0", deviceName: "device 0", lockTimeout: 1
        ).createZoneIfNeeded()
        let plainBefore = try ReplicationSimulatorTests.files(plainPath)
        #expect(throws: EncryptionError.notEncrypted) { try Devices.backend(plainPath, 1, cipher: cipher).zone() }
        #expect(try ReplicationSimulatorTests.files(plainPath) == plainBefore)
    }

    @Test func aChangedOrSwappedVersionIsQuarantinedNeverApplied() throws {
        let a = device(0)
        _ = try a.createZoneIfNeeded()
        _ = try a.write(ReplicatedSave(record: Devices.note("r", "one"), basedOn: VersionVector()))
        _ = try a.write(ReplicatedSave(record: Devices.note("s", "two"), basedOn: VersionVector()))
        _ = try a.write(ReplicatedSave(record: Devices.note("t", "three"), basedOn: VersionVector()))
        let s = RecordID(recordType: "ScratchTab", recordName: "s"), t = RecordID(recordType: "ScratchTab", recordName: "t")
        // r: one character of its ciphertext changed; s and t: their sealed fields exchanged.
        var changed = Array(try sealedText(of: Self.r, writer: 0))
        changed[changed.count / 2] = changed[changed.count / 2] == "A" ? "B" : "A"
        try replaceEverywhere(try sealedText(of: Self.r, writer: 0), String(changed))
        let (sealedS, sealedT) = (try sealedText(of: s, writer: 0), try sealedText(of: t, writer: 0))
        try replaceEverywhere(sealedS, "SWAPPED")
        try replaceEverywhere(sealedT, sealedS)
        try replaceEverywhere("SWAPPED", sealedT)

        let b = device(1)
        _ = try b.createZoneIfNeeded()
        let fetched = try b.fetchAll(since: nil)
        #expect(fetched.changes.isEmpty)
        #expect(Set(fetched.quarantined.compactMap(\.id)) == [Self.r, s, t])
        #expect(fetched.quarantined.allSatisfy { $0.reason.contains("does not verify") && $0.location.hasPrefix("records/ScratchTab/") })
        // Read again later (the engine's quarantine check), each is still refused with where it is.
        for id in [Self.r, s, t] {
            #expect { try b.siblings(of: id) } throws: { error in
                guard case BackendError.corrupt(let location, _) = error else { return false }
                return location == Devices.recordFile(id.recordName, "devA")
            }
        }
        // A version of b's own that supersedes a refused one is written and read as any other.
        _ = try b.write(ReplicatedSave(record: Devices.note("r", "rewritten"), basedOn: VersionVector()))
        #expect(try b.siblings(of: Self.r).map(Devices.text) == ["rewritten"])
    }

    @Test func aReplayedOlderVersionFileIsNeverTakenForTheCurrentOne() throws {
        let a = device(0, compactionThreshold: 1)
        _ = try a.createZoneIfNeeded()
        let one = try a.write(ReplicatedSave(record: Devices.note("r", "one"), basedOn: VersionVector()))
        let file = FolderLayout(root: path).recordFile(Self.r, device: "devA")
        let old = try readBytes(file)
        _ = try a.write(ReplicatedSave(record: Devices.note("r", "two"), basedOn: one[0].version, base: one[0].asBase))
        try FileIO.writeAtomically(old, to: file)
        // The journal still holds the newer version, which covers the replayed one.
        let reader = device(1)
        _ = try reader.createZoneIfNeeded()
        #expect(try reader.fetchAll(since: nil).changes[Self.r]?.siblings.map(Devices.text) == ["two"])

        // Once the journal is compacted, the record files stand for it, checked against its digest: a reader waits.
        let page = try a.fetchAll(since: nil)
        _ = try a.finishSync(acknowledging: page.token)
        try FileIO.writeAtomically(old, to: file)
        let late = device(2)
        _ = try late.createZoneIfNeeded()
        let fetched = try late.fetchAll(since: nil)
        #expect(fetched.changes[Self.r] == nil)
        #expect(fetched.waiting.contains { $0.reason.contains("do not match its journal") }, "\(fetched.waiting)")
    }

    /// What the associated data binds: a sealed version opens only as the exact version, record,
    /// zone and writer it was sealed as.
    @Test(arguments: [
        "writer", "vector", "record name", "record type", "zone", "derived", "deleted", "base version", "modified stamp",
        "asset in the clear",
    ])
    func aSealedVersionOpensOnlyAsWhatItWasSealedAs(_ change: String) throws {
        let sealer = VersionSealer(cipher: cipher)
        let version = RecordVersion(
            record: BackendRecord(
                recordName: "r", recordType: "ScratchTab", recordChangeTag: "devA:2", fields: ["content": .string("x")],
                created: Stamp(timestamp: 1, deviceID: "devA"), modified: Stamp(timestamp: 2, deviceID: "devA")),
            version: VersionVector(tag: "devA:2")!, writer: "devA",
            base: RecordBase(version: VersionVector(tag: "devA:1")!, fields: ["content": .string("w")]))
        let sealed = try sealer.seal(VersionDocument(version, zone: "Z"), writer: "devA")
        #expect(try sealer.open(sealed, writer: "devA") == VersionDocument(version, zone: "Z"))
        var moved = sealed
        var writer = "devA"
        // What is not a record's member is changed in the stored text.
        var text: (String, String)?
        switch change {
        case "writer": writer = "devB"
        case "vector": text = ("\"devA:2\"", "\"devA:3\"")
        case "record name": moved.record.recordName = "s"
        case "record type": moved.record.recordType = "ClipboardEntry"
        case "zone": text = ("\"zone\":\"Z\"", "\"zone\":\"Y\"")
        case "derived": text = ("\"derived\":false", "\"derived\":true")
        case "deleted": text = ("\"deleted\":false", "\"deleted\":true")
        case "base version": text = ("\"devA:1\"", "\"devA:1,devB:1\"")
        case "modified stamp": moved.record.modified = Stamp(timestamp: 3, deviceID: "devA")
        default: moved.record.fields["contentAsset"] = .asset(AssetReference(fileChecksum: String(repeating: "a", count: 64), size: 1))
        }
        var document = moved
        if let (old, new) = text {
            let encoded = String(decoding: try JSONCoding.encode(moved), as: UTF8.self)
            #expect(encoded.contains(old), "\(encoded)")
            document = try JSONCoding.decode(
                VersionDocument.self,
                from: Array(encoded.split(separator: old, omittingEmptySubsequences: false).joined(separator: new).utf8))
        }
        #expect(document != sealed || writer != "devA")
        #expect(throws: RecordCipherError.self) { try sealer.open(document, writer: writer) }
    }

    @Test func settingNamesAreHashedInTheBackendAndComeBackNamed() throws {
        let inner = device(0)
        let backend = EncryptedReplicatedBackend(inner: inner, cipher: cipher)
        _ = try backend.createZoneIfNeeded()
        let setting = RecordID(recordType: RecordType.setting.rawValue, recordName: "clipboard.ignore")
        let tombstone = RecordMapping.tombstoneID(for: RecordKey(.setting, "clipboard.maxEntries"))
        let saved = try backend.write(
            ReplicatedSave(
                record: BackendRecord(recordName: setting.recordName, recordType: setting.recordType, fields: ["value": .string("v")]),
                basedOn: VersionVector()),
            ReplicatedSave(
                record: BackendRecord(recordName: tombstone.recordName, recordType: tombstone.recordType, fields: [:]),
                basedOn: VersionVector()))
        #expect(Set(saved.map(\.record.id)) == [setting, tombstone])
        let names = try files().keys
        #expect(!names.contains { $0.contains("clipboard") }, "\(names.sorted())")
        let reader = EncryptedReplicatedBackend(inner: device(1), cipher: cipher)
        _ = try reader.createZoneIfNeeded()
        let fetched = try reader.fetchChanges(since: nil, limit: 100)
        #expect(Set(fetched.changes.map(\.id)) == [setting, tombstone])
        #expect(try reader.siblings(of: setting).map(\.record.id) == [setting])
        #expect(reader.location(of: setting).contains(cipher.hashedName(setting.recordName, recordType: setting.recordType)))
    }
}

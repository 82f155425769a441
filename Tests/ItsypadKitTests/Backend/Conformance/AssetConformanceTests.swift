import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

/// `putAsset` and `readAsset`: blobs stored under their SHA-256, verified on the way back.
@Suite("Conformance: assets")
struct AssetConformanceTests {
    @Test("an asset is stored under its SHA-256 and read back; the same bytes give the same reference", arguments: SyncBackendFactory.all)
    func roundTrip(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        let data = Array("abc".utf8)
        let reference = try backend.putAsset(data)
        #expect(try backend.readAsset(reference) == data)
        let empty = try backend.putAsset([UInt8]())
        #expect(try backend.readAsset(empty) == [UInt8]())
        if factory.seals {
            // Sealed with a fresh nonce each time, under the checksum of the sealed bytes.
            let again = try backend.putAsset(data)
            #expect(again != reference)
            #expect(try backend.readAsset(again) == data)
        } else {
            #expect(reference == AssetReference(fileChecksum: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", size: 3))
            #expect(try backend.putAsset(data) == reference)
            #expect(empty.size == 0)
        }
    }

    @Test("a reference with the wrong size or an unknown or malformed checksum is refused", arguments: SyncBackendFactory.all)
    func verification(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        let reference = try backend.putAsset(Array("abc".utf8))
        #expect(throws: BackendError.self) { try backend.readAsset(AssetReference(fileChecksum: reference.fileChecksum, size: 2)) }
        #expect(throws: BackendError.self) { try backend.readAsset(AssetReference(fileChecksum: reference.fileChecksum, size: 4)) }
        let unknown = String(repeating: "0", count: 64)
        #expect(throws: BackendError.assetNotFound(unknown)) { try backend.readAsset(AssetReference(fileChecksum: unknown, size: 3)) }
        for malformed in ["../zone.json", "", String(repeating: "A", count: 64)] {
            #expect(throws: BackendError.self) { try backend.readAsset(AssetReference(fileChecksum: malformed, size: 3)) }
        }
    }

    @Test("assets over 50 MiB are refused", arguments: SyncBackendFactory.all)
    func sizeLimit(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        #expect(throws: BackendError.limitExceeded) {
            try fixture.backend.putAsset([UInt8](repeating: 0, count: fixture.backend.limits.maxAssetBytes + 1))
        }
    }

    @Test("a record may only reference an uploaded asset, with its size", arguments: SyncBackendFactory.all)
    func assetMustBeUploaded(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        let content = Array("clipboard".utf8)
        var record = tab("clip")
        record.fields["content"] = .asset(AssetReference(fileChecksum: SHA256.hexDigest(of: content), size: content.count))
        var result = try backend.modify(saves: [RecordSave(record: record)], deletes: [], device: "A")
        #expect(result.failures.count == 1)
        let reference = try backend.putAsset(content)
        record.fields["content"] = .asset(reference)

        var wrongSize = record
        wrongSize.fields["content"] = .asset(AssetReference(fileChecksum: reference.fileChecksum, size: content.count + 1))
        result = try backend.modify(saves: [RecordSave(record: wrongSize)], deletes: [], device: "A")
        guard case .invalid = result.failures.first?.error else {
            Issue.record("expected .invalid, got \(result.failures)")
            return
        }
        #expect(try backend.save(record).first?.fields["content"] == .asset(reference))
    }
}

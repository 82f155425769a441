import Testing

@testable import ItsypadBackend

@Suite("Assets")
struct AssetTests {
    @Test("an asset is one file under assets/, named by its SHA-256, written once")
    func files() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let data = Array("abc".utf8)
        #expect(throws: BackendError.limitExceeded) {
            try fixture.backend.putAsset([UInt8](repeating: 0, count: fixture.backend.limits.maxAssetBytes + 1))
        }
        #expect(try FileIO.listDirectory(fixture.layout.assetsDirectory) == [])
        let reference = try fixture.backend.putAsset(data)
        #expect(try readBytes(fixture.layout.assetFile(reference.fileChecksum)) == data)
        #expect(try fixture.backend.putAsset(data) == reference)
        #expect(try FileIO.listDirectory(fixture.layout.assetsDirectory) == [reference.fileChecksum])
    }

    @Test("a damaged asset is reported as corrupt; an unsafe checksum opens no file")
    func damage() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let reference = try fixture.backend.putAsset(Array("abc".utf8))
        let file = fixture.layout.assetFile(reference.fileChecksum)
        try writeText("abd", to: file)
        #expect { try fixture.backend.readAsset(reference) } throws: { error in
            guard case BackendError.corrupt(let path, let reason) = error else { return false }
            return path == file && reason.contains("checksum mismatch")
        }
        try writeText("ab", to: file)
        #expect(throws: BackendError.corrupt(path: file, reason: "expected 3 bytes, found 2")) { try fixture.backend.readAsset(reference) }
        // Uploading the content again repairs it.
        #expect(try fixture.backend.putAsset(Array("abc".utf8)) == reference)
        #expect(try fixture.backend.readAsset(reference) == Array("abc".utf8))

        let unsafe = AssetReference(fileChecksum: "../zone.json", size: 1)
        #expect { try fixture.backend.readAsset(unsafe) } throws: { error in
            guard case BackendError.corrupt(_, let reason) = error else { return false }
            return reason.contains("invalid asset reference")
        }
    }

    @Test("uploading an asset again repairs a damaged copy of the same size")
    func repairSameSize() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let reference = try fixture.backend.putAsset(Array("abc".utf8))
        try writeText("abd", to: fixture.layout.assetFile(reference.fileChecksum))
        #expect(try fixture.backend.putAsset(Array("abc".utf8)) == reference)
        #expect(try fixture.backend.readAsset(reference) == Array("abc".utf8))
    }
}

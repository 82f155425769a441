import Testing
@testable import ItsypadKit

@Suite("Assets")
struct AssetTests {
    @Test("an asset is stored under its SHA-256 and read back")
    func roundTrip() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let data = Array("abc".utf8)
        let reference = try fixture.backend.putAsset(data)
        #expect(reference == AssetReference(fileChecksum: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", size: 3))
        #expect(try readBytes(fixture.layout.assetFile(reference.fileChecksum)) == [UInt8](data))
        #expect(try fixture.backend.readAsset(reference) == data)
        #expect(try fixture.backend.putAsset(data) == reference)
        #expect(try FileIO.listDirectory(fixture.layout.assetsDirectory) == [reference.fileChecksum])
        let empty = try fixture.backend.putAsset([UInt8]())
        #expect(try fixture.backend.readAsset(empty) == [UInt8]())
    }

    @Test("a damaged asset is reported as corrupt, a missing one as not found")
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

        let missing = AssetReference(fileChecksum: String(repeating: "0", count: 64), size: 1)
        #expect(throws: BackendError.assetNotFound(missing.fileChecksum)) { try fixture.backend.readAsset(missing) }
        let unsafe = AssetReference(fileChecksum: "../zone.json", size: 1)
        #expect(throws: BackendError.assetNotFound("../zone.json")) { try fixture.backend.readAsset(unsafe) }
    }

    @Test("assets over 50 MiB are refused")
    func sizeLimit() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        #expect(throws: BackendError.limitExceeded) { try fixture.backend.putAsset([UInt8](repeating: 0, count: BackendLimits.maxAssetBytes + 1)) }
        #expect(try FileIO.listDirectory(fixture.layout.assetsDirectory) == [])
    }
}

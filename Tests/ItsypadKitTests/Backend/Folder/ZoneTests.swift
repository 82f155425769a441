import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

@Suite("Zone")
struct ZoneTests {
    @Test("createZoneIfNeeded writes a zone.json of format 4 and the device's folder")
    func zoneFile() throws {
        let fixture = try TemporaryBackend(createZone: false)
        defer { fixture.remove() }
        let created = try fixture.backend.createZoneIfNeeded()
        #expect(created.format == 4)
        let json = try FlatJSON.object(readText(fixture.layout.zoneFile))
        #expect(json == ["format": "4", "zoneID": "\"\(created.zoneID)\"", "created": "\(testNow)"])
        #expect(try treeListing(fixture.path).filter { !$0.contains("/") } == ["devices", "records", "zone.json"])
        #expect(FileSystem.exists(fixture.layout.deviceFile("devA")))
    }

    @Test("an empty backend directory has no zone, and nothing but createZoneIfNeeded writes to it")
    func emptyDirectory() throws {
        let fixture = try TemporaryBackend(createZone: false)
        defer { fixture.remove() }
        try FileIO.makeDirectory(fixture.path)
        #expect(throws: BackendError.zoneNotFound) { try fixture.backend.zone() }
        #expect(throws: BackendError.zoneNotFound) { try fixture.backend.fetchChanges(since: nil, limit: 10) }
        #expect(throws: BackendError.zoneNotFound) {
            try fixture.backend.modify(saves: [RecordSave(record: tab("a"))], deletes: [], device: "A")
        }
        #expect(throws: BackendError.zoneNotFound) { try fixture.backend.putAsset([1]) }
        #expect(throws: BackendError.zoneNotFound) { try fixture.backend.compact() }
        #expect(try treeListing(fixture.path) == [])
    }

    @Test("a backend whose directory and parent are missing (unmounted disk) is unavailable")
    func unavailable() throws {
        let fixture = try TemporaryBackend(createZone: false)
        defer { fixture.remove() }
        let unmounted = FolderBackend(
            path: fixture.parent + "/not-mounted/itsypad", deviceID: "devA", instance: "instance-a", deviceName: "a")
        #expect { try unmounted.createZoneIfNeeded() } throws: { error in
            guard case BackendError.unavailable(let reason) = error else { return false }
            return reason.contains("not-mounted")
        }
        #expect { try unmounted.fetchChanges(since: nil, limit: 1) } throws: { error in
            if case BackendError.unavailable = error { return true }
            return false
        }
        #expect(try FileIO.status(fixture.parent + "/not-mounted") == nil)
    }

    /// A backend of any other format or layout (an older itsypad's, a newer one's, an encrypted
    /// zone in another format's layout) is refused by every call, naming the directory and what
    /// it holds, and nothing is written to it.
    @Test(
        arguments: [
            (#"{"format":1,"zoneID":"Z","created":1}"#, 1, nil, "in format 1, from an earlier version"),
            (#"{"format":2,"zoneID":"Z","created":1}"#, 2, nil, "in format 2, from an earlier version"),
            (#"{"format":5,"zoneID":"Z","created":1,"somethingNew":true}"#, 5, nil, "in format 5, newer than this version understands"),
            (#"{"format":0,"zoneID":"Z","created":1}"#, 0, nil, "in format 0"),
            (
                #"{"format":3,"zoneID":"Z","created":1,"layout":1,"encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
                3, 1, "encrypted in format 1's layout, from an earlier version"
            ),
            (
                #"{"format":3,"zoneID":"Z","created":1,"layout":2,"encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
                3, 2, "encrypted in format 2's layout, from an earlier version"
            ),
            (
                #"{"format":3,"zoneID":"Z","created":1,"layout":5,"encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
                3, 5, "encrypted in format 5's layout, newer than this version understands"
            ),
        ] as [(String, Int, Int?, String)])
    func otherFormat(zone: String, format: Int, filesFormat: Int?, described: String) throws {
        let fixture = try TemporaryBackend(createZone: false)
        defer { fixture.remove() }
        try FileIO.makeDirectory(fixture.path)
        try writeText(zone, to: fixture.layout.zoneFile)
        let before = try treeListing(fixture.path)
        let backend = fixture.backend
        let refusal = BackendError.unsupportedFormat(path: fixture.path, format: format, filesFormat: filesFormat)
        #expect(throws: refusal) { try backend.createZoneIfNeeded() }
        #expect(throws: refusal) { try backend.zone() }
        #expect(throws: refusal) { try backend.fetchChanges(since: nil, limit: 10) }
        #expect(throws: refusal) { try backend.modify(saves: [RecordSave(record: tab("a"))], deletes: [], device: "A") }
        #expect(throws: refusal) { try backend.putAsset([1]) }
        #expect(throws: refusal) { try backend.compact() }
        #expect(refusal.description.contains(fixture.path + " holds an itsypad backend " + described))
        #expect(refusal.description.hasSuffix("nothing was written to it"))
        #expect(try readText(fixture.layout.zoneFile) == zone)
        #expect(try treeListing(fixture.path) == before)
    }

    /// zone.json of this format: plain format 4, or format 3 (encrypted) with layout 4, its cipher
    /// and key check value all present and valid; anything else of those formats is corrupt.
    @Test(arguments: [
        (
            #"{"format":3,"zoneID":"Z","created":1,"layout":4,"encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
            "encrypted"
        ),
        (#"{"format":4,"zoneID":"Z","created":1}"#, "plain"),
        (#"{"format":4,"zoneID":"Z","created":1,"layout":4}"#, "corrupt"),
        (#"{"format":"4","zoneID":"Z","created":1}"#, "corrupt"),
        (#"{"format":4,"zoneID":"not a zone id","created":1}"#, "corrupt"),
        (
            #"{"format":4,"zoneID":"Z","created":1,"encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
            "corrupt"
        ),
        (
            #"{"format":3,"zoneID":"Z","created":1,"layout":"4","encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
            "corrupt"
        ),
        (#"{"format":3,"zoneID":"Z","created":1,"layout":4}"#, "corrupt"),
        (
            #"{"format":3,"zoneID":"Z","created":1,"layout":4,"encryption":"aes","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
            "corrupt"
        ),
        (#"{"format":3,"zoneID":"Z","created":1,"layout":4,"encryption":"xchacha20poly1305-v1","keyCheckValue":"0011"}"#, "corrupt"),
        (#"{"format":3,"zoneID":"Z","created":1,"layout":4,"encryption":"xchacha20poly1305-v1"}"#, "corrupt"),
    ])
    func zoneDocuments(json: String, expected: String) {
        let outcome: String
        do {
            outcome = try ZoneDocument.read(Array(json.utf8), path: "zone.json").isEncrypted ? "encrypted" : "plain"
        } catch BackendError.corrupt {
            outcome = "corrupt"
        } catch {
            outcome = "\(error)"
        }
        #expect(outcome == expected)
    }

    @Test("a corrupt zone.json is reported with its path and left alone")
    func corruptZone() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        try writeText("{not json", to: fixture.layout.zoneFile)
        #expect(throws: BackendError.corrupt(path: fixture.layout.zoneFile, reason: "not valid JSON")) { try fixture.backend.zone() }
        #expect(throws: BackendError.corrupt(path: fixture.layout.zoneFile, reason: "not valid JSON")) {
            try fixture.backend.createZoneIfNeeded()
        }
        #expect(try readText(fixture.layout.zoneFile) == "{not json")
    }

    @Test("files are 0600 and directories 0700")
    func fileModes() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let asset = try fixture.backend.putAsset(Array("secret".utf8))
        var record = tab("a")
        record.fields["content"] = .asset(asset)
        try fixture.backend.save(record)
        let entries = try treeListing(fixture.path)
        #expect(entries.contains { $0.hasPrefix("records/ScratchTab/") && $0.hasSuffix(".json") })
        #expect(entries.contains { $0.hasSuffix("/assets/" + asset.fileChecksum) })
        #expect(entries.contains { $0.hasSuffix(".log") })
        for entry in [""] + entries.map({ "/" + $0 }) {
            let isDirectory = try #require(try FileIO.status(fixture.path + entry)).isDirectory
            #expect(try permissions(fixture.path + entry) == (isDirectory ? 0o700 : 0o600), "\(entry)")
        }
    }

    @Test("an existing backend directory keeps its mode")
    func existingDirectoryMode() throws {
        let fixture = try TemporaryBackend(createZone: false)
        defer { fixture.remove() }
        try FileIO.makeDirectory(fixture.path)
        try #require(chmod(fixture.path, 0o750) == 0)
        _ = try fixture.backend.createZoneIfNeeded()
        #expect(try permissions(fixture.path) == 0o750)
    }
}

/// Top-level keys of a flat JSON object mapped to their raw JSON text, to compare files without
/// depending on key order (FoundationEssentials has no JSONSerialization).
enum FlatJSON {
    static func object(_ text: String) throws -> [String: String] {
        struct Raw: Decodable {
            let values: [String: String]
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: AnyKey.self)
                var values: [String: String] = [:]
                for key in container.allKeys {
                    if let number = try? container.decode(Int64.self, forKey: key) {
                        values[key.stringValue] = String(number)
                    } else if let string = try? container.decode(String.self, forKey: key) {
                        values[key.stringValue] = "\"\(string)\""
                    } else {
                        values[key.stringValue] = "?"
                    }
                }
                self.values = values
            }
        }
        return try JSONCoding.decode(Raw.self, from: Array(text.utf8)).values
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

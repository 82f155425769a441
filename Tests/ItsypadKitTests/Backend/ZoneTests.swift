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
    @Test("createZoneIfNeeded writes zone.json last, after the folders and state.json")
    func zoneFile() throws {
        let fixture = try TemporaryBackend(createZone: false)
        defer { fixture.remove() }
        let created = try fixture.backend.createZoneIfNeeded()
        #expect(created.format == 1)
        let json = try FlatJSON.object(readText(fixture.layout.zoneFile))
        #expect(json == ["format": "1", "zoneID": "\"\(created.zoneID)\"", "created": "\(testNow)"])
        #expect(try treeListing(fixture.path) == ["assets", "journal", "lock", "records", "state.json", "zone.json"])
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
        let unmounted = DirectoryBackend(path: fixture.parent + "/not-mounted/itsypad")
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

    @Test("a backend directory that cannot be read is unavailable", .enabled(if: geteuid() != 0, "root ignores permissions"))
    func unreadable() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        try #require(chmod(fixture.path, 0) == 0)
        defer { chmod(fixture.path, 0o700) }
        #expect { try fixture.backend.zone() } throws: { error in
            if case BackendError.unavailable = error { return true }
            return false
        }
    }

    @Test("a zone.json of a newer format is refused and nothing is written")
    func newerFormat() throws {
        let fixture = try TemporaryBackend(createZone: false)
        defer { fixture.remove() }
        try FileIO.makeDirectory(fixture.path)
        let newer = #"{"format":2,"zoneID":"future","created":1,"somethingNew":true}"#
        try writeText(newer, to: fixture.layout.zoneFile)
        let before = try treeListing(fixture.path)
        let backend = fixture.backend
        #expect(throws: BackendError.newerFormat(found: 2)) { try backend.createZoneIfNeeded() }
        #expect(throws: BackendError.newerFormat(found: 2)) { try backend.zone() }
        #expect(throws: BackendError.newerFormat(found: 2)) { try backend.fetchChanges(since: nil, limit: 10) }
        #expect(throws: BackendError.newerFormat(found: 2)) {
            try backend.modify(saves: [RecordSave(record: tab("a"))], deletes: [], device: "A")
        }
        #expect(throws: BackendError.newerFormat(found: 2)) { try backend.putAsset([1]) }
        #expect(throws: BackendError.newerFormat(found: 2)) { try backend.compact() }
        #expect(try readText(fixture.layout.zoneFile) == newer)
        #expect(try treeListing(fixture.path) == before)
    }

    /// zone.json of every format: format 3 is encrypted (its layout, cipher and key check value all
    /// present and valid) and opened only by the reader of the layout it names (format 1's, or
    /// formats 2 and 4's); anything else is corrupt or newer. A reader of format 2 alone (as before
    /// format 4) takes format 4 for a newer format.
    @Test(arguments: [
        (
            #"{"format":3,"zoneID":"Z","created":1,"layout":1,"encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
            [1], "encrypted"
        ),
        (
            #"{"format":3,"zoneID":"Z","created":1,"layout":1,"encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
            [2, 4], "newer"
        ),
        (
            #"{"format":3,"zoneID":"Z","created":1,"layout":2,"encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
            [1], "layout 2"
        ),
        (
            #"{"format":3,"zoneID":"Z","created":1,"layout":2,"encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
            [2, 4], "encrypted"
        ),
        (
            #"{"format":3,"zoneID":"Z","created":1,"layout":3,"encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
            [1], "corrupt"
        ),
        (
            #"{"format":3,"zoneID":"Z","created":1,"layout":0,"encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
            [1], "corrupt"
        ),
        (
            #"{"format":3,"zoneID":"Z","created":1,"layout":"1","encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
            [1], "corrupt"
        ),
        (
            #"{"format":3,"zoneID":"Z","created":1,"encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
            [1], "corrupt"
        ),
        (#"{"format":3,"zoneID":"Z","created":1,"layout":1}"#, [1], "corrupt"),
        (
            #"{"format":3,"zoneID":"Z","created":1,"layout":1,"encryption":"aes","keyCheckValue":"00112233445566778899aabbccddeeff"}"#, [1],
            "corrupt"
        ),
        (#"{"format":3,"zoneID":"Z","created":1,"layout":1,"encryption":"xchacha20poly1305-v1","keyCheckValue":"0011"}"#, [1], "corrupt"),
        (#"{"format":3,"zoneID":"Z","created":1,"layout":1,"encryption":"xchacha20poly1305-v1"}"#, [1], "corrupt"),
        (#"{"format":1,"zoneID":"Z","created":1}"#, [1], "plain"),
        (#"{"format":2,"zoneID":"Z","created":1}"#, [2, 4], "plain"),
        (#"{"format":1,"zoneID":"Z","created":1,"layout":1}"#, [1], "corrupt"),
        (
            #"{"format":1,"zoneID":"Z","created":1,"encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
            [1], "corrupt"
        ),
        (#"{"format":2,"zoneID":"Z","created":1}"#, [1], "newer"),
        (#"{"format":4,"zoneID":"Z","created":1}"#, [2, 4], "plain"),
        (#"{"format":4,"zoneID":"Z","created":1}"#, [2], "newer"),
        (#"{"format":4,"zoneID":"Z","created":1}"#, [1], "newer"),
        (#"{"format":5,"zoneID":"Z","created":1}"#, [2, 4], "newer"),
        (
            #"{"format":3,"zoneID":"Z","created":1,"layout":4,"encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
            [2, 4], "encrypted"
        ),
        (
            #"{"format":3,"zoneID":"Z","created":1,"layout":4,"encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
            [1], "layout 4"
        ),
        (
            #"{"format":3,"zoneID":"Z","created":1,"layout":4,"encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
            [2], "layout 4"
        ),
        (
            #"{"format":3,"zoneID":"Z","created":1,"layout":5,"encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#,
            [2, 4], "layout 5"
        ),
    ])
    func zoneFormats(json: String, readerLayouts: [Int], expected: String) {
        let outcome: String
        do {
            outcome =
                try ZoneDocument.parse(Array(json.utf8), path: "zone.json", layouts: readerLayouts).zone.isEncrypted ? "encrypted" : "plain"
        } catch BackendError.newerFormat {
            outcome = "newer"
        } catch BackendError.unsupportedLayout(let format, let layout) {
            outcome = format == 3 ? "layout \(layout)" : "unexpected format \(format)"
        } catch {
            outcome = "corrupt"
        }
        #expect(outcome == expected)
    }

    @Test("an encrypted zone in format 2's layout is refused by format 1's reader with the reason and nothing is written")
    func encryptedZoneInFormat2Layout() throws {
        let fixture = try TemporaryBackend(createZone: false)
        defer { fixture.remove() }
        try FileIO.makeDirectory(fixture.path)
        let zone =
            #"{"format":3,"zoneID":"Z","created":1,"layout":2,"encryption":"xchacha20poly1305-v1","keyCheckValue":"00112233445566778899aabbccddeeff"}"#
        try writeText(zone, to: fixture.layout.zoneFile)
        let before = try treeListing(fixture.path)
        #expect(throws: BackendError.unsupportedLayout(format: 3, layout: 2)) { try fixture.backend.createZoneIfNeeded() }
        #expect(throws: BackendError.unsupportedLayout(format: 3, layout: 2)) {
            try fixture.backend.modify(saves: [RecordSave(record: tab("a"))], deletes: [], device: "A")
        }
        #expect(BackendError.unsupportedLayout(format: 3, layout: 2).description.contains("format 2's layout"))
        #expect(try treeListing(fixture.path) == before)
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
        for directory in ["", "/records", "/records/ScratchTab", "/assets", "/journal"] {
            #expect(try permissions(fixture.path + directory) == 0o700, "\(directory)")
        }
        let files =
            [
                fixture.layout.zoneFile, fixture.layout.stateFile, fixture.layout.lockFile,
                fixture.recordFile("ScratchTab", "a"), fixture.layout.assetFile(asset.fileChecksum),
            ] + (try fixture.segmentPaths())
        #expect(files.count == 6)
        for file in files {
            #expect(try permissions(file) == 0o600, "\(file)")
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

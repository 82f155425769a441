import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Where record files go: fanned out to bucket folders by a hash of the record name.
@Suite struct FolderFanOutTests {
    typealias Devices = ReplicatedDevices

    static func zoneFormat(_ root: String) throws -> Int64? {
        try JSONValue.parse(try readBytes(root + "/zone.json"))["format"]?.int64Value
    }

    /// Every record file below `records/`, relative to the backend.
    static func recordFiles(_ root: String) throws -> [String] {
        try ReplicationSimulatorTests.files(root).keys.filter { $0.hasPrefix("records/") }.sorted()
    }

    /// The bucket is the first byte of the name's SHA-256 in hex (as `sha256sum` prints it).
    @Test(arguments: [("r", "45"), ("a", "ca"), ("n0", "82"), ("ClipboardEntry.f43dc098-a680-4d76-a514-5539c679231a", "c2")])
    func theBucketIsTheFirstByteOfTheNamesSHA256(name: String, bucket: String) {
        #expect(FolderLayout.bucket(of: name) == bucket)
        #expect(FolderLayout.isBucket(bucket))
    }

    /// Record file names as first read, with String operations (a record name and a device id are ASCII).
    static func recordFileByCharacters(_ file: String) -> (recordName: String, device: String)? {
        guard file.hasSuffix(".json"), !file.hasPrefix("."), file.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        let stem = file.dropLast(5)
        guard let dot = stem.utf8.lastIndex(of: UInt8(ascii: ".")) else { return nil }
        let device = stem[stem.utf8.index(after: dot)...]
        let name = String(stem[..<dot])
        guard VersionVector.isDeviceID(device), !name.isEmpty else { return nil }
        return (name, String(device))
    }

    @Test(arguments: [
        "tab-1.dev-a.json", "a.b.c.dev.json", ".tab.dev.json", "tab.dev.json.sync-conflict-20261123-101500-ABCDEFG.json", ".json",
        "x.json", "x..json", ".dev.json", "tab.-dev.json", "tab.dev_1.json", "tab.dev.JSON", "tab.dev.json ",
        "tab (conflicted copy).dev.json",
        "é.dev.json", "tab.dév.json", "tab.dev.jsoń", "\u{600}.json", "t.\(String(repeating: "d", count: 64)).json",
        "t.\(String(repeating: "d", count: 65)).json", "~syncthing~t.dev.json.tmp",
    ])
    func recordFileNamesReadAsByCharacters(file: String) {
        let read = FolderLayout.recordFile(named: file)
        let expected = Self.recordFileByCharacters(file)
        #expect(read?.recordName == expected?.recordName && read?.device == expected?.device, "\(file)")
    }

    @Test(arguments: ["", "4", "455", "AB", "4g", "..", "/4", "45 (conflicted copy 2026-11-23)", "४५"])
    func namesThatAreNotBuckets(name: String) {
        #expect(!FolderLayout.isBucket(name))
    }

    @Test func aNewBackendFansItsRecordFilesOut() throws {
        let devices = try Devices(shared: 2)
        for index in 0..<2 { _ = try devices[index].createZoneIfNeeded() }
        #expect(try Self.zoneFormat(devices[0].path) == 4)
        let one = try devices[0].write(ReplicatedSave(record: Devices.note("r", "one"), basedOn: VersionVector()))[0]
        try devices[1].write(ReplicatedSave(record: Devices.note("r", "two"), basedOn: one.version, base: one.asBase))
        try devices[1].write(ReplicatedSave(record: Devices.note("a", "other"), basedOn: VersionVector()))
        #expect(
            try Self.recordFiles(devices[0].path) == [
                "records/ScratchTab/45/r.devA.json", "records/ScratchTab/45/r.devB.json",
                "records/ScratchTab/ca/a.devB.json",
            ])
        // A message's location is a pattern that names every device's file of the record and no other.
        let location = devices[0].location(of: RecordID(recordType: "ScratchTab", recordName: "r"))
        for file in try Self.recordFiles(devices[0].path) {
            let path = devices[0].path + "/" + file
            #expect((fnmatch(location, path, 0) == 0) == file.hasPrefix("records/ScratchTab/45/r."), "\(location) and \(file)")
        }
        #expect(
            try devices[0].fetchAll(since: nil).changes.values.flatMap(\.siblings).compactMap(Devices.text).sorted() == ["other", "two"])
    }

    /// Nothing at the bucket level but a folder named by two hex digits is read, a file only in the
    /// folder its name hashes to, and no symbolic link is followed.
    @Test func hostileEntriesAtTheBucketLevelAreNeverRead() throws {
        let devices = try Devices(shared: 2, compactionThreshold: 1500)
        for index in 0..<2 { _ = try devices[index].createZoneIfNeeded() }
        for index in 0..<6 {
            _ = try devices[0].write(
                ReplicatedSave(record: Devices.note("n\(index)", String(repeating: "x", count: 300)), basedOn: VersionVector()))
        }
        _ = try devices[0].finishSync(acknowledging: try devices[0].fetchAll(since: nil).token)
        #expect(try devices[0].journal(of: "devA").checkpoint() != nil, "readers read devA's record files")

        let root = devices[0].path
        let type = root + "/records/ScratchTab"
        let planted = try readBytes(root + "/" + Devices.recordFile("n0", "devA"))
        let outside = TemporaryDirectory()
        try FileSystem.writeAtomically(outside.path + "/n0.devA.json", planted)
        try FileSystem.writeAtomically(outside.path + "/planted.devA.json", planted)
        // A symbolic link where a bucket would be, files in the wrong bucket, names that are no bucket.
        let linked = FolderLayout.bucket(of: "planted")
        try #require(symlink(outside.path, type + "/" + linked) == 0)
        for misplaced in [
            "00/n0.devA.json", "00/planted.devA.json", "AB/planted.devA.json", "123/planted.devA.json",
            "\(linked) (conflicted copy 2026-11-23)/planted.devA.json", "planted.devA.json",
        ] {
            try FileSystem.makeDirectory(FileSystem.directoryName(type + "/" + misplaced))
            try FileSystem.writeAtomically(type + "/" + misplaced, planted)
        }
        try FileSystem.writeAtomically(type + "/7f", planted)

        let files = try devices[0].ownRecordFiles()
        #expect(Set(files.keys.map(\.recordName)) == Set((0..<6).map { "n\($0)" }))
        #expect(files.values.allSatisfy { $0.hasPrefix(type + "/") && !$0.contains("/00/") })
        let fetched = try devices[1].fetchAll(since: nil)
        #expect(Set(fetched.changes.keys.map(\.recordName)) == Set((0..<6).map { "n\($0)" }))
        #expect(try devices[1].siblings(of: RecordID(recordType: "ScratchTab", recordName: "planted")).isEmpty)
        #expect(try devices[1].siblings(of: RecordID(recordType: "ScratchTab", recordName: "n0")).count == 1)
    }
}

import Testing

@testable import ItsypadStore
@testable import ItsypadSupport

/// `meta.json` names the device a data directory belongs to: the bytes every earlier version wrote
/// must still be written and read, and every form that holds a format and a device id read.
@Suite("Store: meta file")
struct MetaFileTests {
    /// A meta.json as versions before `MetaFile` wrote it by hand.
    static let golden = """
        {
          "format": 1,
          "deviceID": "92d60c50-b067-46c7-ade5-382d79860684",
          "created": "2026-11-27T21:29:48.811Z"
        }

        """

    @Test func writesTheBytesEarlierVersionsWrote() {
        let meta = MetaFile(format: 1, deviceID: "92d60c50-b067-46c7-ade5-382d79860684", created: "2026-11-27T21:29:48.811Z")
        #expect(meta.bytes == Array(Self.golden.utf8))
    }

    @Test func aNewDataDirectoryGetsAFileItReadsBack() throws {
        let directory = TemporaryDirectory()
        let store = try DataStore(path: directory.path + "/data")
        let bytes = try #require(try FileSystem.read(directory.path + "/data/meta.json"))
        let meta = try JSONCoding.decode(MetaFile.self, from: bytes)
        #expect(meta.format == Int64(DataStore.format) && meta.deviceID == store.deviceID && meta.created != nil)
        #expect(meta.bytes == bytes)
    }

    /// Forms of the file and whether the device can read its id from them (`created` is informational:
    /// anything in its place is read as absent).
    static let forms: [(String, Bool)] = [
        (#"{"format": 1, "deviceID": "d", "created": "2026-11-27T21:29:48.811Z"}"#, true),
        (#"{"format": 1, "deviceID": "d"}"#, true),
        (#"{"format": 1, "deviceID": "d", "created": null}"#, true),
        (#"{"format": 1, "deviceID": "d", "created": 5}"#, true),
        (#"{"format": 1, "deviceID": "d", "created": {"a": 1}}"#, true),
        (#"{"deviceID": "d", "format": 7, "extra": [1, 2]}"#, true),
        (#"{"format": 1.0, "deviceID": "d"}"#, true),
        (#"{"format": 1.5, "deviceID": "d"}"#, false),
        (#"{"format": -1, "deviceID": "d"}"#, true),
        (#"{"format": 9223372036854775807, "deviceID": "d"}"#, true),
        (#"{"format": 1e30, "deviceID": "d"}"#, false),
        (#"{"format": "1", "deviceID": "d"}"#, false),
        (#"{"format": null, "deviceID": "d"}"#, false),
        (#"{"deviceID": "d"}"#, false),
        (#"{"format": 1}"#, false),
        (#"{"format": 1, "deviceID": 5}"#, false),
        (#"{"format": 1, "deviceID": null}"#, false),
        (#"[1, "d"]"#, false),
        (#""meta""#, false),
        (#"{}"#, false),
    ]

    @Test("a file is read when it holds a format and a device id", arguments: forms)
    func readsFormatAndDeviceID(_ form: (text: String, readable: Bool)) throws {
        let json = try JSONValue.parse(Array(form.text.utf8))
        let meta = try? JSONCoding.decode(MetaFile.self, from: json)
        #expect((meta != nil) == form.readable)
        if let meta { #expect(meta.deviceID == "d" && (meta.created == nil) == !form.text.contains("2026")) }
    }
}

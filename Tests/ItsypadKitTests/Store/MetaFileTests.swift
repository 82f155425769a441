import Testing

@testable import ItsypadStore
@testable import ItsypadSupport

/// `meta.json` names the device a data directory belongs to: the bytes every earlier version wrote
/// must still be written and read, and the hand reader every command uses must read exactly what
/// the Codable type defines.
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

    static let forms: [String] = [
        #"{"format": 1, "deviceID": "d", "created": "2026-11-27T21:29:48.811Z"}"#,
        #"{"format": 1, "deviceID": "d"}"#,
        #"{"format": 1, "deviceID": "d", "created": null}"#,
        #"{"format": 1, "deviceID": "d", "created": 5}"#,
        #"{"format": 1, "deviceID": "d", "created": {"a": 1}}"#,
        #"{"deviceID": "d", "format": 7, "extra": [1, 2]}"#,
        #"{"format": 1.0, "deviceID": "d"}"#,
        #"{"format": 1.5, "deviceID": "d"}"#,
        #"{"format": -1, "deviceID": "d"}"#,
        #"{"format": 9223372036854775807, "deviceID": "d"}"#,
        #"{"format": 1e30, "deviceID": "d"}"#,
        #"{"format": "1", "deviceID": "d"}"#,
        #"{"format": null, "deviceID": "d"}"#,
        #"{"deviceID": "d"}"#,
        #"{"format": 1}"#,
        #"{"format": 1, "deviceID": 5}"#,
        #"{"format": 1, "deviceID": null}"#,
        #"[1, "d"]"#,
        #""meta""#,
        #"{}"#,
    ]

    @Test("the hand reader reads what the Codable type decodes, and refuses what it refuses", arguments: forms)
    func handReaderAgreesWithTheDecoder(_ text: String) throws {
        let json = try JSONValue.parse(Array(text.utf8))
        #expect(MetaFile(reading: json) == (try? JSONCoding.decode(MetaFile.self, from: json)))
    }
}

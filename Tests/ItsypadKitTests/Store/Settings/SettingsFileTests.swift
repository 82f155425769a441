import Testing

@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

/// `settings.json` is kept across upgrades and staged by imports: these bytes were written by the
/// release before `SettingsFile`, and must stay readable and written the same both ways.
@Suite("Store: settings file")
struct SettingsFileTests {
    static let clock = HybridTimestamp("1700000000000.0.deva")!
    static let later = HybridTimestamp("1700000005000.2.devb")!

    static let entries: [(String, SettingsStore.Entry)] = [
        ("sync.enabled", SettingsStore.Entry(value: .bool(true), clock: later, tag: "17", syncedClock: clock)),
        ("clipboard.maxEntries", SettingsStore.Entry(value: .integer(9_007_199_254_740_993), clock: clock)),
        ("device.name", SettingsStore.Entry(value: nil, clock: later, tag: "3", syncedClock: later)),
        ("editor.command", SettingsStore.Entry(value: .string("vi \"-c\"\n\u{1F}é😀\\"), clock: clock)),
        ("clipboard.ignore", SettingsStore.Entry(value: .array([.string("*.key"), .string("")]), clock: clock)),
        (
            "from.a.newer.version",
            SettingsStore.Entry(value: .object([("b", .number(1.5)), ("a", .null), ("c", .object([]))]), clock: later, tag: "9")
        ),
    ]

    static let golden = #"""
        {
          "format": 1,
          "values": {
            "clipboard.ignore": {
              "value": [
                "*.key",
                ""
              ],
              "clock": "1700000000000.0.deva"
            },
            "clipboard.maxEntries": {
              "value": 9007199254740993,
              "clock": "1700000000000.0.deva"
            },
            "device.name": {
              "value": null,
              "clock": "1700000005000.2.devb",
              "tag": "3",
              "synced": "1700000005000.2.devb"
            },
            "editor.command": {
              "value": "vi \"-c\"\n\u001fé😀\\",
              "clock": "1700000000000.0.deva"
            },
            "from.a.newer.version": {
              "value": {
                "b": 1.5,
                "a": null,
                "c": {}
              },
              "clock": "1700000005000.2.devb",
              "tag": "9"
            },
            "sync.enabled": {
              "value": true,
              "clock": "1700000005000.2.devb",
              "tag": "17",
              "synced": "1700000000000.0.deva"
            }
          }
        }

        """#

    @Test func settingsAreWrittenByteForByteAsBeforeAndReadBackTheSame() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/settings.json"
        let settings = try SettingsStore(path: path)
        for (key, entry) in Self.entries { try settings.replace(key, entry) }
        #expect(String(decoding: try #require(try FileSystem.read(path)), as: UTF8.self) == Self.golden)
        try FileSystem.writeAtomically(path, Array(Self.golden.utf8))
        #expect(try SettingsStore(path: path).entries == Dictionary(uniqueKeysWithValues: Self.entries))
    }

    @Test func anEmptyStoreWritesNoValues() throws {
        let directory = TemporaryDirectory()
        #expect(
            String(decoding: try SettingsStore(path: directory.path + "/settings.json").encoded(), as: UTF8.self)
                == "{\n  \"format\": 1,\n  \"values\": {}\n}\n")
    }

    @Test(
        "what older versions wrote reads: an absent value is unset, unknown keys are ignored; a setting without a clock is damage",
        arguments: [
            (#"{"format":1,"values":{"a":{"clock":"5.0.x"}}}"#, true),
            (#"{"format":1,"values":{"a":{"value":2,"clock":"5.0.x","synced":"bad","later":[1]}},"other":0}"#, true),
            (#"{"format":1,"values":{"a":{"value":2}}}"#, false),
            (#"{"format":1,"values":{"a":{"value":2,"clock":"bad"}}}"#, false),
            (#"{"format":1,"values":[]}"#, false),
            (#"{"format":1}"#, false),
            ("[]", false),
        ])
    func older(_ file: (text: String, readable: Bool)) throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/settings.json"
        try FileSystem.writeAtomically(path, Array(file.text.utf8))
        guard file.readable else {
            #expect(throws: ItsypadError.self) { try SettingsStore(path: path) }
            return
        }
        let entry = try #require(try SettingsStore(path: path).entries["a"])
        #expect(entry.clock == HybridTimestamp("5.0.x") && entry.tag == nil && entry.syncedClock == nil)
        #expect(entry.value == (file.text.contains("\"value\"") ? .integer(2) : nil))
    }
}

import Testing

@testable import ItsypadCLI
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

/// An export is a file users keep and import later, written by streaming and read from bytes:
/// the hand-written writer and reader must agree with `ExportFile`, the format's definition.
@Suite("Store: export file")
struct ExportFileTests {
    static func encoded(_ file: ExportFile) throws -> String {
        String(decoding: try JSONCoding.encodeValue(file, keys: .asEncoded).prettySerializedBytes(), as: UTF8.self) + "\n"
    }

    @Test func anExportIsTheCodableTypesFormByteForByte() throws {
        let device = Device()
        #expect(device.inProcess(["tab", "new", "--name", "notes \"q\"", "é😀\n\t\u{1}line"]).0 == 0)
        #expect(device.inProcess(["clip", "add", "synced clip"]).0 == 0)
        #expect(device.inProcess(["clip", "add", "--local", "kept here"]).0 == 0)
        #expect(device.inProcess(["settings", "set", "clipboard.maxEntries", "50"]).0 == 0)
        #expect(device.inProcess(["settings", "set", "device.name", "laptop"]).0 == 0)
        #expect(device.inProcess(["settings", "unset", "device.name"]).0 == 0)
        let (status, exported, _) = device.inProcess(["export", "--device-settings"])
        #expect(status == 0)
        let file = try JSONCoding.decode(ExportFile.self, from: Array(exported.utf8))
        #expect(file.tabs.count == 1 && file.clips.count == 2 && file.settings.map(\.key) == ["clipboard.maxEntries", "device.name"])
        #expect(file.settings.last?.value == nil && file.clips.compactMap(\.localReason) == ["local"])
        #expect(try Self.encoded(file) == exported)
    }

    static let written = ExportFile(
        format: ExportFormat.name, version: ExportFormat.version, exportedAt: "2025-01-02T03:04:05.678Z",
        tabs: [
            ExportFile.Tab(
                id: "0f8fad5b-d9cb-469f-a165-70867728950e", name: "n \"q\"\\", content: "é😀\n\t\u{1}\u{2028}", language: "swift",
                languageLocked: true, lastModified: "2025-01-02T03:04:05.000Z", fileURL: nil, syncState: "synced", nameLocked: false,
                clock: "1735787045000.3.deva"),
            // As exports before `nameLocked` and `clock` were appended: a locked name, a clock from the time.
            ExportFile.Tab(
                id: "7c9e6679-7425-40de-944b-e07fc1f90ae7", name: "old", content: "x", language: "plain", languageLocked: false,
                lastModified: "9999-12-31T23:59:59.999Z", fileURL: nil, syncState: "pending"),
        ],
        clips: [
            ExportFile.Clip(
                id: "16fd2706-8baf-433b-82eb-8c7fada847da", text: "secret \u{7F}", timestamp: "2025-01-02T03:04:05.001Z", pinned: true,
                localOnly: true, syncState: "localOnly", localReason: "secret"),
            ExportFile.Clip(
                id: "6fa459ea-ee8a-3ca4-894e-db77e160355e", text: "", timestamp: "1970-01-01T00:00:00.000Z", pinned: false,
                localOnly: false, syncState: "synced", localReason: nil),
        ],
        settings: [
            ExportFile.Setting(key: "clipboard.maxEntries", value: .integer(250), clock: "1735787045000.0.deva"),
            ExportFile.Setting(key: "editor.command", value: nil, clock: "1735787045000.1.deva"),
            ExportFile.Setting(key: "from.a.newer.version", value: .integer(9_007_199_254_740_993), clock: "1735787045000.2.deva"),
        ])

    @Test func whatTheCodableTypeWritesImportsAsItSays() throws {
        let source = TemporaryDirectory()
        source.write("export.json", try Self.encoded(Self.written))
        let device = Device()
        #expect(device.inProcess(["import", source.path + "/export.json"]).0 == 0)
        let file = try JSONCoding.decode(ExportFile.self, from: Array(device.inProcess(["export"]).1.utf8))
        let tabs = Dictionary(uniqueKeysWithValues: file.tabs.map { ($0.id, $0) })
        for written in Self.written.tabs {
            let tab = try #require(tabs[written.id])
            #expect(
                [tab.name, tab.content, tab.language, tab.lastModified]
                    == [written.name, written.content, written.language, written.lastModified])
            #expect(tab.languageLocked == written.languageLocked && tab.nameLocked == (written.nameLocked ?? true))
        }
        #expect(tabs[Self.written.tabs[0].id]?.clock == Self.written.tabs[0].clock)
        let clips = Dictionary(uniqueKeysWithValues: file.clips.map { ($0.id, $0) })
        for written in Self.written.clips {
            let clip = try #require(clips[written.id])
            #expect([clip.text, clip.timestamp] == [written.text, written.timestamp])
            #expect(clip.pinned == written.pinned && clip.localOnly == written.localOnly && clip.localReason == written.localReason)
        }
        let settings = Dictionary(uniqueKeysWithValues: file.settings.map { ($0.key, $0) })
        #expect(Self.written.settings.allSatisfy { settings[$0.key] == $0 }, "values, tombstones and keys of newer versions")
    }
}

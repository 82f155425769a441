import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport
@testable import ItsypadSync

/// The fields of tab, clip and setting records are a format other versions (and the Itsypad app's
/// schema) read and write: these were produced by the release before the record field types, and
/// must stay written and read the same.
@Suite("Sync: record fields")
struct RecordFieldsTests {
    static let id = "0f8fad5b-d9cb-469f-a165-70867728950e"
    static let clock = HybridTimestamp("1700000000000.0.deva")!
    static let later = HybridTimestamp("1700000005000.2.devb")!
    /// Content up to 64 bytes stays in the record; more goes to an asset.
    static let limits = BackendLimits(
        maxRecordsPerRequest: 400, maxRequestBytes: 1 << 20, maxRecordBytes: 1 << 16, maxAssetBytes: 1 << 20, maxInlineValueBytes: 64)
    static let longContent = String(repeating: "x", count: 100)
    static let longContentAsset = AssetReference(
        fileChecksum: "09ecb6ebc8bcefc733f6f2ec44f791abeed6a99edf0cc31519637898aebd52d8", size: 100)

    /// A backend with the small inline limit, holding `longContent` as an asset.
    static func backend() throws -> InMemoryBackend {
        let backend = InMemoryBackend(limits: limits)
        _ = try backend.createZoneIfNeeded()
        #expect(try backend.putAsset(Array(longContent.utf8)) == longContentAsset)
        return backend
    }

    // MARK: Tabs

    static let writtenTabs: [(String, Tab, [String: FieldValue])] = [
        (
            "a synced tab with its name locked and two edits",
            Tab(
                id: id, name: "todo", nameLocked: true, content: "buy milk\n\"quoted\"\ttab", language: "markdown",
                languageLocked: false, lastModified: 1_700_000_005_000, fileURL: nil, clock: later,
                sync: TabSyncMetadata(tag: "42", ancestor: "was", clock: clock), history: EditHistory([clock, later])),
            [
                "name": .string("todo"), "nameLocked": .int64(1), "language": .string("markdown"), "languageLocked": .int64(0),
                "lastModified": .timestamp(1_700_000_005_000), "clock": .string("1700000005000.2.devb"), "deviceName": .string("laptop"),
                "history": .stringList(["1700000000000.0.deva", "1700000005000.2.devb"]),
                "content": .string("buy milk\n\"quoted\"\ttab"),
            ]
        ),
        (
            "a new tab, empty, with its language locked and a name in another script",
            Tab(
                id: id, name: "Заметки ✓", nameLocked: false, content: "", language: "plain", languageLocked: true, lastModified: 0,
                fileURL: nil, clock: clock),
            [
                "name": .string("Заметки ✓"), "nameLocked": .int64(0), "language": .string("plain"), "languageLocked": .int64(1),
                "lastModified": .timestamp(0), "clock": .string("1700000000000.0.deva"), "deviceName": .string("laptop"),
                "history": .stringList(["1700000000000.0.deva"]), "content": .string(""),
            ]
        ),
        (
            "a tab whose content is as long as the backend keeps inline",
            Tab(
                id: id, name: "x", nameLocked: false, content: String(repeating: "y", count: 64), language: "plain",
                languageLocked: false, lastModified: 253_402_300_799_999, fileURL: nil, clock: clock),
            [
                "name": .string("x"), "nameLocked": .int64(0), "language": .string("plain"), "languageLocked": .int64(0),
                "lastModified": .timestamp(253_402_300_799_999), "clock": .string("1700000000000.0.deva"),
                "deviceName": .string("laptop"), "history": .stringList(["1700000000000.0.deva"]),
                "content": .string(String(repeating: "y", count: 64)),
            ]
        ),
        (
            "a tab whose content is longer: it goes to an asset",
            Tab(
                id: id, name: "x", nameLocked: false, content: longContent, language: "plain", languageLocked: false,
                lastModified: 1_700_000_000_000, fileURL: nil, clock: clock, sync: TabSyncMetadata(tag: "3", ancestor: "")),
            [
                "name": .string("x"), "nameLocked": .int64(0), "language": .string("plain"), "languageLocked": .int64(0),
                "lastModified": .timestamp(1_700_000_000_000), "clock": .string("1700000000000.0.deva"),
                "deviceName": .string("laptop"), "history": .stringList(["1700000000000.0.deva"]), "contentAsset": .asset(longContentAsset),
            ]
        ),
        (
            "a tab renamed, then edited: the name keeps the clock of the rename",
            Tab(
                id: id, name: "plan", nameLocked: true, content: "step one", language: "plain", languageLocked: false,
                lastModified: 1_700_000_005_000, fileURL: nil, clock: later, history: EditHistory([clock, later]), nameClock: clock),
            [
                "name": .string("plan"), "nameLocked": .int64(1), "language": .string("plain"), "languageLocked": .int64(0),
                "lastModified": .timestamp(1_700_000_005_000), "clock": .string("1700000005000.2.devb"),
                "nameClock": .string("1700000000000.0.deva"), "deviceName": .string("laptop"),
                "history": .stringList(["1700000000000.0.deva", "1700000005000.2.devb"]), "content": .string("step one"),
            ]
        ),
    ]

    @Test("a tab is written with the same fields as before, and reads back as itself", arguments: writtenTabs)
    func writtenTab(_ golden: (name: String, tab: Tab, fields: [String: FieldValue])) throws {
        let backend = try Self.backend()
        var record = try RecordMapping.record(for: golden.tab, deviceName: "laptop", backend: backend)
        #expect(record.fields == golden.fields)
        #expect(record.recordName == golden.tab.id && record.recordType == "ScratchTab")
        #expect(record.recordChangeTag == golden.tab.sync?.tag)
        #expect(RecordMapping.tabProblem(with: record) == nil)

        record.recordChangeTag = "9"
        var expected = golden.tab
        expected.sync = TabSyncMetadata(tag: "9", ancestor: golden.tab.content, clock: golden.tab.clock)
        #expect(try RecordMapping.tab(from: record, backend: backend) == expected)
        #expect(RecordMapping.deviceName(of: record) == "laptop")
    }

    /// What a tab record's fields read as: a problem, or the tab.
    enum TabOutcome: Sendable {
        case problem(String)
        case tab(Tab)
    }

    /// The fields every version since clocks and histories writes, with content inline.
    static let tabFields: [String: FieldValue] = [
        "name": .string("n"), "nameLocked": .int64(1), "language": .string("swift"), "languageLocked": .int64(1),
        "lastModified": .timestamp(1_700_000_000_000), "clock": .string("1700000000000.0.deva"), "deviceName": .string("laptop"),
        "history": .stringList(["1700000000000.0.deva"]), "content": .string("c"),
    ]

    static func tabFields(_ changes: [String: FieldValue?]) -> [String: FieldValue] {
        var fields = tabFields
        for (name, value) in changes { fields[name] = value }
        return fields
    }

    /// The tab `tabFields` holds, as read from a record with change tag "4", with some fields changed.
    static func expectedTab(
        name: String = "n", nameLocked: Bool = true, content: String = "c", language: String = "swift", languageLocked: Bool = true,
        clock: HybridTimestamp = clock, history: EditHistory? = nil, languageClock: HybridTimestamp? = nil
    ) -> TabOutcome {
        .tab(
            Tab(
                id: id, name: name, nameLocked: nameLocked, content: content, language: language, languageLocked: languageLocked,
                lastModified: 1_700_000_000_000, fileURL: nil, clock: clock,
                sync: TabSyncMetadata(tag: "4", ancestor: content, clock: clock), history: history ?? EditHistory([clock]),
                languageClock: languageClock))
    }

    static let readTabs: [(String, String, [String: FieldValue], TabOutcome)] = [
        ("the current form", id, tabFields, expectedTab()),
        ("a record name in capitals names the same tab", id.uppercased(), tabFields, expectedTab()),
        (
            "content in an asset", id, tabFields(["content": nil, "contentAsset": .asset(longContentAsset)]),
            expectedTab(content: longContent)
        ),
        ("content inline wins over an asset", id, tabFields(["contentAsset": .asset(longContentAsset)]), expectedTab()),
        (
            "the Itsypad app's schema: no clock, device, history or language lock; flags as INT64",
            id,
            [
                "name": .string("n"), "nameLocked": .int64(0), "language": .string("Markdown"),
                "lastModified": .timestamp(1_700_000_000_000),
                "content": .string("c"),
            ],
            expectedTab(
                nameLocked: false, language: "markdown", languageLocked: false,
                clock: HybridTimestamp(physical: 1_700_000_000_000, device: "devw"), history: EditHistory())
        ),
        (
            "a language set before the last edit keeps its clock", id, tabFields(["languageClock": .string("1600000000000.0.devc")]),
            expectedTab(languageClock: HybridTimestamp("1600000000000.0.devc")!)
        ),
        (
            "a label clock that is not a string: the tab's clock", id, tabFields(["nameClock": .int64(1)]), expectedTab()
        ),
        (
            "before names could be locked: absent flags are false", id, tabFields(["nameLocked": nil, "languageLocked": nil]),
            expectedTab(nameLocked: false, languageLocked: false)
        ),
        (
            "before histories were kept: the tab is its own edit", id, tabFields(["history": nil]),
            expectedTab(history: EditHistory([clock]))
        ),
        (
            "an unreadable history counts as the tab's own edit", id, tabFields(["history": .stringList(["not a clock"])]),
            expectedTab(history: EditHistory([clock]))
        ),
        (
            "a history that is not a list counts as the tab's own edit", id, tabFields(["history": .string("1700000000000.0.deva")]),
            expectedTab(history: EditHistory([clock]))
        ),
        (
            "flags other than 1 are false, of whatever type", id, tabFields(["nameLocked": .int64(2), "languageLocked": .string("1")]),
            expectedTab(nameLocked: false, languageLocked: false)
        ),
        ("an unknown language is plain", id, tabFields(["language": .string("klingon")]), expectedTab(language: "plain")),
        ("a language that is not a string is plain", id, tabFields(["language": .int64(1)]), expectedTab(language: "plain")),
        (
            "a clock that is not a string: the time and the writing device's", id, tabFields(["clock": .int64(1)]),
            expectedTab(clock: HybridTimestamp(physical: 1_700_000_000_000, device: "devw"), history: EditHistory([clock]))
        ),
        (
            "no clock or history", id, tabFields(["clock": nil, "history": nil]),
            expectedTab(clock: HybridTimestamp(physical: 1_700_000_000_000, device: "devw"), history: EditHistory())
        ),
        ("a record name that is not an id", "notes", tabFields, .problem("the record name is not a tab id")),
        ("no name", id, tabFields(["name": nil]), .problem("no name")),
        ("a name that is not a string", id, tabFields(["name": .int64(1)]), .problem("no name")),
        ("no lastModified", id, tabFields(["lastModified": nil]), .problem("lastModified is missing or outside 1970–9999")),
        (
            "a lastModified that is not a timestamp", id, tabFields(["lastModified": .int64(1_700_000_000_000)]),
            .problem("lastModified is missing or outside 1970–9999")
        ),
        (
            "a lastModified before 1970", id, tabFields(["lastModified": .timestamp(-1)]),
            .problem("lastModified is missing or outside 1970–9999")
        ),
        (
            "a lastModified after 9999", id, tabFields(["lastModified": .timestamp(253_402_300_800_000)]),
            .problem("lastModified is missing or outside 1970–9999")
        ),
        ("no content", id, tabFields(["content": nil]), .problem("no content")),
        ("content that is not a string", id, tabFields(["content": .int64(1)]), .problem("no content")),
        (
            "content that is not a string, beside an asset", id,
            tabFields(["content": .stringList([]), "contentAsset": .asset(longContentAsset)]),
            .problem("no content")
        ),
        ("an asset field that is not an asset", id, tabFields(["content": nil, "contentAsset": .string("c")]), .problem("no content")),
        ("a clock that does not parse", id, tabFields(["clock": .string("soon")]), .problem("clock 'soon' is not a valid clock")),
        (
            "a name clock that does not parse", id, tabFields(["nameClock": .string("soon")]),
            .problem("nameClock 'soon' is not a valid clock")
        ),
    ]

    @Test("a tab record reads as before: older forms, the app's schema, and what is refused", arguments: readTabs)
    func readTab(_ golden: (name: String, recordName: String, fields: [String: FieldValue], outcome: TabOutcome)) throws {
        let record = BackendRecord(
            recordName: golden.recordName, recordType: "ScratchTab", recordChangeTag: "4", fields: golden.fields,
            modified: Stamp(timestamp: 1_700_000_000_001, deviceID: "devw"))
        let backend = try Self.backend()
        switch golden.outcome {
        case .problem(let problem):
            #expect(RecordMapping.tabProblem(with: record) == problem)
            #expect(try RecordMapping.tab(from: record, backend: backend) == nil)
        case .tab(let tab):
            #expect(RecordMapping.tabProblem(with: record) == nil)
            #expect(try RecordMapping.tab(from: record, backend: backend) == tab)
        }
    }

    /// Every value of every field type a record may hold, for the decoder's test.
    static let everyFieldValue: [FieldValue] = [
        .string("1700000000000.0.deva"), .string(""), .int64(0), .int64(1), .int64(2), .double(1), .timestamp(1_700_000_000_000),
        .timestamp(-1), .stringList(["1700000000000.0.deva"]), .stringList(["x"]), .asset(longContentAsset),
    ]

    /// The tab forms above and, for every field, each value of every type in its place or none.
    static var tabForms: [[String: FieldValue]] {
        var forms = readTabs.map(\.2) + writtenTabs.map(\.2) + [[:]]
        for name in tabFields.keys + ["contentAsset", "nameClock", "languageClock"] {
            forms.append(tabFields([name: nil]))
            forms += everyFieldValue.map { tabFields([name: $0]) }
        }
        return forms
    }

    @Test("the decoder reads every form of tab fields: a field of another type reads as absent")
    func decoderReadsEveryTabForm() throws {
        for fields in Self.tabForms {
            #expect(throws: Never.self, "\(fields)") { try FieldCoding.decode(TabRecordFields.self, from: fields) }
        }
    }

    @Test func aTabRecordWithoutAChangeTagIsNotRead() throws {
        let record = BackendRecord(recordName: Self.id, recordType: "ScratchTab", fields: Self.tabFields)
        #expect(try RecordMapping.tab(from: record, backend: Self.backend()) == nil)
    }

    @Test func aMissingOrMalformedContentAssetThrows() throws {
        let backend = try Self.backend()
        let notUTF8 = try backend.putAsset([0xFF, 0xFE])
        for asset in [notUTF8, AssetReference(fileChecksum: String(repeating: "a", count: 64), size: 1)] {
            let record = BackendRecord(
                recordName: Self.id, recordType: "ScratchTab", recordChangeTag: "4",
                fields: Self.tabFields(["content": nil, "contentAsset": .asset(asset)]))
            #expect(RecordMapping.tabProblem(with: record) == nil)
            #expect(throws: BackendError.self) { try RecordMapping.tab(from: record, backend: backend) }
        }
    }

    static let deviceNames: [([String: FieldValue], Stamp?, String)] = [
        (["deviceName": .string("laptop")], Stamp(timestamp: 1, deviceID: "devw"), "laptop"),
        ([:], Stamp(timestamp: 1, deviceID: "devw"), "devw"),
        (["deviceName": .int64(1)], nil, "unknown device"),
    ]

    @Test("the device a tab version was written on: its field, else the writer of the record, else unknown", arguments: deviceNames)
    func deviceName(_ golden: (fields: [String: FieldValue], modified: Stamp?, expected: String)) {
        let record = BackendRecord(recordName: Self.id, recordType: "ScratchTab", fields: golden.fields, modified: golden.modified)
        #expect(RecordMapping.deviceName(of: record) == golden.expected)
    }

    // MARK: Clips

    static let writtenClips: [(String, ClipEntry, EditHistory, [String: FieldValue])] = [
        (
            "a pinned clip with its pin changes",
            ClipEntry(id: id, text: "a \"quoted\"\nclip ✓", timestamp: 1_700_000_000_000, pinned: true), EditHistory([clock, later]),
            [
                "text": .string("a \"quoted\"\nclip ✓"), "timestamp": .timestamp(1_700_000_000_000), "pinned": .int64(1),
                "history": .stringList(["1700000000000.0.deva", "1700000005000.2.devb"]),
            ]
        ),
        (
            "an unpinned clip, never pinned",
            ClipEntry(id: id, text: "", timestamp: 253_402_300_799_999), EditHistory(),
            ["text": .string(""), "timestamp": .timestamp(253_402_300_799_999), "pinned": .int64(0), "history": .stringList([])]
        ),
    ]

    @Test("a clip is written with the same fields as before, and reads back as itself", arguments: writtenClips)
    func writtenClip(_ golden: (name: String, entry: ClipEntry, history: EditHistory, fields: [String: FieldValue])) throws {
        let record = RecordMapping.record(for: golden.entry, tag: "5", history: golden.history)
        #expect(record.fields == golden.fields)
        #expect(record.recordName == golden.entry.id && record.recordType == "ClipboardEntry" && record.recordChangeTag == "5")
        let (entry, history) = try #require(RecordMapping.clip(from: record))
        #expect(entry == golden.entry && history == golden.history)
    }

    static let clipFields: [String: FieldValue] = [
        "text": .string("t"), "timestamp": .timestamp(1_700_000_000_000), "pinned": .int64(1),
        "history": .stringList(["1700000000000.0.deva"]),
    ]

    static func clipFields(_ changes: [String: FieldValue?]) -> [String: FieldValue] {
        var fields = clipFields
        for (name, value) in changes { fields[name] = value }
        return fields
    }

    static let readClips: [(String, String, [String: FieldValue], String?, ClipEntry?, EditHistory)] = [
        (
            "the current form", id, clipFields, nil, ClipEntry(id: id, text: "t", timestamp: 1_700_000_000_000, pinned: true),
            EditHistory([clock])
        ),
        (
            "a record name in capitals", id.uppercased(), clipFields, nil,
            ClipEntry(id: id, text: "t", timestamp: 1_700_000_000_000, pinned: true), EditHistory([clock])
        ),
        (
            "before pin changes were kept: none", id, clipFields(["history": nil]), nil,
            ClipEntry(id: id, text: "t", timestamp: 1_700_000_000_000, pinned: true), EditHistory()
        ),
        (
            "an unreadable history: none", id, clipFields(["history": .stringList(["x"])]), nil,
            ClipEntry(id: id, text: "t", timestamp: 1_700_000_000_000, pinned: true), EditHistory()
        ),
        (
            "no pinned field, or one other than 1: not pinned", id, clipFields(["pinned": nil]), nil,
            ClipEntry(id: id, text: "t", timestamp: 1_700_000_000_000), EditHistory([clock])
        ),
        (
            "a pinned field that is not INT64: not pinned", id, clipFields(["pinned": .string("1")]), nil,
            ClipEntry(id: id, text: "t", timestamp: 1_700_000_000_000), EditHistory([clock])
        ),
        ("a record name that is not an id", "clip", clipFields, "the record name is not a clip id", nil, EditHistory()),
        ("no text", id, clipFields(["text": nil]), "no text", nil, EditHistory()),
        ("a text that is not a string", id, clipFields(["text": .stringList(["t"])]), "no text", nil, EditHistory()),
        ("no timestamp", id, clipFields(["timestamp": nil]), "timestamp is missing or outside 1970–9999", nil, EditHistory()),
        (
            "a timestamp that is not TIMESTAMP", id, clipFields(["timestamp": .int64(5)]), "timestamp is missing or outside 1970–9999", nil,
            EditHistory()
        ),
        (
            "a timestamp before 1970", id, clipFields(["timestamp": .timestamp(-5)]), "timestamp is missing or outside 1970–9999", nil,
            EditHistory()
        ),
    ]

    @Test("a clip record reads as before: older forms and what is refused", arguments: readClips)
    func readClip(
        _ golden: (
            name: String, recordName: String, fields: [String: FieldValue], problem: String?, entry: ClipEntry?, history: EditHistory
        )
    ) {
        let record = BackendRecord(recordName: golden.recordName, recordType: "ClipboardEntry", recordChangeTag: "5", fields: golden.fields)
        #expect(RecordMapping.clipProblem(with: record) == golden.problem)
        let read = RecordMapping.clip(from: record)
        #expect(read?.entry == golden.entry)
        if let read { #expect(read.history == golden.history) }
    }

    // MARK: Settings

    static let writtenSettings: [(String, String, SettingsStore.Entry, [String: FieldValue])] = [
        (
            "a value", "clipboard.ignoreSecrets", SettingsStore.Entry(value: .bool(false), clock: clock, tag: "8"),
            ["clock": .string("1700000000000.0.deva"), "value": .string("false")]
        ),
        (
            "a list with text that needs escapes", "clipboard.ignore",
            SettingsStore.Entry(value: .array([.string("^\"pw\"\t"), .string("ключ")]), clock: later),
            ["clock": .string("1700000005000.2.devb"), "value": .string(#"["^\"pw\"\t","ключ"]"#)]
        ),
        (
            "an unset value (a tombstone)", "clipboard.maxEntries", SettingsStore.Entry(value: nil, clock: later, tag: "2"),
            ["clock": .string("1700000005000.2.devb")]
        ),
    ]

    @Test("a setting is written with the same fields as before, and reads back as itself", arguments: writtenSettings)
    func writtenSetting(_ golden: (name: String, key: String, entry: SettingsStore.Entry, fields: [String: FieldValue])) throws {
        let record = RecordMapping.record(forSetting: golden.key, golden.entry)
        #expect(record.fields == golden.fields)
        #expect(record.recordName == golden.key && record.recordType == "Setting" && record.recordChangeTag == golden.entry.tag)
        let (key, entry) = try #require(RecordMapping.setting(from: record))
        #expect(
            key == golden.key && entry == SettingsStore.Entry(value: golden.entry.value, clock: golden.entry.clock, tag: golden.entry.tag))
    }

    static let readSettings: [(String, String, [String: FieldValue], String?, JSONValue??)] = [
        ("a value", "clipboard.maxEntries", ["clock": .string("1700000000000.0.deva"), "value": .string("25")], nil, .some(.integer(25))),
        ("a tombstone", "clipboard.maxEntries", ["clock": .string("1700000000000.0.deva")], nil, .some(nil)),
        (
            "a value that is not a string is no value", "clipboard.maxEntries",
            ["clock": .string("1700000000000.0.deva"), "value": .int64(25)],
            nil, .some(nil)
        ),
        ("an unknown setting is not for this device", "clipboard.colour", ["value": .string("1")], nil, nil),
        (
            "a device's own setting is not synced", "editor", ["clock": .string("1700000000000.0.deva"), "value": .string("\"vi\"")], nil,
            nil
        ),
        ("no clock", "clipboard.maxEntries", ["value": .string("25")], "no valid clock", nil),
        ("a clock that is not a string", "clipboard.maxEntries", ["clock": .int64(1)], "no valid clock", nil),
        ("a clock that does not parse", "clipboard.maxEntries", ["clock": .string("soon")], "no valid clock", nil),
        (
            "a value out of range", "clipboard.maxEntries", ["clock": .string("1700000000000.0.deva"), "value": .string("0")],
            "value is not a whole number from 1 to 10000000", nil
        ),
        (
            "a value that is not JSON", "clipboard.ignoreSecrets", ["clock": .string("1700000000000.0.deva"), "value": .string("yes")],
            "value is not true or false", nil
        ),
    ]

    /// `value`: nil when the record is not read, `.some(nil)` for an unset value.
    @Test("a setting record reads as before: unknown and device settings, tombstones, what is refused", arguments: readSettings)
    func readSetting(_ golden: (name: String, key: String, fields: [String: FieldValue], problem: String?, value: JSONValue??)) {
        let record = BackendRecord(recordName: golden.key, recordType: "Setting", recordChangeTag: "6", fields: golden.fields)
        #expect(RecordMapping.settingProblem(with: record) == golden.problem)
        let read = RecordMapping.setting(from: record)
        #expect(read?.0 == (golden.value == nil ? nil : golden.key))
        #expect(read?.1.value == golden.value ?? nil)
        if let read { #expect(read.1.clock == Self.clock && read.1.tag == "6") }
    }

    // MARK: Tombstones

    @Test func aTombstoneIsWrittenWithTheSameFieldsAsBefore() {
        let record = RecordMapping.tombstone(for: RecordKey(.tab, Self.id), history: EditHistory([Self.clock]), tag: "3")
        #expect(
            record.fields == [
                "deletedType": .string("ScratchTab"), "deletedName": .string(Self.id), "history": .stringList(["1700000000000.0.deva"]),
            ])
        #expect(record.recordName == "ScratchTab." + Self.id && record.recordType == "Tombstone" && record.recordChangeTag == "3")
    }

    static let tombstoneFields: [String: FieldValue] = [
        "deletedType": .string("ClipboardEntry"), "deletedName": .string(id), "history": .stringList(["1700000000000.0.deva"]),
    ]

    static let readTombstones: [(String, String, [String: FieldValue], Bool)] = [
        ("well formed", "ClipboardEntry." + id, tombstoneFields, true),
        ("an empty history", "ClipboardEntry." + id, tombstoneFields.merging(["history": .stringList([])]) { $1 }, true),
        ("no history", "ClipboardEntry." + id, tombstoneFields.filter { $0.key != "history" }, false),
        ("an unreadable history", "ClipboardEntry." + id, tombstoneFields.merging(["history": .stringList(["x"])]) { $1 }, false),
        ("a type this version does not sync", "Note." + id, tombstoneFields.merging(["deletedType": .string("Note")]) { $1 }, true),
        ("a type no backend can store", "No+te." + id, tombstoneFields.merging(["deletedType": .string("No+te")]) { $1 }, false),
        ("a name that disagrees", "ClipboardEntry.x", tombstoneFields, false),
        ("a type that is not a string", "ClipboardEntry." + id, tombstoneFields.merging(["deletedType": .int64(1)]) { $1 }, false),
    ]

    @Test("a tombstone reads only when whole: a known type, its name, a readable history", arguments: readTombstones)
    func readTombstone(_ golden: (name: String, recordName: String, fields: [String: FieldValue], reads: Bool)) {
        let record = BackendRecord(recordName: golden.recordName, recordType: "Tombstone", fields: golden.fields)
        let read = RecordMapping.tombstone(from: record)
        #expect((read != nil) == golden.reads)
        if let read { #expect(read.key.type.rawValue + "." + read.key.name == golden.recordName) }
    }
}

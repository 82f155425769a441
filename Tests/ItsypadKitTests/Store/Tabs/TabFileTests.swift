import Testing

@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

/// A tab's file under `tabs/` is a format other versions read and write: these bytes were
/// written by the release before `TabFile`, and must stay readable and written the same both ways.
@Suite("Store: tab files")
struct TabFileTests {
    static let clock = HybridTimestamp("1700000000000.0.deva")!
    static let later = HybridTimestamp("1700000005000.2.devb")!

    static let goldenTabs: [(String, Tab, String)] = [
        (
            "a scratch tab, never synced",
            Tab(
                id: "0f8fad5b-d9cb-469f-a165-70867728950e", name: "todo", nameLocked: true, content: "buy milk\n\"quoted\"\ttab",
                language: "markdown", languageLocked: false, lastModified: 1_700_000_000_000, fileURL: nil, clock: clock),
            """
            {
              "id": "0f8fad5b-d9cb-469f-a165-70867728950e",
              "name": "todo",
              "nameLocked": true,
              "language": "markdown",
              "languageLocked": false,
              "lastModified": 1700000000000,
              "clock": "1700000000000.0.deva",
              "content": "buy milk\\n\\"quoted\\"\\ttab",
              "history": [
                "1700000000000.0.deva"
              ]
            }

            """
        ),
        (
            "a synced tab with an edit since",
            Tab(
                id: "7c9e6679-7425-40de-944b-e07fc1f90ae7", name: "Untitled", nameLocked: false, content: "", language: "plain",
                languageLocked: true, lastModified: 1_700_000_005_000, fileURL: nil, clock: later,
                sync: TabSyncMetadata(tag: "42", ancestor: "was", clock: clock), history: EditHistory([clock, later])),
            """
            {
              "id": "7c9e6679-7425-40de-944b-e07fc1f90ae7",
              "name": "Untitled",
              "nameLocked": false,
              "language": "plain",
              "languageLocked": true,
              "lastModified": 1700000005000,
              "clock": "1700000005000.2.devb",
              "content": "",
              "sync": {
                "tag": "42",
                "ancestor": "was",
                "clock": "1700000000000.0.deva"
              },
              "history": [
                "1700000000000.0.deva",
                "1700000005000.2.devb"
              ]
            }

            """
        ),
        (
            "a file-backed tab (its content is in its file), synced before clocks were kept",
            Tab(
                id: "16fd2706-8baf-433b-82eb-8c7fada847da", name: "notes.md", nameLocked: true, content: "",
                language: "markdown", languageLocked: false, lastModified: 1_700_000_000_000, fileURL: "/home/me/notes.md", clock: clock,
                sync: TabSyncMetadata(tag: "7", ancestor: "")),
            """
            {
              "id": "16fd2706-8baf-433b-82eb-8c7fada847da",
              "name": "notes.md",
              "nameLocked": true,
              "language": "markdown",
              "languageLocked": false,
              "lastModified": 1700000000000,
              "clock": "1700000000000.0.deva",
              "fileURL": "/home/me/notes.md",
              "sync": {
                "tag": "7",
                "ancestor": ""
              },
              "history": [
                "1700000000000.0.deva"
              ]
            }

            """
        ),
        (
            "a tab renamed before its last edit: the name's clock is kept, the language's is the tab's",
            Tab(
                id: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", name: "plan", nameLocked: true, content: "step one", language: "plain",
                languageLocked: false, lastModified: 1_700_000_005_000, fileURL: nil, clock: later, history: EditHistory([clock, later]),
                nameClock: clock),
            """
            {
              "id": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
              "name": "plan",
              "nameLocked": true,
              "language": "plain",
              "languageLocked": false,
              "lastModified": 1700000005000,
              "clock": "1700000005000.2.devb",
              "nameClock": "1700000000000.0.deva",
              "content": "step one",
              "history": [
                "1700000000000.0.deva",
                "1700000005000.2.devb"
              ]
            }

            """
        ),
    ]

    static let goldenDeletions: [(String, TabDeletion, String)] = [
        (
            "a deletion replacing a synced version",
            TabDeletion(id: "0f8fad5b-d9cb-469f-a165-70867728950e", tag: "12", history: EditHistory([clock, later])),
            """
            {
              "id": "0f8fad5b-d9cb-469f-a165-70867728950e",
              "deleted": true,
              "tag": "12",
              "history": [
                "1700000000000.0.deva",
                "1700000005000.2.devb"
              ]
            }

            """
        ),
        (
            "a deletion with no synced version",
            TabDeletion(id: "7c9e6679-7425-40de-944b-e07fc1f90ae7", tag: nil, history: EditHistory()),
            """
            {
              "id": "7c9e6679-7425-40de-944b-e07fc1f90ae7",
              "deleted": true,
              "history": []
            }

            """
        ),
    ]

    @Test("a tab is written byte for byte as before, and what was written before reads back the same", arguments: goldenTabs)
    func tabs(_ golden: (name: String, tab: Tab, bytes: String)) throws {
        // Written the same but for one line, the write's stamp (see `TabStamp`), which older versions ignore.
        let lines = try String(decoding: TabStore.fileContent(golden.tab), as: UTF8.self).split(
            separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.filter { $0.hasPrefix("  \"stamp\": \"") }.count == 1)
        #expect(lines.filter { !$0.hasPrefix("  \"stamp\": \"") }.joined(separator: "\n") == golden.bytes)
        let directory = TemporaryDirectory()
        directory.write(golden.tab.id + ".json", golden.bytes)
        #expect(try TabStore(directory: directory.path).entry(id: golden.tab.id) == .live(golden.tab))
    }

    @Test("a deletion is written byte for byte as before, and reads back the same", arguments: goldenDeletions)
    func deletions(_ golden: (name: String, deletion: TabDeletion, bytes: String)) throws {
        #expect(try String(decoding: TabStore.fileContent(golden.deletion), as: UTF8.self) == golden.bytes)
        let directory = TemporaryDirectory()
        directory.write(golden.deletion.id + ".json", golden.bytes)
        #expect(try TabStore(directory: directory.path).entry(id: golden.deletion.id) == .deleted(golden.deletion))
    }

    @Test(
        "files from older versions: absent flags are false, an absent history is the tab's own edit, a file-backed tab has no content",
        arguments: [
            (
                #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","name":"n","language":"plain","lastModified":5,"clock":"5.0.a","content":"c"}"#,
                true
            ),
            (#"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","name":"n","language":"plain","lastModified":5,"clock":"5.0.a"}"#, false),
            (
                #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","name":"n","language":"plain","lastModified":5,"clock":"5.0.a","fileURL":"/f"}"#,
                true
            ),
            (#"{"id":"not-an-id","name":"n","language":"plain","lastModified":5,"clock":"5.0.a","content":"c"}"#, false),
            (
                #"{"id":"0f8fad5b-d9cb-469f-a165-70867728950e","name":"n","language":"plain","lastModified":5,"clock":"x","content":"c"}"#,
                false
            ),
        ])
    func older(_ file: (text: String, readable: Bool)) throws {
        let directory = TemporaryDirectory()
        let id = "0f8fad5b-d9cb-469f-a165-70867728950e"
        directory.write(id + ".json", file.text)
        let store = TabStore(directory: directory.path)
        guard file.readable else {
            #expect(throws: (any Error).self) { try store.entry(id: id) }
            return
        }
        let tab = try #require(try store.tab(id: id))
        #expect(!tab.nameLocked && !tab.languageLocked && tab.sync == nil)
        #expect(tab.history == EditHistory([HybridTimestamp("5.0.a")!]))
        #expect(tab.content == (tab.fileURL == nil ? "c" : ""))
    }

    /// Files whose every optional key is present or absent, with text that must be escaped.
    static let writerCases: [TabFile] = [
        TabFile(
            id: "a", name: "", nameLocked: nil, language: "plain", languageLocked: nil, lastModified: -1, clock: "1.0.d", fileURL: nil,
            content: nil, history: nil),
        TabFile(
            id: "b", name: "é\u{301}\u{2028}\"\\/\u{0}\u{1F}\u{7F}😀", nameLocked: false, language: "swift", languageLocked: true,
            lastModified: .max, clock: "2.3.e", fileURL: "/home/u/notes.md", content: nil,
            sync: .init(tag: "t", ancestor: "line 1\nline 2\r\n\t", clock: nil), history: []),
        TabFile(
            id: "c", name: "n", nameLocked: true, language: "", languageLocked: false, lastModified: 0, clock: "", fileURL: nil,
            content: String(repeating: "lorem ipsum \u{05D0}\u{0627} ", count: 500), sync: .init(tag: "", ancestor: "", clock: "c"),
            history: ["1.0.a", "2.0.b", ""]),
        TabFile(
            id: "d", name: "n", nameLocked: true, language: "rust", languageLocked: true, lastModified: 3, clock: "3.0.d",
            nameClock: "1.0.a", languageClock: "2.0.\"b", fileURL: nil, content: "c", history: ["3.0.d"]),
    ]

    @Test("the hand-written writer writes the bytes the encoder writes", arguments: writerCases.indices)
    func writerAgrees(_ index: Int) throws {
        let file = Self.writerCases[index]
        #expect(file.prettyBytes == (try JSONCoding.encodeValue(file, keys: .asEncoded).prettySerializedBytes()))
    }
}

import Testing

@testable import ItsypadStore
@testable import ItsypadSupport

/// How `import --from` reads clipman's history file and CopyQ's dump: the entries, newest first,
/// the items it leaves out, and the documents it refuses whole.
@Suite("Store: other tools' histories")
struct ForeignHistoryTests {
    static func history(_ texts: [String], omitted: [(String, ForeignHistory.Omission)] = []) -> ForeignHistory {
        var history = ForeignHistory()
        history.entries = texts.map { ForeignHistory.Entry(text: $0) }
        history.omitted = omitted.map { (item: $0.0, why: $0.1) }
        return history
    }

    static let clipmanAccepted: [(String, String, ForeignHistory)] = [
        ("the oldest comes first in the file, last in the history", #"["old","new"]"#, history(["new", "old"])),
        ("newlines, escapes and non-ASCII text stay as they are", #"["a\nb\t\u00e9 ✓"]"#, history(["a\nb\té ✓"])),
        ("an empty history", "[]", history([])),
        ("null, as Go writes an empty list", "null", history([])),
        (
            "empty and blank entries are left out, named by their place", #"["kept",""," \n"]"#,
            history(["kept"], omitted: [(".[2]", .blank), (".[1]", .blank)])
        ),
        ("an entry over the limit is left out", #"["0123456789ABC","ok"]"#, history(["ok"], omitted: [(".[0]", .tooLarge(bytes: 13))])),
        ("an entry at the limit is kept", #"["0123456789AB"]"#, history(["0123456789AB"])),
    ]

    @Test("a clipman history imports its entries", arguments: clipmanAccepted)
    func clipman(_ example: (name: String, file: String, expected: ForeignHistory)) throws {
        #expect(try Array(example.file.utf8).withUnsafeBufferPointer { try ClipmanHistory.parse($0, maxBytes: 12) } == example.expected)
    }

    static let clipmanRefused: [(String, [UInt8], String)] = [
        ("an object", Array(#"{"a":"b"}"#.utf8), "not a clipman history (a JSON array of strings)"),
        ("a string", Array(#""text""#.utf8), "not a clipman history (a JSON array of strings)"),
        ("a number among the strings", Array(#"["a",1]"#.utf8), "not a clipman history: .[1] is not a string"),
        ("a nested array", Array(#"[["a"]]"#.utf8), "not a clipman history: .[0] is not a string"),
        ("null among the strings", Array(#"["a",null]"#.utf8), "not a clipman history: .[1] is not a string"),
        ("invalid UTF-8 in a string", [0x5B, 0x22, 0x61, 0xFF, 0x22, 0x5D], "invalid UTF-8 in string at byte"),
        ("a lone surrogate", Array(#"["\ud800"]"#.utf8), "at byte"),
        ("a truncated file", Array(#"["a","b"#.utf8), "at byte"),
        ("two documents", Array(#"["a"]["b"]"#.utf8), "unexpected data after the JSON value"),
    ]

    @Test("a document that is not a clipman history is refused whole", arguments: clipmanRefused)
    func clipmanRefusal(_ example: (name: String, file: [UInt8], message: String)) {
        do {
            _ = try example.file.withUnsafeBufferPointer { try ClipmanHistory.parse($0, maxBytes: 100) }
            Issue.record("accepted \(example.name)")
        } catch {
            #expect("\(ItsypadError.wrapping(error).message)".contains(example.message), "\(error)")
        }
    }

    static func base64(_ text: String) -> String { Base64.encode(Array(text.utf8)) }

    @Test func aCopyQDumpGivesTextsByRowAndNamesTheRest() throws {
        let dump = """
            {"tab":"&clipboard","items":[
            {"types":["text/plain"],"pinned":false,"text":"\(Self.base64("new\nline"))"},
            {"types":["image/png","application/x-copyq-owner-window-title"],"pinned":false},
            {"types":["text/plain","application/x-copyq-item-pinned"],"pinned":true,"text":"\(Self.base64("pinned"))"},
            {"types":["text/plain"],"pinned":false,"text":"\(Base64.encode([0x61, 0xFF]))"},
            {"types":["text/plain"],"pinned":false,"size":5000},
            {"types":["text/plain"],"pinned":false,"text":"\(Self.base64(" "))"},
            {"types":["text/html","text/uri-list"],"pinned":false},
            {"types":["text/plain"],"pinned":false,"text":"\(Self.base64("bin\u{0}ary"))"}
            ]}
            """
        let (tab, history) = try CopyQHistory.parse(Array(dump.utf8), maxBytes: 100)
        #expect(tab == "&clipboard")
        #expect(
            history.entries == [
                ForeignHistory.Entry(text: "new\nline"), ForeignHistory.Entry(text: "pinned", pinned: true),
                ForeignHistory.Entry(text: "bin\u{0}ary"),
            ])
        #expect(
            history.omitted.map { "\($0.item): \($0.why)" } == [
                "row 1: notText([\"image/png\"])", "row 3: notUTF8", "row 4: tooLarge(bytes: 5000)", "row 5: blank",
                "row 6: notText([\"text/html\", \"text/uri-list\"])",
            ])
    }

    static let copyqRefused: [(String, String)] = [
        ("nothing", ""),
        ("a message instead of the dump", "ScriptError: SyntaxError"),
        ("no items", #"{"tab":"t"}"#),
        ("an item without types", #"{"tab":"t","items":[{"text":"YQ=="}]}"#),
        ("text that is not base64", #"{"tab":"t","items":[{"types":[],"text":"%%%"}]}"#),
        ("a truncated dump", #"{"tab":"t","items":[{"types":[],"text":"YQ=="}"#),
    ]

    @Test("output that is not the script's dump is refused whole", arguments: copyqRefused)
    func copyqRefusal(_ example: (name: String, output: String)) {
        #expect(throws: ItsypadError.failure("copyq printed something other than its items; nothing was imported")) {
            _ = try CopyQHistory.parse(Array(example.output.utf8), maxBytes: 100)
        }
    }
}

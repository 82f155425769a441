import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

/// `sync/pending.log` is written and read from bytes on the hot paths (`clip add`, replay of a long
/// queue): the hand-written writer and reader must agree with `PendingLogLine`, the format's definition.
@Suite("Store: pending log lines")
struct PendingLogLineTests {
    static let clip = "0f8fad5b-d9cb-469f-a165-70867728950e"

    static let changes: [(String, RecordKey, Int?, String?, Bool, String)] = [
        ("save", RecordKey(.clip, clip), nil, nil, false, #"{"op":"save","type":"ClipboardEntry","id":"\#(clip)"}"#),
        ("delete", RecordKey(.tab, "t1"), nil, "42", true, #"{"op":"delete","type":"ScratchTab","id":"t1","tag":"42","hard":true}"#),
        (
            "done", RecordKey(.setting, "sync.enabled"), 9_007_199_254_740_992, nil, false,
            #"{"op":"done","type":"Setting","id":"sync.enabled","v":9007199254740992}"#
        ),
        (
            "delete", RecordKey(.tab, "é😀\"\\\n\u{1}"), 0, "tag \"x\"\t", false,
            #"{"op":"delete","type":"ScratchTab","id":"é😀\"\\\n\u0001","v":0,"tag":"tag \"x\"\t"}"#
        ),
    ]

    static func encoded(_ line: PendingLogLine) throws -> String {
        try JSONCoding.encodeValue(line, keys: .asEncoded).serialized() + "\n"
    }

    @Test("a change line is written as before, and as the Codable type writes it", arguments: changes)
    func changeLines(_ change: (op: String, key: RecordKey, version: Int?, tag: String?, hard: Bool, golden: String)) throws {
        var bytes: [UInt8] = []
        PendingQueue.appendLine(change.op, change.key, version: change.version, tag: change.tag, hard: change.hard, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == change.golden + "\n")
        let line = PendingLogLine(
            op: change.op, type: change.key.type.rawValue, id: change.key.name, v: change.version.map(Int64.init), tag: change.tag,
            hard: change.hard ? true : nil)
        #expect(try Self.encoded(line) == change.golden + "\n")
        #expect(try JSONCoding.decode(PendingLogLine.self, from: Array(change.golden.utf8)) == line)
    }

    @Test func aClipLineFromItsPackedIdIsTheSame() throws {
        var bytes: [UInt8] = []
        PendingQueue.appendLine("save", clip: try #require(PackedID(canonical: Self.clip)), to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == Self.changes[0].5 + "\n")
    }

    @Test(
        "the base line is the Codable type's form, padded before its end",
        arguments: [(0, nil, #"{"op":"base","bytes":0"#), (123_456, "q-1", #"{"op":"base","queue":"q-1","bytes":123456"#)]
            as [(Int, String?, String)])
    func baseLines(_ base: (bytes: Int, identity: String?, golden: String)) throws {
        let written = String(decoding: PendingQueue.baseLine(bytes: base.bytes, identity: base.identity), as: UTF8.self)
        #expect(written.hasPrefix(base.golden) && written.hasSuffix("}\n"))
        #expect(written.filter { $0 != " " } == base.golden + "}\n")
        let line = PendingLogLine(op: "base", queue: base.identity, bytes: Int64(base.bytes))
        #expect(try Self.encoded(line) == base.golden + "}\n")
        #expect(try JSONCoding.decode(PendingLogLine.self, from: Array(written.utf8)) == line)
    }

    /// Lines the fast reader takes and lines it leaves to the Codable type: both ways must agree.
    static let readerCases: [String] =
        changes.map(\.5) + [
            #"{"op":"save","type":"ClipboardEntry","id":"0F8FAD5B-D9CB-469F-A165-70867728950E"}"#,
            #"{"op":"save","type":"ScratchTab","id":"t","v":9007199254740993}"#,
            #"{"op":"save","type":"ScratchTab","id":"t","v":-1}"#,
            #"{"op":"save","type":"ScratchTab","id":"t","v":1.5}"#,
            #"{"op":"save","type":"ScratchTab","id":"t","hard":false}"#,
            #"{"op":"save","type":"NoSuchType","id":"t"}"#,
            #"{"op":"save","type":"bad/type","id":"t"}"#,
            #"{"op":"later","type":"ScratchTab","id":"t"}"#,
            #"{"type":"ScratchTab","op":"save","id":"t","extra":[1]}"#,
            #"{"op":"save","type":"ScratchTab"}"#,
            #"{"op":"base","queue":"q","bytes":12      }"#,
            #"{"op":"save","type":"ScratchTab","id":"t","tag":5}"#,
            #"{"op":"save","type":"ScratchTab","id":"t""#,
            "[]",
        ]

    @Test("the replay's fast reader reads every line as the Codable type does", arguments: readerCases)
    func fastReaderAgrees(_ text: String) {
        let bytes = ArraySlice(Array(text.utf8))
        #expect(PendingLine(bytes) == PendingLine(decoding: bytes))
    }

}

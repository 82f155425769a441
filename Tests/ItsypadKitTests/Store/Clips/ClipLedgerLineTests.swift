import Testing

@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

/// `sync/clips.log` is kept across upgrades: these lines were written by the release before
/// `ClipLedgerLine`, and must stay readable and written the same both ways.
@Suite("Store: clip sync ledger lines")
struct ClipLedgerLineTests {
    static let a = "0f8fad5b-d9cb-469f-a165-70867728950e"
    static let b = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
    static let clock = HybridTimestamp("1700000000000.0.deva")!
    static let later = HybridTimestamp("1700000005000.2.devb")!

    static let golden = """
        {"id":"\(a)","op":"set","tag":"t\\"1\\"\\n\\u0001é","pinned":true,"history":["1700000000000.0.deva","1700000005000.2.devb"],"change":"1700000005000.2.devb"}
        {"id":"\(b)","op":"set","history":[]}
        {"id":"\(b)","op":"change","change":"1700000000000.0.deva"}
        {"id":"\(a)","op":"rm"}
        {"id":"\(a)","op":"set","tag":"9223372036854775807","pinned":false,"history":["1700000000000.0.deva"]}

        """

    @Test func linesAreWrittenAsBeforeAndReadBackTheSame() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/clips.log"
        let ledger = ClipSyncLedger(path: path)
        try ledger.set([
            (
                Self.a,
                ClipSyncLedger.Entry(
                    tag: "t\"1\"\n\u{1}é", pinned: true, history: EditHistory([Self.clock, Self.later]), change: Self.later)
            ),
            (Self.b, ClipSyncLedger.Entry()),
        ])
        try ledger.recordChange(ids: [Self.b], clock: Self.clock)
        try ledger.forget([Self.a])
        try ledger.set([(Self.a, ClipSyncLedger.Entry(tag: "9223372036854775807", pinned: false, history: EditHistory([Self.clock])))])
        #expect(String(decoding: try #require(try FileSystem.read(path)), as: UTF8.self) == Self.golden)

        let other = directory.path + "/written-before.log"
        try FileSystem.writeAtomically(other, Array(Self.golden.utf8))
        let expected: [String: ClipSyncLedger.Entry] = [
            Self.a: ClipSyncLedger.Entry(tag: "9223372036854775807", pinned: false, history: EditHistory([Self.clock])),
            Self.b: ClipSyncLedger.Entry(change: Self.clock),
        ]
        #expect(try ClipSyncLedger(path: other).all() == expected)
        #expect(try ClipSyncLedger(path: other).entries([Self.b]) == [Self.b: expected[Self.b]!])
    }

    @Test func theBaseLineIsTheCodableTypesForm() throws {
        #expect(
            String(decoding: try ClipSyncLedger.serialized([ClipLedgerLine(op: "base", bytes: 1 << 40)]), as: UTF8.self)
                == #"{"op":"base","bytes":1099511627776}"# + "\n")
    }

    @Test(
        "lines older or damaged: a bad history is empty, a line of another form is skipped, the last line for an id wins",
        arguments: [
            (#"{"id":"\#(a)","op":"set","tag":"x","history":["bad"]}"#, "x 0"),
            (#"{"id":"\#(a)","op":"set","tag":"x"}"#, "x 0"),
            (#"{"id":"\#(a)","op":"set","tag":5}"#, "none"),
            (#"{"id":"\#(a)","op":"change","change":"bad"}"#, "none"),
            (#"{"id":"\#(a)","op":"later","tag":"x"}"#, "none"),
            (#"{"id":"\#(a)","op":"set","tag":"x","pinned":true,"history":["5.0.a"],"extra":{}}"#, "x 1"),
        ])
    func olderLines(_ line: (text: String, summary: String)) throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/clips.log"
        try FileSystem.writeAtomically(path, Array((line.text + "\n").utf8))
        let entry = try ClipSyncLedger(path: path).all()[Self.a]
        #expect(entry.map { "\($0.tag ?? "-") \($0.history.strings.count)" } ?? "none" == line.summary)
    }
}

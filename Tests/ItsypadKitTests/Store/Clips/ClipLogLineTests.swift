import Testing

@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

/// `clips/log` is written and read from bytes on the hot paths (`clip add`, clear, the listings):
/// the hand-written writers and readers must agree with `ClipLogLine`, the format's definition, and
/// write what the release before it wrote.
@Suite("Store: clip log lines")
struct ClipLogLineTests {
    static let id = "0f8fad5b-d9cb-469f-a165-70867728950e"

    static let adds: [(ClipEntry, String)] = [
        (
            ClipEntry(id: id, text: "hello", timestamp: 1_700_000_000_000),
            #"{"op":"add","id":"\#(id)","ts":1700000000000,"pinned":false,"text":"hello"}"#
        ),
        (
            ClipEntry(
                id: id, text: "é😀\"\\\n\t\u{1}\u{7F}\u{2028}</", timestamp: Time.validRange.upperBound, pinned: true, localOnly: .secret),
            #"{"op":"add","id":"\#(id)","ts":253402300799999,"pinned":true,"local":"secret","text":"é😀\"\\\n\t\u0001\#u{7F}\#u{2028}</"}"#
        ),
        (
            ClipEntry(id: id, text: "", timestamp: 0, localOnly: .requested),
            #"{"op":"add","id":"\#(id)","ts":0,"pinned":false,"local":"local","text":""}"#
        ),
        (
            ClipEntry(
                id: id, text: "", timestamp: 5, pinned: true, localOnly: .large,
                binary: ClipBinary(type: "image/png", size: 24576, sha256: digest, width: 640, height: 480)),
            #"{"op":"add","id":"\#(id)","ts":5,"pinned":true,"local":"large","type":"image/png","size":24576,"sha256":"\#(digest)","width":640,"height":480,"text":""}"#
        ),
        (
            ClipEntry(id: id, text: "", timestamp: 6, binary: ClipBinary(type: "application/pdf", size: 1, sha256: digest)),
            #"{"op":"add","id":"\#(id)","ts":6,"pinned":false,"type":"application/pdf","size":1,"sha256":"\#(digest)","text":""}"#
        ),
    ]
    static let digest = String(repeating: "0123456789abcdef", count: 4)

    static func encoded(_ line: ClipLogLine) throws -> String {
        try JSONCoding.encodeValue(line, keys: .asEncoded).serialized() + "\n"
    }

    @Test("an add line is written as before and as the Codable type writes it; the listing's reader agrees with it", arguments: adds)
    func addLines(_ add: (entry: ClipEntry, golden: String)) throws {
        let written = try ClipStore.addLine(add.entry)
        #expect(String(decoding: written, as: UTF8.self) == add.golden + "\n")
        let line = ClipLogLine(
            op: "add", id: add.entry.id, ts: add.entry.timestamp, pinned: add.entry.pinned, local: add.entry.localOnly?.rawValue,
            type: add.entry.binary?.type, size: add.entry.binary.map { Int64($0.size) }, sha256: add.entry.binary?.sha256,
            width: add.entry.binary?.width.map(Int64.init), height: add.entry.binary?.height.map(Int64.init), text: add.entry.text)
        #expect(try Self.encoded(line) == add.golden + "\n")
        let decoded = try JSONCoding.decode(ClipLogLine.self, from: Array(written.dropLast()))
        #expect(decoded == line)
        let header = try #require(written.dropLast().withUnsafeBufferPointer(ClipLineHeader.init))
        #expect(written.dropLast().withUnsafeBufferPointer(header.timestamp) == decoded.ts && header.pinned == decoded.pinned)
        #expect(header.localOnly == decoded.local.map { LocalOnlyReason(rawValue: $0) ?? .requested })
        #expect(header.binary?.size == decoded.size.map(Int.init) && header.binary?.width == decoded.width.map(Int.init))
        #expect(header.binary?.height == decoded.height.map(Int.init))
        #expect(header.binary.map { String(decoding: written[$0.type], as: UTF8.self) } == decoded.type)
        #expect(header.binary.map { String(decoding: written[$0.digest], as: UTF8.self) } == decoded.sha256)
        #expect(written.dropLast().withUnsafeBufferPointer(ClipLineHeader.id)?.string == decoded.id)
    }

    /// An import writes its add lines from the export's escaped text (`appendAddLine`), beside
    /// `addLine`, which encodes an entry: both must write the same bytes.
    @Test("an import's add line is the entry's add line", arguments: adds)
    func escapedAddLines(_ add: (entry: ClipEntry, golden: String)) throws {
        var written: [UInt8] = []
        ClipStore.appendAddLine(try #require(EscapedClip(add.entry)), to: &written)
        #expect(try written == ClipStore.addLine(add.entry))
    }

    @Test func anImportsAddLineIsTheEntrysOnRandomTexts() throws {
        var generator = SeededGenerator(seed: 40)
        let scalars: [Unicode.Scalar] = ["a", " ", "\"", "\\", "/", "\n", "\u{0}", "\u{1F}", "\u{7F}", "é", "\u{2028}", "合", "😀"]
        for round in 0..<500 {
            let length = Int(generator.next() % 24)
            var text = String.UnicodeScalarView()
            for _ in 0..<length { text.append(scalars[Int(generator.next() % UInt64(scalars.count))]) }
            let entry = ClipEntry(
                id: Identifier.make(), text: String(text), timestamp: Int64(generator.next() % 253_402_300_800_000),
                pinned: round % 2 == 0, localOnly: round % 3 == 0 ? .secret : nil)
            var written: [UInt8] = []
            ClipStore.appendAddLine(try #require(EscapedClip(entry)), to: &written)
            #expect(try written == ClipStore.addLine(entry), "\(entry)")
        }
    }

    @Test func removeAndPinLinesAreTheCodableTypesForm() throws {
        var removal: [UInt8] = []
        ClipStore.appendRemoveLine(try #require(PackedID(canonical: Self.id)), to: &removal)
        #expect(String(decoding: removal, as: UTF8.self) == #"{"op":"rm","id":"\#(Self.id)"}"# + "\n")
        #expect(try Self.encoded(ClipLogLine(op: "rm", id: Self.id)) == String(decoding: removal, as: UTF8.self))
        #expect(
            String(decoding: try ClipStore.pinLine(id: Self.id, true), as: UTF8.self) == #"{"op":"pin","id":"\#(Self.id)","pinned":true}"#
                + "\n")
    }

    @Test func whatTheStoreWritesReadsBackThroughTheCodableTypeAndTheStore() throws {
        let directory = TemporaryDirectory()
        let store = try ClipStore(directory: directory.path + "/clips")
        for (entry, _) in Self.adds.dropFirst() where entry.binary == nil {
            var entry = entry
            entry.id = Identifier.make()
            _ = try store.add(entry, maxEntries: 10)
            #expect(try store.live(ids: [entry.id])[entry.id] == entry)
        }
        let log = try #require(try FileSystem.read(directory.path + "/clips/log"))
        let lines = try log.split(separator: 0x0A).map { try JSONCoding.decode(ClipLogLine.self, from: Array($0)) }
        #expect(Set(lines.compactMap(\.text)) == Set(Self.adds.dropFirst().filter { $0.0.binary == nil }.map(\.0.text)))
    }
}

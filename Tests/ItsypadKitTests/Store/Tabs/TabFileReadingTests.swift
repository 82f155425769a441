import Testing

@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

/// The tab file reader that skips the decoder (`TabStore.read`) against the Codable types
/// (`TabStore.decoded`): the same entry and stamp where they decode, nil where they throw, for
/// valid tab and deletion files and every one-step mutation of them; and a refused file is
/// refused with the decoder's error.
@Suite("Store: tab files read from their bytes")
struct TabFileReadingTests {
    static let id = "0f8fad5b-d9cb-469f-a165-70867728950e"

    static let files = [
        // Every member, hostile strings: controls, U+2028 and U+2029 raw and escaped, escapes, emoji.
        #"""
        {"id":"0f8fad5b-d9cb-469f-a165-70867728950e","name":"t\u0001\u2028 \u2029😀\ud83d\ude00\"\\\/\b\f\n\r\t",
         "nameLocked":true,"language":"markdown","languageLocked":false,"lastModified":1700000005000,
         "clock":"1700000005000.2.devb","nameClock":"1700000000000.0.deva","languageClock":"1700000001000.1.devc",
         "content":"line\nnext\u0000é — \u00e9 \uD834\uDD1E","stamp":"s-1",
         "sync":{"tag":"42","ancestor":"was\u2028","clock":"1700000000000.0.deva"},
         "history":["1700000000000.0.deva","1700000005000.2.devb"]}
        """#,
        // A file-backed tab (no content), no stamp, numbers at the edges of the valid times.
        #"""
        {"id":"7C9E6679-7425-40DE-944B-E07FC1F90AE7","name":"","language":"plain","lastModified":0,
         "clock":"0.0.a","fileURL":"/home/u/notes.txt","sync":{"tag":"","ancestor":""},"extra":{"a":[1,null]}}
        """#,
        #"""
        {"id":"0f8fad5b-d9cb-469f-a165-70867728950e","name":"x","nameLocked":null,"language":"swift","languageLocked":null,
         "lastModified":253402300799999,"clock":"253402300799999.65535.zz","nameClock":null,"languageClock":null,
         "fileURL":null,"content":"","stamp":null,"sync":null,"history":null,"deleted":false}
        """#,
        #"""
        {"id":"0f8fad5b-d9cb-469f-a165-70867728950e","name":"n","language":"plain","lastModified":1.7e12,
         "clock":"1700000000000.0.deva","content":"\u0041\ud83d\ude00","history":[]}
        """#,
        // Deletion files.
        #"""
        {"id":"0f8fad5b-d9cb-469f-a165-70867728950e","deleted":true,"tag":"dev-a:3",
         "history":["1700000000000.0.deva","1700000005000.2.devb"]}
        """#,
        #"""
        {"id":"0f8fad5b-d9cb-469f-a165-70867728950e","deleted":true,"tag":null,"history":null,"name":"kept"}
        """#,
    ]

    /// An entry and its stamp, compared.
    struct Read: Equatable {
        var entry: TabStore.Entry
        var stamp: String?
    }

    static func read(_ bytes: [UInt8]) -> Read? { TabStore.read(bytes).map { Read(entry: $0.entry, stamp: $0.stamp) } }

    static func decoded(_ bytes: [UInt8]) -> Read? {
        (try? TabStore.decoded(bytes, path: "t.json")).map { Read(entry: $0.entry, stamp: $0.stamp) }
    }

    /// What a read gives: an entry, or the error that refuses the file.
    enum Outcome: Equatable {
        case read(Read)
        case refused(String)

        init(_ read: () throws -> (entry: TabStore.Entry, stamp: String?)) {
            do {
                let found = try read()
                self = .read(Read(entry: found.entry, stamp: found.stamp))
            } catch { self = .refused("\(error)") }
        }

        var value: Read? { if case .read(let read) = self { return read }; return nil }
    }

    /// What the store reads: `read`, else the decoder, and the error it throws.
    static func entry(_ bytes: [UInt8]) -> Outcome { Outcome { try TabStore.entry(in: bytes, path: "t.json") } }

    @Test("a tab file reads from its bytes as the decoder reads it", arguments: files.indices)
    func tabFileFromBytes(index: Int) throws {
        let counts = VersionDocumentReadingTests.readerAgrees(
            on: try JSONValue.parse(Self.files[index]), read: { Self.entry($0).value }, decode: Self.decoded,
            direct: Self.read)
        #expect(counts.accepted > 20)
        // Every file the decoder accepts reads straight from its bytes, but where a member of the
        // other kind of file (`deleted` in a tab's, `name` in a deletion's) has an unexpected type:
        // the decoder ignores it, the reader leaves the file to the decoder. No writer writes one.
        if [2, 5].contains(index) {
            #expect(counts.direct * 2 > counts.accepted, "\(counts)")
        } else {
            #expect(counts.direct == counts.accepted, "\(counts)")
        }
        #expect(Self.read(Array(Self.files[index].utf8)) != nil)
        #expect(Self.read(Array(Self.files[index].utf8)) == Self.decoded(Array(Self.files[index].utf8)))
    }

    @Test("every file the writer writes reads from its bytes", arguments: files.indices)
    func writtenFiles(index: Int) throws {
        let entry = try #require(Self.decoded(Array(Self.files[index].utf8))).entry
        let bytes: [UInt8]
        switch entry {
        case .live(let tab): bytes = try TabStore.fileContent(tab)
        case .deleted(let deletion): bytes = try TabStore.fileContent(deletion)
        }
        #expect(Self.read(bytes) != nil)
        #expect(Self.read(bytes) == Self.decoded(bytes))
    }

    /// Byte-level changes a `JSONValue` cannot express: escaped and non-ASCII keys, a repeated key,
    /// deep nesting, every truncation, garbage after. A file the decoder refuses is refused with its error.
    @Test("a tab file's odd bytes read as the decoder reads them, and fail as it fails")
    func oddBytes() throws {
        let valid = Self.files[0]
        var texts = [
            valid.replacingOccurrences(of: #""name""#, with: #""n\u0061me""#),
            valid.replacingOccurrences(of: #""stamp""#, with: #""st\u0061mp""#),
            valid.replacingOccurrences(of: #""stamp""#, with: #""\u212Astamp""#),
            valid.replacingOccurrences(of: #""id":"0f8fad5b"#, with: #""id":"0f8fad5b-d9cb-469f-a165-70867728950e","id":"0f8fad5b"#),
            valid.replacingOccurrences(
                of: #""history""#,
                with: #""extra":"# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + #","history""#),
            valid.replacingOccurrences(
                of: #""history""#,
                with: #""extra":"# + String(repeating: "[", count: 509) + String(repeating: "]", count: 509) + #","history""#),
            valid.replacingOccurrences(of: #""lastModified":1700000005000"#, with: #""lastModified":-1"#),
            valid.replacingOccurrences(of: #""lastModified":1700000005000"#, with: #""lastModified":253402300800000"#),
            valid.replacingOccurrences(of: #""lastModified":1700000005000"#, with: #""lastModified":9223372036854775808"#),
            valid.replacingOccurrences(of: #""lastModified":1700000005000"#, with: #""lastModified":-0"#),
            valid.replacingOccurrences(of: #""lastModified":1700000005000"#, with: #""lastModified":1700000005000.5"#),
            valid.replacingOccurrences(of: #""clock":"1700000005000.2.devb""#, with: #""clock":"not a clock""#),
            valid.replacingOccurrences(of: #""content":"#, with: #""content":"\ud800","x":"#),
            valid.replacingOccurrences(of: #"was\u2028"#, with: "was\u{1}"),
            valid.replacingOccurrences(of: "0f8fad5b-d9cb", with: "0f8fad5b_d9cb"),
            Self.files[4].replacingOccurrences(of: "0f8fad5b-d9cb", with: "0f8fad5b_d9cb"),
            Self.files[4].replacingOccurrences(of: #""deleted":true"#, with: #""deleted":"true""#),
            Self.files[4].replacingOccurrences(of: #""deleted":true"#, with: #""deleted":1"#),
            valid + " ", valid + " x", " \n" + valid, "[" + valid + "]", valid.replacingOccurrences(of: ",", with: " ,\n "), "", "null",
        ]
        texts += (0..<valid.utf8.count).map { String(decoding: valid.utf8.prefix($0), as: UTF8.self) }
        for text in texts {
            let bytes = Array(text.utf8)
            let decoded = Outcome { try TabStore.decoded(bytes, path: "t.json") }
            #expect(Self.entry(bytes) == decoded, "\(text)")
            if let read = Self.read(bytes) { #expect(.read(read) == decoded, "\(text)") }
        }
        #expect(Self.decoded(Array(texts[0].utf8)) != nil && Self.read(Array(texts[0].utf8)) == nil, "an escaped key is the decoder's")
        #expect(Self.decoded(Array(texts[2].utf8)) != nil, "U+212A is not K here: an unknown member")
        #expect(Self.decoded(Array(texts[3].utf8)) == nil, "a repeated key")
    }
}

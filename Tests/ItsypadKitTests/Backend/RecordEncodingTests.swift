import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadSupport

/// The hand-written encoders of records, version documents, journal changes and sealed content
/// (`BackendRecord+Encoding.swift`) against `JSONCoding`: the same bytes for every value of the
/// table, and those bytes read back by the decoder (and by the record file reader) as the value.
@Suite("Record encoding")
struct RecordEncodingTests {
    /// Strings a record may hold that an encoder can get wrong.
    static let hostileStrings: [String] = [
        "", "plain", "quote \" and backslash \\ and both \\\"", "\\u0041 written out", "/ slash",
        String((0..<32).map { Character(Unicode.Scalar(UInt8($0))) }), "\u{7F} delete", "tab\tnewline\ncarriage\r",
        "line separator \u{2028} paragraph separator \u{2029}", "nul \u{0} inside", "é e\u{301} ß straße",
        "emoji 😀 👩‍👩‍👧‍👦 🇫🇷 1️⃣", "BOM \u{FEFF} zero width \u{200B}", "\u{10FFFF} last scalar", "сборка 中文 עברית",
        String(repeating: "long line with \"quotes\" and \\ ", count: 40_000),
        String(repeating: "\u{1}", count: 70_000),
    ]

    static let doubles: [Double] = [
        0, -0.0, 0.5, -1.25, 1e15, 999_999_999_999_999, 1e300, -1e-300, 0.1 + 0.2, .leastNonzeroMagnitude,
        .greatestFiniteMagnitude, 123_456_789.125, 3,
    ]

    static var records: [BackendRecord] {
        var fields: [String: FieldValue] = [
            "content": .string(hostileStrings[2]), "a": .int64(.min), "B": .int64(.max), "_x": .timestamp(0),
            "z9": .timestamp(1_767_225_600_000), "list": .stringList(hostileStrings), "empty": .stringList([]),
            "asset": .asset(AssetReference(fileChecksum: String(repeating: "ab", count: 32), size: 3)),
            "é": .string("a name no device writes, sorted as a String"), "a1": .string("x"), "A": .string("y"),
        ]
        for (index, number) in doubles.enumerated() { fields["d\(index)"] = .double(number) }
        var records = [
            BackendRecord(recordName: "tab-1", recordType: "ScratchTab", fields: fields),
            BackendRecord(
                recordName: "c", recordType: "Clip", recordChangeTag: "dev-a:1,dev-b:4", fields: [:],
                created: Stamp(timestamp: -1, deviceID: "a\"b"), modified: Stamp(timestamp: .max, deviceID: "")),
            BackendRecord(recordName: "m", recordType: "T", created: Stamp(timestamp: 1, deviceID: "d")),
            BackendRecord(recordName: "n", recordType: "T", modified: Stamp(timestamp: 2, deviceID: "d")),
        ]
        for (index, text) in hostileStrings.enumerated() {
            records.append(
                BackendRecord(
                    recordName: "r\(index)", recordType: "ScratchTab", recordChangeTag: text,
                    fields: ["content": .string(text), "name": .stringList([text, text])],
                    created: Stamp(timestamp: Int64(index), deviceID: text), modified: Stamp(timestamp: .min, deviceID: "dev")))
        }
        return records
    }

    static var documents: [VersionDocument] {
        records.enumerated().flatMap { index, record -> [VersionDocument] in
            let version = RecordVersion(
                record: record, version: VersionVector(tag: "dev-a:\(index + 2)")!, writer: "dev-a", isDeleted: index % 3 == 1,
                isDerived: index % 2 == 1,
                base: index % 2 == 0 ? RecordBase(version: VersionVector(tag: "dev-a:\(index + 1)")!, fields: record.fields) : nil)
            var document = VersionDocument(version, zone: index == 0 ? Self.hostileStrings[2] : "Z1")
            let plain = document
            document.base = index % 2 == 0 ? VersionDocument.BaseDocument(version: "v\u{2028}\"", fields: [:]) : nil
            return [plain, document]
        }
    }

    @Test("a record encodes by hand as JSONCoding encodes it, and reads back")
    func records() throws {
        for record in Self.records {
            let bytes = try record.encodedJSON()
            #expect(bytes == (try JSONCoding.encode(record)), "\(record.recordName)")
            #expect(try JSONCoding.decode(BackendRecord.self, from: bytes) == record, "\(record.recordName)")
            #expect(try FieldValue.encodedJSON(record.fields) == JSONCoding.encode(record.fields))
        }
    }

    @Test("a version document encodes by hand as JSONCoding encodes it, and reads back")
    func versionDocuments() throws {
        for document in Self.documents {
            let expected = try JSONCoding.encode(document)
            #expect(try document.encoded() == expected, "\(document.record.recordName)")
            #expect(try document.encoded(record: document.record.encodedJSON()) == expected)
            #expect(try JSONCoding.decode(VersionDocument.self, from: expected) == document)
            #expect(VersionDocument.read(try document.encoded()) == document, "\(document.record.recordName)")
        }
    }

    @Test("a journal change encodes by hand as JSONCoding encodes it")
    func journalChanges() throws {
        let document = Self.documents[1]
        let id = document.record.id
        let changes = [
            DeviceChange(seq: 7, op: .save, id: id, version: document),
            DeviceChange(seq: .max, op: .delete, id: RecordID(recordType: "T", recordName: "a\"\u{2028}"), version: document),
            DeviceChange(seq: 9, op: .drop, id: id, drop: DropDocument(version: "dev-a:3", coveredBy: JournalSource(device: "b", seq: 4))),
            DeviceChange(seq: 10, op: .drop, id: id, drop: DropDocument(version: "dev-a:3", coveredBy: nil)),
            DeviceChange(seq: 1, op: .checkpoint, checkpoint: CheckpointDocument(requires: ["b": 3, "a": 9])),
        ]
        for change in changes {
            let expected = try JSONCoding.encode(change)
            #expect(try change.encoded(version: change.version.map { try $0.encoded() }) == expected, "\(change.seq)")
            #expect(try JSONCoding.decode(DeviceChange.self, from: expected) == change)
        }
        let batch = DeviceBatch(
            seq: 7, device: "dev-\"a", instance: "i\u{1}", zone: "Z\u{2028}", time: 1_767_225_600_000, changes: Array(changes.prefix(2)),
            files: String(repeating: "0", count: 64))
        let line = try batch.encoded().line
        #expect(try JSONCoding.decode(DeviceBatch.self, from: Array(line.dropLast())) == batch)
    }

    @Test("sealed content encodes by hand as JSONCoding encodes it")
    func sealedContent() throws {
        for record in Self.records {
            for base in [nil, record.fields, [:]] {
                let content = VersionSealer.Content(fields: record.fields, base: base)
                #expect(try content.encodedJSON() == JSONCoding.encode(content))
            }
        }
    }

    @Test("a number with no JSON form is refused, as JSONCoding refuses it", arguments: [Double.infinity, -.infinity, .nan])
    func nonFinite(number: Double) {
        let record = BackendRecord(recordName: "x", recordType: "T", fields: ["d": .double(number)])
        #expect(throws: EncodingError.self) { try record.encodedJSON() }
        #expect(throws: EncodingError.self) { try JSONCoding.encode(record) }
    }
}

import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadSupport

@Suite("Record coding")
struct RecordCodingTests {
    @Test(
        "field values use the CloudKit Web Services form",
        arguments: [
            (FieldValue.string("hi"), #"{"type":"STRING","value":"hi"}"#),
            (FieldValue.int64(-9_223_372_036_854_775_808), #"{"type":"INT64","value":-9223372036854775808}"#),
            (FieldValue.double(0.5), #"{"type":"DOUBLE","value":0.5}"#),
            (FieldValue.timestamp(1_732_200_000_000), #"{"type":"TIMESTAMP","value":1732200000000}"#),
            (FieldValue.stringList(["a", "b"]), #"{"type":"STRING_LIST","value":["a","b"]}"#),
            (FieldValue.asset(AssetReference(fileChecksum: "ab", size: 3)), #"{"type":"ASSETID","value":{"fileChecksum":"ab","size":3}}"#),
        ])
    func fieldEncoding(value: FieldValue, json: String) throws {
        #expect(String(decoding: try JSONCoding.encode(value), as: UTF8.self) == json)
        #expect(try JSONCoding.decode(FieldValue.self, from: Array(json.utf8)) == value)
    }

    @Test("a record round-trips through its JSON file form")
    func recordRoundTrip() throws {
        let record = BackendRecord(
            recordName: "tab-1",
            recordType: "ScratchTab",
            recordChangeTag: "7",
            fields: ["name": .string("Notes"), "weights": .double(1.25), "tags": .stringList(["x"])],
            created: Stamp(timestamp: 1, deviceID: "a"),
            modified: Stamp(timestamp: 2, deviceID: "b")
        )
        let json = String(decoding: try JSONCoding.encode(record), as: UTF8.self)
        #expect(json.contains(#""created":{"deviceID":"a","timestamp":1}"#))
        #expect(json.contains(#""recordChangeTag":"7""#))
        #expect(try JSONCoding.decode(BackendRecord.self, from: Array(json.utf8)) == record)
    }

    @Test("unknown field types are rejected, not guessed")
    func unknownType() {
        #expect(throws: DecodingError.self) {
            try JSONCoding.decode(FieldValue.self, from: Array(#"{"type":"REFERENCE","value":"x"}"#.utf8))
        }
    }

    @Test(
        "record names must be safe file names",
        arguments: [
            ("tab-1", true), ("A.b_c-9", true), (String(repeating: "x", count: 250), true),
            ("", false), (".hidden", false), ("a/b", false), ("a b", false), ("ü", false), (String(repeating: "x", count: 251), false),
        ])
    func recordNames(name: String, valid: Bool) {
        #expect((NameRules.problem(with: RecordID(recordType: "ScratchTab", recordName: name)) == nil) == valid)
    }

    @Test(
        "field names follow CloudKit's rules",
        arguments: [("name", true), ("a_1", true), ("1a", false), ("_a", false), ("a-b", false), ("", false)])
    func fieldNames(name: String, valid: Bool) {
        #expect(NameRules.isFieldName(name) == valid)
    }

    @Test("tokens round-trip in both shapes")
    func tokenShapes() throws {
        let shapes = [
            InMemoryToken(zoneID: "Z", seq: 12),
            InMemoryToken(zoneID: "Z", seq: 0, fullFetchCursor: RecordID(recordType: "ScratchTab", recordName: "a.b")),
        ]
        for contents in shapes {
            #expect(try InMemoryToken(decoding: contents.token, zoneID: "Z") == contents)
        }
        #expect(shapes[0].token.rawValue == "1:Z:12")
    }

    @Test("a token of another zone is zoneChanged; an unreadable one is tokenExpired")
    func tokenErrors() {
        #expect(throws: BackendError.zoneChanged) { try InMemoryToken(decoding: ChangeToken(rawValue: "1:OTHER:5"), zoneID: "Z") }
        for raw in ["", "garbage", "2:Z:5", "1:Z:-1", "1:Z:5:at:3:1", "1:Z:5:after:bad", "1:Z:5:extra"] {
            #expect(throws: BackendError.tokenExpired) { try InMemoryToken(decoding: ChangeToken(rawValue: raw), zoneID: "Z") }
        }
    }

    @Test("a change token is stored as a plain JSON string")
    func tokenCodable() throws {
        let token = ChangeToken(rawValue: "1:Z:3")
        #expect(String(decoding: try JSONCoding.encode(token), as: UTF8.self) == #""1:Z:3""#)
        #expect(try JSONCoding.decode(ChangeToken.self, from: Array(#""1:Z:3""#.utf8)) == token)
    }
}

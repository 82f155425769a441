import Testing
@testable import ItsypadKit

@Suite struct JSONTests {
    @Test(arguments: [
        "null", "true", "false", "0", "-12", "3.5", "\"a\\nb\\\"c\\\\\"", "[]", "{}", "[1,\"x\",{\"k\":[true,null]}]",
        "\"\\u00e9\\ud83d\\ude00\"", "{\"a\":1,\"b\":{\"c\":\"d\"}}",
    ])
    func roundTrips(_ text: String) throws {
        let value = try JSONValue.parse(text)
        #expect(try JSONValue.parse(value.serialized()) == value)
        #expect(try JSONValue.parse(value.prettySerialized()) == value)
    }

    @Test func keepsKeyOrderAndEscapesControlCharacters() throws {
        let value = JSONValue.object([("z", .integer(1)), ("a", .string("tab\there\u{01}"))])
        #expect(value.serialized() == "{\"z\":1,\"a\":\"tab\\there\\u0001\"}")
    }

    @Test func decodesEscapesAndSurrogates() throws {
        #expect(try JSONValue.parse("\"\\u00e9\\ud83d\\ude00\"") == .string("é😀"))
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\"}", "tru", "\"unterminated", "{\"a\":1} x", "\"\\ud800\"", "01x", "\"\u{01}\""])
    func rejectsInvalid(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
    }

    @Test func rejectsInvalidUTF8InStrings() {
        #expect(throws: JSONParseError.self) { try JSONValue.parse([0x22, 0xFF, 0xFE, 0x22]) }
    }

    @Test func integersStayExact() throws {
        #expect(try JSONValue.parse("1732200000123").int64Value == 1_732_200_000_123)
    }
}

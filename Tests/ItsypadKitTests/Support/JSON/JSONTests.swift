import Testing

@testable import ItsypadSupport

@Suite struct JSONTests {
    @Test(arguments: [
        "null", "true", "false", "0", "-12", "3.5", "\"a\\nb\\\"c\\\\\"", "[]", "{}", "[1,\"x\",{\"k\":[true,null]}]",
        "\"\\u00e9\\ud83d\\ude00\"", "{\"a\":1,\"b\":{\"c\":\"d\"}}", "-0.5e-3", "1E22", "9223372036854775807", "-9223372036854775808",
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
        #expect(try JSONValue.parse("\"a\\u0000b\\/\"") == .string("a\u{0}b/"))
    }

    @Test(arguments: [
        // Structure
        "", " ", "{", "[1,]", "{\"a\":1,}", "{\"a\"}", "tru", "\"unterminated", "{\"a\":1} x", "[1] [2]", "\u{FEFF}{}",
        "[1,,2]", "{\"a\" 1}", "{a:1}", "{'a':1}", "[1]]", "// c\n1", "1 /* c */",
        // Numbers
        "01", "-01", "1.", "-.5", ".5", "+1", "1e", "1e+", "1E-", "-", "--1", "0x10", "1 000", "NaN", "Infinity", "-Infinity",
        "1E400", "-1e309", "1.5e99999", "[123123e100000]",
        // Strings
        "\"\u{01}\"", "\"a\nb\"", "\"\\x41\"", "\"\\u12\"", "\"\\u12G4\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"",
        "\"\\ud800\\\"", "'single'", "\"\\a\"",
        // Repeated keys, at any depth and beyond the scanned prefix
        "{\"a\":1,\"a\":1}", "{\"a\":1,\"b\":{\"c\":1,\"c\":2}}", "[{\"k\":1,\"k\":2}]",
        "{" + (0..<40).map { "\"k\($0)\":0" }.joined(separator: ",") + ",\"k7\":1}",
    ])
    func rejectsInvalid(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
    }

    @Test func rejectsInvalidUTF8InStrings() {
        #expect(throws: JSONParseError.self) { try JSONValue.parse([0x22, 0xFF, 0xFE, 0x22]) }
        #expect(throws: JSONParseError.self) { try JSONValue.parse([0x22, 0xED, 0xA0, 0x80, 0x22]) }
    }

    @Test func numbersAreExactIntegersOrFiniteDoubles() throws {
        #expect(try JSONValue.parse("1732200000123").int64Value == 1_732_200_000_123)
        #expect(try JSONValue.parse("9223372036854775807") == .integer(.max))
        #expect(try JSONValue.parse("9223372036854775808") == .number(9_223_372_036_854_775_808))
        #expect(try JSONValue.parse("1e-400") == .number(0))
        #expect(try JSONValue.parse("-0.0") == .number(-0.0))
        #expect(try JSONValue.parse("1.7976931348623157e308") == .number(.greatestFiniteMagnitude))
    }

    @Test func errorsSayWhere() {
        #expect(throws: JSONParseError(message: "duplicate key \"a\"", offset: 8)) { try JSONValue.parse("{\"a\":1, \"a\":2}") }
        #expect(throws: JSONParseError(message: "leading zero in a number", offset: 2)) { try JSONValue.parse("[01]") }
        #expect(throws: JSONParseError(message: "number out of range", offset: 1)) { try JSONValue.parse("[1E400]") }
    }

    // MARK: Depth and size

    @Test func nestingIsLimited() throws {
        let deepest = String(repeating: "[", count: JSONValue.maxDepth) + String(repeating: "]", count: JSONValue.maxDepth)
        #expect(throws: Never.self) { try JSONValue.parse(deepest) }
        let tooDeep = "[" + deepest + "]"
        #expect(throws: JSONParseError.self) { try JSONValue.parse(tooDeep) }
        // Far too deep: an error, not a stack overflow.
        #expect(throws: JSONParseError.self) { try JSONValue.parse(String(repeating: "[{\"a\":", count: 200_000)) }
        #expect(throws: JSONParseError.self) {
            try JSONValue.parseObject(
                Array(("{\"tabs\":[" + tooDeep + "]}").utf8), streamedArrays: ["tabs"], member: { _, _ in }, element: { _, _ in })
        }
    }

    /// Inputs large enough that quadratic work would not finish: a 6 MB
    /// string full of escapes, an object of 100,000 keys, an array of 200,000
    /// numbers, and the same sizes encoded.
    @Test func hugeInputsTakeLinearTime() throws {
        let escaped = "\"" + String(repeating: "a\\n\\u00e9\\\"", count: 500_000) + "\""
        #expect(try JSONValue.parse(escaped).stringValue?.count == 2_000_000)
        let object = "{" + (0..<100_000).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        #expect(try JSONValue.parse(object)["k99999"] == .integer(99_999))
        let array = "[" + (0..<200_000).map(String.init).joined(separator: ",") + "]"
        #expect(try JSONValue.parse(array).arrayValue?.count == 200_000)
        #expect(try JSONCoding.encode(Array(0..<200_000)) == Array(array.utf8))
        let keyed = Dictionary(uniqueKeysWithValues: (0..<100_000).map { ("k\($0)", $0) })
        #expect(try JSONCoding.decode([String: Int].self, from: JSONCoding.encode(keyed)) == keyed)
    }

    // MARK: Streaming

    @Test func streamingRefusesWhatParsingRefuses() throws {
        var elements: [JSONValue] = []
        try JSONValue.parseObject(
            Array("{\"tabs\":[1,2],\"x\":true}".utf8), streamedArrays: ["tabs"],
            member: { _, _ in }, element: { elements.append(try $1.value()) })
        #expect(elements == [.integer(1), .integer(2)])
        // After each element, where the parse stands: just past it.
        let document = Array(#"{"clips": [{"a": 1}, [2] ,{"b": "two"}], "after": true}"#.utf8)
        var positions: [Int] = []
        try document.withUnsafeBufferPointer {
            try JSONValue.parseObject(
                $0, streamedArrays: ["clips"], member: { _, _ in }, element: { _, _ in }, consumed: { positions.append($0) })
        }
        #expect(positions.map { document[$0 - 1] } == Array("}]}".utf8) && positions == positions.sorted())
        for text in ["{\"tabs\":[1],\"tabs\":[2]}", "{\"x\":1,\"x\":2}", "{\"tabs\":[01]}", "{\"tabs\":[1]} x", "{\"tabs\":[1],}"] {
            #expect(throws: JSONParseError.self, "\(text)") {
                try JSONValue.parseObject(Array(text.utf8), streamedArrays: ["tabs"], member: { _, _ in }, element: { _, _ in })
            }
        }
    }
}

/// A streamed array's flat objects are read from their bytes (`JSONFlatObject`):
/// every such element must be accepted, refused (with the same error) and read
/// exactly as the parser reads it.
@Suite struct FlatObjectTests {
    /// Streams `element` as the one element of an array; the parsed element, or the error, and the flat object's view of it.
    static func streamed(_ element: [UInt8]) -> (Result<JSONValue, JSONParseError>, flat: [String: FlatMember]?) {
        let document = Array("{\"clips\":[".utf8) + element + Array("]}".utf8)
        var flat: [String: FlatMember]?
        var value: JSONValue?
        do {
            try JSONValue.parseObject(document, streamedArrays: ["clips"], member: { _, _ in }) { _, element in
                value = try element.value()
                guard let object = element.flat else { return }
                flat = Dictionary(
                    uniqueKeysWithValues: FlatObjectTests.keys.map { key in
                        var escaped: [UInt8] = []
                        let isString = object.appendEscapedMember(key, to: &escaped)
                        let member = FlatMember(
                            string: object.stringMember(key), escaped: isString ? escaped : nil, bool: object.boolMember(key))
                        return (key.description, member)
                    })
            }
            return (.success(value!), flat)
        } catch let error as JSONParseError {
            return (.failure(error), nil)
        } catch {
            Issue.record("unexpected \(error)")
            return (.failure(JSONParseError(message: "", offset: 0)), nil)
        }
    }

    /// The keys the elements below use, each looked up in every flat object (present or not).
    static let keys: [StaticString] = ["id", "text", "timestamp", "pinned", "k", "k0", "k1", "k2", "k3", "k4", "k5", "n", "z", "f", "a"]

    struct FlatMember: Equatable {
        var string: String?
        var escaped: [UInt8]?
        var bool: Bool?

        init(string: String?, escaped: [UInt8]?, bool: Bool?) {
            (self.string, self.escaped, self.bool) = (string, escaped, bool)
        }

        /// What the parsed value says.
        init(_ value: JSONValue?) {
            var escaped: [UInt8]?
            if var text = value?.stringValue {
                escaped = []
                text.withUTF8 { JSONString.appendEscaped($0, to: &escaped!) }
            }
            self.init(string: value?.stringValue, escaped: escaped, bool: value?.boolValue)
        }
    }

    /// Checks one element against the parser: the same outcome, and a flat view that agrees with the parsed members.
    static func check(_ element: [UInt8], _ comment: Comment? = nil) -> Bool {
        let (outcome, flat) = streamed(element)
        let document = Array("{\"clips\":[".utf8) + element + Array("]}".utf8)
        switch (outcome, Result { try JSONValue.parse(document) }.mapError { $0 as! JSONParseError }) {
        case (.success(let value), .success(let whole)):
            #expect(whole["clips"] == .array([value]), comment)
            if let flat {
                for key in FlatObjectTests.keys { #expect(flat[key.description] == FlatMember(value[key.description]), comment) }
            }
        case (.failure(let error), .failure(let expected)):
            #expect(error == expected, comment)
        default:
            Issue.record("streaming and parsing disagree: \(outcome) \(comment?.description ?? "")")
        }
        return flat != nil
    }

    @Test func clipsAndTabsAreReadFlat() {
        for element in [
            #"{"id":"E82BEEAC-015b-4fd2-b7f2-33529d927757","text":"a\n\"b\" caf\u00e9 \/ \b","timestamp":"2026-01-01T00:00:00.000Z","pinned":true}"#,
            #" { "text" : "x" , "n" : -1.5e3 , "z" : null , "f" : false } "#, "{}", #"{"text":"日本 👍\ud83d\udc4d"}"#,
        ] {
            #expect(FlatObjectTests.check(Array(element.utf8), "\(element)"))
        }
    }

    @Test func otherElementsAreParsed() {
        for element in [
            #"{"a":[1]}"#, #"{"a":{"b":1}}"#, #"{"a":1,"a":2}"#, #"{"\u0061":1,"a":2}"#, #"{"é":1}"#, "[1]", "1", #""s""#,
            #"{"a":"\x"}"#, #"{"a":"\ud800"}"#, #"{"a":01}"#, #"{"a":1E400}"#, #"{"a":tru}"#, #"{"a":1,}"#, #"{"a" 1}"#, #"{"a":"#,
            "{" + (0..<17).map { #""k\#($0)":\#($0)"# }.joined(separator: ",") + "}",
        ] {
            #expect(!FlatObjectTests.check(Array(element.utf8), "\(element)"))
        }
        #expect(!FlatObjectTests.check([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D]))
        #expect(!FlatObjectTests.check(Array(#"{"a":""#.utf8) + [0x01] + Array(#""}"#.utf8)))
    }

    /// Every JSONTestSuite case as a member's value (`[X]` becomes `{"k":X}`) and as a key.
    @Test func agreesWithTheParserOnTheCorpus() {
        var flat = 0
        for (name, bytes) in JSONTestSuite.cases.sorted(by: { $0.key < $1.key }) where bytes.first == 0x5B && bytes.last == 0x5D {
            let inner = Array(bytes.dropFirst().dropLast())
            if FlatObjectTests.check(Array(#"{"k":"#.utf8) + inner + Array("}".utf8), "\(name)") { flat += 1 }
            _ = FlatObjectTests.check(Array("{".utf8) + inner + Array(#":true,"k":1}"#.utf8), "\(name) as a key")
        }
        #expect(flat > 50)
    }

    /// Random objects of string pieces (escapes canonical or not, invalid UTF-8, quotes, controls) and repeated keys.
    @Test func agreesWithTheParserOnRandomObjects() {
        var generator = SeededGenerator(seed: 12)
        let pieces = CanonicalEscapingTests.pieces + [Array("k".utf8), Array(#"\u00e9"#.utf8), Array(#"\ud83d\udc4d"#.utf8)]
        var flat = 0
        for _ in 0..<3000 {
            let members = (0..<Int(generator.next() % 5)).map { _ -> [UInt8] in
                let key = Array("\"k\(generator.next() % 6)\":".utf8)
                switch generator.next() % 4 {
                case 0: return key + Array((generator.next() % 2 == 0 ? "true" : "null").utf8)
                default:
                    let body = (0..<Int(generator.next() % 6)).flatMap { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }
                    return key + [0x22] + body + [0x22]
                }
            }
            let element = Array("{".utf8) + Array(members.joined(separator: [0x2C])) + Array("}".utf8)
            if FlatObjectTests.check(element, "\(String(decoding: element, as: UTF8.self))") { flat += 1 }
        }
        #expect(flat > 300)
    }
}

@Suite struct JSONCodingTests {
    struct Numbers: Codable, Equatable {
        var unsigned: UInt64
        var float: Float
        var double: Double
    }

    @Test func integersBeyondInt64AreRefusedNotTrapped() throws {
        let fits = Numbers(unsigned: UInt64(Int64.max), float: 1.5, double: -2.25)
        #expect(try JSONCoding.decode(Numbers.self, from: JSONCoding.encode(fits)) == fits)
        #expect(throws: EncodingError.self) { try JSONCoding.encode(Numbers(unsigned: .max, float: 0, double: 0)) }
        #expect(throws: EncodingError.self) { try JSONCoding.encode([UInt(Int64.max) + 1]) }
    }

    @Test func nonFiniteNumbersAreRefused() {
        #expect(throws: EncodingError.self) { try JSONCoding.encode(Numbers(unsigned: 0, float: 0, double: .infinity)) }
        #expect(throws: EncodingError.self) { try JSONCoding.encode(Numbers(unsigned: 0, float: .nan, double: 0)) }
        // A Double too large for a Float is not a Float.
        #expect(throws: DecodingError.self) {
            try JSONCoding.decode(Numbers.self, from: Array("{\"unsigned\":0,\"float\":1e300,\"double\":0}".utf8))
        }
    }

    @Test func decoderAndSubscriptAgreeOnRepeatedKeys() throws {
        struct Key: Decodable { var k: Int }
        // Parsed text cannot hold a repeated key; a built value can, and then the first wins everywhere.
        #expect(throws: DecodingError.self) { try JSONCoding.decode(Key.self, from: Array("{\"k\":1,\"k\":2}".utf8)) }
        let built = JSONValue.object([("k", .integer(1)), ("k", .integer(2))])
        #expect(built["k"] == .integer(1))
        #expect(try JSONCoding.decode(Key.self, from: built).k == 1)
    }

    /// A free-form member passes through as it is; its own conformance (for other coders) is
    /// checked here through the containers, by a type that calls it rather than being passed through.
    struct ThroughContainers: Codable {
        var value: JSONValue
        init(_ value: JSONValue) { self.value = value }
        init(from decoder: any Decoder) throws { value = try JSONValue(from: decoder) }
        func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
    }

    @Test(arguments: [
        "null", "true", "-12", "9223372036854775807", "1.5", "1.0", "\"é\\n\"", "[]", "{}", "[1,\"x\",{\"k\":[true,null]}]",
        "{\"b\":{\"c\":\"d\"},\"a\":[2.5]}",
    ])
    func freeFormValuesRoundTrip(_ text: String) throws {
        let value = try JSONValue.parse(text)
        #expect(try JSONCoding.encodeValue(value, keys: .asEncoded).serialized() == value.serialized())
        #expect(try JSONCoding.decode(JSONValue.self, from: Array(text.utf8)) == value)
        #expect(try JSONCoding.encodeValue(ThroughContainers(value), keys: .asEncoded) == value)
        #expect(try JSONCoding.decode(ThroughContainers.self, from: value).value == value)
    }
}

/// JSONTestSuite's parsing corpus (see `JSONTestSuite`): y_ files are
/// accepted and n_ files refused, with the exceptions and choices listed here.
@Suite struct JSONTestSuiteTests {
    /// Valid JSON refused on purpose: RFC 8259 allows a repeated key, but
    /// readers disagree on which value wins, so this project refuses them.
    static let refusedValid: Set<String> = ["y_object_duplicated_key", "y_object_duplicated_key_and_value"]

    /// The implementation-defined (i_) files this parser accepts; it refuses
    /// the others. Numbers: one that rounds to a finite Double is accepted
    /// (too small becomes 0, too many digits are rounded), one that overflows
    /// to infinity is refused. Strings: invalid UTF-8, UTF-16 text and lone
    /// or inverted surrogates in `\u` escapes are refused. Structure: 500
    /// levels are within the limit of 512; a byte order mark is refused.
    static let acceptedIndeterminate: Set<String> = [
        "i_number_double_huge_neg_exp", "i_number_real_underflow", "i_number_too_big_neg_int",
        "i_number_too_big_pos_int", "i_number_very_big_negative_int", "i_structure_500_nested_arrays",
    ]

    /// test_transform: what each file parses to, or nil when it is refused.
    static let transformed: [String: JSONValue?] = [
        "number_-9223372036854775808": .array([.integer(.min)]),
        "number_-9223372036854775809": .array([.number(-9_223_372_036_854_775_809)]),
        "number_1.0": .array([.number(1)]),
        "number_1.000000000000000005": .array([.number(1)]),
        "number_1000000000000000": .array([.integer(1_000_000_000_000_000)]),
        "number_10000000000000000999": .array([.number(1e19)]),
        "number_1e-999": .array([.number(0)]),
        "number_1e6": .array([.number(1e6)]),
        "number_9223372036854775807": .array([.integer(.max)]),
        "number_9223372036854775808": .array([.number(9_223_372_036_854_775_808)]),
        // Keys are compared as Swift strings, so NFC and NFD spellings are the same key.
        "object_key_nfc_nfd": nil, "object_key_nfd_nfc": nil,
        "object_same_key_different_values": nil, "object_same_key_same_value": nil, "object_same_key_unclear_values": nil,
        "string_1_escaped_invalid_codepoint": nil, "string_1_invalid_codepoint": nil,
        "string_2_escaped_invalid_codepoints": nil, "string_2_invalid_codepoints": nil,
        "string_3_escaped_invalid_codepoints": nil, "string_3_invalid_codepoints": nil,
        "string_with_escaped_NULL": .array([.string("A\u{0}B")]),
    ]

    @Test func theCorpusIsWhole() {
        #expect(JSONTestSuite.names(prefix: "y_").count == 95)
        #expect(JSONTestSuite.names(prefix: "n_").count == 191)
        #expect(JSONTestSuite.names(prefix: "i_").count == 35)
        #expect(JSONTestSuite.cases.count - 95 - 191 - 35 == Self.transformed.count)
        #expect(Self.refusedValid.union(Self.acceptedIndeterminate).isSubset(of: JSONTestSuite.cases.keys))
    }

    @Test(arguments: JSONTestSuite.names(prefix: "y_"))
    func acceptsValid(_ name: String) throws {
        let bytes = try #require(JSONTestSuite.cases[name])
        if Self.refusedValid.contains(name) {
            #expect(throws: JSONParseError.self) { try JSONValue.parse(bytes) }
            return
        }
        let value = try JSONValue.parse(bytes)
        #expect(try JSONValue.parse(value.serialized()) == value)
    }

    @Test(arguments: JSONTestSuite.names(prefix: "n_"))
    func refusesInvalid(_ name: String) throws {
        let bytes = try #require(JSONTestSuite.cases[name])
        #expect(throws: JSONParseError.self) { try JSONValue.parse(bytes) }
    }

    @Test(arguments: JSONTestSuite.names(prefix: "i_"))
    func decidesIndeterminate(_ name: String) throws {
        let bytes = try #require(JSONTestSuite.cases[name])
        let accepted = (try? JSONValue.parse(bytes)) != nil
        #expect(accepted == Self.acceptedIndeterminate.contains(name))
    }

    @Test(arguments: transformed.keys.sorted())
    func transforms(_ name: String) throws {
        let bytes = try #require(JSONTestSuite.cases[name])
        let expected = try #require(Self.transformed[name])
        #expect((try? JSONValue.parse(bytes)) == expected)
    }
}

/// `JSONString.isCanonicallyEscaped` lets a listing copy an escaped text
/// instead of decoding and escaping it again: it must hold exactly when that
/// round trip gives the same bytes. `isUnescapedUTF8` lets a search take an
/// escaped text for the text: it must hold exactly when the body decodes to itself.
@Suite struct CanonicalEscapingTests {
    static func decodesToItself(_ escaped: [UInt8]) -> Bool {
        var decoded: [UInt8] = []
        return escaped.withUnsafeBufferPointer { raw in
            (try? JSONString.unescape(raw, final: true, into: &decoded)) == raw.count && decoded == Array(raw)
        }
    }

    static let pieces: [[UInt8]] = [
        Array("a".utf8), Array(" ".utf8), Array("é".utf8), Array("日".utf8), Array("👍".utf8), [0x5C, 0x22], [0x5C, 0x5C], Array(#"\n"#.utf8),
        Array(#"\t"#.utf8), Array(#"\r"#.utf8), Array(#"\u001b"#.utf8), Array(#"\u001B"#.utf8), Array(#"\u0009"#.utf8),
        Array(#"\u0041"#.utf8),
        Array(#"\/"#.utf8), Array(#"\b"#.utf8), [0x22], [0x5C], [0x0A], [0x01], [0xC3], [0xA9], [0xFF], [0xED, 0xA0, 0x80],
        Array("xxxxxxxxx".utf8),
    ]

    @Test func holdsExactlyWhenDecodingAndEscapingAgainGivesTheSameBytes() {
        var generator = SeededGenerator(seed: 5)
        var canonical = 0, itself = 0
        for _ in 0..<5000 {
            let escaped = (0..<Int(generator.next() % 8)).flatMap { _ in
                CanonicalEscapingTests.pieces[Int(generator.next() % UInt64(CanonicalEscapingTests.pieces.count))]
            }
            var again: [UInt8] = []
            let roundTrips = escaped.withUnsafeBufferPointer { raw in
                (try? JSONString.unescape(raw, final: true, reescaping: true, into: &again)) == raw.count && again == Array(raw)
            }
            let claimed = escaped.withUnsafeBufferPointer(JSONString.isCanonicallyEscaped)
            #expect(claimed == roundTrips, "\(String(decoding: escaped, as: UTF8.self)) \(escaped)")
            if claimed { canonical += 1 }
            let unescaped = escaped.withUnsafeBufferPointer(JSONString.isUnescapedUTF8)
            #expect(unescaped == CanonicalEscapingTests.decodesToItself(escaped), "\(escaped)")
            if unescaped { itself += 1 }
        }
        #expect(canonical > 500)
        #expect(itself > 200)
    }

    /// The checks look at eight bytes at a time and jump to the first byte
    /// that is not plain: each awkward piece, at every offset in a run of plain
    /// ASCII and before or after another, gets the answer of a byte-at-a-time check.
    @Test(arguments: pieces)
    func agreeWithAByteAtATimeCheckAtEveryOffset(_ piece: [UInt8]) {
        let plain = Array("The quick brown fox jumps over the lazy dog".utf8)
        for offset in 0...20 {
            for after in [[], [0x5C, 0x6E], Array("é".utf8), [0x22]] as [[UInt8]] {
                let escaped = Array(plain[..<offset]) + piece + after + Array(plain[offset...])
                var again: [UInt8] = []
                let roundTrips = escaped.withUnsafeBufferPointer { raw in
                    (try? JSONString.unescape(raw, final: true, reescaping: true, into: &again)) == raw.count && again == Array(raw)
                }
                #expect(escaped.withUnsafeBufferPointer(JSONString.isCanonicallyEscaped) == roundTrips, "\(escaped)")
                #expect(
                    escaped.withUnsafeBufferPointer(JSONString.isUnescapedUTF8) == CanonicalEscapingTests.decodesToItself(escaped),
                    "\(escaped)")
                let plainASCII = escaped.allSatisfy { $0 < 0x80 && !JSONString.needsEscape($0) }
                #expect(escaped.withUnsafeBufferPointer(JSONString.isPlainASCII) == plainASCII, "\(escaped)")
            }
        }
    }

    @Test func whatAppendEscapedWritesIsCanonical() {
        var generator = SeededGenerator(seed: 6)
        for _ in 0..<2000 {
            let scalars = (0..<Int(generator.next() % 20)).map { _ in
                Unicode.Scalar(UInt32(generator.next() % 0x300)).map(Character.init) ?? "x"
            }
            var text = String(scalars)
            var escaped: [UInt8] = []
            text.withUTF8 { JSONString.appendEscaped($0, to: &escaped) }
            #expect(escaped.withUnsafeBufferPointer(JSONString.isCanonicallyEscaped), "\(escaped)")
        }
    }
}

/// String bodies are read and written a run at a time, the runs found eight bytes at a time:
/// each awkward piece, at every offset in a run of plain ASCII and before or after another,
/// gets the answer of a reader and a writer that go a byte at a time.
@Suite struct StringRunTests {
    /// The parser's answer for a document that opens with a string, read a byte at a time: the
    /// value, or the error that names the first fault.
    static func byteAtATime(_ document: [UInt8]) -> Result<JSONValue, JSONParseError> {
        let start = 1
        var position = start
        func fail(_ message: String, _ offset: Int) -> Result<JSONValue, JSONParseError> {
            .failure(JSONParseError(message: message, offset: offset))
        }
        var string: String?
        while position < document.count {
            let byte = document[position]
            if byte == 0x22 {
                position += 1
                guard let text = Text.decodeUTF8(Array(document[start..<position - 1])) else {
                    return fail("invalid UTF-8 in string", position)
                }
                string = text
                break
            }
            if byte == 0x5C || byte < 0x20 { break }
            position += 1
        }
        if string == nil {
            while position < document.count, document[position] != 0x22 { position += document[position] == 0x5C ? 2 : 1 }
            guard position < document.count else { return fail("unterminated string", position) }
            var decoded: [UInt8] = []
            let body = Array(document[start..<position])
            do {
                _ = try body.withUnsafeBufferPointer { (raw) throws(JSONString.Malformed) in
                    try JSONString.unescape(raw, final: true, into: &decoded)
                }
            } catch {
                return fail(error.message, start + error.offset)
            }
            position += 1
            string = String(decoding: decoded, as: UTF8.self)
        }
        while position < document.count, document[position].isASCIIWhitespace { position += 1 }
        return position == document.count ? .success(.string(string!)) : fail("unexpected data after the JSON value", position)
    }

    static func escapedByteAtATime(_ utf8: [UInt8]) -> [UInt8] {
        utf8.flatMap { byte -> [UInt8] in
            switch byte {
            case 0x22: return Array(#"\""#.utf8)
            case 0x5C: return Array(#"\\"#.utf8)
            case 0x0A: return Array(#"\n"#.utf8)
            case 0x0D: return Array(#"\r"#.utf8)
            case 0x09: return Array(#"\t"#.utf8)
            case ..<0x20: return Array("\\u00".utf8) + [Hex.digits[Int(byte >> 4)], Hex.digits[Int(byte & 0x0F)]]
            default: return [byte]
            }
        }
    }

    static let pieces =
        CanonicalEscapingTests.pieces + [
            Array(#"\u00e9"#.utf8), Array(#"\ud83d\udc4d"#.utf8), Array(#"\ud83d"#.utf8), Array(#"\udc4d"#.utf8), Array(#"\u12"#.utf8),
            Array(#"\x"#.utf8), [0x7F], [0x1F], [0x80], [0xE2, 0x82], [0xF0, 0x9F, 0x91],
        ]

    @Test(arguments: pieces)
    func readAndWrittenAsAByteAtATime(_ piece: [UInt8]) {
        let plain = Array("The quick brown fox jumps over the lazy dog".utf8)
        for offset in 0...20 {
            for after in [[], [0x5C, 0x6E], Array("é".utf8), [0x22], [0x20, 0x22], [0x5C]] as [[UInt8]] {
                let body = Array(plain[..<offset]) + piece + after + Array(plain[offset...])
                for document in [[0x22] + body + [0x22], [0x22] + body] {
                    let parsed = Result { try JSONValue.parse(document) }.mapError { $0 as! JSONParseError }
                    #expect(parsed == Self.byteAtATime(document), "\(document)")
                }
                var escaped: [UInt8] = []
                body.withUnsafeBufferPointer { JSONString.appendEscaped($0, to: &escaped) }
                #expect(escaped == Self.escapedByteAtATime(body), "\(body)")
            }
        }
    }

    @Test func randomBodiesReadAsAByteAtATime() {
        var generator = SeededGenerator(seed: 13)
        for _ in 0..<5000 {
            let body = (0..<Int(generator.next() % 12)).flatMap { _ in Self.pieces[Int(generator.next() % UInt64(Self.pieces.count))] }
            let document = [0x22] + body + [0x22]
            let parsed = Result { try JSONValue.parse(document) }.mapError { $0 as! JSONParseError }
            #expect(parsed == Self.byteAtATime(document), "\(document)")
        }
    }
}

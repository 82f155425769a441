import Testing

@testable import ItsypadBackend

@Suite("Backend: record fields coded by FieldCoding")
struct FieldCodingTests {
    /// One property of every type `FieldCoding` stores, and optionals.
    struct Every: Codable, Equatable {
        var text: String
        var count: Int
        var big: Int64
        var flag: Bool
        var ratio: Double
        var time: RecordTimestamp
        var list: [String]
        var asset: AssetReference
        var note: String?
        var locked: Bool?
    }

    static let asset = AssetReference(fileChecksum: String(repeating: "0a", count: 32), size: 3)
    static let every = Every(
        text: "a \"b\"\n✓", count: -2, big: .max, flag: true, ratio: 0.5, time: RecordTimestamp(1_700_000_000_000), list: ["x", ""],
        asset: asset, note: nil, locked: false)

    @Test func eachPropertyTypeIsItsFieldTypeAndReadsBack() throws {
        let fields = try FieldCoding.encode(Self.every)
        #expect(
            fields == [
                "text": .string("a \"b\"\n✓"), "count": .int64(-2), "big": .int64(.max), "flag": .int64(1), "ratio": .double(0.5),
                "time": .timestamp(1_700_000_000_000), "list": .stringList(["x", ""]), "asset": .asset(Self.asset), "locked": .int64(0),
            ])
        #expect(try FieldCoding.decode(Every.self, from: fields) == Self.every)
    }

    struct Flags: Codable, Equatable {
        var flag: Bool?
    }

    @Test(
        "a flag is INT64 1 for true; any other number, or a field of another type, is not true",
        arguments: [
            (FieldValue.int64(1), true), (.int64(0), false), (.int64(2), false), (.int64(-1), false), (.string("1"), nil),
            (.timestamp(1), nil),
        ] as [(FieldValue, Bool?)])
    func flags(_ example: (field: FieldValue, expected: Bool?)) throws {
        #expect(try FieldCoding.decode(Flags.self, from: ["flag": example.field]).flag == example.expected)
    }

    @Test func anOptionalPropertyReadsAFieldOfAnotherTypeOrNoFieldAsNil() throws {
        struct Optionals: Codable {
            var text: String?
            var time: RecordTimestamp?
            var list: [String]?
            var asset: AssetReference?
            var number: Int64?
        }
        let mistyped: [String: FieldValue] = [
            "text": .int64(1), "time": .int64(1), "list": .string("x"), "asset": .stringList([]), "number": .timestamp(5),
            "other": .string("ignored"),
        ]
        let read = try FieldCoding.decode(Optionals.self, from: mistyped)
        #expect(read.text == nil && read.time == nil && read.list == nil && read.asset == nil && read.number == nil)
        let empty = try FieldCoding.decode(Optionals.self, from: [:])
        #expect(empty.text == nil && empty.time == nil && empty.list == nil && empty.asset == nil && empty.number == nil)
    }

    @Test func aRequiredPropertyThrowsForAFieldOfAnotherTypeOrNoField() throws {
        struct Required: Codable {
            var time: RecordTimestamp
        }
        #expect(throws: DecodingError.self) { try FieldCoding.decode(Required.self, from: ["time": .int64(1)]) }
        #expect(throws: DecodingError.self) { try FieldCoding.decode(Required.self, from: [:]) }
        #expect(try FieldCoding.decode(Required.self, from: ["time": .timestamp(1)]).time == RecordTimestamp(1))
    }

    @Test func aPropertyOfATypeWithNoFieldTypeIsRefused() {
        struct Nested: Codable {
            var inner: Flags
        }
        struct Numbers: Codable {
            var numbers: [Int]
        }
        struct Small: Codable {
            var small: Float
        }
        #expect(throws: EncodingError.self) { try FieldCoding.encode(Nested(inner: Flags(flag: true))) }
        #expect(throws: EncodingError.self) { try FieldCoding.encode(Numbers(numbers: [1])) }
        #expect(throws: EncodingError.self) { try FieldCoding.encode(Small(small: 1)) }
        #expect(throws: EncodingError.self) { try FieldCoding.encode(["a", "b"]) }
        #expect(throws: EncodingError.self) { try FieldCoding.encode("a") }
    }
}

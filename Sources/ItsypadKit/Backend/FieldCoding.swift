/// `Codable` to and from a record's fields, so that a record type's fields are one type: its
/// properties are the field names, and their Swift types choose the field types.
///
/// | property type    | field type  |
/// |------------------|-------------|
/// | `String`         | STRING      |
/// | `Int64`, `Int`   | INT64       |
/// | `Bool`           | INT64, 1 for true and 0 for false; any other number reads as false |
/// | `Double`         | DOUBLE      |
/// | `RecordTimestamp`| TIMESTAMP   |
/// | `[String]`       | STRING_LIST |
/// | `AssetReference` | ASSETID     |
///
/// A nil optional is left out (records have no null). Reading, a required property throws when
/// its field is absent or of another type; an optional one reads as nil then, as readers of these
/// records always have: each takes what it understands of what another version or app wrote.
package enum FieldCoding {
    package static func encode<Fields: Encodable>(_ value: Fields) throws -> [String: FieldValue] {
        let sink = FieldSink()
        try value.encode(to: FieldEncoder(sink: sink))
        if let error = sink.error { throw error }
        return sink.fields
    }

    package static func decode<Fields: Decodable>(_ type: Fields.Type, from fields: [String: FieldValue]) throws -> Fields {
        try Fields(from: FieldDecoder(fields: fields))
    }

    /// The value of `field` as a property of type `T`, or nil when it is of another field type.
    fileprivate static func value<T>(_ field: FieldValue, as type: T.Type) -> T? {
        switch field {
        case .string(let string): return string as? T
        case .int64(let number):
            if T.self == Bool.self { return (number == 1) as? T }
            if T.self == Int.self { return Int(exactly: number) as? T }
            return number as? T
        case .double(let number): return number as? T
        case .timestamp(let milliseconds): return RecordTimestamp(milliseconds) as? T
        case .stringList(let strings): return strings as? T
        case .asset(let reference): return reference as? T
        }
    }

    /// The field a property's value is stored as, or nil for a type with no field type.
    fileprivate static func field<T>(_ value: T) -> FieldValue? {
        switch value {
        case let string as String: .string(string)
        case let flag as Bool: .int64(flag ? 1 : 0)
        case let number as Int64: .int64(number)
        case let number as Int: .int64(Int64(number))
        case let number as Double: .double(number)
        case let time as RecordTimestamp: .timestamp(time.milliseconds)
        case let strings as [String]: .stringList(strings)
        case let reference as AssetReference: .asset(reference)
        default: nil
        }
    }
}

/// A TIMESTAMP field's value: milliseconds since 1970 (an `Int64` property is an INT64 field).
public struct RecordTimestamp: Hashable, Sendable, Codable {
    public var milliseconds: Int64

    public init(_ milliseconds: Int64) { self.milliseconds = milliseconds }

    public init(from decoder: any Decoder) throws { milliseconds = try decoder.singleValueContainer().decode(Int64.self) }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(milliseconds)
    }
}

// MARK: - Encoding

/// The fields written so far, and the first property that had no field type.
private final class FieldSink {
    var fields: [String: FieldValue] = [:]
    var error: EncodingError?

    func fail(_ value: Any, _ codingPath: [any CodingKey], _ reason: String) {
        if error == nil { error = .invalidValue(value, .init(codingPath: codingPath, debugDescription: reason)) }
    }
}

private struct FieldEncoder: Encoder {
    let sink: FieldSink
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(FieldEncodingContainer<Key>(sink: sink))
    }

    /// Fields are named: a value without names is refused when `FieldCoding.encode` returns.
    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        sink.fail([Any](), [], "a record's fields are named members, not a list")
        return RefusedContainer(sink: sink)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        sink.fail((), [], "a record's fields are named members, not one value")
        return RefusedContainer(sink: sink)
    }
}

private struct FieldEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let sink: FieldSink
    var codingPath: [any CodingKey] { [] }

    /// A field without a value is left out.
    mutating func encodeNil(forKey key: Key) throws {}

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        guard let field = FieldCoding.field(value) else {
            return sink.fail(value, [key], "\(T.self) has no record field type")
        }
        sink.fields[key.stringValue] = field
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<
        NestedKey
    > {
        sink.fail((), [key], "record fields do not nest")
        return KeyedEncodingContainer(FieldEncodingContainer<NestedKey>(sink: FieldSink()))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        sink.fail((), [key], "record fields do not nest")
        return RefusedContainer(sink: sink)
    }

    mutating func superEncoder() -> any Encoder {
        sink.fail((), [], "record fields do not nest")
        return FieldEncoder(sink: FieldSink())
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder() }
}

/// What a refused container hands out: it stores nothing (the refusal is already recorded).
private struct RefusedContainer: UnkeyedEncodingContainer, SingleValueEncodingContainer {
    let sink: FieldSink
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }

    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(FieldEncodingContainer<NestedKey>(sink: FieldSink()))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
    mutating func superEncoder() -> any Encoder { FieldEncoder(sink: FieldSink()) }
}

// MARK: - Decoding

private struct FieldDecoder: Decoder {
    let fields: [String: FieldValue]
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(FieldDecodingContainer<Key>(fields: fields))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [], debugDescription: "a record's fields are named members"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: [], debugDescription: "a record's fields are named members"))
    }
}

/// Every `decode` and `decodeIfPresent` reads as the table in `FieldCoding` says: the generic
/// pair stands for the primitive `decode` overloads, and the `decodeIfPresent` ones the properties
/// use are spelled out, since the protocol's defaults for them would throw on another field type.
private struct FieldDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let fields: [String: FieldValue]
    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] { fields.keys.compactMap { Key(stringValue: $0) } }
    func contains(_ key: Key) -> Bool { fields[key.stringValue] != nil }
    func decodeNil(forKey key: Key) throws -> Bool { fields[key.stringValue] == nil }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try required(type, key) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { optional(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { optional(type, key) }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { optional(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { optional(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { optional(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { optional(type, key) }

    private func required<T>(_ type: T.Type, _ key: Key) throws -> T {
        guard let field = fields[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: [], debugDescription: "no field '\(key.stringValue)'"))
        }
        guard let value = FieldCoding.value(field, as: type) else {
            throw DecodingError.typeMismatch(
                type, .init(codingPath: [key], debugDescription: "a \(field.typeName) field, not one a \(T.self) is stored as"))
        }
        return value
    }

    private func optional<T>(_ type: T.Type, _ key: Key) -> T? {
        fields[key.stringValue].flatMap { FieldCoding.value($0, as: type) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw DecodingError.typeMismatch(type, .init(codingPath: [key], debugDescription: "record fields do not nest"))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [key], debugDescription: "record fields do not nest"))
    }

    func superDecoder() throws -> any Decoder {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: [], debugDescription: "record fields do not nest"))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder { try superDecoder() }
}

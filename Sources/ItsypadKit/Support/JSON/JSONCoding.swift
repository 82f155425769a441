/// `Codable` to and from `JSONValue`, so that the backend's record types keep
/// their synthesized conformances without Foundation's JSONEncoder (which
/// costs every start-up of the tool). Object keys are written sorted, or in the
/// order the type encodes them, so files are byte-for-byte reproducible; absent
/// optionals are left out.
package enum JSONCoding {
    /// A key chosen at run time: an object member's name, for maps and free-form objects.
    package struct NameKey: CodingKey {
        package let stringValue: String
        package var intValue: Int? { nil }
        package init(stringValue: String) { self.stringValue = stringValue }
        package init?(intValue: Int) { return nil }
    }

    /// How an encoded object's keys are ordered.
    package enum KeyOrder {
        case sorted
        /// As `encode(to:)` writes them: a synthesized conformance's `CodingKeys` order, for
        /// formats whose files were written in a hand-chosen order before they had a Codable type.
        case asEncoded
    }

    package static func encode<Value: Encodable>(_ value: Value) throws -> [UInt8] {
        try encodeValue(value).serializedBytes()
    }

    package static func encodeValue<Value: Encodable>(_ value: Value, keys: KeyOrder = .sorted) throws -> JSONValue {
        let box = EncodingBox()
        try box.store(value, codingPath: [])
        return box.resolved(keys)
    }

    package static func decode<Value: Decodable>(_ type: Value.Type, from bytes: [UInt8]) throws -> Value {
        let json: JSONValue
        do { json = try JSONValue.parse(bytes) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not valid JSON", underlyingError: error))
        }
        return try decode(type, from: json)
    }

    package static func decode<Value: Decodable>(_ type: Value.Type, from json: JSONValue) throws -> Value {
        try ValueDecoder(value: json, codingPath: []).unbox(type)
    }

    /// A one-line reason for a decoding failure, for `BackendError.corrupt`. It may quote what the
    /// file holds, so control characters are escaped.
    package static func describe(_ error: any Error) -> String {
        Text.escapingControls(rawDescription(error), limit: 300)
    }

    private static func rawDescription(_ error: any Error) -> String {
        guard let decodingError = error as? DecodingError else { return "\(error)" }
        switch decodingError {
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty
                ? context.debugDescription : "invalid value at \(path(context.codingPath)): \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            return "missing key '\(key.stringValue)' at \(path(context.codingPath))"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "wrong type at \(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(decodingError)"
        }
    }

    private static func path(_ codingPath: [any CodingKey]) -> String {
        codingPath.isEmpty ? "top level" : codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }
}

// MARK: - Free-form values

/// Any JSON, for a format's free-form member (a setting's value). `JSONCoding` passes it through as
/// it is (a number keeps its written form); these conformances serve other coders.
extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: JSONCoding.NameKey.self) {
            self = .object(try container.allKeys.map { ($0.stringValue, try container.decode(JSONValue.self, forKey: $0)) })
        } else if var container = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !container.isAtEnd { items.append(try container.decode(JSONValue.self)) }
            self = .array(items)
        } else {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let bool = try? container.decode(Bool.self) {
                self = .bool(bool)
            } else if let integer = try? container.decode(Int64.self) {
                self = .integer(integer)
            } else if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else {
                self = .string(try container.decode(String.self))
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .object(let members):
            var container = encoder.container(keyedBy: JSONCoding.NameKey.self)
            for (key, value) in members { try container.encode(value, forKey: JSONCoding.NameKey(stringValue: key)) }
        case .array(let items):
            var container = encoder.unkeyedContainer()
            for item in items { try container.encode(item) }
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let bool):
            var container = encoder.singleValueContainer()
            try container.encode(bool)
        case .integer(let integer):
            var container = encoder.singleValueContainer()
            try container.encode(integer)
        case .number(let number):
            var container = encoder.singleValueContainer()
            try container.encode(number)
        case .string(let string):
            var container = encoder.singleValueContainer()
            try container.encode(string)
        }
    }
}

// MARK: - Encoding

/// One node of the value being encoded; containers fill it in, in place
/// (members and elements are added without copying what is there).
private final class EncodingBox {
    enum Kind {
        case empty, value, object, array
    }

    private(set) var kind = Kind.empty
    private var value = JSONValue.null
    private var members: [String: EncodingBox] = [:]
    /// The members' keys in the order they were first encoded.
    private var order: [String] = []
    private var elements: [EncodingBox] = []

    var count: Int { kind == .object ? members.count : elements.count }

    func resolved(_ keys: JSONCoding.KeyOrder) -> JSONValue {
        switch kind {
        case .empty: return .object([])
        case .value: return value
        case .object: return .object((keys == .sorted ? members.keys.sorted() : order).map { ($0, members[$0]!.resolved(keys)) })
        case .array: return .array(elements.map { $0.resolved(keys) })
        }
    }

    func set(_ value: JSONValue) {
        kind = .value
        self.value = value
    }

    /// Makes an empty node an object or an array; a filled one stays as it is.
    func begin(_ container: Kind) {
        if kind == .empty { kind = container }
    }

    /// Stores a value: primitives directly, anything else through its `encode(to:)`.
    func store<Value: Encodable>(_ value: Value, codingPath: [any CodingKey]) throws {
        if let primitive = try EncodingBox.primitive(value, codingPath: codingPath) {
            set(primitive)
        } else {
            try value.encode(to: BoxEncoder(box: self, codingPath: codingPath))
        }
    }

    /// JSON for numbers, strings and booleans. Integers beyond Int64 and
    /// non-finite floating point numbers have no exact JSON form here: they
    /// are refused rather than written as something that reads back differently.
    static func primitive(_ value: Any, codingPath: [any CodingKey]) throws -> JSONValue? {
        func integer<I: BinaryInteger>(_ value: I) throws -> JSONValue {
            guard let exact = Int64(exactly: value) else {
                throw EncodingError.invalidValue(
                    value, .init(codingPath: codingPath, debugDescription: "\(value) is beyond the range of Int64"))
            }
            return .integer(exact)
        }
        func number(_ value: Double) throws -> JSONValue {
            guard value.isFinite else {
                throw EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "\(value) has no JSON form"))
            }
            return .number(value)
        }
        switch value {
        case let value as JSONValue: return value
        case let value as String: return .string(value)
        case let value as Bool: return .bool(value)
        case let value as Int: return try integer(value)
        case let value as Int64: return .integer(value)
        case let value as Int32: return try integer(value)
        case let value as Int16: return try integer(value)
        case let value as Int8: return try integer(value)
        case let value as UInt8: return try integer(value)
        case let value as UInt16: return try integer(value)
        case let value as UInt32: return try integer(value)
        case let value as UInt: return try integer(value)
        case let value as UInt64: return try integer(value)
        case let value as Double: return try number(value)
        case let value as Float: return try number(Double(value))
        default: return nil
        }
    }

    func member(_ key: String) -> EncodingBox {
        if kind != .object {
            kind = .object
            members = [:]
            order = []
        }
        if let existing = members[key] { return existing }
        let child = EncodingBox()
        members[key] = child
        order.append(key)
        return child
    }

    func appendElement() -> EncodingBox {
        if kind != .array {
            kind = .array
            elements = []
        }
        let child = EncodingBox()
        elements.append(child)
        return child
    }
}

/// An optional member written as `null` when it is nil, for formats that always hold the key
/// (`JSONCoding` leaves a nil optional out); read as nil when it is `null` or absent.
@propertyWrapper
package struct ExplicitNull<Value: Codable>: Codable {
    package var wrappedValue: Value?

    package init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

extension ExplicitNull: Equatable where Value: Equatable {}
extension ExplicitNull: Sendable where Value: Sendable {}

extension KeyedDecodingContainer {
    /// An absent `ExplicitNull` member is nil: the synthesized decoding calls this rather than
    /// requiring its key.
    package func decode<Value>(_ type: ExplicitNull<Value>.Type, forKey key: Key) throws -> ExplicitNull<Value> {
        ExplicitNull(wrappedValue: try decodeIfPresent(Value.self, forKey: key))
    }
}

private struct BoxEncoder: Encoder {
    let box: EncodingBox
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        box.begin(.object)
        return KeyedEncodingContainer(KeyedBoxContainer<Key>(box: box, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        box.begin(.array)
        return UnkeyedBoxContainer(box: box, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleBoxContainer(box: box, codingPath: codingPath) }
}

private struct KeyedBoxContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let box: EncodingBox
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { box.member(key.stringValue).set(.null) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try box.member(key.stringValue).store(value, codingPath: codingPath + [key])
    }
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        BoxEncoder(box: box.member(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        BoxEncoder(box: box.member(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }
    mutating func superEncoder() -> any Encoder { BoxEncoder(box: box.member("super"), codingPath: codingPath) }
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        BoxEncoder(box: box.member(key.stringValue), codingPath: codingPath + [key])
    }
}

private struct UnkeyedBoxContainer: UnkeyedEncodingContainer {
    let box: EncodingBox
    let codingPath: [any CodingKey]
    var count: Int { box.count }

    mutating func encodeNil() throws { box.appendElement().set(.null) }
    mutating func encode<T: Encodable>(_ value: T) throws { try box.appendElement().store(value, codingPath: codingPath) }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        BoxEncoder(box: box.appendElement(), codingPath: codingPath).container(keyedBy: keyType)
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        BoxEncoder(box: box.appendElement(), codingPath: codingPath).unkeyedContainer()
    }
    mutating func superEncoder() -> any Encoder { BoxEncoder(box: box.appendElement(), codingPath: codingPath) }
}

private struct SingleBoxContainer: SingleValueEncodingContainer {
    let box: EncodingBox
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { box.set(.null) }
    mutating func encode<T: Encodable>(_ value: T) throws { try box.store(value, codingPath: codingPath) }
}

// MARK: - Decoding

private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { String(intValue ?? 0) }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { return nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct ValueDecoder: Decoder {
    let value: JSONValue
    /// The path of the container holding the value, and the value's key in it: the value's own
    /// path is made only when asked for (a nested container, an error), not for every value.
    let parentPath: [any CodingKey]
    let key: (any CodingKey)?
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(value: JSONValue, codingPath: [any CodingKey]) {
        self.init(value: value, parentPath: codingPath, key: nil)
    }

    init(value: JSONValue, parentPath: [any CodingKey], key: (any CodingKey)?) {
        self.value = value
        self.parentPath = parentPath
        self.key = key
    }

    var codingPath: [any CodingKey] { key.map { parentPath + [$0] } ?? parentPath }

    func mismatch(_ expected: String) -> DecodingError {
        .typeMismatch(Any.self, .init(codingPath: codingPath, debugDescription: "expected \(expected)"))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw mismatch("an object") }
        return KeyedDecodingContainer(KeyedValueContainer<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else { throw mismatch("an array") }
        return UnkeyedValueContainer(items: items, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleValueContainer(decoder: self) }

    /// Decodes primitives directly and anything else through `init(from:)`.
    func unbox<T: Decodable>(_ type: T.Type) throws -> T {
        switch type {
        case is JSONValue.Type: return value as! T
        case is String.Type:
            guard case .string(let string) = value else { throw mismatch("a string") }
            return string as! T
        case is Bool.Type:
            guard case .bool(let bool) = value else { throw mismatch("a boolean") }
            return bool as! T
        case is Double.Type:
            guard let number = value.doubleValue else { throw mismatch("a number") }
            return number as! T
        case is Float.Type:
            guard let number = value.doubleValue.map(Float.init), number.isFinite else { throw mismatch("a number in Float's range") }
            return number as! T
        case is Int.Type: return try integer(Int.self) as! T
        case is Int64.Type: return try integer(Int64.self) as! T
        case is Int32.Type: return try integer(Int32.self) as! T
        case is Int16.Type: return try integer(Int16.self) as! T
        case is Int8.Type: return try integer(Int8.self) as! T
        case is UInt.Type: return try integer(UInt.self) as! T
        case is UInt64.Type: return try integer(UInt64.self) as! T
        case is UInt32.Type: return try integer(UInt32.self) as! T
        case is UInt16.Type: return try integer(UInt16.self) as! T
        case is UInt8.Type: return try integer(UInt8.self) as! T
        default: return try T(from: self)
        }
    }

    private func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        guard let whole = value.int64Value, let number = I(exactly: whole) else { throw mismatch("a whole number") }
        return number
    }
}

private struct KeyedValueContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    /// The members, indexed by key. Parsed objects have no repeated keys; for built ones the first
    /// wins, as in `JSONValue`'s subscript.
    private let members: [(String, JSONValue)]
    private let index: [String: JSONValue]
    let codingPath: [any CodingKey]

    init(members: [(String, JSONValue)], codingPath: [any CodingKey]) {
        self.members = members
        self.codingPath = codingPath
        index = Dictionary(members, uniquingKeysWith: { first, _ in first })
    }

    private func member(_ name: String) -> JSONValue? { index[name] }

    var allKeys: [Key] {
        var seen = Set<String>()
        return members.compactMap { seen.insert($0.0).inserted ? Key(stringValue: $0.0) : nil }
    }
    func contains(_ key: Key) -> Bool { member(key.stringValue) != nil }

    private func child(_ key: Key) throws -> ValueDecoder {
        guard let value = member(key.stringValue) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "no value for '\(key.stringValue)'"))
        }
        return ValueDecoder(value: value, parentPath: codingPath, key: key)
    }

    func decodeNil(forKey key: Key) throws -> Bool { member(key.stringValue).map { $0 == .null } ?? true }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try child(key).unbox(type) }
    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try child(key).container(keyedBy: type)
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try child(key).unkeyedContainer() }
    func superDecoder() throws -> any Decoder { ValueDecoder(value: member("super") ?? .null, codingPath: codingPath) }
    func superDecoder(forKey key: Key) throws -> any Decoder { try child(key) }
}

private struct UnkeyedValueContainer: UnkeyedDecodingContainer {
    let items: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(items: [JSONValue], codingPath: [any CodingKey]) {
        self.items = items
        self.codingPath = codingPath
    }

    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    private mutating func next() throws -> ValueDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "the array has no more elements"))
        }
        defer { currentIndex += 1 }
        return ValueDecoder(value: items[currentIndex], parentPath: codingPath, key: IndexKey(currentIndex))
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, items[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().unbox(type) }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try next().unkeyedContainer() }
    mutating func superDecoder() throws -> any Decoder { try next() }
}

private struct SingleValueContainer: SingleValueDecodingContainer {
    let decoder: ValueDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.value == .null }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.unbox(type) }
}

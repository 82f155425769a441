#if canImport(Glibc)
import Glibc
#endif

/// A JSON value with object keys kept in order, so that output is stable and
/// documented field order survives a round trip. Small and dependency-free:
/// it parses a clipboard log line in microseconds without Foundation.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case integer(Int64)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.bool(a), .bool(b)): return a == b
        case let (.number(a), .number(b)): return a == b
        case let (.integer(a), .integer(b)): return a == b
        case let (.integer(a), .number(b)), let (.number(b), .integer(a)): return Double(a) == b
        case let (.string(a), .string(b)): return a == b
        case let (.array(a), .array(b)): return a == b
        case let (.object(a), .object(b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a }; return nil }
    /// An array of strings only, as `JSONCoding` decodes `[String]`.
    package var stringArrayValue: [String]? {
        guard case .array(let items) = self else { return nil }
        var strings: [String] = []
        strings.reserveCapacity(items.count)
        for item in items {
            guard case .string(let string) = item else { return nil }
            strings.append(string)
        }
        return strings
    }

    /// An optional member as `JSONCoding` decodes one: `.some(nil)` when it is absent or null,
    /// `.some(value)` when `read` reads it, nil (the object is malformed) when `read` cannot.
    package func optionalMember<Value>(_ key: String, _ read: (JSONValue) -> Value?) -> Value?? {
        guard let member = self[key] else { return .some(nil) }
        if case .null = member { return .some(nil) }
        return read(member).map { .some($0) }
    }
    public var int64Value: Int64? {
        switch self {
        case .integer(let i): return i
        case .number(let d) where d.rounded() == d && abs(d) < 9.2e18: return Int64(d)
        default: return nil
        }
    }
    public var doubleValue: Double? {
        switch self {
        case .integer(let i): return Double(i)
        case .number(let d): return d
        default: return nil
        }
    }
}

// MARK: - Serialising

extension JSONValue {
    /// Compact JSON on one line (log records, `--json` arrays use `pretty`).
    public func serialized() -> String { String(decoding: serializedBytes(), as: UTF8.self) }

    /// Two-space indented JSON, the form `--json` and `export` print.
    public func prettySerialized() -> String { String(decoding: prettySerializedBytes(), as: UTF8.self) }

    /// `serialized()` as UTF-8.
    public func serializedBytes() -> [UInt8] {
        var out: [UInt8] = []
        write(to: &out, pretty: false, level: 0)
        return out
    }

    /// `prettySerialized()` as UTF-8 (files are written from bytes: no String is built on the way).
    public func prettySerializedBytes() -> [UInt8] {
        var out: [UInt8] = []
        write(to: &out, pretty: true, level: 0)
        return out
    }

    private func write(to out: inout [UInt8], pretty: Bool, level: Int) {
        switch self {
        case .null: out += "null".utf8
        case .bool(let b): out += (b ? "true" : "false").utf8
        case .integer(let i): out += String(i).utf8
        case .number(let d): JSONValue.writeNumber(d, to: &out)
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let items):
            if items.isEmpty { out += "[]".utf8; return }
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, pretty, level + 1)
                item.write(to: &out, pretty: pretty, level: level + 1)
            }
            newline(&out, pretty, level)
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            if members.isEmpty { out += "{}".utf8; return }
            out.append(UInt8(ascii: "{"))
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, pretty, level + 1)
                JSONValue.writeString(key, to: &out)
                out += (pretty ? ": " : ":").utf8
                value.write(to: &out, pretty: pretty, level: level + 1)
            }
            newline(&out, pretty, level)
            out.append(UInt8(ascii: "}"))
        }
    }

    /// In pretty output, a line break and two spaces a level.
    private func newline(_ out: inout [UInt8], _ pretty: Bool, _ level: Int) {
        guard pretty else { return }
        out.append(UInt8(ascii: "\n"))
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
    }

    /// A number as `serializedBytes()` writes it: whole numbers below 10^15 without a fraction.
    /// JSON has no infinity or NaN. Neither the parser nor JSONCoding makes one; a value built in
    /// code with one is written as null.
    package static func writeNumber(_ d: Double, to out: inout [UInt8]) {
        if d.isFinite, d.rounded() == d, abs(d) < 1e15 {
            out += String(Int64(d)).utf8
        } else if d.isFinite {
            out += "\(d)".utf8
        } else {
            out += "null".utf8
        }
    }

    /// A string as `serializedBytes()` writes it, quoted and escaped.
    package static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = s
        text.withUTF8 { JSONString.appendEscaped($0, to: &out) }
        out.append(UInt8(ascii: "\""))
    }
}

// MARK: - Parsing

/// Why a JSON text could not be read; `offset` is a byte offset into the input.
public struct JSONParseError: Error, Equatable, CustomStringConvertible {
    public let message: String
    public let offset: Int
    public var description: String { "\(message) at byte \(offset)" }
}

extension JSONValue {
    /// How deeply arrays and objects may nest: deeper input is an error, not
    /// a stack overflow.
    public static let maxDepth = 512

    /// Parses one complete JSON text, strictly as RFC 8259 defines it: no
    /// leading zeros, no `+`, no bare `.` in numbers, no comments, no trailing
    /// commas, no byte order mark, nothing after the value. Beyond the RFC:
    /// a number too large for a Double (`1E400`), a lone surrogate in a
    /// `\u` escape, invalid UTF-8, a key repeated in one object and nesting
    /// deeper than ``maxDepth`` are errors too, so that every reader of a
    /// value sees the same data. Integers in Int64's range stay exact; other
    /// numbers are the nearest Double (one too small for a Double is 0).
    public static func parse(_ text: String) throws -> JSONValue {
        var text = text
        return try text.withUTF8 { try parse(bytes: $0) }
    }

    public static func parse<C: Collection>(_ bytes: C) throws -> JSONValue where C.Element == UInt8 {
        if let value = try bytes.withContiguousStorageIfAvailable({ try parse(bytes: $0) }) { return value }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { try parse(bytes: $0) }
    }

    static func parse(bytes: UnsafeBufferPointer<UInt8>) throws -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.position == bytes.count else { throw parser.error("unexpected data after the JSON value") }
        return value
    }
}

extension JSONValue {
    /// Parses a top-level object without building the arrays named in
    /// `streamedArrays`: their elements go to `element` one at a time (an
    /// import of 100,000 clips then holds one clip, not all of them), flat
    /// objects read as bytes (see `JSONStreamedElement`). Other members go to
    /// `member` whole.
    package static func parseObject(
        _ bytes: [UInt8], streamedArrays: Set<String>,
        member: (String, JSONValue) throws -> Void,
        element: (String, JSONStreamedElement) throws -> Void
    ) throws {
        try bytes.withUnsafeBufferPointer { try parseObject($0, streamedArrays: streamedArrays, member: member, element: element) }
    }

    /// `parseObject` of bytes in memory that need not be an array (a mapped file). `consumed` is
    /// told, after each streamed element, where the parse stands: nothing before it is read again.
    package static func parseObject(
        _ buffer: UnsafeBufferPointer<UInt8>, streamedArrays: Set<String>,
        member: (String, JSONValue) throws -> Void,
        element: (String, JSONStreamedElement) throws -> Void,
        consumed: (Int) -> Void = { _ in }
    ) throws {
        var parser = JSONParser(bytes: buffer)
        parser.skipWhitespace()
        guard parser.position < buffer.count, buffer[parser.position] == UInt8(ascii: "{") else {
            throw parser.error("expected an object")
        }
        parser.position += 1
        parser.skipWhitespace()
        if parser.position < buffer.count, buffer[parser.position] == UInt8(ascii: "}") {
            parser.position += 1
        } else {
            var keys = Set<String>()
            while true {
                parser.skipWhitespace()
                let keyStart = parser.position
                let key = try parser.parseKey()
                guard keys.insert(key).inserted else { throw parser.duplicate(key, at: keyStart) }
                parser.skipWhitespace()
                guard parser.position < buffer.count, buffer[parser.position] == UInt8(ascii: ":") else {
                    throw parser.error("expected ':'")
                }
                parser.position += 1
                parser.skipWhitespace()
                if streamedArrays.contains(key), parser.position < buffer.count, buffer[parser.position] == UInt8(ascii: "[") {
                    try parser.forEachElement({ try element(key, $0) }, consumed: consumed)
                } else {
                    try member(key, try parser.parseValue(depth: 1))
                }
                parser.skipWhitespace()
                guard parser.position < buffer.count else { throw parser.error("unexpected end of input") }
                if buffer[parser.position] == UInt8(ascii: ",") { parser.position += 1; continue }
                if buffer[parser.position] == UInt8(ascii: "}") { parser.position += 1; break }
                throw parser.error("expected ',' or '}'")
            }
        }
        parser.skipWhitespace()
        guard parser.position == buffer.count else { throw parser.error("unexpected data after the JSON value") }
    }
}

extension JSONValue {
    /// Parses a top-level array, handing its elements to `element` one at a time as
    /// `parseObject` hands those of its streamed arrays (another tool's history of any length
    /// then holds one element). `consumed` is told where the parse stands after each.
    package static func parseArray(
        _ buffer: UnsafeBufferPointer<UInt8>, element: (JSONStreamedElement) throws -> Void, consumed: (Int) -> Void = { _ in }
    ) throws {
        var parser = JSONParser(bytes: buffer)
        parser.skipWhitespace()
        guard parser.position < buffer.count, buffer[parser.position] == UInt8(ascii: "[") else {
            throw parser.error("expected an array")
        }
        try parser.forEachElement(element, consumed: consumed)
        parser.skipWhitespace()
        guard parser.position == buffer.count else { throw parser.error("unexpected data after the JSON value") }
    }
}

/// An element of an array that `JSONValue.parseObject` streams. An object of
/// strings, numbers, booleans and null only (a clip or a tab of an export) is
/// read without building any value: `flat` holds its members as bytes of the
/// input, checked as the parser checks them. Any other value is parsed. Valid
/// only inside the `element` callback.
package struct JSONStreamedElement {
    /// The members of a flat object; nil for any other value.
    package let flat: JSONFlatObject?
    fileprivate let parsed: JSONValue?
    fileprivate let input: UnsafeBufferPointer<UInt8>
    fileprivate let start: Int

    /// The element as a parsed value (a flat object is parsed now).
    package func value() throws -> JSONValue {
        if let parsed { return parsed }
        var parser = JSONParser(bytes: input)
        parser.position = start
        return try parser.parseValue(depth: 2)
    }
}

/// A flat JSON object's members as bytes of the input (see `JSONStreamedElement`).
package struct JSONFlatObject: JSONFields {
    struct Member {
        /// Plain ASCII: no escapes.
        let key: JSONKey
        let value: Value
    }

    enum Value {
        /// A valid string body, still escaped; `canonical` when escaped exactly as `JSONString.appendEscaped` escapes.
        case string(UnsafeBufferPointer<UInt8>, canonical: Bool)
        /// A number, a boolean or null.
        case scalar(JSONValue)
    }

    let members: [Member]

    private func value(_ key: StaticString) -> Value? {
        members.first { $0.key == key }?.value
    }

    package func withStringMember<Result>(_ key: StaticString, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result? {
        guard case .string(let escaped, _) = value(key) else { return nil }
        guard let base = escaped.baseAddress, memchr(base, 0x5C, escaped.count) != nil else { return try body(escaped) }
        var decoded: [UInt8] = []
        _ = try? JSONString.unescape(escaped, final: true, into: &decoded)
        return try decoded.withUnsafeBufferPointer(body)
    }

    package func appendEscapedMember(_ key: StaticString, to out: inout [UInt8]) -> Bool {
        guard case .string(let escaped, let canonical) = value(key) else { return false }
        if canonical {
            out.append(contentsOf: escaped)
        } else {
            _ = try? JSONString.unescape(escaped, final: true, reescaping: true, into: &out)
        }
        return true
    }

    package func boolMember(_ key: StaticString) -> Bool? {
        guard case .scalar(let scalar) = value(key) else { return nil }
        return scalar.boolValue
    }

    package func integerMember(_ key: StaticString) -> Int64? {
        guard case .scalar(let scalar) = value(key) else { return nil }
        return scalar.int64Value
    }
}

/// Read access to a JSON object's string and boolean members, whether parsed
/// (`JSONValue`) or read as bytes (`JSONFlatObject`), so that one decoder
/// serves both.
package protocol JSONFields {
    /// `body` called with the UTF-8 of the string member `key`; nil when `key` names no string.
    func withStringMember<Result>(_ key: StaticString, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result?
    /// Appends the string member `key` escaped as `JSONString.appendEscaped` escapes; false when `key` names no string.
    func appendEscapedMember(_ key: StaticString, to out: inout [UInt8]) -> Bool
    /// The boolean member `key`; nil when `key` names no boolean.
    func boolMember(_ key: StaticString) -> Bool?
    /// The integer member `key`; nil when `key` names no integer.
    func integerMember(_ key: StaticString) -> Int64?
}

extension JSONFields {
    /// The string member `key`; nil when `key` names no string.
    package func stringMember(_ key: StaticString) -> String? {
        withStringMember(key) { String(decoding: $0, as: UTF8.self) }
    }
}

extension JSONValue: JSONFields {
    package func withStringMember<Result>(_ key: StaticString, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result? {
        guard var text = self["\(key)"]?.stringValue else { return nil }
        return try text.withUTF8(body)
    }

    package func appendEscapedMember(_ key: StaticString, to out: inout [UInt8]) -> Bool {
        guard var text = self["\(key)"]?.stringValue else { return false }
        text.withUTF8 { JSONString.appendEscaped($0, to: &out) }
        return true
    }

    package func boolMember(_ key: StaticString) -> Bool? { self["\(key)"]?.boolValue }

    package func integerMember(_ key: StaticString) -> Int64? { self["\(key)"]?.int64Value }
}

struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0
    /// The decoded body of the last string with escapes, kept to be reused.
    private var decoded: [UInt8] = []

    init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    func error(_ message: String) -> JSONParseError { JSONParseError(message: message, offset: position) }

    mutating func skipWhitespace() {
        while position < bytes.count, bytes[position].isASCIIWhitespace { position += 1 }
    }

    mutating func parseValue(depth: Int) throws -> JSONValue {
        guard depth < JSONValue.maxDepth else { throw error("nesting deeper than \(JSONValue.maxDepth) levels") }
        guard position < bytes.count else { throw error("unexpected end of input") }
        switch bytes[position] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth)
        case UInt8(ascii: "["): return try parseArray(depth: depth)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectWord("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectWord("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectWord("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character")
        }
    }

    mutating func expectWord(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw error("unexpected end of input") }
        for i in 0..<count where bytes[position + i] != word.utf8Start[i] { throw error("invalid literal") }
        position += count
    }

    mutating func parseObject(depth: Int) throws -> JSONValue {
        position += 1
        var members: [(String, JSONValue)] = []
        var seen = Set<String>()
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") { position += 1; return .object(members) }
        while true {
            skipWhitespace()
            let keyStart = position
            let key = try parseKey()
            // Keys compare as Swift compares strings, like the subscript and the decoder.
            if !seen.insert(key).inserted { throw duplicate(key, at: keyStart) }
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw error("expected ':'") }
            position += 1
            skipWhitespace()
            members.append((key, try parseValue(depth: depth + 1)))
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "}") { position += 1; return .object(members) }
            throw error("expected ',' or '}'")
        }
    }

    mutating func parseKey() throws -> String {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw error("expected a string key") }
        return try parseString()
    }

    func duplicate(_ key: String, at offset: Int) -> JSONParseError {
        JSONParseError(message: "duplicate key \(JSONValue.string(String(key.prefix(40))).serialized())", offset: offset)
    }

    /// Parses an array, handing each element over instead of collecting them.
    mutating func forEachElement(_ body: (JSONStreamedElement) throws -> Void, consumed: (Int) -> Void = { _ in }) throws {
        position += 1
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") { position += 1; return }
        var members: [JSONFlatObject.Member] = []
        var scratch: [UInt8] = []
        while true {
            skipWhitespace()
            let start = position
            if readFlatObject(into: &members, scratch: &scratch) {
                try body(JSONStreamedElement(flat: JSONFlatObject(members: members), parsed: nil, input: bytes, start: start))
            } else {
                position = start
                try body(JSONStreamedElement(flat: nil, parsed: try parseValue(depth: 2), input: bytes, start: start))
            }
            consumed(position)
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "]") { position += 1; return }
            throw error("expected ',' or ']'")
        }
    }

    /// Reads an object whose members are all strings, numbers, booleans or
    /// null into `members`, as byte ranges of the input, checking each exactly
    /// as `parseValue` would. False when the value is anything else, or when
    /// it is not certain to be read as `parseValue` reads it (a key that is not
    /// plain ASCII, more than 16 members, anything invalid): the caller then
    /// parses it from where it started, and that parse decides (and names any
    /// error).
    mutating func readFlatObject(into members: inout [JSONFlatObject.Member], scratch: inout [UInt8]) -> Bool {
        members.removeAll(keepingCapacity: true)
        guard position < bytes.count, bytes[position] == UInt8(ascii: "{") else { return false }
        position += 1
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") { position += 1; return true }
        while members.count < 16 {
            skipWhitespace()
            // Plain ASCII keys compare as strings do when their bytes compare equal.
            guard let keyBytes = readStringBody(), JSONString.isPlainASCII(keyBytes) else { return false }
            let key = JSONKey(bytes: keyBytes)
            guard !members.contains(where: { $0.key == key }) else { return false }
            skipWhitespace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { return false }
            position += 1
            skipWhitespace()
            guard position < bytes.count else { return false }
            switch bytes[position] {
            case UInt8(ascii: "\""):
                guard let body = readStringBody() else { return false }
                if JSONString.isCanonicallyEscaped(body) {
                    members.append(.init(key: key, value: .string(body, canonical: true)))
                } else {
                    scratch.removeAll(keepingCapacity: true)
                    guard (try? JSONString.unescape(body, final: true, into: &scratch)) != nil else { return false }
                    members.append(.init(key: key, value: .string(body, canonical: false)))
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["): return false
            default:
                guard let value = try? parseValue(depth: 3) else { return false }
                members.append(.init(key: key, value: .scalar(value)))
            }
            skipWhitespace()
            guard position < bytes.count else { return false }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "}") { position += 1; return true }
            return false
        }
        return false
    }

    /// The raw body of the string at `position` (which must be a quote), up to
    /// its closing quote, found as `parseString` finds it; nil when there is none.
    mutating func readStringBody() -> UnsafeBufferPointer<UInt8>? {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        position += 1
        let start = position
        // The next quote ends the string unless a backslash comes first: then it is walked escape by escape.
        let rest = UnsafeRawPointer(bytes.baseAddress! + position)
        if let quote = memchr(rest, 0x22, bytes.count - position) {
            let end = position + rest.distance(to: quote)
            if memchr(rest, 0x5C, end - position) == nil {
                position = end + 1
                return UnsafeBufferPointer(rebasing: bytes[start..<end])
            }
        }
        while position < bytes.count, bytes[position] != UInt8(ascii: "\"") {
            position += bytes[position] == UInt8(ascii: "\\") ? 2 : 1
        }
        guard position < bytes.count else { return nil }
        position += 1
        return UnsafeBufferPointer(rebasing: bytes[start..<position - 1])
    }

    mutating func parseArray(depth: Int) throws -> JSONValue {
        position += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") { position += 1; return .array(items) }
        while true {
            skipWhitespace()
            items.append(try parseValue(depth: depth + 1))
            skipWhitespace()
            guard position < bytes.count else { throw error("unexpected end of input") }
            if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
            if bytes[position] == UInt8(ascii: "]") { position += 1; return .array(items) }
            throw error("expected ',' or ']'")
        }
    }

    /// `-? (0 | [1-9][0-9]*) (\.[0-9]+)? ([eE][+-]?[0-9]+)?`, and finite.
    mutating func parseNumber() throws -> JSONValue {
        let start = position
        if bytes[position] == UInt8(ascii: "-") { position += 1 }
        if position < bytes.count, bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < bytes.count, isDigit(bytes[position]) { throw error("leading zero in a number") }
        } else if skipDigits() == 0 {
            throw error("invalid number")
        }
        var isInteger = true
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard skipDigits() > 0 else { throw error("expected a digit after '.'") }
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard skipDigits() > 0 else { throw error("expected a digit in the exponent") }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        if isInteger, let value = Int64(text) { return .integer(value) }
        guard let value = Double(text), value.isFinite else {
            position = start
            throw error("number out of range")
        }
        return .number(value)
    }

    /// Skips decimal digits; returns how many.
    mutating func skipDigits() -> Int {
        let start = position
        while position < bytes.count, isDigit(bytes[position]) { position += 1 }
        return position - start
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    mutating func parseString() throws -> String {
        position += 1
        let start = position
        // One pass over runs found a word at a time: a run up to the closing quote is the whole
        // string; a run up to a backslash is copied and the escape decoded after it. Anything
        // else (a control character, an escape or UTF-8 that does not decode, no closing quote)
        // is read again by `parseStringNamingErrors`, which says what is wrong and where.
        var runStart = start
        var hasEscapes = false
        while true {
            let end = JSONString.nextEscapeByte(in: bytes, from: runStart)
            guard end < bytes.count else { break }
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") {
                let run = UnsafeBufferPointer(rebasing: bytes[runStart..<end])
                guard hasEscapes else {
                    guard UTF8Check.isValid(run) else { break }
                    position = end + 1
                    return String(decoding: run, as: UTF8.self)
                }
                decoded.append(contentsOf: run)
                guard decoded.withUnsafeBufferPointer(UTF8Check.isValid) else { break }
                position = end + 1
                return String(decoding: decoded, as: UTF8.self)
            }
            guard byte == UInt8(ascii: "\\") else { break }
            if !hasEscapes {
                hasEscapes = true
                decoded.removeAll(keepingCapacity: true)
            }
            decoded.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<end]))
            guard let length = try? JSONString.decodeEscape(bytes, at: end, into: &decoded) else { break }
            runStart = end + length
        }
        position = start
        return try parseStringNamingErrors()
    }

    /// `parseString` from just after the opening quote, a byte at a time, for input that
    /// `parseString`'s pass did not read: throws the error that names the fault.
    mutating func parseStringNamingErrors() throws -> String {
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<position])
                position += 1
                guard let string = Text.decodeUTF8(slice) else { throw error("invalid UTF-8 in string") }
                return string
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            position += 1
        }
        // Find the closing quote (an escape hides the byte after its backslash), then decode.
        while position < bytes.count, bytes[position] != UInt8(ascii: "\"") {
            position += bytes[position] == UInt8(ascii: "\\") ? 2 : 1
        }
        guard position < bytes.count else { throw error("unterminated string") }
        var unescaped: [UInt8] = []
        do {
            _ = try JSONString.unescape(UnsafeBufferPointer(rebasing: bytes[start..<position]), final: true, into: &unescaped)
        } catch {
            throw JSONParseError(message: error.message, offset: start + error.offset)
        }
        position += 1
        return String(decoding: unescaped, as: UTF8.self)
    }
}

/// Writes one object member by member in `JSONValue.prettySerializedBytes()`'s layout, for a file
/// written too often to build a `JSONValue` first (every tab of a first sync). Keys are written
/// as given: plain ASCII names that need no escaping.
package struct PrettyJSONObject {
    package private(set) var bytes: [UInt8]
    private let level: Int
    private var isEmpty = true

    package init(reservingCapacity capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
        level = 0
        bytes.append(UInt8(ascii: "{"))
    }

    private init(nestedIn bytes: inout [UInt8], level: Int) {
        self.bytes = []
        swap(&self.bytes, &bytes)
        self.level = level
        self.bytes.append(UInt8(ascii: "{"))
    }

    package mutating func add(_ key: StaticString, _ value: String?) {
        guard let value else { return }
        start(key)
        JSONValue.writeString(value, to: &bytes)
    }

    package mutating func add(_ key: StaticString, _ value: Bool?) {
        guard let value else { return }
        start(key)
        bytes += (value ? "true" : "false").utf8
    }

    package mutating func add(_ key: StaticString, _ value: Int64?) {
        guard let value else { return }
        start(key)
        bytes += String(value).utf8
    }

    package mutating func add(_ key: StaticString, _ value: [String]?) {
        guard let value else { return }
        start(key)
        if value.isEmpty {
            bytes += "[]".utf8
            return
        }
        bytes.append(UInt8(ascii: "["))
        for (index, item) in value.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            newline(level + 2)
            JSONValue.writeString(item, to: &bytes)
        }
        newline(level + 1)
        bytes.append(UInt8(ascii: "]"))
    }

    /// A nested object whose members `build` adds.
    package mutating func addObject(_ key: StaticString, _ build: (inout PrettyJSONObject) -> Void) {
        start(key)
        var nested = PrettyJSONObject(nestedIn: &bytes, level: level + 1)
        build(&nested)
        nested.close()
        swap(&bytes, &nested.bytes)
    }

    /// The object's bytes, closed.
    package consuming func finished() -> [UInt8] {
        close()
        return bytes
    }

    private mutating func close() {
        if !isEmpty { newline(level) }
        bytes.append(UInt8(ascii: "}"))
    }

    private mutating func start(_ key: StaticString) {
        if !isEmpty { bytes.append(UInt8(ascii: ",")) }
        isEmpty = false
        newline(level + 1)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        bytes += "\": ".utf8
    }

    private mutating func newline(_ level: Int) {
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * level))
    }
}

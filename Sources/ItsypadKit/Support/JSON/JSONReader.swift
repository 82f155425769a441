#if canImport(Glibc)
import Glibc
#endif

/// Reads a JSON document of a known shape straight from its bytes: the members a reader knows
/// are read as they come, without a `JSONValue` for the document or a `String` for each key.
///
/// It reads only what `JSONValue.parse` accepts, and reads it the same way; where it cannot be
/// sure of that, it fails (nil) and the caller parses the document whole, which then decides and
/// names any fault. So every object it walks must have keys that are plain ASCII without escapes
/// (equal bytes are then equal strings, so a repeated key is seen), and at most `maxMembers`
/// members. Values it is not asked to read are parsed and dropped, so they are checked as the
/// parser checks them.
package struct JSONReader {
    /// Objects with more members are left to the parser (keys are compared pairwise).
    package static let maxMembers = 32

    private var parser: JSONParser
    private var depth = 0
    /// The keys of the objects being read, innermost last (one array for all of them).
    private var keys: [JSONKey] = []

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { parser = JSONParser(bytes: bytes) }

    /// `read` applied to the document in `bytes`; nil when it fails or anything but whitespace follows.
    package static func read<Value>(_ bytes: UnsafeBufferPointer<UInt8>, _ read: (inout JSONReader) -> Value?) -> Value? {
        var reader = JSONReader(bytes)
        reader.parser.skipWhitespace()
        guard let value = read(&reader) else { return nil }
        reader.parser.skipWhitespace()
        return reader.parser.position == bytes.count ? value : nil
    }

    /// Reads an object, calling `member` with each key, positioned at its value; `member` reads
    /// the value and returns false to fail. False when the object fails.
    package mutating func object(_ member: (inout JSONReader, JSONKey) -> Bool) -> Bool {
        guard depth < JSONValue.maxDepth, parser.next(is: UInt8(ascii: "{")) else { return false }
        depth += 1
        defer { depth -= 1 }
        parser.skipWhitespace()
        if parser.next(is: UInt8(ascii: "}")) { return true }
        let outerKeys = keys.count
        defer { keys.removeSubrange(outerKeys...) }
        while true {
            parser.skipWhitespace()
            guard let body = parser.readStringBody(), JSONString.isPlainASCII(body), keys.count - outerKeys < Self.maxMembers else {
                return false
            }
            let key = JSONKey(bytes: body)
            guard !keys[outerKeys...].contains(where: { $0 == key }) else { return false }
            keys.append(key)
            parser.skipWhitespace()
            guard parser.next(is: UInt8(ascii: ":")) else { return false }
            parser.skipWhitespace()
            guard member(&self, key) else { return false }
            parser.skipWhitespace()
            if parser.next(is: UInt8(ascii: ",")) { continue }
            return parser.next(is: UInt8(ascii: "}"))
        }
    }

    /// Reads an array, calling `element` positioned at each element; `element` reads it and
    /// returns false to fail. False when the array fails.
    package mutating func array(_ element: (inout JSONReader) -> Bool) -> Bool {
        guard depth < JSONValue.maxDepth, parser.next(is: UInt8(ascii: "[")) else { return false }
        depth += 1
        defer { depth -= 1 }
        parser.skipWhitespace()
        if parser.next(is: UInt8(ascii: "]")) { return true }
        while true {
            parser.skipWhitespace()
            guard element(&self) else { return false }
            parser.skipWhitespace()
            if parser.next(is: UInt8(ascii: ",")) { continue }
            return parser.next(is: UInt8(ascii: "]"))
        }
    }

    /// An integer value, as `JSONCoding` decodes an `Int64`.
    package mutating func int64() -> Int64? { value()?.int64Value }

    /// A string value.
    package mutating func string() -> String? {
        guard parser.position < parser.bytes.count, parser.bytes[parser.position] == UInt8(ascii: "\"") else { return nil }
        return try? parser.parseString()
    }

    /// A string value without escapes or non-ASCII, as the bytes of the document; nil for any
    /// other value (which is then not read).
    package mutating func plainString() -> JSONKey? {
        let start = parser.position
        guard let body = parser.readStringBody(), JSONString.isPlainASCII(body) else {
            parser.position = start
            return nil
        }
        return JSONKey(bytes: body)
    }

    /// A boolean value.
    package mutating func bool() -> Bool? {
        guard case .bool(let value)? = self.value() else { return nil }
        return value
    }

    /// Whether the value is null; if it is, it is read.
    package mutating func null() -> Bool {
        guard parser.position < parser.bytes.count, parser.bytes[parser.position] == UInt8(ascii: "n") else { return false }
        return (try? parser.expectWord("null")) != nil
    }

    /// Any value, parsed.
    package mutating func value() -> JSONValue? { try? parser.parseValue(depth: depth) }

    /// Any value, parsed and dropped; false when it does not parse.
    package mutating func skip() -> Bool { value() != nil }
}

/// A key of an object `JSONReader` reads, or a plain string value: plain ASCII bytes of the
/// document (equal bytes, equal strings).
package struct JSONKey {
    let bytes: UnsafeBufferPointer<UInt8>

    package init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    package static func == (key: JSONKey, name: StaticString) -> Bool {
        key.bytes.count == name.utf8CodeUnitCount
            && (key.bytes.isEmpty || memcmp(key.bytes.baseAddress!, name.utf8Start, key.bytes.count) == 0)
    }

    static func == (a: JSONKey, b: JSONKey) -> Bool {
        a.bytes.count == b.bytes.count && (a.bytes.isEmpty || memcmp(a.bytes.baseAddress!, b.bytes.baseAddress!, a.bytes.count) == 0)
    }

    package static func ~= (name: StaticString, key: JSONKey) -> Bool { key == name }

    package var string: String { String(decoding: bytes, as: UTF8.self) }
}

extension JSONParser {
    /// Whether the next byte is `byte`; if it is, it is read.
    mutating func next(is byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }
}

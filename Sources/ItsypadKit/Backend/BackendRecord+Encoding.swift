import ItsypadSupport

// Records are encoded by hand: a first sync encodes one per record, and `JSONCoding`'s Codable
// path (a box a member, casts, a dictionary an object) cost about 400,000 instructions a tab.
// Each writer here gives the bytes `JSONCoding.encode` gives for the same value: keys sorted,
// nil optionals left out, strings escaped and numbers written as `JSONValue` writes them.
// `RecordEncodingTests` checks them byte for byte and read back; the Codable conformances stay
// the definition of the format, and the decoder.

extension BackendRecord {
    /// `JSONCoding.encode(self)`. Throws where it does (a field that is not a finite number).
    package func encodedJSON() throws -> [UInt8] {
        var out: [UInt8] = []
        try appendJSON(to: &out)
        return out
    }

    /// Appends `JSONCoding.encode(self)` to `out`.
    package func appendJSON(to out: inout [UInt8]) throws {
        var object = JSONMembers(opening: &out)
        if let created {
            object.key("created", in: &out)
            created.appendJSON(to: &out)
        }
        object.key("fields", in: &out)
        try FieldValue.appendJSON(fields, to: &out)
        if let modified {
            object.key("modified", in: &out)
            modified.appendJSON(to: &out)
        }
        if let recordChangeTag {
            object.key("recordChangeTag", in: &out)
            JSONValue.writeString(recordChangeTag, to: &out)
        }
        object.key("recordName", in: &out)
        JSONValue.writeString(recordName, to: &out)
        object.key("recordType", in: &out)
        JSONValue.writeString(recordType, to: &out)
        out.append(UInt8(ascii: "}"))
    }
}

extension Stamp {
    func appendJSON(to out: inout [UInt8]) {
        var object = JSONMembers(opening: &out)
        object.key("deviceID", in: &out)
        JSONValue.writeString(deviceID, to: &out)
        object.key("timestamp", in: &out)
        out += String(timestamp).utf8
        out.append(UInt8(ascii: "}"))
    }
}

extension FieldValue {
    /// `JSONCoding.encode(fields)`: an object of the fields by name, names in `String` order.
    package static func encodedJSON(_ fields: [String: FieldValue]) throws -> [UInt8] {
        var out: [UInt8] = []
        try appendJSON(fields, to: &out)
        return out
    }

    /// Appends `JSONCoding.encode(fields)` to `out`.
    package static func appendJSON(_ fields: [String: FieldValue], to out: inout [UInt8]) throws {
        var object = JSONMembers(opening: &out)
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            object.key(name, in: &out)
            try value.appendJSON(to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Appends `JSONCoding.encode(self)`: `{"type":…,"value":…}`.
    func appendJSON(to out: inout [UInt8]) throws {
        out += #"{"type":"#.utf8
        JSONValue.writeString(typeName, to: &out)
        out += #","value":"#.utf8
        switch self {
        case .string(let value): JSONValue.writeString(value, to: &out)
        case .int64(let value), .timestamp(let value): out += String(value).utf8
        case .double(let value):
            // As `JSONCoding` refuses it: JSON has no form for it.
            guard value.isFinite else {
                throw EncodingError.invalidValue(value, .init(codingPath: [], debugDescription: "\(value) has no JSON form"))
            }
            JSONValue.writeNumber(value, to: &out)
        case .stringList(let list):
            out.append(UInt8(ascii: "["))
            for (index, item) in list.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.writeString(item, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .asset(let reference):
            out += #"{"fileChecksum":"#.utf8
            JSONValue.writeString(reference.fileChecksum, to: &out)
            out += #","size":"#.utf8
            out += String(reference.size).utf8
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "}"))
    }
}

/// The members of one compact JSON object being written into a buffer: a comma before each but
/// the first. The caller adds them in sorted order, as `JSONCoding` writes them, and closes it.
struct JSONMembers {
    private var isEmpty = true

    init(opening out: inout [UInt8]) { out.append(UInt8(ascii: "{")) }

    /// A plain name that needs no escaping.
    mutating func key(_ name: StaticString, in out: inout [UInt8]) {
        if !isEmpty { out.append(UInt8(ascii: ",")) }
        isEmpty = false
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        out += #"":"#.utf8
    }

    /// Any name, escaped.
    mutating func key(_ name: String, in out: inout [UInt8]) {
        if !isEmpty { out.append(UInt8(ascii: ",")) }
        isEmpty = false
        JSONValue.writeString(name, to: &out)
        out.append(UInt8(ascii: ":"))
    }
}

import ItsypadSupport

// Record files are read without the decoder: a fresh device's first sync reads one per record,
// and `JSONCoding`'s decoder (keyed containers, a dictionary decoded through casts) cost a third
// of its instructions. Each reader gives what `JSONCoding.decode` gives and nil where it throws;
// `VersionDocumentReadingTests` checks that on valid documents and on every one-member mutation
// of them. The Codable conformances stay the definition of the format, and the writers.

extension VersionDocument {
    /// `JSONCoding.decode(VersionDocument.self, from: json)`, or nil where that throws.
    init?(reading json: JSONValue) {
        guard let zone = json["zone"]?.stringValue, let version = json["version"]?.stringValue,
            let derived = json["derived"]?.boolValue, let deleted = json["deleted"]?.boolValue,
            let record = json["record"].flatMap(BackendRecord.init(reading:)),
            let base = json.optionalMember("base", BaseDocument.init(reading:))
        else { return nil }
        self.zone = zone
        self.version = version
        self.derived = derived
        self.deleted = deleted
        self.record = record
        self.base = base
    }
}

extension VersionDocument.BaseDocument {
    init?(reading json: JSONValue) {
        guard let version = json["version"]?.stringValue, let fields = json["fields"].flatMap(FieldValue.fields(reading:)) else {
            return nil
        }
        self.init(version: version, fields: fields)
    }
}

extension BackendRecord {
    /// `JSONCoding.decode(BackendRecord.self, from: json)`, or nil where that throws.
    init?(reading json: JSONValue) {
        guard let recordName = json["recordName"]?.stringValue, let recordType = json["recordType"]?.stringValue,
            let recordChangeTag = json.optionalMember("recordChangeTag", \.stringValue),
            let fields = json["fields"].flatMap(FieldValue.fields(reading:)),
            let created = json.optionalMember("created", Stamp.init(reading:)),
            let modified = json.optionalMember("modified", Stamp.init(reading:))
        else { return nil }
        self.init(
            recordName: recordName, recordType: recordType, recordChangeTag: recordChangeTag, fields: fields, created: created,
            modified: modified)
    }
}

extension Stamp {
    init?(reading json: JSONValue) {
        guard let timestamp = json["timestamp"]?.int64Value, let deviceID = json["deviceID"]?.stringValue else { return nil }
        self.init(timestamp: timestamp, deviceID: deviceID)
    }
}

extension FieldValue {
    /// `JSONCoding.decode([String: FieldValue].self, from: json)`, or nil where that throws. A
    /// repeated name keeps its first value, as the decoder's keyed container does.
    static func fields(reading json: JSONValue) -> [String: FieldValue]? {
        guard case .object(let members) = json else { return nil }
        var fields = [String: FieldValue](minimumCapacity: members.count)
        for (name, value) in members where fields[name] == nil {
            guard let field = FieldValue(reading: value) else { return nil }
            fields[name] = field
        }
        return fields
    }

    init?(reading json: JSONValue) {
        guard let type = json["type"]?.stringValue, let value = json["value"] else { return nil }
        switch type {
        case "STRING":
            guard let string = value.stringValue else { return nil }
            self = .string(string)
        case "INT64":
            guard let number = value.int64Value else { return nil }
            self = .int64(number)
        case "DOUBLE":
            guard let number = value.doubleValue else { return nil }
            self = .double(number)
        case "TIMESTAMP":
            guard let number = value.int64Value else { return nil }
            self = .timestamp(number)
        case "STRING_LIST":
            guard let list = value.stringArrayValue else { return nil }
            self = .stringList(list)
        case "ASSETID":
            guard let fileChecksum = value["fileChecksum"]?.stringValue, let size = value["size"]?.int64Value.flatMap(Int.init(exactly:))
            else { return nil }
            self = .asset(AssetReference(fileChecksum: fileChecksum, size: size))
        default:
            return nil
        }
    }
}

import ItsypadSupport

// Record files are read without the decoder: a fresh device's first sync reads one per record,
// and `JSONCoding`'s decoder (keyed containers, a dictionary decoded through casts) cost a third
// of its instructions. Each reader gives what `JSONCoding.decode` gives and nil where it throws;
// `VersionDocumentReadingTests` checks that on valid documents and on every one-member mutation
// of them. The Codable conformances stay the definition of the format, and the writers.

extension VersionDocument {
    private init(zone: String, version: String, derived: Bool, deleted: Bool, record: BackendRecord, base: BaseDocument?) {
        self.zone = zone
        self.version = version
        self.derived = derived
        self.deleted = deleted
        self.record = record
        self.base = base
    }

    /// `JSONCoding.decode(VersionDocument.self, from: json)`, or nil where that throws.
    init?(reading json: JSONValue) {
        guard let zone = json["zone"]?.stringValue, let version = json["version"]?.stringValue,
            let derived = json["derived"]?.boolValue, let deleted = json["deleted"]?.boolValue,
            let record = json["record"].flatMap(BackendRecord.init(reading:)),
            let base = json.optionalMember("base", BaseDocument.init(reading:))
        else { return nil }
        self.init(zone: zone, version: version, derived: derived, deleted: deleted, record: record, base: base)
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
        self.init(type: type, value: value)
    }

    /// The field of a `type` and `value` member.
    init?(type: String, value: JSONValue) {
        // No other string equals a type name as a String (none has a letter that a character
        // decomposes to, as U+212A KELVIN SIGN does to K): bytes compare as strings do here.
        var type = type
        guard let kind = type.withUTF8({ UTF8Check.isASCII($0) ? Kind(JSONKey(bytes: $0)) : nil }) else { return nil }
        self.init(kind: kind, value: value)
    }

    /// The field types, by name.
    enum Kind {
        case string, int64, double, timestamp, stringList, asset

        /// The type `name` names; nil for none.
        init?(_ name: JSONKey) {
            switch name {
            case "STRING": self = .string
            case "INT64": self = .int64
            case "DOUBLE": self = .double
            case "TIMESTAMP": self = .timestamp
            case "STRING_LIST": self = .stringList
            case "ASSETID": self = .asset
            default: return nil
            }
        }
    }

    init?(kind: Kind, value: JSONValue) {
        switch kind {
        case .string:
            guard let string = value.stringValue else { return nil }
            self = .string(string)
        case .int64:
            guard let number = value.int64Value else { return nil }
            self = .int64(number)
        case .double:
            guard let number = value.doubleValue else { return nil }
            self = .double(number)
        case .timestamp:
            guard let number = value.int64Value else { return nil }
            self = .timestamp(number)
        case .stringList:
            guard let list = value.stringArrayValue else { return nil }
            self = .stringList(list)
        case .asset:
            guard let fileChecksum = value["fileChecksum"]?.stringValue, let size = value["size"]?.int64Value.flatMap(Int.init(exactly:))
            else { return nil }
            self = .asset(AssetReference(fileChecksum: fileChecksum, size: size))
        }
    }
}

// A first sync reads one record file per record: those read straight from their bytes (see
// `JSONReader`), each reader giving what the parser and the reader above give, or nil to leave
// the file to them. `VersionDocumentReadingTests` checks both agree.

extension VersionDocument {
    /// The document in a record file's bytes, as `JSONValue.parse` and `init(reading:)` read it;
    /// nil where either fails.
    static func read(_ bytes: [UInt8]) -> VersionDocument? {
        if let document = bytes.withUnsafeBufferPointer({ JSONReader.read($0, VersionDocument.init(reader:)) }) { return document }
        guard let json = try? JSONValue.parse(bytes) else { return nil }
        return VersionDocument(reading: json)
    }

    init?(reader: inout JSONReader) {
        var zone: String?, version: String?, derived: Bool?, deleted: Bool?, record: BackendRecord?
        var base: BaseDocument?
        let read = reader.object { reader, key in
            switch key {
            case "zone": zone = reader.string(); return zone != nil
            case "version": version = reader.string(); return version != nil
            case "derived": derived = reader.bool(); return derived != nil
            case "deleted": deleted = reader.bool(); return deleted != nil
            case "record": record = BackendRecord(reader: &reader); return record != nil
            case "base":
                if reader.null() { return true }
                base = BaseDocument(reader: &reader)
                return base != nil
            default: return reader.skip()
            }
        }
        guard read, let zone, let version, let derived, let deleted, let record else { return nil }
        self.init(zone: zone, version: version, derived: derived, deleted: deleted, record: record, base: base)
    }
}

extension VersionDocument.BaseDocument {
    init?(reader: inout JSONReader) {
        var version: String?, fields: [String: FieldValue]?
        let read = reader.object { reader, key in
            switch key {
            case "version": version = reader.string(); return version != nil
            case "fields": fields = FieldValue.fields(reader: &reader); return fields != nil
            default: return reader.skip()
            }
        }
        guard read, let version, let fields else { return nil }
        self.init(version: version, fields: fields)
    }
}

extension BackendRecord {
    init?(reader: inout JSONReader) {
        var recordName: String?, recordType: String?, recordChangeTag: String?, fields: [String: FieldValue]?
        var created: Stamp?, modified: Stamp?
        let read = reader.object { reader, key in
            switch key {
            case "recordName": recordName = reader.string(); return recordName != nil
            case "recordType": recordType = reader.string(); return recordType != nil
            case "recordChangeTag":
                if reader.null() { return true }
                recordChangeTag = reader.string()
                return recordChangeTag != nil
            case "fields": fields = FieldValue.fields(reader: &reader); return fields != nil
            case "created":
                if reader.null() { return true }
                created = Stamp(reader: &reader)
                return created != nil
            case "modified":
                if reader.null() { return true }
                modified = Stamp(reader: &reader)
                return modified != nil
            default: return reader.skip()
            }
        }
        guard read, let recordName, let recordType, let fields else { return nil }
        self.init(
            recordName: recordName, recordType: recordType, recordChangeTag: recordChangeTag, fields: fields, created: created,
            modified: modified)
    }
}

extension Stamp {
    init?(reader: inout JSONReader) {
        var timestamp: Int64?, deviceID: String?
        let read = reader.object { reader, key in
            switch key {
            case "timestamp": timestamp = reader.value()?.int64Value; return timestamp != nil
            case "deviceID": deviceID = reader.string(); return deviceID != nil
            default: return reader.skip()
            }
        }
        guard read, let timestamp, let deviceID else { return nil }
        self.init(timestamp: timestamp, deviceID: deviceID)
    }
}

extension FieldValue {
    /// A record's fields: names are the object's keys.
    static func fields(reader: inout JSONReader) -> [String: FieldValue]? {
        var fields = [String: FieldValue](minimumCapacity: 12)
        let read = reader.object { reader, key in
            var kind: Kind?, value: JSONValue?
            let read = reader.object { reader, key in
                switch key {
                case "type": kind = reader.plainString().flatMap(Kind.init); return kind != nil
                case "value": value = reader.value(); return value != nil
                default: return reader.skip()
                }
            }
            guard read, let kind, let value, let field = FieldValue(kind: kind, value: value) else { return false }
            fields[key.string] = field
            return true
        }
        return read ? fields : nil
    }
}

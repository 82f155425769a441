import ItsypadSupport

// Record files are read without the decoder: a fresh device's first sync reads one per record,
// and `JSONCoding`'s decoder (keyed containers, a dictionary decoded through casts) would be a
// large part of that work. They are read straight from their bytes (see `JSONReader`), each reader
// giving what `JSONCoding.decode` gives, or nil to leave the file to the decoder, which then
// decides (and says what is wrong). `VersionDocumentReadingTests` checks both agree on valid
// documents and on every one-member mutation of them. The Codable conformances stay the
// definition of the format, and the writers.

extension FieldValue {
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

    /// The field of a `type` and `value` member, as the decoder reads it.
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

extension VersionDocument {
    /// `JSONCoding.decode(VersionDocument.self, from: bytes)`, or nil where that throws.
    static func read(_ bytes: [UInt8]) -> VersionDocument? {
        if let document = bytes.withUnsafeBufferPointer({ JSONReader.read($0, VersionDocument.init(reader:)) }) { return document }
        return try? JSONCoding.decode(VersionDocument.self, from: bytes)
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
        self.zone = zone
        self.version = version
        self.derived = derived
        self.deleted = deleted
        self.record = record
        self.base = base
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

import ItsypadModel
import ItsypadSupport

/// A record in CloudKit Web Services record-dictionary form, as stored in
/// `records/<recordType>/<recordName>.json` and in the journal.
public struct BackendRecord: Equatable, Sendable, Codable {
    /// Unique within the record type; also the file name: 1–250 characters of [A-Za-z0-9._-], not starting with ".".
    public var recordName: String
    /// e.g. "ScratchTab"; also a directory name, same characters as `recordName`.
    public var recordType: String
    /// Tag of this version: the journal seq of the change that wrote it. nil before the first save.
    public var recordChangeTag: String?
    public var fields: [String: FieldValue]
    /// Set by the backend on the first save and kept afterwards.
    public var created: Stamp?
    /// Set by the backend on every save.
    public var modified: Stamp?

    public init(
        recordName: String,
        recordType: String,
        recordChangeTag: String? = nil,
        fields: [String: FieldValue] = [:],
        created: Stamp? = nil,
        modified: Stamp? = nil
    ) {
        self.recordName = recordName
        self.recordType = recordType
        self.recordChangeTag = recordChangeTag
        self.fields = fields
        self.created = created
        self.modified = modified
    }

    /// The record's identity.
    public var id: RecordID { RecordID(recordType: recordType, recordName: recordName) }
}

/// When and by which device a record version was written.
public struct Stamp: Equatable, Sendable, Codable {
    /// Milliseconds since 1970.
    public var timestamp: Int64
    /// The `device` passed to `modify`.
    public var deviceID: String

    public init(timestamp: Int64, deviceID: String) {
        self.timestamp = timestamp
        self.deviceID = deviceID
    }
}

/// A content-addressed blob stored under `assets/<fileChecksum>`.
public struct AssetReference: Hashable, Sendable, Codable {
    /// Lowercase hex SHA-256 of the content.
    public var fileChecksum: String
    /// Length in bytes.
    public var size: Int

    public init(fileChecksum: String, size: Int) {
        self.fileChecksum = fileChecksum
        self.size = size
    }

    /// True if the checksum is 64 lowercase hex digits (and so also a safe file name).
    public var hasValidChecksum: Bool {
        fileChecksum.utf8.count == 64
            && fileChecksum.utf8.allSatisfy { byte in
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            }
    }
}

/// A field value. Encoded like CloudKit Web Services: `{"value": …, "type": "STRING"}`.
public enum FieldValue: Equatable, Sendable, Codable {
    /// STRING
    case string(String)
    /// INT64
    case int64(Int64)
    /// DOUBLE; must be finite.
    case double(Double)
    /// TIMESTAMP, milliseconds since 1970.
    case timestamp(Int64)
    /// STRING_LIST
    case stringList([String])
    /// ASSETID: a blob stored with `putAsset`. It does not count towards the record size limit.
    case asset(AssetReference)

    private enum CodingKeys: String, CodingKey {
        case value, type
    }

    /// The Web Services type name.
    public var typeName: String {
        switch self {
        case .string: "STRING"
        case .int64: "INT64"
        case .double: "DOUBLE"
        case .timestamp: "TIMESTAMP"
        case .stringList: "STRING_LIST"
        case .asset: "ASSETID"
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        switch type {
        case "STRING": self = .string(try container.decode(String.self, forKey: .value))
        case "INT64": self = .int64(try container.decode(Int64.self, forKey: .value))
        case "DOUBLE": self = .double(try container.decode(Double.self, forKey: .value))
        case "TIMESTAMP": self = .timestamp(try container.decode(Int64.self, forKey: .value))
        case "STRING_LIST": self = .stringList(try container.decode([String].self, forKey: .value))
        case "ASSETID": self = .asset(try container.decode(AssetReference.self, forKey: .value))
        default:
            throw DecodingError.dataCorruptedError(forKey: .type, in: container, debugDescription: "unknown field type \(type)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(typeName, forKey: .type)
        switch self {
        case .string(let value): try container.encode(value, forKey: .value)
        case .int64(let value): try container.encode(value, forKey: .value)
        case .double(let value): try container.encode(value, forKey: .value)
        case .timestamp(let value): try container.encode(value, forKey: .value)
        case .stringList(let value): try container.encode(value, forKey: .value)
        case .asset(let value): try container.encode(value, forKey: .value)
        }
    }
}

extension NameRules {
    /// Why `id` cannot be used, or nil if it can.
    static func problem(with id: RecordID) -> String? {
        if !isSafeFileName(id.recordType, maxLength: maxRecordTypeLength) {
            return
                "record type \(Text.quoted(id.recordType)) must be 1–\(maxRecordTypeLength) characters of A-Z a-z 0-9 . _ - and not start with '.'"
        }
        if !isSafeFileName(id.recordName, maxLength: maxRecordNameLength) {
            return
                "record name \(Text.quoted(id.recordName)) must be 1–\(maxRecordNameLength) characters of A-Z a-z 0-9 . _ - and not start with '.'"
        }
        return nil
    }

    /// Longest record name in a backend directory: "<name>.<device>.json" must fit in 255 bytes whichever
    /// device writes a version of it.
    static let maxFolderRecordNameLength = maxRecordNameLength - 1 - VersionVector.maxDeviceIDLength

    /// Why a backend directory cannot store a record of this name, which other backends can: its
    /// files name the device too. Nil if it can.
    static func folderProblem(with id: RecordID) -> String? {
        guard id.recordName.utf8.count > maxFolderRecordNameLength else { return nil }
        return "record name \(Text.quoted(id.recordName)) is longer than a backend directory's \(maxFolderRecordNameLength) characters"
    }

    /// Why the record's names or fields cannot be stored, or nil if they can. Asset existence is checked by the backend.
    static func problem(with record: BackendRecord) -> String? {
        if let problem = problem(with: record.id) { return problem }
        for (name, value) in record.fields {
            guard isFieldName(name) else {
                return "field name \(Text.quoted(name)) must start with a letter and contain only A-Z a-z 0-9 _"
            }
            switch value {
            case .double(let number) where !number.isFinite:
                return "field \(Text.quoted(name)) is not a finite number"
            case .asset(let reference)
            where !reference.hasValidChecksum || !(0...BackendLimits.cloudKit.maxAssetBytes).contains(reference.size):
                return "field \(Text.quoted(name)) has an invalid asset reference"
            default:
                continue
            }
        }
        return nil
    }

    /// The sequence number a change tag or a number in a file stands for: decimal digits for
    /// 1…`BackendLimits.maxSeq` (0 too with `allowingZero`), nothing else.
    static func seq(_ text: some StringProtocol, allowingZero: Bool = false) -> Int64? {
        guard (1...16).contains(text.utf8.count), text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let value = Int64(text), isSeq(value, allowingZero: allowingZero)
        else { return nil }
        return value
    }

    static func isSeq(_ value: Int64, allowingZero: Bool = false) -> Bool {
        ((allowingZero ? 0 : 1)...BackendLimits.maxSeq).contains(value)
    }

    /// Why a record read from the backend does not follow the format, or nil: its names and fields,
    /// and a change tag that is a sequence number.
    static func problem(withStored record: BackendRecord) -> String? {
        if let problem = problem(with: record) { return problem }
        guard let tag = record.recordChangeTag, seq(tag) != nil else {
            return "recordChangeTag must be a sequence number from 1 to \(BackendLimits.maxSeq)"
        }
        return nil
    }
}

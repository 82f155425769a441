/// Paths inside a format 2 backend directory. Every path but `zone.json` names the one device that
/// writes it; names read from the directory are checked against these rules before they are used.
struct ReplicatedLayout {
    static let format = 2

    let root: String

    var zoneFile: String { root + "/zone.json" }
    var devicesDirectory: String { root + "/devices" }
    var recordsDirectory: String { root + "/records" }

    func deviceDirectory(_ device: String) -> String { devicesDirectory + "/" + device }
    func deviceFile(_ device: String) -> String { deviceDirectory(device) + "/device.json" }
    func lockFile(_ device: String) -> String { deviceDirectory(device) + "/lock" }
    func journalDirectory(_ device: String) -> String { deviceDirectory(device) + "/journal" }
    func assetsDirectory(_ device: String) -> String { deviceDirectory(device) + "/assets" }
    func assetFile(_ device: String, _ checksum: String) -> String { assetsDirectory(device) + "/" + checksum }

    func recordTypeDirectory(_ type: String) -> String { recordsDirectory + "/" + type }
    func recordDirectory(_ id: RecordID) -> String { recordTypeDirectory(id.recordType) + "/" + id.recordName }
    func recordFile(_ id: RecordID, device: String) -> String { recordDirectory(id) + "/" + device + ".json" }

    /// The devices that have a folder here. Anything else in `devices/` (conflict copies, a
    /// service's temporary files, `.stfolder`) is not a device.
    func devices() throws -> [String] {
        try (FileIO(root: root).listDirectory(devicesDirectory) ?? []).filter { VersionVector.isDeviceID($0) }.sorted()
    }

    /// The device whose record file `name` is (`<device>.json`), or nil for any other name.
    static func device(ofRecordFile name: String) -> String? {
        guard name.hasSuffix(".json") else { return nil }
        let device = String(name.dropLast(5))
        return VersionVector.isDeviceID(device) ? device : nil
    }
}

/// Contents of `zone.json` in format 2 (format 1's fields, format 2).
struct ReplicatedZoneDocument: Codable {
    let format: Int
    let zoneID: String
    let created: Int64

    /// Parses zone.json: a newer format is refused before anything else is read.
    static func parse(_ bytes: [UInt8], path: String) throws -> ZoneInfo {
        struct FormatOnly: Decodable { let format: Int }
        let document: ReplicatedZoneDocument
        do {
            let format = try JSONCoding.decode(FormatOnly.self, from: bytes).format
            guard format <= ReplicatedLayout.format else { throw BackendError.newerFormat(found: format) }
            document = try JSONCoding.decode(ReplicatedZoneDocument.self, from: bytes)
        } catch let error as BackendError {
            throw error
        } catch {
            throw BackendError.corrupt(path: path, reason: JSONCoding.describe(error))
        }
        guard document.format == ReplicatedLayout.format else {
            throw BackendError.corrupt(path: path, reason: "format \(document.format) backends are not converted to format 2 yet")
        }
        guard !document.zoneID.isEmpty, !document.zoneID.contains(":"), !document.zoneID.contains("/") else {
            throw BackendError.corrupt(path: path, reason: "zoneID must be a non-empty string without ':' or '/'")
        }
        return ZoneInfo(zoneID: document.zoneID, format: document.format, created: document.created)
    }
}

/// Contents of `devices/<device>/device.json`: what a device says about itself.
struct DeviceDocument: Codable, Equatable {
    var format: Int
    var deviceID: String
    var instance: String
    var name: String
    var zoneID: String
    var created: Int64
    var lastSync: Int64?
    /// Its journal is reflected in its record files up to this sequence number.
    var appliedSeq: Int64
    /// For every device, the last sequence number of its journal this device has read (its acknowledgement).
    var seen: [String: Int64]
}

/// A record version as stored in a record file and in a journal change.
struct VersionDocument: Codable, Equatable {
    let zone: String
    let version: String
    let derived: Bool
    let deleted: Bool
    let record: BackendRecord
    let base: BaseDocument?

    struct BaseDocument: Codable, Equatable {
        let version: String
        let fields: [String: FieldValue]
    }

    init(_ version: RecordVersion, zone: String) {
        self.zone = zone
        self.version = version.version.tag
        derived = version.isDerived
        deleted = version.isDeleted
        record = version.record
        base = version.base.map { BaseDocument(version: $0.version.tag, fields: $0.fields) }
    }

    /// The version this document describes, written by `writer`; nil when it is malformed
    /// (bad names or fields, a vector that does not parse, a tag that is not the vector).
    func recordVersion(writer: String) -> RecordVersion? {
        guard let vector = VersionVector(tag: version), !vector.isEmpty, record.recordChangeTag == version,
              NameRules.problem(with: record) == nil, !deleted || record.fields.isEmpty else { return nil }
        var recordBase: RecordBase?
        if let base {
            guard let baseVector = VersionVector(tag: base.version) else { return nil }
            recordBase = RecordBase(version: baseVector, fields: base.fields)
        }
        return RecordVersion(record: record, version: vector, writer: writer, isDeleted: deleted, isDerived: derived, base: recordBase)
    }
}

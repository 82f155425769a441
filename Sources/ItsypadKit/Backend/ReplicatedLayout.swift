import ItsypadSupport

/// Paths inside a format 2 backend directory. Every path but `zone.json` names the one device that
/// writes it; names read from the directory are checked against these rules before they are used.
package struct ReplicatedLayout {
    package static let format = 2

    package let root: String

    package init(root: String) {
        self.root = root
    }

    package var zoneFile: String { root + "/zone.json" }
    package var devicesDirectory: String { root + "/devices" }
    var recordsDirectory: String { root + "/records" }

    func deviceDirectory(_ device: String) -> String { devicesDirectory + "/" + device }
    func deviceFile(_ device: String) -> String { deviceDirectory(device) + "/device.json" }
    func lockFile(_ device: String) -> String { deviceDirectory(device) + "/lock" }
    package func journalDirectory(_ device: String) -> String { deviceDirectory(device) + "/journal" }
    func assetsDirectory(_ device: String) -> String { deviceDirectory(device) + "/assets" }
    func assetFile(_ device: String, _ checksum: String) -> String { assetsDirectory(device) + "/" + checksum }

    func recordTypeDirectory(_ type: String) -> String { recordsDirectory + "/" + type }
    /// `records/<type>/<name>.<device>.json`: one flat folder per record type, as a folder per
    /// record would cost a directory for every record (ten times `cp -r`'s time for 10,000 records).
    func recordFile(_ id: RecordID, device: String) -> String { recordTypeDirectory(id.recordType) + "/" + id.recordName + "." + device + ".json" }

    /// The devices that have a folder here. Anything else in `devices/` (conflict copies, a
    /// service's temporary files, `.stfolder`) is not a device.
    package func devices() throws -> [String] {
        try (FileIO(root: root).listDirectory(devicesDirectory) ?? []).filter { VersionVector.isDeviceID($0) }.sorted()
    }

    /// The record name and device of a record file named `<name>.<device>.json` (device ids have
    /// no dots, so the last dot separates them), or nil for any other name.
    static func recordFile(named file: String) -> (recordName: String, device: String)? {
        guard file.hasSuffix(".json"), !file.hasPrefix(".") else { return nil }
        let stem = file.dropLast(5)
        guard let dot = stem.lastIndex(of: ".") else { return nil }
        let device = stem[stem.index(after: dot)...]
        let name = String(stem[..<dot])
        guard VersionVector.isDeviceID(device), !name.isEmpty else { return nil }
        return (name, String(device))
    }
}

/// Contents of `devices/<device>/device.json`: what a device says about itself.
struct DeviceDocument: Codable, Equatable {
    var format: Int
    var deviceID: String
    var instance: String
    var name: String
    var zoneID: String
    /// When that zone was created (it may be the winner of a concurrent creation).
    var zoneCreated: Int64?
    /// That zone's key check value, when it is encrypted.
    var zoneKeyCheckValue: String?
    var created: Int64
    var lastSync: Int64?
    /// Its journal is reflected in its record files up to this sequence number.
    var appliedSeq: Int64
    /// For every device, the last sequence number of its journal this device has read (its acknowledgement).
    var seen: [String: Int64]
    /// The token up to which this device has looked for versions that supersede its own.
    var collectedThrough: String?
    /// Its own tombstones up to this sequence number have been removed or are current no more.
    var tombstonesSweptThrough: Int64?
}

/// A record version as stored in a record file and in a journal change.
struct VersionDocument: Codable, Equatable {
    let zone: String
    let version: String
    let derived: Bool
    let deleted: Bool
    /// The record; in an encrypted zone its fields are sealed (see `VersionSealer`).
    var record: BackendRecord
    var base: BaseDocument?

    struct BaseDocument: Codable, Equatable {
        let version: String
        /// In an encrypted zone, none: they travel sealed with the record's.
        var fields: [String: FieldValue]
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
    /// (bad names or fields, a vector that does not parse, a tag that is not the vector, a
    /// tombstone with fields other than its seal).
    func recordVersion(writer: String) -> RecordVersion? {
        guard let vector = VersionVector(tag: version), !vector.isEmpty, record.recordChangeTag == version,
              NameRules.problem(with: record) == nil, !deleted || record.fields.keys.allSatisfy({ $0 == RecordCipher.sealedFieldName }) else { return nil }
        var recordBase: RecordBase?
        if let base {
            guard let baseVector = VersionVector(tag: base.version) else { return nil }
            recordBase = RecordBase(version: baseVector, fields: base.fields)
        }
        return RecordVersion(record: record, version: vector, writer: writer, isDeleted: deleted, isDerived: derived, base: recordBase)
    }
}

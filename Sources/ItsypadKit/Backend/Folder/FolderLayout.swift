import ItsypadModel
import ItsypadSupport

/// Paths inside a backend directory. Every path but `zone.json` names the one device that writes
/// it; names read from the directory are checked against these rules before they are used.
///
/// Record files are fanned out into up to 256 folders per record type by a hash of the record
/// name, so that a change rewrites one small folder, not one of every record: what a git remote
/// stores and sends for each commit.
package struct FolderLayout {
    package let root: String

    /// `root` is the backend directory (a trailing slash is dropped).
    package init(root: String) {
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
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
    /// `records/<type>/<bucket>/`: the folder of a record's files.
    func recordFolder(_ id: RecordID) -> String { recordTypeDirectory(id.recordType) + "/" + Self.bucket(of: id.recordName) }

    /// `<folder>/<name>.<device>.json`: files, not a folder per record, which would make copying and
    /// replicating a backend pay for a directory per record.
    func recordFile(_ id: RecordID, device: String) -> String { recordFolder(id) + "/" + id.recordName + "." + device + ".json" }

    /// The folders holding a record type's files, each with the bucket its files must hash to.
    /// Anything in the type's folder but a bucket folder is not data: a name that is not two
    /// lowercase hex digits, a file, a symbolic link.
    func recordFolders(ofType type: String, files: FileIO) throws -> [(path: String, bucket: String)] {
        let directory = recordTypeDirectory(type)
        // A type's folder that is not one (a symbolic link a peer planted, a file) holds no records:
        // skipped like a bucket that is not a folder, so that it stops nobody.
        guard try files.status(directory)?.isDirectory == true else { return [] }
        return try (files.listDirectory(directory) ?? []).filter(Self.isBucket).compactMap { bucket in
            try files.status(directory + "/" + bucket)?.isDirectory == true ? (directory + "/" + bucket, bucket) : nil
        }
    }

    /// The folder a record's files go in: the first byte of the SHA-256 of the record
    /// name (UTF-8) as two lowercase hex digits (`printf %s NAME | sha256sum | cut -c1-2`).
    static func bucket(of recordName: String) -> String {
        var hasher = SHA256()
        hasher.update(Array(recordName.utf8))
        return Hex.encode(hasher.finalize().prefix(1))
    }

    static func isBucket(_ name: String) -> Bool {
        name.utf8.count == 2
            && name.utf8.allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            }
    }

    /// The devices that have a folder here. Anything else in `devices/` (conflict copies, a
    /// service's temporary files, `.stfolder`) is not a device.
    package func devices() throws -> [String] {
        try (FileIO(root: root).listDirectory(devicesDirectory) ?? []).filter { VersionVector.isDeviceID($0) }.sorted()
    }

    /// The record name and device of a record file named `<name>.<device>.json` (device ids have
    /// no dots, so the last dot separates them), or nil for any other name.
    static func recordFile(named file: String) -> (recordName: String, device: String)? {
        // Read as bytes (a first sync lists every record file): record names and device ids are
        // ASCII, so a name that is not is no record file, and ASCII bytes split as its characters do.
        var file = file
        return file.withUTF8 { bytes in
            guard UTF8Check.isASCII(bytes), bytes.count > 5, bytes.first != UInt8(ascii: "."),
                bytes[(bytes.count - 5)...].elementsEqual(".json".utf8)
            else { return nil }
            let stem = UnsafeBufferPointer(rebasing: bytes[..<(bytes.count - 5)])
            guard let dot = stem.lastIndex(of: UInt8(ascii: ".")), dot > 0 else { return nil }
            let device = String(decoding: UnsafeBufferPointer(rebasing: stem[(dot + 1)...]), as: UTF8.self)
            guard VersionVector.isDeviceID(device) else { return nil }
            return (String(decoding: UnsafeBufferPointer(rebasing: stem[..<dot]), as: UTF8.self), device)
        }
    }
}

/// Contents of `devices/<device>/device.json`: what a device says about itself.
struct DeviceDocument: Codable, Equatable {
    /// The format whose files the device writes (`FolderBackend.format`).
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

    /// What `JSONCoding.encode(self)` writes, written by hand (see `BackendRecord.appendJSON`), its
    /// record given already encoded (`record`: the bytes of `JSONCoding.encode(self.record)`, which
    /// a writer checks the record's size with): each version is encoded once, for its size, its
    /// journal line and its record file.
    func encoded(record: [UInt8]? = nil) throws -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity((record?.count ?? 1024) + 256)
        var object = JSONMembers(opening: &bytes)
        if let base {
            object.key("base", in: &bytes)
            var members = JSONMembers(opening: &bytes)
            members.key("fields", in: &bytes)
            try FieldValue.appendJSON(base.fields, to: &bytes)
            members.key("version", in: &bytes)
            JSONValue.writeString(base.version, to: &bytes)
            bytes.append(UInt8(ascii: "}"))
        }
        object.key("deleted", in: &bytes)
        bytes += (deleted ? "true" : "false").utf8
        object.key("derived", in: &bytes)
        bytes += (derived ? "true" : "false").utf8
        object.key("record", in: &bytes)
        if let record { bytes += record } else { try self.record.appendJSON(to: &bytes) }
        object.key("version", in: &bytes)
        JSONValue.writeString(version, to: &bytes)
        object.key("zone", in: &bytes)
        JSONValue.writeString(zone, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return bytes
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
            NameRules.problem(with: record) == nil, !deleted || record.fields.keys.allSatisfy({ $0 == RecordCipher.sealedFieldName })
        else { return nil }
        var recordBase: RecordBase?
        if let base {
            guard let baseVector = VersionVector(tag: base.version) else { return nil }
            recordBase = RecordBase(version: baseVector, fields: base.fields)
        }
        return RecordVersion(record: record, version: vector, writer: writer, isDeleted: deleted, isDerived: derived, base: recordBase)
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// A `ReplicatedBackend` in a directory (format 2, `itsypad-backend(5)`): this device writes only
/// `devices/<its id>/…` and `records/<type>/<name>/<its id>.json`, so the directory may be a
/// coherent shared folder or each machine's own copy of a folder a replicating service keeps in step.
///
/// Not yet here: compaction and removal of superseded versions and tombstones, clone detection,
/// concurrent zone creation and conversion from format 1.
public final class ReplicatedDirectoryBackend: ReplicatedBackend {
    public let path: String
    public let deviceID: String
    /// This data directory's random identity: two with one device id are clones.
    let instance: String
    let deviceName: String
    let lockTimeout: Double
    let now: @Sendable () -> Int64
    let layout: ReplicatedLayout
    /// Every file operation inside the backend goes through this (see `FileTree`).
    let files: FileIO
    /// Appends start a new journal segment once the last one reaches this size.
    let segmentSizeLimit: Int
    /// A record file holds a record (1 MiB) and its base; anything larger is not read.
    static let maxRecordFileBytes = 2 * 1024 * 1024 + 64 * 1024

    public convenience init(path: String, deviceID: String, instance: String, deviceName: String, lockTimeout: Double = 10,
                            now: @escaping @Sendable () -> Int64 = { Time.now() }) {
        self.init(path: path, deviceID: deviceID, instance: instance, deviceName: deviceName, lockTimeout: lockTimeout, now: now,
                  segmentSizeLimit: 4 * 1024 * 1024)
    }

    init(path: String, deviceID: String, instance: String, deviceName: String, lockTimeout: Double,
         now: @escaping @Sendable () -> Int64, segmentSizeLimit: Int) {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        self.path = trimmed
        self.deviceID = deviceID
        self.instance = instance
        self.deviceName = deviceName
        self.lockTimeout = lockTimeout
        self.now = now
        self.segmentSizeLimit = segmentSizeLimit
        layout = ReplicatedLayout(root: trimmed)
        files = FileIO(root: trimmed)
    }

    func journal(of device: String) -> DeviceJournal {
        DeviceJournal(files: files, device: device, directory: layout.journalDirectory(device), segmentSizeLimit: segmentSizeLimit)
    }

    // MARK: Zone

    public func createZoneIfNeeded() throws -> ZoneInfo {
        if try backendDirectoryExists(), let zone = try existingZone() {
            try prepareDeviceFolder(zone: zone)
            return zone
        }
        try files.makeDirectory(path)
        let created = ZoneInfo(zoneID: Identifier.make().uppercased(), format: ReplicatedLayout.format, created: now())
        let document = ReplicatedZoneDocument(format: created.format, zoneID: created.zoneID, created: created.created)
        // Exclusive: in a coherent folder two devices creating at once get one zone.
        let zone = try createExclusively(try JSONCoding.encode(document), at: layout.zoneFile) ? created : try readZone()
        try prepareDeviceFolder(zone: zone)
        return zone
    }

    public func zone() throws -> ZoneInfo { try readZone() }

    func readZone() throws -> ZoneInfo {
        guard try backendDirectoryExists(), let zone = try existingZone() else { throw BackendError.zoneNotFound }
        return zone
    }

    private func existingZone() throws -> ZoneInfo? {
        try files.readFileIfExists(layout.zoneFile).map { try ReplicatedZoneDocument.parse($0, path: layout.zoneFile) }
    }

    /// Whether the backend directory exists; `.unavailable` when neither it nor its parent does (an unmounted share).
    private func backendDirectoryExists() throws -> Bool {
        if let status = try files.status(path) {
            guard status.isDirectory else { throw BackendError.unavailable("\(path) is not a directory") }
            return true
        }
        guard try FileTree.containing(path).status(FileIO.parentDirectory(of: path))?.isDirectory == true else {
            throw BackendError.unavailable("neither \(path) nor its parent exists (is the disk or share mounted?)")
        }
        return false
    }

    /// Writes `bytes` to `path` unless it exists (link(2) of a complete temporary file: atomic and exclusive).
    private func createExclusively(_ bytes: [UInt8], at path: String) throws -> Bool {
        let temporary = FileIO.parentDirectory(of: path) + "/" + FileSystem.temporaryPrefix + Identifier.make()
        try files.writeAtomically(bytes, to: temporary, syncingDirectory: false)
        defer { unlink(temporary) }
        if link(temporary, path) == 0 {
            try files.syncDirectory(FileIO.parentDirectory(of: path))
            return true
        }
        guard errno == EEXIST else { throw FileIO.error(FileSystem.fail("link", path)) }
        return false
    }

    /// This device's folders and `device.json`.
    private func prepareDeviceFolder(zone: ZoneInfo) throws {
        for directory in [layout.devicesDirectory, layout.deviceDirectory(deviceID), layout.journalDirectory(deviceID),
                          layout.assetsDirectory(deviceID), layout.recordsDirectory] {
            try files.makeDirectory(directory)
        }
        if try files.status(layout.deviceFile(deviceID)) == nil {
            try writeDeviceDocument(DeviceDocument(format: ReplicatedLayout.format, deviceID: deviceID, instance: instance, name: deviceName,
                                                   zoneID: zone.zoneID, created: now(), lastSync: nil, appliedSeq: 0, seen: [:]))
        }
    }

    func deviceDocument() throws -> DeviceDocument {
        let file = layout.deviceFile(deviceID)
        guard let bytes = try files.readFileIfExists(file) else { throw BackendError.zoneNotFound }
        do { return try JSONCoding.decode(DeviceDocument.self, from: bytes) } catch {
            throw BackendError.corrupt(path: file, reason: JSONCoding.describe(error))
        }
    }

    func writeDeviceDocument(_ document: DeviceDocument) throws {
        try files.writeAtomically(try JSONCoding.encode(document), to: layout.deviceFile(deviceID))
    }

    /// Runs `body` holding this device's lock (other processes of this machine writing as this device wait).
    func withDeviceLock<Result>(_ body: () throws -> Result) throws -> Result {
        let lock = try BackendLock.acquire(path: layout.lockFile(deviceID), in: files.tree, timeout: lockTimeout)
        return try withExtendedLifetime(lock) { try body() }
    }

    // MARK: Record files

    /// Every readable version of the record in this copy, one per device's record file. Files that
    /// are malformed, of another zone or too large are skipped: half replicated, or quarantined.
    func versions(of id: RecordID, zone: String) throws -> [RecordVersion] {
        let directory = layout.recordDirectory(id)
        var versions: [RecordVersion] = []
        for name in try files.listDirectory(directory) ?? [] {
            guard let device = ReplicatedLayout.device(ofRecordFile: name),
                  let status = try files.status(directory + "/" + name), !status.isDirectory, status.size <= Self.maxRecordFileBytes,
                  let bytes = try files.readFileIfExists(directory + "/" + name),
                  let document = try? JSONCoding.decode(VersionDocument.self, from: bytes), document.zone == zone,
                  let version = document.recordVersion(writer: device), version.record.id == id else { continue }
            versions.append(version)
        }
        return versions
    }

    /// Writes this device's record files for a committed batch (the last change of each record counts).
    func writeRecordFiles(_ batch: DeviceBatch) throws {
        var last: [RecordID: DeviceChange] = [:]
        for change in batch.changes { last[change.id] = change }
        for (id, change) in last.sorted(by: { $0.key < $1.key }) {
            for directory in [layout.recordsDirectory, layout.recordTypeDirectory(id.recordType), layout.recordDirectory(id)] {
                try files.makeDirectory(directory)
            }
            try files.writeAtomically(try JSONCoding.encode(change.version), to: layout.recordFile(id, device: deviceID))
        }
    }

    /// After a crash between a commit and its record files: writes the record files of every own
    /// batch after `appliedSeq`, and records how far they now go.
    func rollForward(_ document: inout DeviceDocument, through lastSeq: Int64) throws {
        guard document.appliedSeq < lastSeq else { return }
        let read = try journal(of: deviceID).read(after: document.appliedSeq, hint: nil, maxChanges: .max)
        for (batch, _) in read.batches { try writeRecordFiles(batch) }
        document.appliedSeq = lastSeq
        try writeDeviceDocument(document)
    }

    // MARK: Assets

    public func putAsset(_ bytes: [UInt8]) throws -> AssetReference {
        guard bytes.count <= BackendLimits.maxAssetBytes else { throw BackendError.limitExceeded }
        _ = try readZone()
        let reference = AssetReference(fileChecksum: SHA256.hexDigest(of: bytes), size: bytes.count)
        let file = layout.assetFile(deviceID, reference.fileChecksum)
        if let status = try files.status(file), status.size == reference.size {
            try files.touch(file)
            return reference
        }
        try files.makeDirectory(layout.assetsDirectory(deviceID))
        try files.writeAtomically(bytes, to: file)
        return reference
    }

    /// A version refers to its writer's assets, but a verified copy from any device will do.
    public func readAsset(_ reference: AssetReference) throws -> [UInt8] {
        _ = try readZone()
        guard reference.hasValidChecksum else { throw BackendError.assetNotFound(reference.fileChecksum) }
        for device in [deviceID] + (try layout.devices()) {
            let file = layout.assetFile(device, reference.fileChecksum)
            guard let bytes = try files.readFileIfExists(file), bytes.count == reference.size,
                  SHA256.hexDigest(of: bytes) == reference.fileChecksum else { continue }
            return bytes
        }
        throw BackendError.assetNotFound(reference.fileChecksum)
    }

    /// The first asset a version refers to that no device's folder holds yet (with the right size), or nil.
    func missingAsset(in record: BackendRecord, devices: [String]) throws -> AssetReference? {
        for value in record.fields.values {
            guard case .asset(let reference) = value else { continue }
            let present = try devices.contains { device in
                try files.status(layout.assetFile(device, reference.fileChecksum))?.size == reference.size
            }
            if !present { return reference }
        }
        return nil
    }

    // MARK: Ending a sync

    public func finishSync(acknowledging token: ChangeToken) throws -> CompactionReport? {
        let zone = try readZone()
        let read = try ReplicatedToken(decoding: token, zoneID: zone.zoneID)
        try withDeviceLock {
            var document = try deviceDocument()
            document.seen = read.positions.mapValues(\.seq)
            document.lastSync = now()
            try writeDeviceDocument(document)
        }
        return nil
    }
}

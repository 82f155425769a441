import ItsypadSupport

/// Conversion of a format 1 backend (a coherent shared folder) into format 2's rules (in format 4's
/// fanned-out files), by the first device that writes format 2 to use it.
extension ReplicatedDirectoryBackend {
    /// Converts the format 1 backend here, holding its lock: every current record becomes a version
    /// of this device, in its journal, and its assets move into this device's folder. Replacing
    /// `zone.json` with format 4 and the same zone id is the commit; a crash before it leaves
    /// format 1 as it was (the next conversion starts again), a crash after it leaves only format 1
    /// files that are removed next time. Format 1 devices then refuse the newer format.
    func convertFromFormat1() throws {
        let old = DirectoryBackend(path: path, lockTimeout: lockTimeout, now: now, tuning: BackendTuning())
        try old.withWriteLock {
            guard let bytes = try files.readFileIfExists(layout.zoneFile),
                case let zone = try ZoneDocument.parse(bytes, path: layout.zoneFile, layouts: ReplicatedLayout.formats).zone,
                zone.format == 1
            else { return }
            _ = try old.prepareForWrite()
            try files.removeTree(layout.devicesDirectory)
            let converted = ZoneInfo(zoneID: zone.zoneID, format: layout.filesFormat, created: zone.created)
            for directory in [
                layout.devicesDirectory, layout.deviceDirectory(deviceID), layout.journalDirectory(deviceID),
                layout.assetsDirectory(deviceID),
            ] {
                try files.makeDirectory(directory)
            }
            var document = DeviceDocument(
                format: layout.filesFormat, deviceID: deviceID, instance: instance, name: deviceName, zoneID: converted.zoneID,
                zoneCreated: converted.created, created: now(), lastSync: nil, appliedSeq: 0, seen: [:])
            try appendFormat1Records(old.records, zone: converted.zoneID)
            try writeDeviceDocument(document)
            try files.writeAtomically(try JSONCoding.encode(ZoneDocument(converted)), to: layout.zoneFile)
            try removeFormat1Files()
            try rollForward(&document, through: try journal(of: deviceID).lastSeq())
        }
    }

    /// Appends every record of the format 1 store to this device's journal as its own versions,
    /// in lines of at most `limits.maxRecordsPerRequest` records and about 2 MiB, and links
    /// the assets they refer to into this device's folder.
    private func appendFormat1Records(_ records: RecordStore, zone: String) throws {
        let journal = journal(of: deviceID)
        var digest = FilesDigest()
        var changes: [DeviceChange] = []
        var bytes = 0
        var seq: Int64 = 1
        func flush() throws {
            guard let first = changes.first else { return }
            try journal.append(
                DeviceBatch(
                    seq: first.seq, device: deviceID, instance: instance, zone: zone, time: now(), changes: changes, files: digest.hex))
            changes = []
            bytes = 0
        }
        // A record format 1 readers quarantined (malformed) was never applied anywhere: it is not carried over.
        for id in try records.ids().ids.sorted() {
            guard var record = try? records.record(id) else { continue }
            for case .asset(let reference) in record.fields.values { try adoptFormat1Asset(reference) }
            let vector = VersionVector(unchecked: [deviceID: seq])
            record.recordChangeTag = vector.tag
            let document = VersionDocument(RecordVersion(record: record, version: vector, writer: deviceID), zone: zone)
            let size = try JSONCoding.encode(document).count
            if changes.count == limits.maxRecordsPerRequest || bytes + size > limits.maxRequestBytes { try flush() }
            digest.toggle(id, version: vector.tag)
            changes.append(DeviceChange(seq: seq, op: .save, id: id, version: document))
            bytes += size
            seq += 1
        }
        try flush()
    }

    /// Links (or copies) a format 1 asset into this device's asset folder.
    private func adoptFormat1Asset(_ reference: AssetReference) throws {
        guard reference.hasValidChecksum else { return }
        let source = path + "/assets/" + reference.fileChecksum
        let target = layout.assetFile(deviceID, reference.fileChecksum)
        guard try files.status(target) == nil, try files.status(source)?.isRegular == true else { return }
        // A copy where the file system cannot link.
        if (try? files.link(source, to: target)) == nil, let bytes = try files.readFileIfExists(source, limit: limits.maxAssetBytes) {
            try files.writeAtomically(bytes, to: target)
        }
    }

    /// Removes what format 1 wrote: the record files `records/<type>/<name>.json` (leaving those
    /// named after a device: format 2's, and format 4's bucket folders), the journal, the assets,
    /// `lock`, and `state.json` last, whose presence beside a newer `zone.json` tells that this
    /// removal has not finished.
    func removeFormat1Files() throws {
        let devices = Set(try layout.devices())
        for type in try files.listDirectory(layout.recordsDirectory) ?? []
        where NameRules.isSafeFileName(type, maxLength: NameRules.maxRecordTypeLength) {
            let directory = layout.recordTypeDirectory(type)
            for name in try files.listDirectory(directory) ?? [] where name.hasSuffix(".json") && !name.hasPrefix(".") {
                if let file = ReplicatedLayout.recordFile(named: name), devices.contains(file.device) { continue }
                if try files.status(directory + "/" + name)?.isDirectory == false { try files.removeFile(directory + "/" + name) }
            }
        }
        try files.removeTree(path + "/journal")
        try files.removeTree(path + "/assets")
        try files.removeFile(path + "/lock")
        try files.removeFile(path + "/state.json")
    }
}

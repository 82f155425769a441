/// Ending a sync: the acknowledgement, and the removal of this device's versions nobody needs any more.
extension FolderBackend {
    /// A tombstone waits for every device that synced within this time to have seen it (90 days).
    static let tombstoneRetention: Int64 = 90 * 24 * 60 * 60 * 1000

    /// A sync that read nothing new rewrites `device.json` only once this much time has passed
    /// since the last one it recorded, so that idle devices leave the folder quiet.
    static let lastSyncRefresh: Int64 = 60 * 60 * 1000

    public func finishSync(acknowledging token: ChangeToken) throws -> CompactionReport? {
        let zone = try readZone()
        let read = try FolderToken(decoding: token, zoneID: zone.zoneID)
        return try withOwnFolder(in: zone) { document, last in
            let seen = read.positions.mapValues(\.seq)
            let time = now()
            if seen != document.seen || time - (document.lastSync ?? 0) >= Self.lastSyncRefresh {
                document.seen = seen
                document.lastSync = time
                // The acknowledgement first: other devices' tombstones wait for it, not for what follows.
                try writeDeviceDocument(document)
            }
            let acknowledged = document
            // Rolled forward, this device's record files are those its last line names.
            let holdsRecordFiles = last.map { $0.files != FilesDigest().hex } ?? false
            let (superseded, collected) = try supersededVersions(
                after: document.collectedThrough, through: read, holdsRecordFiles: holdsRecordFiles, zone: zone.zoneID)
            document.collectedThrough = collected.token.rawValue
            let drops = superseded + (try acknowledgedTombstones(&document, zone: zone.zoneID))
            try commitDrops(drops, zone: zone.zoneID, document: &document)
            if document != acknowledged { try writeDeviceDocument(document) }
            _ = try removeAbandonedTemporaryFiles(inSharedFolders: false)
            return try compactIfGrown(zone: zone.zoneID, document: &document)
        }
    }

    /// This device's versions that a version read between two acknowledgements supersedes: covers
    /// it, or has the same vector and is the one `VersionHistory.siblings` keeps. Reads only the
    /// journal lines between the two tokens, so the cost follows the number of changes.
    ///
    /// Returns the drops and how far it looked: a device whose record files could not be read yet
    /// (not fully arrived) is looked at again next time.
    private func supersededVersions(
        after previous: String?, through read: FolderToken, holdsRecordFiles: Bool, zone: String
    )
        throws -> (drops: [(RecordID, DropDocument)], collected: FolderToken)
    {
        let start =
            previous.flatMap { try? FolderToken(decoding: ChangeToken(rawValue: $0), zoneID: zone) } ?? FolderToken(zoneID: zone)
        // Per record met, this device's own version (read once), and the last version met that supersedes it:
        // the journals are streamed, so that memory follows the records, not every version of them.
        var own: [RecordID: RecordVersion?] = [:]
        var covered: [RecordID: (own: String, by: JournalSource)] = [:]
        // This device's record files, listed once another device's record files are read (all of
        // them): a record it has no file of is passed over without a look or a note.
        var ownFiles: [RecordID: String]?
        /// The tag of this device's version of `id` that `version` supersedes, if any.
        func superseded(_ id: RecordID, by version: RecordVersion) throws -> String? {
            if let ownFiles, ownFiles[id] == nil { return nil }
            if own[id] == nil { own[id] = try ownVersion(of: id, zone: zone) }
            guard let mine = own[id] ?? nil, Self.supersedes(version, mine) else { return nil }
            return mine.version.tag
        }
        var collected = read
        for (device, end) in read.positions.sorted(by: { $0.key < $1.key }) where device != deviceID {
            var from = start.positions[device].flatMap { $0.seq <= end.seq ? $0 : nil } ?? FolderToken.Position(seq: 0, resume: nil)
            if let checkpoint = try journal(of: device).checkpoint(), from.seq < checkpoint.batch.seq - 1 {
                // The lines since the last look were compacted away: the device's record files stand for them.
                // No record file of this device (which only it writes, under the lock held here): nothing to supersede.
                guard holdsRecordFiles else { continue }
                if ownFiles == nil { ownFiles = try ownRecordFiles() }
                // A page at a time; what the files supersede counts only once they settle (match a line).
                var page = FolderToken.Position(seq: from.seq, resume: nil, restart: RecordFilesCursor())
                var supersededByFiles: [RecordID: String] = [:]
                var settled: RecordFilesRead?
                while settled == nil,
                    case .success(let files) = try readRecordFiles(
                        of: device, from: page, checkpoint: checkpoint.segment, limit: Self.recordFilesPerPage, zone: zone)
                {
                    for version in files.versions { supersededByFiles[version.record.id] = try superseded(version.record.id, by: version) }
                    page = files.next
                    if files.settled != nil { settled = files }
                }
                guard let settled, settled.position.seq <= end.seq, settled.isSatisfied(by: read.positions) else {
                    collected.positions[device] = start.positions[device]
                    continue
                }
                for (id, tag) in supersededByFiles { covered[id] = (tag, JournalSource(device: device, seq: settled.position.seq)) }
                from = settled.position
            }
            _ = try journal(of: device).scan(after: from.seq, through: end.seq, hint: from.resume, maxChanges: .max) { batch, _ in
                guard batch.zone == zone else { return }
                for change in batch.changes {
                    guard let document = change.version, let version = try? readVersion(document, writer: device) else { continue }
                    if let tag = try superseded(change.id, by: version) {
                        covered[change.id] = (tag, JournalSource(device: device, seq: change.seq))
                    }
                }
            }
        }
        let drops = covered.sorted { $0.key < $1.key }.map { id, covered in (id, DropDocument(version: covered.own, coveredBy: covered.by))
        }
        return (drops, collected)
    }

    /// Whether `other` makes `own` unnecessary: it covers it, or it is the same version and the one
    /// the sibling rule keeps (smaller digest, then smaller writer id).
    static func supersedes(_ other: RecordVersion, _ own: RecordVersion) -> Bool {
        guard other.version.covers(own.version) else { return false }
        guard other.version == own.version else { return true }
        return (other.digest, other.writer) < (own.digest, own.writer)
    }

    /// This device's tombstones that every device has seen, once no live version of the record is
    /// left in this copy. Devices that have not synced within the retention are not waited for;
    /// a device named anywhere whose `device.json` has not arrived is.
    private func acknowledgedTombstones(_ document: inout DeviceDocument, zone: String) throws -> [(RecordID, DropDocument)] {
        guard var acknowledged = try acknowledgedByEveryone(zone: zone) else { return [] }
        let swept = document.tombstonesSweptThrough ?? 0
        acknowledged = min(acknowledged, document.appliedSeq)
        guard acknowledged > swept else { return [] }
        var drops: [(RecordID, DropDocument)] = []
        var sweptThrough = acknowledged
        for (id, seq, tombstone) in try ownTombstones(after: swept, through: acknowledged, zone: zone) {
            guard try ownVersion(of: id, zone: zone)?.version.tag == tombstone else { continue }
            if try versions(of: id, zone: zone, directories: files.directories()).contains(where: { $0.writer != deviceID && !$0.isDeleted }
            ) {
                // A live version is still here: it supersedes the tombstone or is about to be dropped. Look again later.
                sweptThrough = min(sweptThrough, seq - 1)
                continue
            }
            drops.append((id, DropDocument(version: tombstone, coveredBy: nil)))
        }
        document.tombstonesSweptThrough = sweptThrough
        return drops
    }

    /// The tombstones this device wrote after `swept` and up to `acknowledged`: from its journal, and
    /// from its record files when the journal was compacted since (its record files stand for the
    /// lines removed; only then is `records/` walked).
    private func ownTombstones(
        after swept: Int64, through acknowledged: Int64, zone: String
    ) throws -> [(id: RecordID, seq: Int64, version: String)] {
        let journal = journal(of: deviceID)
        var tombstones: [(id: RecordID, seq: Int64, version: String)] = []
        var readFrom = swept
        if let checkpoint = try journal.checkpoint(), swept < checkpoint.batch.seq {
            let directories = files.directories()
            for (id, file) in try ownRecordFiles().sorted(by: { $0.key < $1.key }) {
                guard let own = try version(in: file, of: id, writer: deviceID, zone: zone, directories: directories), own.isDeleted,
                    let seq = own.version.entries[deviceID], seq > swept, seq <= acknowledged
                else { continue }
                tombstones.append((id, seq, own.version.tag))
            }
            readFrom = checkpoint.batch.seq
        }
        // The tombstones this backend committed last are known: only the lines before them are read.
        let run = try ownCommitsEndingJournal().flatMap { $0.tombstones == nil ? nil : $0 }
        let readThrough = min(acknowledged, run?.after ?? .max)
        if readThrough > readFrom {
            _ = try journal.scan(after: readFrom, through: readThrough, hint: nil, maxChanges: .max) { batch, _ in
                for change in batch.changes where change.op == .delete && change.seq <= readThrough {
                    if let tombstone = change.version { tombstones.append((change.id, change.seq, tombstone.version)) }
                }
            }
        }
        tombstones += (run?.tombstones ?? []).filter { $0.seq > readFrom && $0.seq <= acknowledged }
        return tombstones
    }

    /// The last of this device's sequence numbers that every other device within the retention has
    /// acknowledged; nil while a device is known (a folder, or named in an acknowledgement) whose
    /// `device.json` cannot be read yet.
    private func acknowledgedByEveryone(zone: String) throws -> Int64? {
        var acknowledged = Int64.max
        var known = Set(try layout.devices())
        var checked = Set<String>()
        while let device = known.subtracting(checked).sorted().first {
            checked.insert(device)
            guard device != deviceID else { continue }
            guard let other = try? deviceDocument(of: device) else { return nil }
            known.formUnion(other.seen.keys.filter { VersionVector.isDeviceID($0) })
            // A device of a losing zone sends everything again into this one, reading it all.
            guard other.zoneID == zone, now() - (other.lastSync ?? other.created) <= Self.tombstoneRetention else { continue }
            acknowledged = min(acknowledged, other.seen[deviceID] ?? 0)
        }
        return acknowledged
    }

    /// Commits the drops in batches of at most `limits.maxRecordsPerRequest`, and removes the files.
    private func commitDrops(_ drops: [(RecordID, DropDocument)], zone: String, document: inout DeviceDocument) throws {
        var last = try ownLastBatch()
        var start = drops.startIndex
        while start < drops.endIndex {
            let chunk = drops[start..<min(drops.endIndex, start + limits.maxRecordsPerRequest)]
            let firstSeq = (last?.lastSeq ?? 0) + 1
            let changes = chunk.enumerated().map { offset, drop in
                DeviceChange(seq: firstSeq + Int64(offset), op: .drop, id: drop.0, drop: drop.1)
            }
            last = try commit(changes, after: last, zone: zone, document: &document).batch
            start = chunk.endIndex
        }
    }
}

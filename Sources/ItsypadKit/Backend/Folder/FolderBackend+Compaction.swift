import ItsypadModel
import ItsypadSupport

/// Compaction of this device's own journal, and reading another device from its record files
/// when its journal no longer starts where a reader is.
extension FolderBackend {
    public func compactJournal() throws -> CompactionReport {
        let zone = try readZone()
        return try withOwnFolder(in: zone) { document, _ in
            var report = try compactIfGrown(zone: zone.zoneID, document: &document, past: 0) ?? CompactionReport()
            report.temporaryFilesRemoved = try removeAbandonedTemporaryFiles(inSharedFolders: true)
            return report
        }
    }

    /// Removes the temporary files crashes left (see `FileTree.removeAbandonedTemporaryFiles`) in this
    /// device's folders and, with `inSharedFolders`, in the backend's top folder and every record
    /// folder, where any device writes: no name tells whose a temporary file is there, so age alone
    /// decides. That walks every record folder, which `sync compact` does; a sync sweeps its own.
    func removeAbandonedTemporaryFiles(inSharedFolders: Bool) throws -> Int {
        var folders = [layout.deviceDirectory(deviceID), layout.journalDirectory(deviceID), layout.assetsDirectory(deviceID)]
        if inSharedFolders {
            folders.append(path)
            for type in try files.listDirectory(layout.recordsDirectory) ?? []
            where NameRules.isSafeFileName(type, maxLength: NameRules.maxRecordTypeLength) {
                folders += try layout.recordFolders(ofType: type, files: files).map(\.path)
            }
        }
        return try folders.reduce(0) { $0 + (try files.removeAbandonedTemporaryFiles(in: $1)) }
    }

    /// Starts a new segment with a checkpoint line and removes the older ones, once the journal
    /// has grown past `threshold` bytes. The checkpoint carries the digest of the record files
    /// and, per device, the furthest change that a drop in the removed lines waited for.
    func compactIfGrown(zone: String, document: inout DeviceDocument, past threshold: Int? = nil) throws -> CompactionReport? {
        let journal = journal(of: deviceID)
        let segments = try journal.segments()
        var sizes: [Int] = []
        for segment in segments { sizes.append(try files.status(segment.path)?.size ?? 0) }
        guard sizes.reduce(0, +) > threshold ?? compactionThreshold, let first = segments.first else { return nil }
        // Streamed: a journal of a million changes is never held whole. The lines this backend
        // committed last are not read again.
        let run = try ownCommitsEndingJournal()
        var requires = run?.requires ?? [:]
        var lines = run?.lines ?? 0
        var lastLine = try run.flatMap { _ in try ownLastBatch() }
        let readThrough = run?.after ?? .max
        if readThrough >= first.firstSeq {
            let before = try journal.scan(after: first.firstSeq - 1, through: readThrough, hint: nil, maxChanges: .max) { batch, _ in
                requires.merge(Self.requirements(of: [batch]), uniquingKeysWith: max)
                lines += 1
                if run == nil { lastLine = batch }
            }
            guard before.waiting == nil else { return nil }
        }
        guard let last = lastLine else { return nil }
        // A journal that is one checkpoint already has nothing to drop.
        if lines == 1, last.checkpoint != nil { return nil }
        let seq = last.lastSeq + 1
        let checkpoint = DeviceBatch(
            seq: seq, device: deviceID, instance: instance, zone: zone, time: now(),
            changes: [DeviceChange(seq: seq, op: .checkpoint, checkpoint: CheckpointDocument(requires: requires))],
            files: last.files)
        try journal.append(checkpoint, startingSegment: true)
        forgetOwnCommits()
        document.appliedSeq = seq
        try writeDeviceDocument(document)
        // Readers that find the old segments gone read this device's record files from the checkpoint on.
        for segment in segments { try files.removeFile(segment.path) }
        try files.syncDirectory(layout.journalDirectory(deviceID))
        return CompactionReport(
            compactedThrough: last.lastSeq, segmentsRemoved: segments.count, journalBytesRemoved: sizes.reduce(0, +),
            assetsRemoved: 0, temporaryFilesRemoved: 0)
    }

    /// Per device, the furthest change that a checkpoint or a drop among `batches` waited for.
    static func requirements(of batches: [DeviceBatch]) -> [String: Int64] {
        var requires: [String: Int64] = [:]
        for batch in batches {
            requires.merge(batch.checkpoint?.requires ?? [:], uniquingKeysWith: max)
            for change in batch.changes {
                if let source = change.drop?.coveredBy { requires[source.device] = max(requires[source.device] ?? 0, source.seq) }
            }
        }
        return requires
    }

    /// A page of a device read from its record files: its versions, where the next page goes on
    /// and, once every file is read and they match a line of its journal, where the journal
    /// continues and how far the reader must have read other devices before relying on that (what
    /// the drops before it waited for).
    struct RecordFilesRead {
        let versions: [RecordVersion]
        /// The files this page took, readable or not: what it costs of a page's budget.
        let filesRead: Int
        /// The position read from, with the cursor after these files.
        let next: FolderToken.Position
        let settled: (position: FolderToken.Position, requires: [String: Int64])?

        var position: FolderToken.Position { settled?.position ?? next }

        /// This page without its settlement: its position is then where the next page goes on.
        var unsettled: RecordFilesRead { RecordFilesRead(versions: versions, filesRead: filesRead, next: next, settled: nil) }

        /// Whether `positions` reach as far as the drops before this point waited for.
        func isSatisfied(by positions: [String: FolderToken.Position]) -> Bool {
            (settled?.requires ?? [:]).allSatisfy { device, seq in (positions[device]?.seq ?? 0) >= seq }
        }
    }

    /// Reads up to `limit` of `device`'s record files in this copy from `position`'s cursor (or the
    /// first), for a reader whose position in its journal is before its checkpoint. Once every file
    /// is read, they count as read only when their digest equals the `files` of a line from the
    /// checkpoint on; otherwise some have not arrived, are half replicated or changed during the
    /// read, and this returns why it waits (the next read starts again from the first file).
    func readRecordFiles(
        of device: String, from position: FolderToken.Position, checkpoint: JournalSegment, limit: Int, zone: String
    )
        throws -> Result<RecordFilesRead, ReplicationWait>
    {
        let folders = try recordFolders()
        var cursor = position.restart ?? RecordFilesCursor()
        var paths: [RecordID: String] = [:]
        var order: [RecordID] = []
        while order.count < limit, cursor.folder < folders.count {
            let folder = folders[cursor.folder]
            let own = try recordFiles(in: folder.path, type: folder.type, bucket: folder.bucket).filter { $0.device == device }
                .sorted { $0.id.recordName < $1.id.recordName }
            let taken = own.dropFirst(cursor.file).prefix(limit - order.count)
            for file in taken {
                paths[file.id] = file.path
                order.append(file.id)
            }
            cursor.file += taken.count
            if cursor.file >= own.count {
                cursor.folder += 1
                cursor.file = 0
            }
        }
        let opened = try versions(inFiles: paths, writer: device, zone: zone, directories: files.directories())
        let versions = order.compactMap { opened[$0] }
        for version in versions { cursor.digest.toggle(version.record.id, version: version.version.tag) }
        var next = position
        next.restart = cursor
        guard cursor.folder == folders.count else {
            return .success(RecordFilesRead(versions: versions, filesRead: order.count, next: next, settled: nil))
        }
        let lines = try journal(of: device).read(after: checkpoint.firstSeq - 1, hint: nil, maxChanges: .max).batches
        guard let match = lines.lastIndex(where: { $0.batch.files == cursor.digest.hex }) else {
            return .failure(
                ReplicationWait(path: relative(checkpoint.path), reason: "the record files of \(device) do not match its journal yet"))
        }
        let settled = FolderToken.Position(seq: lines[match].batch.lastSeq, resume: lines[match].resume)
        return .success(
            RecordFilesRead(
                versions: versions, filesRead: order.count, next: next,
                settled: (settled, Self.requirements(of: lines[...match].map(\.batch)))))
    }

    /// The devices whose journals no longer start where `token` is, read from their record files a
    /// page of `limit` files at a time (see `RecordFilesCursor`; a device whose files do not match
    /// its journal yet waits, and its next read starts again from the first file). A device the page
    /// has no room for is read from none yet. Whether the others' positions meet each finished one's
    /// requirements is for the caller to check once it has read them.
    func restartFromRecordFiles(
        _ token: FolderToken, devices: [String], zone: String, limit: Int
    )
        throws -> (reads: [String: RecordFilesRead], waiting: [String: ReplicationWait])
    {
        var reads: [String: RecordFilesRead] = [:]
        var waiting: [String: ReplicationWait] = [:]
        var budget = max(1, limit)
        for device in devices {
            let position = token.positions[device] ?? FolderToken.Position(seq: 0, resume: nil)
            guard let checkpoint = try journal(of: device).checkpoint(), position.seq < checkpoint.batch.seq - 1 else { continue }
            guard budget > 0 else {
                var waits = position
                waits.restart = waits.restart ?? RecordFilesCursor()
                reads[device] = RecordFilesRead(versions: [], filesRead: 0, next: waits, settled: nil)
                continue
            }
            switch try readRecordFiles(of: device, from: position, checkpoint: checkpoint.segment, limit: budget, zone: zone) {
            case .success(let read):
                reads[device] = read
                budget -= read.filesRead
            case .failure(let wait):
                waiting[device] = wait
                var again = position
                again.restart = nil
                reads[device] = RecordFilesRead(versions: [], filesRead: 0, next: again, settled: nil)
            }
        }
        return (reads, waiting)
    }

    /// Every record folder, types then buckets sorted: the order a read of record files goes in.
    func recordFolders() throws -> [(type: String, path: String, bucket: String)] {
        var folders: [(type: String, path: String, bucket: String)] = []
        for type in (try files.listDirectory(layout.recordsDirectory) ?? []).sorted()
        where NameRules.isSafeFileName(type, maxLength: NameRules.maxRecordTypeLength) {
            for (path, bucket) in try layout.recordFolders(ofType: type, files: files).sorted(by: { $0.bucket < $1.bucket }) {
                folders.append((type, path, bucket))
            }
        }
        return folders
    }

    /// The record files in one record folder. A file counts only in the folder its record name
    /// hashes to, where readers of that record look.
    func recordFiles(in folder: String, type: String, bucket: String) throws -> [(device: String, id: RecordID, path: String)] {
        try (files.listDirectory(folder) ?? []).compactMap { file in
            guard let (name, device) = FolderLayout.recordFile(named: file) else { return nil }
            let id = RecordID(recordType: type, recordName: name)
            guard NameRules.problem(with: id) == nil, bucket == FolderLayout.bucket(of: name) else { return nil }
            return (device, id, folder + "/" + file)
        }
    }

    /// This device's record files in this copy: one walk of `records/` that keeps only its own
    /// names, so that memory follows what this device wrote, not the size of the backend.
    func ownRecordFiles() throws -> [RecordID: String] {
        let folders = try recordFolders()
        // Each folder listed and its names checked on every processor (a first sync lists 100,000 files).
        let listed = try Parallel.map(parts: folders.count, threads: folders.count < 16 ? 1 : Parallel.threads) { [self, folders] index in
            try recordFiles(in: folders[index].path, type: folders[index].type, bucket: folders[index].bucket)
                .filter { $0.device == deviceID }
        }
        return Dictionary(listed.joined().map { ($0.id, $0.path) }, uniquingKeysWith: { first, _ in first })
    }
}

import ItsypadModel
import ItsypadSupport

extension FolderBackend {
    // MARK: Writing

    public func modify(saves: [ReplicatedSave], deletes: [ReplicatedDelete]) throws -> ReplicatedModifyResult {
        // The request's bytes are checked once its records are encoded, before anything is written.
        try limits.checkRequest(count: saves.count + deletes.count, bytes: nil)
        let zone = try readZone()
        guard !saves.isEmpty || !deletes.isEmpty else { return ReplicatedModifyResult(written: [], failures: []) }
        return try withOwnFolder(in: zone) { document, last in
            let time = now()
            var plan = WritePlan(firstSeq: (last?.lastSeq ?? 0) + 1, sealed: sealer != nil) {
                try self.storedDocument($0, zone: zone.zoneID)
            }
            // Every device's file of each record of the batch, read a folder at a time: one open a
            // file, and nothing held of the records outside the batch. The folders, opened (or made)
            // once, then take the batch's record files. This device's own file is not looked for
            // where it is known to have none (a first push: every record).
            let devices = try layout.devices()
            let directories = files.directories(creating: true)
            let ownFiles = knownOwnFiles(after: last)
            let stored = try storedVersions(of: saves.map(\.record.id) + deletes.map(\.id), zone: zone.zoneID, directories: directories) {
                id in ownFiles?.mayHold(id) == false ? devices.filter { $0 != deviceID } : devices
            }
            for save in saves {
                try plan.add(save.record.id) { seq in
                    try version(for: save, seq: seq, zone: zone.zoneID, time: time, stored: stored[save.record.id, default: []])
                }
            }
            for delete in deletes {
                try plan.add(delete.id) { seq in
                    try tombstone(for: delete, seq: seq, zone: zone.zoneID, time: time, stored: stored[delete.id, default: []])
                }
            }
            try limits.checkRequest(count: saves.count + deletes.count, bytes: plan.savedRecordBytes)
            if !plan.failures.isEmpty { return plan.failedResult }
            guard !plan.changes.isEmpty else { return ReplicatedModifyResult(written: plan.written, failures: []) }
            let own = stored.compactMapValues { versions in versions.first { $0.writer == deviceID } }
            // Its `appliedSeq` goes to `device.json` with the last batch of the push (`finishWrites`).
            let committed = try commit(
                plan.changes, after: last, zone: zone.zoneID, document: &document, own: own, encoded: plan.encoded,
                directories: directories,
                puttingOffDocument: true)
            return ReplicatedModifyResult(written: plan.written, failures: [], receipt: committed.receipt)
        }
    }

    /// The version a save writes (nil: a derived merge someone already wrote), or why it cannot,
    /// given the `stored` versions of the record.
    private func version(
        for save: ReplicatedSave, seq: Int64, zone: String, time: Int64, stored: [RecordVersion]
    ) throws
        -> PlannedVersion
    {
        if let problem = NameRules.problem(with: save.record) ?? NameRules.folderProblem(with: save.record.id) {
            return .failed(.invalid(problem))
        }
        if let asset = try missingAsset(in: save.record, devices: [deviceID]) {
            return .failed(.invalid("asset \(asset.fileChecksum) has not been stored by this device"))
        }
        let siblings = VersionHistory.siblings(stored)
        let unseen = siblings.filter { !save.basedOn.covers($0.version) }
        if !unseen.isEmpty { return .failed(.concurrentVersions(siblings)) }
        let vector: VersionVector
        if save.isDerived {
            guard !save.basedOn.isEmpty else { return .failed(.invalid("a derived version must be based on the versions it merges")) }
            if siblings.contains(where: { $0.version == save.basedOn }) { return .alreadyWritten }
            vector = save.basedOn
        } else {
            guard let advanced = save.basedOn.advanced(by: deviceID, to: seq) else {
                return .failed(.invalid("version \(save.basedOn) cannot be advanced by \(deviceID)"))
            }
            vector = advanced
        }
        var record = save.record
        record.recordChangeTag = vector.tag
        record.created =
            siblings.compactMap(\.record.created).min { ($0.timestamp, $0.deviceID) < ($1.timestamp, $1.deviceID) }
            ?? Stamp(timestamp: time, deviceID: deviceID)
        // A derived merge takes its siblings' latest stamp, so that two devices write the same bytes.
        let latest = siblings.compactMap(\.record.modified).max { ($0.timestamp, $0.deviceID) < ($1.timestamp, $1.deviceID) }
        record.modified = save.isDerived ? latest : Stamp(timestamp: time, deviceID: deviceID)
        let encoded = try record.encodedJSON()
        guard encoded.count <= limits.maxRecordBytes else { return .failed(.limitExceeded) }
        return .write(
            RecordVersion(record: record, version: vector, writer: deviceID, isDerived: save.isDerived, base: save.base), record: encoded)
    }

    private func tombstone(
        for delete: ReplicatedDelete, seq: Int64, zone: String, time: Int64, stored: [RecordVersion]
    ) throws
        -> PlannedVersion
    {
        if let problem = NameRules.problem(with: delete.id) ?? NameRules.folderProblem(with: delete.id) {
            return .failed(.invalid(problem))
        }
        let siblings = VersionHistory.siblings(stored)
        if siblings.contains(where: { !delete.basedOn.covers($0.version) }) { return .failed(.concurrentVersions(siblings)) }
        guard let vector = delete.basedOn.advanced(by: deviceID, to: seq) else {
            return .failed(.invalid("version \(delete.basedOn) cannot be advanced by \(deviceID)"))
        }
        let record = BackendRecord(
            recordName: delete.id.recordName, recordType: delete.id.recordType, recordChangeTag: vector.tag,
            created: siblings.first?.record.created, modified: Stamp(timestamp: time, deviceID: deviceID))
        return .write(RecordVersion(record: record, version: vector, writer: deviceID, isDeleted: true), record: nil)
    }

    // MARK: Reading

    public func fetchChanges(since token: ChangeToken?, limit: Int) throws -> ReplicatedChangesPage {
        let zone = try readZone()
        let start = try token.map { try FolderToken(decoding: $0, zoneID: zone.zoneID) } ?? FolderToken(zoneID: zone.zoneID)
        let time = now()
        let (fullFetchStarted, inFullFetch) = fullFetch.withLock { fullFetch -> (Int64?, Bool) in
            guard let token else {
                fullFetch = (time, [:])
                return (time, true)
            }
            guard let fetch = fullFetch, let moreCame = fetch.tokens[token] else { return (nil, false) }
            return (fetch.started, moreCame)
        }
        // Tombstones this device has not seen may be gone after the retention: start again.
        if token != nil, let lastSync = try? deviceDocument().lastSync,
            time - max(lastSync, fullFetchStarted ?? lastSync) > Self.tombstoneRetention
        {
            throw BackendError.tokenExpired
        }
        let devices = try layout.devices()
        // A device this token had read changes of has no folder here any more (no itsypad removes
        // one): the backend holds less than this device saw. Treated as a replaced zone, so that
        // everything is sent again, never as deletions. An empty journal folder is not enough: a
        // replicating service may remove old segments before the new one arrives.
        for (device, position) in start.positions where position.seq > 0 && !devices.contains(device) {
            throw BackendError.zoneChanged
        }
        // Devices whose journals were compacted past this reader: a full fetch of those devices only.
        let restarted = try restartFromRecordFiles(start, devices: devices, zone: zone.zoneID, limit: limit)
        var reads = restarted.reads
        var waiting = restarted.waiting
        // While a device's record files are read part way, the journals wait, so the positions the
        // others' settlements wait for are not known: they settle once no device is part way.
        if reads.values.contains(where: { $0.position.restart != nil }) { reads = reads.mapValues(\.unsettled) }
        // This device's lines whose versions the caller recorded are passed over, but never by a
        // full fetch under way: what it does not return is taken for deleted.
        let accepted = inFullFetch ? nil : try acceptedLinesToPassOver(zone: zone.zoneID)
        // Record files count as read only if reading on reaches as far as their drops waited for.
        // Another device's journal may need these files read first (its own drops), so that is
        // checked after reading everything this copy holds; a device whose files still wait is left
        // out, and the rest read again.
        while reads.values.contains(where: { $0.settled != nil }) {
            let positions = try readPage(
                from: start, restarting: reads, waiting: waiting, passingOver: accepted, devices: devices, zone: zone.zoneID, limit: .max,
                collecting: false
            ).positions
            guard let (device, files) = reads.filter({ !$0.value.isSatisfied(by: positions) }).min(by: { $0.key < $1.key }) else { break }
            let requires = files.settled?.requires ?? [:]
            let (needed, seq) = requires.sorted { $0.key < $1.key }.first { (positions[$0.key]?.seq ?? 0) < $0.value }!
            waiting[device] = ReplicationWait(
                path: relative(layout.journalDirectory(device)), reason: "the record files of \(device) wait for change \(seq) of \(needed)"
            )
            reads[device] = nil
        }
        let (page, positions) = try readPage(
            from: start, restarting: reads, waiting: waiting, passingOver: accepted, devices: devices, zone: zone.zoneID, limit: limit,
            collecting: true)
        if let own = positions[deviceID] { forgetAcceptedLines(through: own.seq) }
        if let fullFetchStarted {
            fullFetch.withLock { fullFetch in
                if fullFetch?.started == fullFetchStarted { fullFetch?.tokens[page.token] = inFullFetch && page.moreComing }
            }
        }
        return page
    }

    /// One page read from `start`: the devices in `restarting` from their record files, the others'
    /// journals from their positions, this device's passing over the lines in `accepted`; devices
    /// in `waiting` are not read. Without `collecting`, only the positions reached count (the page
    /// has no changes).
    private func readPage(
        from start: FolderToken, restarting: [String: RecordFilesRead], waiting restartWaits: [String: ReplicationWait],
        passingOver accepted: AcceptedLines?, devices: [String], zone: String, limit: Int, collecting: Bool
    ) throws -> (page: ReplicatedChangesPage, positions: [String: FolderToken.Position]) {
        var position = start
        var budget = max(1, limit)
        var order: [RecordID] = []
        var read: [RecordID: [RecordVersion]] = [:]
        var moreComing = false
        var waiting = restartWaits
        var quarantined: [String: QuarantinedItem] = [:]
        // Versions that do not open (an encrypted zone's, changed or forged in the backend).
        var unreadable: [RecordID: QuarantinedItem] = [:]
        for (device, files) in restarting.sorted(by: { $0.key < $1.key }) {
            for version in files.versions {
                if read[version.record.id] == nil { order.append(version.record.id) }
                read[version.record.id, default: []].append(version)
            }
            budget -= files.filesRead
            position.positions[device] = files.position
        }
        // A device whose record files are read part way goes on with them on the next page, and
        // the journals wait until it is done: a drop in them may wait for it.
        if restarting.values.contains(where: { $0.position.restart != nil }) { moreComing = true }
        // A drop waits for another device's journal, which may come later in this order: read the
        // devices again while that makes progress.
        var progressed = true
        for _ in 0...devices.count where progressed && !moreComing {
            progressed = false
            for device in devices {
                guard budget > 0 else {
                    moreComing = true
                    break
                }
                if restartWaits[device] != nil { continue }
                let from = position.positions[device] ?? FolderToken.Position(seq: 0, resume: nil)
                let (result, end) = try readJournal(
                    of: device, from: from, maxChanges: budget, passingOver: device == deviceID ? accepted : nil
                ) { batch in
                    // Another zone's lines wait: the device has not moved its data to this zone yet.
                    if batch.zone != zone { return "written in zone \(batch.zone), not \(zone)" }
                    for change in batch.changes {
                        if let source = change.drop?.coveredBy, (position.positions[source.device]?.seq ?? 0) < source.seq {
                            return "\(change.id) was superseded by change \(source.seq) of \(source.device), not read yet"
                        }
                        if let record = change.version?.record, let asset = try self.missingAsset(in: record, devices: devices) {
                            return "asset \(asset.fileChecksum) of \(change.id) has not arrived"
                        }
                    }
                    return nil
                }
                for (batch, _) in result.batches {
                    for change in batch.changes {
                        guard let document = change.version else { continue }
                        let version: RecordVersion
                        do {
                            guard let opened = try readVersion(document, writer: device) else { continue }
                            version = opened
                        } catch {
                            unreadable[change.id] = QuarantinedItem(
                                id: change.id, location: relative(layout.recordFile(change.id, device: device)),
                                reason: error.description)
                            continue
                        }
                        if read[change.id] == nil { order.append(change.id) }
                        read[change.id, default: []].append(version)
                    }
                    budget -= batch.changes.count
                }
                if end.seq != from.seq { position.positions[device] = end }
                progressed = progressed || end.seq != from.seq
                moreComing = moreComing || result.moreComing
                waiting[device] = nil
                quarantined[device] = nil
                if let stop = result.waiting {
                    if stop.malformed {
                        quarantined[device] = QuarantinedItem(id: nil, location: relative(stop.path), reason: stop.reason)
                    } else {
                        waiting[device] = ReplicationWait(path: relative(stop.path), reason: stop.reason)
                    }
                }
            }
        }
        // A device whose journal or record files gave a version of the record on this page is not
        // read: its file holds that version or a later one, which its journal brings later (a push
        // reads back none of its own files). A device read from its record files over several pages
        // may hold a file of a record that another page of them has.
        func candidates(_ id: RecordID) -> [String] {
            let journaled = Set(read[id, default: []].map(\.writer))
            return devices.filter { !journaled.contains($0) }
        }
        let writers = collecting ? try self.writers(of: order.filter { !candidates($0).isEmpty }) : nil
        func holders(_ id: RecordID) -> [String] {
            guard let writers else { return candidates(id) }
            return candidates(id).filter { writers[id]?.contains($0) ?? false }
        }
        let stored = collecting ? try storedVersions(of: order, zone: zone, directories: files.directories(), holders: holders) : [:]
        let changes = order.map { id in
            ReplicatedChange(id: id, siblings: VersionHistory.siblings(stored[id, default: []] + read[id, default: []]))
        }
        let page = ReplicatedChangesPage(
            changes: changes, token: position.token, moreComing: moreComing,
            waiting: waiting.sorted { $0.key < $1.key }.map(\.value),
            quarantined: quarantined.sorted { $0.key < $1.key }.map(\.value) + unreadable.sorted { $0.key < $1.key }.map(\.value)
                + (collecting ? try strayRecordTypeFolders() + strayAssetFolders(of: devices) : []))
        return (page, position.positions)
    }

    /// `device`'s journal read from `start` as `DeviceJournal.read` reads it, passing over the lines
    /// in `accepted` (this device's, see `AcceptedLines`) without reading them; and the position
    /// the reading reached, after the last line read or passed over.
    private func readJournal(
        of device: String, from start: FolderToken.Position, maxChanges: Int, passingOver accepted: AcceptedLines?,
        accept: (DeviceBatch) throws -> String?
    ) throws -> (read: DeviceJournal.Read, end: FolderToken.Position) {
        var end = start
        var read = DeviceJournal.Read()
        var taken = 0
        while true {
            while let run = accepted?.run(after: end.seq) { end = FolderToken.Position(seq: run.through, resume: run.resume) }
            let next = accepted?.nextRun(after: end.seq)
            let part = try journal(of: device).read(
                after: end.seq, through: next ?? .max, hint: end.resume, maxChanges: maxChanges - taken, accept: accept)
            for (batch, resume) in part.batches {
                taken += batch.changes.count
                end = FolderToken.Position(seq: batch.lastSeq, resume: resume)
            }
            read.batches += part.batches
            read.moreComing = part.moreComing
            read.waiting = part.waiting
            // Stopped where a run of accepted lines starts: it is passed over, and the reading goes on.
            guard let next, end.seq == next, !part.moreComing, part.waiting == nil else { return (read, end) }
        }
    }

    /// Entries of `records/` that are not folders (a symbolic link a peer planted, a file): their
    /// records are skipped (see `FolderLayout.recordFolders`), and named here.
    private func strayRecordTypeFolders() throws -> [QuarantinedItem] {
        try (files.listDirectory(layout.recordsDirectory) ?? []).sorted().compactMap { type in
            let folder = layout.recordTypeDirectory(type)
            guard let status = try files.status(folder), !status.isDirectory else { return nil }
            return QuarantinedItem(id: nil, location: relative(folder), reason: "not a folder (a symbolic link or a file): skipped")
        }
    }

    func relative(_ file: String) -> String {
        file.hasPrefix(path + "/") ? String(file.dropFirst(path.count + 1)) : file
    }
}

/// What a save or delete of a `modify` call comes to.
private enum PlannedVersion {
    /// `record`: the version's record as `JSONCoding` encodes it, when the writer encoded it.
    case write(RecordVersion, record: [UInt8]?)
    /// A derived merge whose version another device already wrote: nothing to write.
    case alreadyWritten
    case failed(ReplicatedRecordError)
}

/// The checked form of one `modify` call: the changes to commit, or the failures.
private struct WritePlan {
    let firstSeq: Int64
    /// Whether versions are stored sealed, and so may grow past the record limit on the way.
    let sealed: Bool
    /// The document a version is stored as.
    let store: (RecordVersion) throws -> VersionDocument
    var changes: [DeviceChange] = []
    /// Each change's version document, encoded (see `DeviceBatch.encoded`).
    var encoded: [[UInt8]?] = []
    /// The encoded sizes of the saved records, summed (see `BackendLimits.checkRequest`).
    var savedRecordBytes = 0
    var written: [RecordVersion] = []
    var outcomes: [(id: RecordID, error: ReplicatedRecordError?)] = []
    /// The records `outcomes` names, to find one given twice without walking them all.
    private var planned = Set<RecordID>()
    var failures: [ReplicatedFailure] {
        outcomes.compactMap { outcome in outcome.error.map { ReplicatedFailure(id: outcome.id, error: $0) } }
    }

    init(firstSeq: Int64, sealed: Bool, store: @escaping (RecordVersion) throws -> VersionDocument) {
        self.firstSeq = firstSeq
        self.sealed = sealed
        self.store = store
    }

    /// Adds one record's new version, numbered with the next sequence number; a record may appear once.
    mutating func add(_ id: RecordID, _ plan: (Int64) throws -> PlannedVersion) throws {
        guard planned.insert(id).inserted else {
            outcomes.append((id, .invalid("\(id) appears more than once in the request")))
            return
        }
        let seq = firstSeq + Int64(changes.count)
        switch try plan(seq) {
        case .failed(let error):
            outcomes.append((id, error))
        case .write(let version, let record):
            let document = try store(version)
            // Sealed, the document holds other fields than the record encoded: it is encoded whole.
            let bytes = try document.encoded(record: sealed ? nil : record)
            // Readers skip a record file larger than this: one that would be is refused instead.
            if bytes.count > FolderBackend.maxRecordFileBytes {
                outcomes.append((id, .limitExceeded))
                return
            }
            savedRecordBytes += record?.count ?? 0
            changes.append(DeviceChange(seq: seq, op: version.isDeleted ? .delete : .save, id: id, version: document))
            encoded.append(bytes)
            written.append(version)
            outcomes.append((id, nil))
        case .alreadyWritten:
            outcomes.append((id, nil))
        }
    }

    /// Atomic batch: one failure fails it; the others report `.batchRequestFailed`.
    var failedResult: ReplicatedModifyResult {
        ReplicatedModifyResult(written: [], failures: outcomes.map { ReplicatedFailure(id: $0.id, error: $0.error ?? .batchRequestFailed) })
    }
}

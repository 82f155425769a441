import ItsypadModel
import ItsypadSupport
import Synchronization

/// A `ReplicatedBackend` in a directory (`itsypad-backend(5)`): this device writes only
/// `devices/<its id>/…` and `records/<type>/<bucket>/<name>.<its id>.json`, so the directory may
/// be a coherent shared folder or each machine's own copy of a folder a replicating service keeps
/// in step. The engine reaches it through `ReplicatedSyncBackend`.
///
/// With a `sealer` it is an end-to-end encrypted zone: it creates
/// the zone encrypted, refuses a zone whose key check value is not its key's (or a plain one)
/// before writing anything, seals every version and asset it writes and opens every one it reads;
/// a version that does not open is not a version (skipped, and reported where a fetch meets it).
/// Setting names are hashed above it, by `EncryptedReplicatedBackend`.
public final class FolderBackend: ReplicatedBackend {
    /// The format number of a plain zone, and of the files of an encrypted one.
    package static let format = 4

    public let path: String
    public let deviceID: String
    /// This data directory's random identity: two with one device id are clones.
    let instance: String
    let deviceName: String
    /// The zone's key, when it is encrypted.
    let sealer: VersionSealer?
    let lockTimeout: Double
    let now: @Sendable () -> Int64
    let layout: FolderLayout
    /// Every file operation inside the backend goes through this (see `FileTree`).
    let files: FileIO
    /// Where this device's journal ended when last read (see `ownLastBatch`).
    private let ownJournalEnd = Mutex<DeviceJournal.End?>(nil)
    /// The lines this backend committed last, one after another (see `ownCommitsEndingJournal`).
    private let ownCommits = Mutex<OwnCommits?>(nil)
    /// Where the lines end that this backend committed and its caller accepted (see `acceptedLinesToPassOver`).
    private let acceptedLines = Mutex<AcceptedLines?>(nil)
    /// The records this device may hold record files of, while this backend knows (see `knownOwnFiles`).
    private let ownFiles = Mutex<OwnFileFilter?>(nil)
    /// This device's `device.json` as last read or written, and what commits put off writing to it.
    private let ownDocument = Mutex(OwnDeviceDocument())
    /// The latest full fetch (a fetch from no token) this backend served: when it began, and the
    /// tokens of its pages and of the fetches after it, each with whether it is still part of it
    /// (more came after that page of it). A device whose token expired pages through one: its
    /// tokens count from when it began, not from the device's last sync, or its second page would
    /// expire too. A fetch that is part of the full fetch passes over none of this device's lines
    /// (see `fetchChanges`).
    let fullFetch = Mutex<(started: Int64, tokens: [ChangeToken: Bool])?>(nil)
    /// Appends start a new journal segment once the last one reaches this size.
    let segmentSizeLimit: Int
    /// `finishSync` compacts this device's journal once it is larger than this.
    let compactionThreshold: Int
    /// A record file holds a record (1 MiB) and its base, sealed in an encrypted zone (base64 adds
    /// a third); anything larger is not read.
    static let maxRecordFileBytes = 3 * 1024 * 1024

    /// `cipher`: the key of an encrypted zone (one this backend creates is encrypted with it).
    /// An encrypted zone stores the device's id where `device.json` names the device: the name is
    /// a setting value, which encryption hides.
    public convenience init(
        path: String, deviceID: String, instance: String, deviceName: String, cipher: RecordCipher? = nil,
        lockTimeout: Double = 10, now: @escaping @Sendable () -> Int64 = { Time.now() }
    ) {
        self.init(
            path: path, deviceID: deviceID, instance: instance, deviceName: deviceName, sealer: cipher.map(VersionSealer.init),
            lockTimeout: lockTimeout, now: now, segmentSizeLimit: 4 * 1024 * 1024, compactionThreshold: 1024 * 1024)
    }

    init(
        path: String, deviceID: String, instance: String, deviceName: String, sealer: VersionSealer? = nil, lockTimeout: Double,
        now: @escaping @Sendable () -> Int64, segmentSizeLimit: Int, compactionThreshold: Int
    ) {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        self.path = trimmed
        self.deviceID = deviceID
        self.instance = instance
        self.deviceName = sealer == nil ? deviceName : deviceID
        self.sealer = sealer
        self.lockTimeout = lockTimeout
        self.now = now
        self.segmentSizeLimit = segmentSizeLimit
        self.compactionThreshold = compactionThreshold
        layout = FolderLayout(root: trimmed)
        files = FileIO(root: trimmed)
    }

    /// One file per record version, and a batch is one journal line (see `BackendLimits.folder`).
    public var limits: BackendLimits { .folder }

    public func sealedByteCount(of fields: [String: FieldValue]) throws -> Int? {
        try sealer.map { _ in try VersionSealer.sealedFieldByteCount(of: fields) }
    }

    func journal(of device: String) -> DeviceJournal {
        DeviceJournal(files: files, device: device, directory: layout.journalDirectory(device), segmentSizeLimit: segmentSizeLimit)
    }

    /// This device's last committed batch, its journal read on from where the last call left it:
    /// each batch of a sync reads only the lines committed since, not the whole segment again.
    func ownLastBatch() throws -> DeviceBatch? {
        let known = ownJournalEnd.withLock { $0 }
        let end = try journal(of: deviceID).end(after: known)
        ownJournalEnd.withLock { $0 = end }
        return end?.batch
    }

    /// The lines this backend committed last, when the journal holds them all and ends with them:
    /// a reader of the whole journal reads only the lines before them (up to `after`).
    func ownCommitsEndingJournal() throws -> OwnCommits? {
        guard let run = ownCommits.withLock({ $0 }), let first = try journal(of: deviceID).segments().first,
            first.firstSeq <= run.after + 1, try ownLastBatch()?.lastSeq == run.through
        else { return nil }
        return run
    }

    /// The records this device may hold record files of, its journal ending with `last` (rolled
    /// forward); nil when this backend does not know them: a line it did not commit came since it
    /// last knew, and that line names record files.
    func knownOwnFiles(after last: DeviceBatch?) -> OwnFileFilter? {
        ownFiles.withLock { filter in
            let through = last?.lastSeq ?? 0
            if let known = filter, known.through == through { return known }
            filter = last.map { $0.files == FilesDigest().hex } ?? true ? OwnFileFilter(through: through) : nil
            return filter
        }
    }

    /// Forgets the lines this backend committed: its journal was started again.
    func forgetOwnCommits() {
        ownCommits.withLock { $0 = nil }
        acceptedLines.withLock { $0 = nil }
    }

    /// The caller recorded what the line `receipt` names wrote: a fetch from a token passes over it.
    public func accepted(_ receipt: CommitReceipt) {
        acceptedLines.withLock { lines in
            if lines?.zone != receipt.zone { lines = AcceptedLines(zone: receipt.zone) }
            lines?.add(receipt)
        }
    }

    /// The accepted lines of `zone` a fetch may pass over: those after the last line of this
    /// device's journal that this backend did not commit, while the journal still ends with the
    /// last line it did (another process of this data directory, or a copy of it, may have
    /// written since, or compacted it). Nil when there are none.
    func acceptedLinesToPassOver(zone: String) throws -> AcceptedLines? {
        guard let lines = acceptedLines.withLock({ $0 }), lines.zone == zone, !lines.runs.isEmpty,
            let run = ownCommits.withLock({ $0 }), try ownLastBatch()?.lastSeq == run.through
        else { return nil }
        let passed = lines.since(run.after)
        return passed.runs.isEmpty ? nil : passed
    }

    /// Lets go of the accepted lines up to `seq`, which a fetch has read past.
    func forgetAcceptedLines(through seq: Int64) {
        acceptedLines.withLock { $0?.forget(through: seq) }
    }

    // MARK: Zone

    public func createZoneIfNeeded() throws -> ZoneInfo {
        if try backendDirectoryExists(), let zone = try existingZone() {
            try prepareDeviceFolder(zone: zone)
            return zone
        }
        try files.makeDirectory(path)
        let created = ZoneInfo(
            zoneID: Identifier.make().uppercased(), format: ZoneDocument.format(keyCheckValue: sealer?.keyCheckValue),
            created: now(), keyCheckValue: sealer?.keyCheckValue)
        // Exclusive: in a coherent folder two devices creating at once get one zone.
        let zone =
            try createExclusively(try JSONCoding.encode(ZoneDocument(created, cipher: sealer?.cipher)), at: layout.zoneFile)
            ? created : try readZone()
        try prepareDeviceFolder(zone: zone)
        return zone
    }

    /// Also joins the zone: a device that never synced with it (it was created by another) gets its folder, and one whose data is in a losing zone moves.
    public func zone() throws -> ZoneInfo {
        let zone = try readZone()
        try prepareDeviceFolder(zone: zone)
        return zone
    }

    func readZone() throws -> ZoneInfo {
        guard try backendDirectoryExists(), let zone = try existingZone() else { throw BackendError.zoneNotFound }
        return zone
    }

    /// The winning zone: the smallest zone id among `zone.json` and the zones every `device.json`
    /// names (two devices may each have created one before the other's arrived). A `zone.json`
    /// naming another zone is rewritten with the winner, so that the service settles on it.
    /// Nothing is written unless the zone is encrypted with this backend's key, or plain without
    /// one, and `zone.json` is of this format (see `ZoneDocument.read`).
    private func existingZone() throws -> ZoneInfo? {
        guard let bytes = try files.readFileIfExists(layout.zoneFile, limit: BackendLimits.maxSmallFileBytes) else { return nil }
        let written = try ZoneDocument.read(bytes, path: layout.zoneFile)
        try checkKey(of: written)
        if let sealer { try ZoneDocument.authenticate(bytes, path: layout.zoneFile, cipher: sealer.cipher) }
        var winner = written
        // Only zones of the same key compete: encrypted zones of different keys cannot merge (each
        // `--encrypt` and each rotation makes a new key), and a device of a zone that was replaced
        // (a key rotation) names the old zone until it joins the new one.
        for device in try layout.devices() {
            guard let document = try? deviceDocument(of: device), let created = document.zoneCreated,
                document.zoneKeyCheckValue == written.keyCheckValue, NameRules.isZoneID(document.zoneID),
                document.zoneID < winner.zoneID, document.format == FolderBackend.format
            else { continue }
            winner = ZoneInfo(zoneID: document.zoneID, format: written.format, created: created, keyCheckValue: written.keyCheckValue)
        }
        if winner != written {
            try files.writeAtomically(try JSONCoding.encode(ZoneDocument(winner, cipher: sealer?.cipher)), to: layout.zoneFile)
        }
        return winner
    }

    /// Throws `EncryptionError` unless `zone` is encrypted with this backend's key, or plain and
    /// this backend has none.
    private func checkKey(of zone: ZoneInfo) throws {
        switch (zone.keyCheckValue, sealer) {
        case (nil, nil): return
        case (nil, _?): throw EncryptionError.notEncrypted
        case (_?, nil): throw EncryptionError.missingKey
        case (let check?, let sealer?): guard sealer.cipher.matches(keyCheckValue: check) else { throw EncryptionError.wrongKey }
        }
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
        let temporary = FileIO.parentDirectory(of: path) + "/" + FileSystem.temporaryName()
        try files.writeAtomically(bytes, to: temporary, syncingDirectory: false)
        defer { _ = try? files.removeFile(temporary) }
        guard try files.link(temporary, to: path) else { return false }
        try files.syncDirectory(FileIO.parentDirectory(of: path))
        return true
    }

    /// This device's folders (its assets folder is made by its first asset) and `device.json`;
    /// moves this device's data into `zone` if it wrote into a zone that lost (see `existingZone`).
    private func prepareDeviceFolder(zone: ZoneInfo) throws {
        for directory in [
            layout.devicesDirectory, layout.deviceDirectory(deviceID), layout.journalDirectory(deviceID), layout.recordsDirectory,
        ] {
            try files.makeDirectory(directory)
        }
        // A folder already in this zone needs no write: checked without the lock, which only writes
        // take, so that a sync meeting a busy lock fails at its first write.
        if try files.status(layout.deviceFile(deviceID)) != nil {
            let (document, last) = try ownDocumentAndLastBatch()
            if document.zoneID == zone.zoneID {
                try checkOwnership(document, last: last)
                // Unless a crash after a commit left this device's record files behind its
                // journal: what reads them (a deletion of what is there) must find every committed version.
                if document.appliedSeq >= last?.lastSeq ?? 0 { return }
            }
        }
        try withDeviceLock {
            guard try files.status(layout.deviceFile(deviceID)) != nil else {
                var document = DeviceDocument(
                    format: FolderBackend.format, deviceID: deviceID, instance: instance, name: deviceName,
                    zoneID: zone.zoneID, zoneCreated: zone.created, zoneKeyCheckValue: zone.keyCheckValue,
                    created: now(), lastSync: nil, appliedSeq: 0, seen: [:])
                try restartAfterLosingFolder(&document, zone: zone.zoneID)
                return try writeDeviceDocument(document)
            }
            let (current, last) = try ownDocumentAndLastBatch()
            var document = current
            try checkOwnership(document, last: last)
            if document.zoneID != zone.zoneID { return try move(&document, into: zone) }
            try rollForward(&document, through: last?.lastSeq ?? 0)
        }
    }

    /// Throws `.deviceIDInUse` when another data directory writes as this device (a cloned home
    /// directory or virtual machine): its files name another instance, its journal is shorter than
    /// what this device applied, or the service made conflict copies of its files.
    func checkOwnership(_ document: DeviceDocument, last: DeviceBatch?) throws {
        let folder = "devices/\(deviceID)"
        if document.instance != instance {
            throw ReplicationError.deviceIDInUse("\(folder)/device.json was written by instance \(document.instance), not \(instance)")
        }
        if let last, last.instance != instance {
            throw ReplicationError.deviceIDInUse("\(folder)/journal ends with a line of instance \(last.instance), not \(instance)")
        }
        if (last?.lastSeq ?? 0) < document.appliedSeq {
            throw ReplicationError.deviceIDInUse(
                "\(folder)/journal ends at \((last?.lastSeq ?? 0)), before \(document.appliedSeq), which this device wrote")
        }
        for directory in [layout.deviceDirectory(deviceID), layout.journalDirectory(deviceID)] {
            for name in try files.listDirectory(directory) ?? [] where name.contains(".sync-conflict-") || name.contains("conflicted copy")
            {
                throw ReplicationError.deviceIDInUse("the service made a conflict copy of \(folder)'s files: \(name)")
            }
        }
    }

    /// Leaves a losing zone for `zone`: removes this device's record files and starts its journal
    /// again with a checkpoint of no files (sequence numbers go on), so that nothing of the old
    /// zone is read; the engine then sends everything again, as after a replaced backend.
    private func move(_ document: inout DeviceDocument, into zone: ZoneInfo) throws {
        let seq = (try ownLastBatch()?.lastSeq ?? 0) + 1
        try startJournalAgain(at: seq, zone: zone.zoneID)
        document.zoneID = zone.zoneID
        document.zoneCreated = zone.created
        document.zoneKeyCheckValue = zone.keyCheckValue
        document.format = FolderBackend.format
        document.appliedSeq = seq
        document.seen = [:]
        document.collectedThrough = nil
        document.tombstonesSweptThrough = nil
        try writeDeviceDocument(document)
    }

    /// A device whose folder is gone (its journal with it) while record files of it are left (a
    /// peer or a keyless writer removed `devices/`): those files are in no journal, so no newcomer
    /// would read them, and their versions would hide the ones the engine sends again. They go,
    /// and the journal starts after every sequence number of this device that any version names or
    /// any device says it has read, so that no new version passes for one already seen.
    private func restartAfterLosingFolder(_ document: inout DeviceDocument, zone: String) throws {
        guard !(try ownRecordFiles().isEmpty), try ownLastBatch() == nil else { return }
        var highest: Int64 = 0
        for device in try layout.devices() where device != deviceID {
            highest = max(highest, (try? deviceDocument(of: device))?.seen[deviceID] ?? 0)
        }
        // Every writer's versions, a record folder at a time: nothing of the whole backend held at once.
        let directories = files.directories()
        for folder in try recordFolders() {
            let byWriter = Dictionary(grouping: try recordFiles(in: folder.path, type: folder.type, bucket: folder.bucket), by: \.device)
            for (writer, files) in byWriter {
                let paths = Dictionary(files.map { ($0.id, $0.path) }, uniquingKeysWith: { first, _ in first })
                for version in try versions(inFiles: paths, writer: writer, zone: zone, directories: directories).values {
                    highest = max(highest, version.version.entries[deviceID] ?? 0)
                }
            }
        }
        try startJournalAgain(at: highest + 1, zone: zone)
        document.appliedSeq = highest + 1
    }

    /// Removes this device's record files and starts its journal again with a checkpoint of no
    /// files numbered `seq`, so that nothing it wrote before is read.
    private func startJournalAgain(at seq: Int64, zone: String) throws {
        let journal = journal(of: deviceID)
        let segments = try journal.segments()
        for file in try ownRecordFiles().values { try files.removeFile(file) }
        try journal.append(
            DeviceBatch(
                seq: seq, device: deviceID, instance: instance, zone: zone, time: now(),
                changes: [DeviceChange(seq: seq, op: .checkpoint, checkpoint: CheckpointDocument(requires: [:]))],
                files: FilesDigest().hex), startingSegment: true)
        forgetOwnCommits()
        for segment in segments { try files.removeFile(segment.path) }
    }

    /// `device.json` is at most this large; a larger one is not read.
    static let maxDeviceFileBytes = 64 * 1024

    func deviceDocument() throws -> DeviceDocument { try deviceDocument(of: deviceID) }

    /// What `device` says about itself. Throws `.zoneNotFound` when it has not arrived, `.corrupt` when malformed.
    func deviceDocument(of device: String) throws -> DeviceDocument {
        let file = layout.deviceFile(device)
        guard let status = try files.status(file), !status.isDirectory else { throw BackendError.zoneNotFound }
        guard status.size <= Self.maxDeviceFileBytes else {
            throw BackendError.corrupt(path: file, reason: "larger than \(Self.maxDeviceFileBytes) bytes")
        }
        guard let bytes = try files.readFileIfExists(file, limit: Self.maxDeviceFileBytes) else { throw BackendError.zoneNotFound }
        let document: DeviceDocument
        do { document = try JSONCoding.decode(DeviceDocument.self, from: bytes) } catch {
            throw BackendError.corrupt(path: file, reason: JSONCoding.describe(error))
        }
        guard document.deviceID == device, document.seen.count <= VersionVector.maxEntries,
            document.zoneKeyCheckValue.map(ZoneDocument.isKeyCheckValue) ?? true,
            document.seen.allSatisfy({ VersionVector.isDeviceID($0.key) && (0..<VersionVector.maxSequence).contains($0.value) })
        else {
            throw BackendError.corrupt(path: file, reason: "not the document of device \(device)")
        }
        // Times and sequence numbers are checked before any arithmetic uses them.
        let times = [document.created] + [document.lastSync, document.zoneCreated].compactMap { $0 }
        let sequences = [document.appliedSeq] + [document.tombstonesSweptThrough].compactMap { $0 }
        guard times.allSatisfy(Time.validRange.contains), sequences.allSatisfy((0..<VersionVector.maxSequence).contains) else {
            throw BackendError.corrupt(path: file, reason: "a time or sequence number is out of range")
        }
        return document
    }

    func writeDeviceDocument(_ document: DeviceDocument) throws {
        try files.writeAtomically(try JSONCoding.encode(document), to: layout.deviceFile(deviceID))
        ownDocument.withLock { $0.wrote(document) }
    }

    /// This device's `device.json`, or the document its last commits put off writing while the
    /// file and the journal are as they left them (see `OwnDeviceDocument`), and its last journal line.
    private func ownDocumentAndLastBatch() throws -> (document: DeviceDocument, last: DeviceBatch?) {
        let read = try deviceDocument()
        let last = try ownLastBatch()
        let end = ownJournalEnd.withLock { $0 }
        return (ownDocument.withLock { $0.current(read: read, end: end) }, last)
    }

    /// Ends a run of `modify` calls (a push): the `device.json` their commits put off is written,
    /// one atomic write (two `fsync`s) for them all.
    public func finishWrites() throws {
        guard ownDocument.withLock({ $0.isPutOff }) else { return }
        try withDeviceLock {
            let (document, _) = try ownDocumentAndLastBatch()
            if ownDocument.withLock({ $0.isPutOff }) { try writeDeviceDocument(document) }
        }
    }

    /// Runs `body` holding this device's lock (other processes of this machine writing as this device wait).
    func withDeviceLock<Result>(_ body: () throws -> Result) throws -> Result {
        let lock = try BackendLock.acquire(path: layout.lockFile(deviceID), in: files.tree, timeout: lockTimeout)
        return try withExtendedLifetime(lock) { try body() }
    }

    /// Runs `body` holding this device's lock, with its `device.json` and last journal line, once
    /// it is known that no clone writes as this device, that its data is in `zone`, and that its
    /// record files reflect its journal.
    func withOwnFolder<Result>(in zone: ZoneInfo, _ body: (inout DeviceDocument, DeviceBatch?) throws -> Result) throws -> Result {
        try withDeviceLock {
            let (current, last) = try ownDocumentAndLastBatch()
            var document = current
            try checkOwnership(document, last: last)
            // This device's data is in a zone that lost a concurrent creation: createZoneIfNeeded moves it.
            guard document.zoneID == zone.zoneID else { throw BackendError.zoneChanged }
            try rollForward(&document, through: last?.lastSeq ?? 0)
            return try body(&document, last)
        }
    }

    // MARK: Record files

    /// Every readable version of the record in this copy: the record file of each of `devices`
    /// (all devices with a folder when nil), its folder taken from `directories`.
    func versions(
        of id: RecordID, zone: String, devices: [String]? = nil, directories: FileTree.OpenDirectories
    ) throws -> [RecordVersion] {
        try (devices ?? layout.devices()).compactMap {
            try version(in: layout.recordFile(id, device: $0), of: id, writer: $0, zone: zone, directories: directories)
        }
    }

    /// In an encrypted zone, a record whose only versions here do not open (changed, moved or
    /// forged in the backend) throws `.corrupt` rather than passing for a record with no version.
    public func siblings(of id: RecordID) throws -> [RecordVersion] {
        try siblings(of: id, zone: try readZone().zoneID, devices: try layout.devices(), directories: files.directories())
    }

    public func readableSiblings(of ids: [RecordID]) throws -> [RecordID: [RecordVersion]] {
        guard !ids.isEmpty else { return [:] }
        let zone = try readZone().zoneID
        let devices = try layout.devices()
        let writers = try writers(of: ids)
        // Each record folder opened once, however many records of it are read.
        let directories = files.directories()
        var result: [RecordID: [RecordVersion]] = [:]
        for id in ids {
            do {
                result[id] = try siblings(of: id, zone: zone, devices: writers?[id, default: []] ?? devices, directories: directories)
            } catch BackendError.corrupt {
                continue
            }
        }
        return result
    }

    /// Reading more records than this, their record folders are listed instead of probing the
    /// file of every device for every record (a first sync of many records, with many devices).
    static let recordsListedAtOnce = 1_000

    /// For a read of `ids`: the devices with a record file of each, from one listing of each record
    /// folder of `ids`; nil when probing each file costs less. Only the names of `ids` are kept, so
    /// that memory follows the read, not the size of the backend.
    func writers(of ids: [RecordID]) throws -> [RecordID: [String]]? {
        guard ids.count > Self.recordsListedAtOnce else { return nil }
        var byFolder: [String: Set<RecordID>] = [:]
        for id in ids { byFolder[layout.recordFolder(id), default: []].insert(id) }
        var writers: [RecordID: [String]] = [:]
        let directories = files.directories()
        for (folder, wanted) in byFolder {
            let names: [String]
            do { names = try files.listDirectory(folder, of: directories) ?? [] } catch BackendError.corrupt { continue }  // Not a plain folder: skipped.
            let type = wanted.first!.recordType
            for file in names {
                guard let (name, device) = FolderLayout.recordFile(named: file) else { continue }
                let id = RecordID(recordType: type, recordName: name)
                if wanted.contains(id) { writers[id, default: []].append(device) }
            }
        }
        return writers
    }

    private func siblings(
        of id: RecordID, zone: String, devices: [String], directories: FileTree.OpenDirectories
    ) throws -> [RecordVersion] {
        let siblings = VersionHistory.siblings(try versions(of: id, zone: zone, devices: devices, directories: directories))
        guard siblings.isEmpty, sealer != nil else { return siblings }
        for device in devices {
            let file = layout.recordFile(id, device: device)
            guard let document = try versionDocument(in: file, zone: zone, directories: directories), document.record.id == id else {
                continue
            }
            do {
                _ = try readVersion(document, writer: device)
            } catch {
                throw BackendError.corrupt(path: relative(file), reason: error.description)
            }
        }
        return []
    }

    /// Every device's version of the record, as a pattern a shell expands (`<name>.*.json`).
    public func location(of id: RecordID) -> String {
        layout.recordFolder(id) + "/" + id.recordName + ".*.json"
    }

    /// This device's own current version of the record, from its record file.
    func ownVersion(of id: RecordID, zone: String) throws -> RecordVersion? {
        try version(in: layout.recordFile(id, device: deviceID), of: id, writer: deviceID, zone: zone, directories: files.directories())
    }

    /// The version in a record file, or nil when there is none or it cannot be used yet: files that
    /// are malformed, of another zone or too large are skipped (half replicated, or quarantined),
    /// and so are versions that do not open in an encrypted zone. Its folder is taken from `directories`.
    func version(
        in file: String, of id: RecordID, writer: String, zone: String, directories: FileTree.OpenDirectories
    ) throws -> RecordVersion? {
        try version(
            Result { try files.readFileIfExists(file, of: directories, limit: Self.maxRecordFileBytes) }, of: id, writer: writer, zone: zone
        )
    }

    /// The versions in many record files of one writer, as `version(in:of:writer:zone:)` reads each,
    /// read a folder at a time (a first sync reads every record file of the backend), the folders
    /// shared among the processors when there are many files: reading and decoding them is most of
    /// a first sync's work. Folders are taken from `directories`.
    func versions(
        inFiles paths: [RecordID: String], writer: String, zone: String, directories: FileTree.OpenDirectories
    ) throws -> [RecordID: RecordVersion] {
        var byFolder: [String: [(name: String, id: RecordID)]] = [:]
        for (id, path) in paths { byFolder[FileSystem.directoryName(path), default: []].append((FileSystem.baseName(path), id)) }
        let folders = Array(byFolder)
        let parts = try Parallel.map(parts: folders.count, threads: paths.count < Self.filesReadInParallel ? 1 : Parallel.threads) {
            [self] index -> [RecordID: RecordVersion] in
            let (folder, entries) = folders[index]
            let ids = Dictionary(entries.map { ($0.name, $0.id) }, uniquingKeysWith: { first, _ in first })
            var versions: [RecordID: RecordVersion] = [:]
            do {
                try files.readFiles(entries.map(\.name), in: folder, of: directories, limit: Self.maxRecordFileBytes) { name, bytes in
                    guard let id = ids[name], let version = try version(bytes, of: id, writer: writer, zone: zone) else { return }
                    versions[id] = version
                }
            } catch BackendError.corrupt {
                return [:]  // The folder itself is not a plain directory: none of its files can be used.
            }
            return versions
        }
        return parts.reduce(into: [RecordID: RecordVersion]()) { versions, part in versions.merge(part) { first, _ in first } }
    }

    /// The versions in the record files of each record's `holders`, in their order, as `versions(of:zone:devices:)`
    /// reads them, read a folder at a time (see `versions(inFiles:writer:zone:)`): a page of 2,000
    /// changes opens each record folder once rather than walking to every file.
    func storedVersions(
        of ids: [RecordID], zone: String, directories: FileTree.OpenDirectories, holders: (RecordID) -> [String]
    ) throws -> [RecordID: [RecordVersion]] {
        var paths: [String: [RecordID: String]] = [:]
        for id in ids { for device in holders(id) { paths[device, default: [:]][id] = layout.recordFile(id, device: device) } }
        var byDevice: [String: [RecordID: RecordVersion]] = [:]
        for (device, files) in paths {
            byDevice[device] = try versions(inFiles: files, writer: device, zone: zone, directories: directories)
        }
        var result: [RecordID: [RecordVersion]] = [:]
        for id in ids { result[id] = holders(id).compactMap { byDevice[$0]?[id] } }
        return result
    }

    /// Fewer record files than this are read on one thread: starting others would cost more.
    static let filesReadInParallel = 256

    /// Record files read at a time when a device is read from them outside a fetch (whose page
    /// limit counts them there).
    static let recordFilesPerPage = 2000

    private func version(_ bytes: Result<[UInt8]?, any Error>, of id: RecordID, writer: String, zone: String) throws -> RecordVersion? {
        guard let document = try versionDocument(bytes, zone: zone), let version = try? readVersion(document, writer: writer),
            version.record.id == id
        else { return nil }
        return version
    }

    private func versionDocument(in file: String, zone: String, directories: FileTree.OpenDirectories) throws -> VersionDocument? {
        try versionDocument(Result { try files.readFileIfExists(file, of: directories, limit: Self.maxRecordFileBytes) }, zone: zone)
    }

    /// The document of a record file read as `bytes`; nil when there is none or it cannot be used
    /// yet (malformed, too large, of another zone). Failures to read it other than those are thrown.
    private func versionDocument(_ bytes: Result<[UInt8]?, any Error>, zone: String) throws -> VersionDocument? {
        let found: [UInt8]?
        do { found = try bytes.get() } catch BackendError.corrupt { return nil }
        guard let found, let document = VersionDocument.read(found), document.zone == zone else {
            return nil
        }
        return document
    }

    /// The version `writer` stored as `document`, opened in an encrypted zone; nil when it is
    /// malformed. Throws when it does not open: it was changed, moved or forged in the backend.
    func readVersion(_ document: VersionDocument, writer: String) throws(RecordCipherError) -> RecordVersion? {
        guard let sealer else { return document.recordVersion(writer: writer) }
        return try sealer.open(document, writer: writer).recordVersion(writer: writer)
    }

    /// What this device stores for `version`: sealed in an encrypted zone.
    func storedDocument(_ version: RecordVersion, zone: String) throws -> VersionDocument {
        let document = VersionDocument(version, zone: zone)
        return try sealer?.seal(document, writer: deviceID) ?? document
    }

    /// Writes this device's record files for a committed batch (the last change of each record
    /// counts), all made durable together before it returns; a drop removes the file if it still
    /// holds the dropped version. `versions`: each change's version document as its line holds it;
    /// record folders are taken from `directories` (which makes missing ones).
    func writeRecordFiles(_ batch: DeviceBatch, versions: [[UInt8]?], in directories: FileTree.OpenDirectories) throws {
        var last: [RecordID: Int] = [:]
        for (index, change) in batch.changes.enumerated() where change.op != .checkpoint { last[change.id] = index }
        var replacements: [(path: String, bytes: [UInt8])] = []
        for (id, index) in last.sorted(by: { $0.key < $1.key }) {
            guard let version = versions[index] else {
                guard let drop = batch.changes[index].drop else { continue }
                if try ownVersion(of: id, zone: batch.zone)?.version.tag == drop.version {
                    try files.removeFile(layout.recordFile(id, device: deviceID))
                }
                continue
            }
            replacements.append((layout.recordFile(id, device: deviceID), version))
        }
        try files.replaceFiles(replacements, in: directories)
    }

    /// Commits changes numbered from `after + 1` as one line of this device's journal (with the
    /// digest of its record files once applied), then writes the record files and `appliedSeq`
    /// (with `puttingOffDocument`, `device.json` is written by `finishWrites`, once for many commits).
    /// Once the line is appended the batch is committed: if the files cannot be written now, the
    /// next write rolls them forward. `own` holds this device's versions of the changed records
    /// when the caller has read their files (from `directories`); else they are read here.
    /// `encoded`: each change's version document, when the caller encoded them. Returns the
    /// line, and its receipt (see `accepted`) once its record files are written: until then a
    /// fetch must read the line, as reading another device's change of one of its records finds
    /// this device's version in its record file.
    @discardableResult
    func commit(
        _ changes: [DeviceChange], after last: DeviceBatch?, zone: String, document: inout DeviceDocument,
        own: [RecordID: RecordVersion]? = nil, encoded: [[UInt8]?]? = nil, directories: FileTree.OpenDirectories? = nil,
        puttingOffDocument: Bool = false
    ) throws -> (batch: DeviceBatch, receipt: CommitReceipt?) {
        var digest = last.flatMap { FilesDigest(hex: $0.files) } ?? FilesDigest()
        var changed: [RecordID: DeviceChange] = [:]
        for change in changes where change.op != .checkpoint { changed[change.id] = change }
        for (id, change) in changed {
            if let current = try own.map({ $0[id] }) ?? ownVersion(of: id, zone: zone) { digest.toggle(id, version: current.version.tag) }
            if let version = change.version { digest.toggle(id, version: version.version) }
        }
        let batch = DeviceBatch(
            seq: (last?.lastSeq ?? 0) + 1, device: deviceID, instance: instance, zone: zone, time: now(),
            changes: changes, files: digest.hex)
        let (end, versions) = try journal(of: deviceID).append(batch, versions: encoded)
        // The next batch reads its own journal on from here: nothing after the line it wrote.
        ownJournalEnd.withLock { $0 = end }
        ownCommits.withLock { $0 = ($0 ?? OwnCommits(after: batch.seq - 1)).adding(batch) }
        // Its records may have files from here on (even if writing them fails below: the next write rolls them forward).
        ownFiles.withLock { filter in
            if filter?.through == batch.seq - 1 { filter?.add(batch) } else { filter = nil }
        }
        guard (try? writeRecordFiles(batch, versions: versions, in: directories ?? files.directories(creating: true))) != nil else {
            return (batch, nil)
        }
        document.appliedSeq = batch.lastSeq
        if puttingOffDocument {
            ownDocument.withLock { $0.putOff(document, end: end) }
        } else {
            try? writeDeviceDocument(document)
        }
        return (batch, CommitReceipt(zone: zone, after: batch.seq - 1, through: batch.lastSeq, resume: end.position))
    }

    /// After a crash between a commit and its record files: writes the record files of every own
    /// batch after `appliedSeq`, and records how far they now go.
    func rollForward(_ document: inout DeviceDocument, through lastSeq: Int64) throws {
        guard document.appliedSeq < lastSeq else { return }
        let directories = files.directories(creating: true)
        _ = try journal(of: deviceID).scan(after: document.appliedSeq, hint: nil, maxChanges: .max) { batch, _ in
            try writeRecordFiles(batch, versions: try batch.encoded().versions, in: directories)
        }
        document.appliedSeq = lastSeq
        try writeDeviceDocument(document)
    }

    // MARK: Assets

    /// In an encrypted zone the blob is stored sealed, and the reference names the sealed bytes.
    public func putAsset(_ plaintext: [UInt8]) throws -> AssetReference {
        let zone = try readZone()
        // Measured before sealing, which is the slow part and only adds a fixed overhead.
        let storedCount = sealer == nil ? plaintext.count : RecordCipher.sealedByteCount(plaintextCount: plaintext.count)
        guard storedCount <= limits.maxAssetBytes else { throw BackendError.limitExceeded }
        let bytes = try sealer.map { try $0.cipher.sealAsset(plaintext, zoneID: zone.zoneID) } ?? plaintext
        let reference = AssetReference(fileChecksum: SHA256.hexDigest(of: bytes), size: bytes.count)
        let file = layout.assetFile(deviceID, reference.fileChecksum)
        // A copy already there is kept only when it holds these bytes: a damaged one of the same size is replaced.
        if let status = try files.status(file), status.size == reference.size,
            let stored = try? files.readFileIfExists(file, limit: reference.size), stored == bytes
        {
            try files.touch(file)
            return reference
        }
        try files.makeDirectory(layout.assetsDirectory(deviceID))
        try files.writeAtomically(bytes, to: file)
        return reference
    }

    /// A version refers to its writer's assets, but a verified copy from any device will do.
    /// In an encrypted zone, one that does not open is `.corrupt`.
    public func readAsset(_ reference: AssetReference) throws -> [UInt8] {
        let zone = try readZone()
        guard reference.hasValidChecksum else { throw BackendError.assetNotFound(reference.fileChecksum) }
        for device in [deviceID] + (try layout.devices()) {
            let file = layout.assetFile(device, reference.fileChecksum)
            guard try assetStatus(device, reference.fileChecksum)?.size == reference.size,
                let bytes = try? files.readFileIfExists(file, limit: limits.maxAssetBytes), bytes.count == reference.size,
                SHA256.hexDigest(of: bytes) == reference.fileChecksum
            else { continue }
            guard let sealer else { return bytes }
            do {
                return try sealer.cipher.openAsset(bytes, zoneID: zone.zoneID)
            } catch {
                throw BackendError.corrupt(path: relative(file), reason: error.description)
            }
        }
        throw BackendError.assetNotFound(reference.fileChecksum)
    }

    /// The first asset a version refers to that no device's folder holds yet (with the right size), or nil.
    func missingAsset(in record: BackendRecord, devices: [String]) throws -> AssetReference? {
        for value in record.fields.values {
            guard case .asset(let reference) = value else { continue }
            let present = try devices.contains { device in try assetStatus(device, reference.fileChecksum)?.size == reference.size }
            if !present { return reference }
        }
        return nil
    }

    /// The status of `device`'s copy of an asset; nil when it has none, or when its assets folder
    /// is not a folder (a file, a FIFO, a link a peer planted: see `strayAssetFolders`), whose
    /// assets are skipped as if they had not arrived.
    private func assetStatus(_ device: String, _ checksum: String) throws -> FileStatus? {
        do {
            return try files.status(layout.assetFile(device, checksum))
        } catch BackendError.corrupt {
            return nil
        }
    }

    /// The devices' assets folders that are not folders, named as quarantined: their assets are skipped.
    func strayAssetFolders(of devices: [String]) -> [QuarantinedItem] {
        devices.compactMap { device in
            let folder = layout.assetsDirectory(device)
            guard let status = try? files.status(folder), !status.isDirectory else { return nil }
            return QuarantinedItem(
                id: nil, location: relative(folder), reason: "not a folder (a symbolic link, a file or a FIFO): its assets are skipped")
        }
    }
}

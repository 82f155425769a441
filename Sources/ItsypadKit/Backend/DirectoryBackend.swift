import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Knobs tests turn; production uses the defaults.
struct BackendTuning: Sendable {
    /// Appends start a new journal segment once the last one reaches this size.
    var segmentSizeLimit = 4 * 1024 * 1024
    /// Whether `modify` compacts when the journal outgrows the records.
    var autoCompaction = true
    /// The journal must be larger than this before `modify` compacts.
    var autoCompactionThreshold = 1024 * 1024
    /// How many committed changes pass between two checks of whether to compact.
    var autoCompactionCheckInterval = 64
    /// Unreferenced assets and temporary files younger than this are kept: another device may be
    /// between `putAsset` and `modify`, or in the middle of writing.
    var abandonedFileAge: Int64 = 60 * 60 * 1000
}

/// A `SyncBackend` in a directory that several machines share (local path, NFS/SMB mount, USB disk).
///
/// Layout: `zone.json`, `state.json`, `lock`, `records/<type>/<name>.json`, `assets/<sha256>`,
/// `journal/<first seq>.log`. The journal is a write-ahead log: a batch is committed once its line
/// is durable, and `records/` and `state.json` are brought up to date afterwards (by the next writer
/// if this one crashes). Writers serialize on an `flock` of `lock`; readers take no lock.
public final class DirectoryBackend: SyncBackend {
    /// The backend directory.
    public let path: String
    /// Longest wait for another writer's lock, in seconds.
    public let lockTimeout: Double
    let now: @Sendable () -> Int64
    let tuning: BackendTuning
    let layout: BackendLayout
    /// Every file operation inside the backend goes through this (see `FileTree`).
    let files: FileIO
    /// When set, a zone this backend creates is an encrypted one with this key check value.
    let newZoneKeyCheckValue: String?

    var records: RecordStore { RecordStore(files: files, directory: layout.recordsDirectory) }
    var journal: Journal { Journal(files: files, directory: layout.journalDirectory, segmentSizeLimit: tuning.segmentSizeLimit) }

    /// - Parameters:
    ///   - path: The backend directory. Its parent must exist; the directory itself is created by `createZoneIfNeeded()`.
    ///   - lockTimeout: Seconds to wait for another writer before throwing `.locked`.
    ///   - now: Current time in milliseconds since 1970, for record stamps and file ages.
    ///   - newZoneKeyCheckValue: Makes a zone created here encrypted (see `EncryptedBackend`), with this key check value.
    public convenience init(
        path: String,
        lockTimeout: Double = 10,
        now: @escaping @Sendable () -> Int64 = { DirectoryBackend.currentMilliseconds() },
        newZoneKeyCheckValue: String? = nil
    ) {
        self.init(path: path, lockTimeout: lockTimeout, now: now, tuning: BackendTuning(), newZoneKeyCheckValue: newZoneKeyCheckValue)
    }

    init(
        path: String, lockTimeout: Double, now: @escaping @Sendable () -> Int64, tuning: BackendTuning, newZoneKeyCheckValue: String? = nil
    ) {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        self.path = trimmed
        self.lockTimeout = lockTimeout
        self.now = now
        self.tuning = tuning
        self.layout = BackendLayout(root: trimmed)
        self.files = FileIO(root: trimmed)
        self.newZoneKeyCheckValue = newZoneKeyCheckValue
    }

    /// Wall-clock milliseconds since 1970.
    public static func currentMilliseconds() -> Int64 {
        Time.now()
    }

    // MARK: Zone

    /// The one place a backend is created. Its parent directory must exist.
    public func createZoneIfNeeded() throws -> ZoneInfo {
        let directoryExists = try backendDirectoryExists()
        // Checked before taking the lock: a newer format must not even get a lock file.
        if directoryExists, let zone = try existingZone() {
            return zone
        }
        if !directoryExists, mkdir(path, 0o700) != 0, errno != EEXIST {
            throw FileIO.error(FileSystem.fail("create directory", path))
        }
        return try withWriteLock {
            if let zone = try existingZone() {
                return zone
            }
            for directory in [layout.recordsDirectory, layout.assetsDirectory, layout.journalDirectory] {
                try files.makeDirectory(directory)
            }
            // Keep an existing state.json: seqs, and so change tags, must never be reused.
            if try files.status(layout.stateFile) == nil {
                try BackendState.empty.write(to: layout.stateFile, files: files)
            }
            let zone = ZoneInfo(
                zoneID: Identifier.make().uppercased(), format: ZoneDocument.format(keyCheckValue: newZoneKeyCheckValue), created: now(),
                keyCheckValue: newZoneKeyCheckValue)
            let document = ZoneDocument(zone)
            // Written last: zone.json marks a complete zone.
            try files.writeAtomically(try JSONCoding.encode(document), to: layout.zoneFile)
            return zone
        }
    }

    public func zone() throws -> ZoneInfo {
        try readZone()
    }

    /// CloudKit's: one journal line holds a batch, which these keep within `maxJournalLineBytes`.
    public var limits: BackendLimits { .cloudKit }

    /// Records are stored as given (`EncryptedBackend` seals them before they come here).
    public func sealedByteCount(of _: [String: FieldValue]) throws -> Int? { nil }

    public func location(of id: RecordID) -> String {
        NameRules.problem(with: id) == nil ? records.path(for: id) : layout.recordsDirectory
    }

    /// The zone, or `.zoneNotFound`, `.unavailable`, `.newerFormat`, `.corrupt`.
    func readZone() throws -> ZoneInfo {
        guard try backendDirectoryExists(), let zone = try existingZone() else {
            throw BackendError.zoneNotFound
        }
        return zone
    }

    private func existingZone() throws -> ZoneInfo? {
        guard let bytes = try files.readFileIfExists(layout.zoneFile, limit: BackendLimits.maxSmallFileBytes) else { return nil }
        return try ZoneDocument.parse(bytes, path: layout.zoneFile).zone
    }

    /// Whether the backend directory exists. Throws `.unavailable` when it exists but cannot be read,
    /// or when its parent is missing too (typically an unmounted disk or share).
    func backendDirectoryExists() throws -> Bool {
        if let status = try files.status(path) {
            guard status.isDirectory else { throw BackendError.unavailable("\(path) is not a directory") }
            guard access(path, R_OK | X_OK) == 0 else { throw FileIO.error(FileSystem.fail("access", path)) }
            return true
        }
        let parent = FileIO.parentDirectory(of: path)
        guard let parentStatus = try FileTree(root: parent).status(parent), parentStatus.isDirectory else {
            throw BackendError.unavailable("neither \(path) nor its parent exists (is the disk or share mounted?)")
        }
        return false
    }

    // MARK: Writing

    /// Runs `body` holding the backend's exclusive lock.
    func withWriteLock<Result>(_ body: () throws -> Result) throws -> Result {
        let lock = try BackendLock.acquire(path: layout.lockFile, in: files.tree, timeout: lockTimeout)
        return try withExtendedLifetime(lock) { try body() }
    }

    /// Under the lock: cuts off a torn journal tail and rolls committed batches forward into records/.
    /// Returns the journal tail and the state, with every committed change applied.
    func prepareForWrite() throws -> (tail: JournalTail, state: BackendState) {
        let tail = try journal.repair(try journal.tail())
        var state = try BackendState.read(from: layout.stateFile, files: files)
        guard tail.latestSeq > state.appliedSeq else { return (tail, state) }
        var stats = JournalReadStats()
        let pending: JournalRead
        do {
            pending = try journal.read(after: state.appliedSeq, from: nil, maxChanges: nil, stats: &stats)
        } catch JournalReadError.gap(let after, let next) {
            throw BackendError.corrupt(
                path: layout.journalDirectory, reason: "state.json says seq \(after) is applied but the journal continues at \(next)")
        } catch JournalReadError.compactedMeanwhile {
            throw BackendError.io("journal segment vanished while holding the lock")
        }
        try apply(pending.validChanges)
        state.appliedSeq = tail.latestSeq
        try state.write(to: layout.stateFile, files: files)
        return (tail, state)
    }

    /// Makes records/ reflect committed changes, durably. Only each record's last change matters.
    /// A record whose file cannot be replaced because something malformed is in its place (a
    /// directory, a symlinked folder) is left as it is: readers quarantine it, and the rest applies.
    func apply(_ changes: [JournalChange]) throws {
        var lastChange: [RecordID: JournalChange] = [:]
        for change in changes {
            lastChange[change.id] = change
        }
        for change in lastChange.values {
            do {
                if change.op == .save, let record = change.record {
                    try records.write(record)
                } else {
                    try records.remove(change.id)
                }
            } catch BackendError.corrupt {
                continue
            }
        }
        for directory in records.directories(touchedBy: lastChange.keys) where try files.status(directory)?.isDirectory == true {
            try files.syncDirectory(directory)
        }
    }

    // MARK: Assets

    public func putAsset(_ bytes: [UInt8]) throws -> AssetReference {
        guard bytes.count <= limits.maxAssetBytes else { throw BackendError.limitExceeded }
        _ = try readZone()
        let reference = AssetReference(fileChecksum: SHA256.hexDigest(of: bytes), size: bytes.count)
        let assetPath = layout.assetFile(reference.fileChecksum)
        if let status = try files.status(assetPath), status.isRegular, status.size == reference.size,
            let stored = try? files.readFileIfExists(assetPath, limit: reference.size), stored == bytes
        {
            // Already stored (a damaged copy of the same size is replaced); refresh its age so compaction
            // does not take it before the record referencing it is saved.
            try files.touch(assetPath)
            return reference
        }
        try files.makeDirectory(layout.assetsDirectory)
        try files.writeAtomically(bytes, to: assetPath)
        return reference
    }

    public func readAsset(_ reference: AssetReference) throws -> [UInt8] {
        _ = try readZone()
        guard reference.hasValidChecksum, (0...limits.maxAssetBytes).contains(reference.size) else {
            throw BackendError.corrupt(
                path: layout.assetsDirectory,
                reason: "invalid asset reference \(reference.fileChecksum.prefix(80)) of \(reference.size) bytes")
        }
        let assetPath = layout.assetFile(reference.fileChecksum)
        // Its size is checked before reading: a file larger than its reference says is never read.
        guard let bytes = try files.readFileIfExists(assetPath, limit: reference.size) else {
            throw BackendError.assetNotFound(reference.fileChecksum)
        }
        guard bytes.count == reference.size else {
            throw BackendError.corrupt(path: assetPath, reason: "expected \(reference.size) bytes, found \(bytes.count)")
        }
        let checksum = SHA256.hexDigest(of: bytes)
        guard checksum == reference.fileChecksum else {
            throw BackendError.corrupt(path: assetPath, reason: "checksum mismatch: content hashes to \(checksum)")
        }
        return bytes
    }

    /// Why the record's asset references cannot be saved (not uploaded), or nil.
    func missingAsset(in record: BackendRecord) throws -> String? {
        for (name, value) in record.fields.sorted(by: { $0.key < $1.key }) {
            guard case .asset(let reference) = value else { continue }
            guard let status = try files.status(layout.assetFile(reference.fileChecksum)), status.isRegular, status.size == reference.size
            else {
                return "field \(Text.quoted(name)) references asset \(reference.fileChecksum), which has not been uploaded"
            }
        }
        return nil
    }
}

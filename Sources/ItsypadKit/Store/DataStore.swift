import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The local data directory: its layout, format version, device identity and
/// lock. Commands open it, work, and close it; every command holds the lock
/// for its whole run so that two processes never interleave their writes,
/// except a sync, which lets go of it around backend I/O (`withLockReleased`).
/// Where its files are is ``DataDirectoryLayout``'s; `format` is the layout's version, in `meta.json`.
public final class DataStore {
    public static let format = 1

    public let layout: DataDirectoryLayout
    public var path: String { layout.root }
    public private(set) var deviceID: String
    /// Opened without the lock: only files replaced atomically or appended to may be read.
    public let isReadOnly: Bool
    /// Every file below `path` is opened through this: no symlink followed, no FIFO opened (see `FileTree`).
    public let tree: FileTree
    /// Set when other users may read or write the data directory (its permission bits).
    public let exposure: UInt32?
    private var lock: FileLock?
    /// The sync lock while this process holds it (see `takeSyncLock`).
    private weak var heldSyncLock: FileLock?
    private let lockTimeout: Double
    private var openedClips: ClipStore?
    private var openedSettings: SettingsStore?
    private var openedPending: PendingQueue?
    private var compiledIgnorePatterns: SearchPatternList?
    /// Where one-line warnings go (stderr for a command).
    private let warn: (String) -> Void
    private var openedLedger: ClipSyncLedger?
    /// What the stores opened next start from, kept when the opened ones are dropped (the lock handed
    /// over for each batch's backend I/O): where the history's last lookup found its entries, and the
    /// clips the ledger's lines name as far as it was read (checked against the file before use).
    private var clipLookupStart = 0..<0
    private var ledgerNames: ClipSyncLedger.NamedClips?

    /// Opens (creating if needed, with mode 0700) the data directory and takes its lock, waiting up to `lockTimeout` seconds.
    public init(path: String, lockTimeout: Double = 10, warn: @escaping (String) -> Void = { _ in }) throws {
        layout = DataDirectoryLayout(root: path)
        self.warn = warn
        self.lockTimeout = lockTimeout
        tree = FileTree(root: path)
        do {
            try FileSystem.makeDirectory(path)
            try DataStore.refuseIfOthersCanChange(tree, layout)
            exposure = try DataStore.exposure(of: tree)
            lock = try DataStore.takeLock(layout, tree: tree, timeout: lockTimeout)
            isReadOnly = false
            deviceID = try DataStore.readOrCreateMeta(layout.meta, in: tree)
            try StagedChanges.recover(in: tree)
        } catch let error as FileSystemError {
            throw ItsypadError.from(error)
        }
    }

    /// Opens an existing data directory for reading without waiting for its
    /// lock (`sync status` while a sync holds it). Nothing is created or
    /// repaired; the clipboard history, which opening may repair, is off limits.
    public init(readingWithoutLock path: String, warn: @escaping (String) -> Void = { _ in }) throws {
        layout = DataDirectoryLayout(root: path)
        self.warn = warn
        lockTimeout = 0
        tree = FileTree(root: path)
        isReadOnly = true
        do {
            try DataStore.refuseIfOthersCanChange(tree, layout)
            exposure = try DataStore.exposure(of: tree)
            guard let device = try DataStore.readMeta(layout.meta, in: tree) else {
                throw ItsypadError.failure("\(path) is not an itsypad data directory (no meta.json)")
            }
            deviceID = device
        } catch let error as FileSystemError {
            throw ItsypadError.from(error)
        }
    }

    /// Takes the lock, waiting up to `timeout` seconds. While it waits it holds a shared lock on
    /// `lock-waiters`, which tells a sync between two steps that someone is waiting (`letOthersIn`).
    private static func takeLock(_ layout: DataDirectoryLayout, tree: FileTree, timeout: Double) throws -> FileLock {
        if let lock = try FileLock(path: layout.lock, in: tree, mode: .exclusive, timeout: 0) { return lock }
        let waiting = try FileLock(path: layout.lockWaiters, in: tree, mode: .shared, timeout: timeout)
        guard let lock = try FileLock(path: layout.lock, in: tree, mode: .exclusive, timeout: timeout) else {
            throw ItsypadError.temporary("the data directory \(layout.root) is locked by another itsypad process; try again later")
        }
        withExtendedLifetime(waiting) {}
        return lock
    }

    /// Refuses a data directory that another user could change, as ssh refuses a loose ~/.ssh: its
    /// settings name the command `tab edit` runs and where sync sends everything. The message names
    /// the chown and chmod to run. A git remote's clone is git's to keep. Tab files, the files of
    /// binary clips and of an rclone mirror are not looked at one by one (thousands, on every
    /// command): a private `tabs/`, `clips/blobs/` or mirror folder keeps others from adding or
    /// replacing them, and itsypad writes each one 0600.
    private static func refuseIfOthersCanChange(_ tree: FileTree, _ layout: DataDirectoryLayout) throws {
        let loose = try tree.entriesOthersCanChange(skipping: layout.notCheckedForPrivacy)
        guard !loose.isEmpty else { return }
        let user = geteuid()
        var fixes: [String] = []
        for (path, status) in loose where status.owner != user && status.owner != 0 {
            fixes.append("chown \(user) \(Text.shellQuoted(path))")
        }
        for (path, status) in loose where status.permissions & 0o022 != 0 {
            fixes.append("chmod \(status.isDirectory ? "700" : "600") \(Text.shellQuoted(path))")
        }
        throw ItsypadError.failure(
            "the data directory \(tree.root) is not private: other users could change it (and with it the editor command "
                + "itsypad runs and where it syncs), so it is not used until you run:\n  " + fixes.joined(separator: "\n  "))
    }

    /// The data directory's permission bits when other users may read or write it.
    private static func exposure(of tree: FileTree) throws -> UInt32? {
        try tree.status(tree.root).flatMap { $0.permissions & 0o077 != 0 ? $0.permissions : nil }
    }

    /// Gives this data directory a new device id (in meta.json): for a copy of another device's
    /// data directory, which must stop writing to the backend as that device.
    public func takeNewDeviceID() throws {
        let device = Identifier.make()
        try storeOperation { try DataStore.writeMeta(layout.meta, device: device, in: tree) }
        deviceID = device
        dropOpenedStores()
    }

    /// Reads meta.json, refusing a newer format; creates it on first use.
    private static func readOrCreateMeta(_ metaPath: String, in tree: FileTree) throws -> String {
        if let device = try readMeta(metaPath, in: tree) { return device }
        let device = Identifier.make()
        try writeMeta(metaPath, device: device, in: tree)
        return device
    }

    private static func writeMeta(_ metaPath: String, device: String, in tree: FileTree) throws {
        let meta = MetaFile(format: Int64(DataStore.format), deviceID: device, created: Time.iso8601(Time.now()))
        try tree.writeAtomically(metaPath, meta.bytes)
    }

    /// The device id from meta.json (nil when there is none), refusing a newer format.
    private static func readMeta(_ metaPath: String, in tree: FileTree) throws -> String? {
        guard let bytes = try tree.read(metaPath, limit: 64 << 10) else { return nil }
        let json: JSONValue
        do { json = try JSONValue.parse(bytes) } catch { throw ItsypadError.corrupt(metaPath, "\(error)") }
        guard let meta = try? JSONCoding.decode(MetaFile.self, from: json) else {
            throw ItsypadError.corrupt(metaPath, "missing format or deviceID")
        }
        if meta.format > Int64(DataStore.format) {
            throw ItsypadError.failure(
                "the data directory was written by a newer itsypad (format \(meta.format); this one reads format \(DataStore.format)); upgrade itsypad to use it"
            )
        }
        guard Identifier.isValid(meta.deviceID) else { throw ItsypadError.corrupt(metaPath, "deviceID must be a UUID") }
        return meta.deviceID
    }

    /// Releases the lock (for example while a person is in an editor). The
    /// store must not be used afterwards; open a new one.
    public func close() {
        dropOpenedStores()
        lock = nil
    }

    private func dropOpenedStores() {
        if let openedClips { clipLookupStart = openedClips.lookupStart }
        if let openedLedger { ledgerNames = openedLedger.named }
        openedClips = nil
        openedSettings = nil
        openedPending = nil
        openedLedger = nil
        compiledIgnorePatterns = nil
    }

    /// Lets other commands in while `body` runs (a sync's backend I/O, which may take minutes on a
    /// slow mount), then takes the lock again, waiting up to the lock time-out as when opening.
    /// Every file may have changed meanwhile: the opened stores are dropped, and whatever the
    /// caller read before must be read again. Throws `.temporary` when the lock stays busy
    /// (the store is then unlocked and must not be written).
    @discardableResult
    public func withLockReleased<T>(_ body: () throws -> T) throws -> T {
        precondition(lock != nil, "withLockReleased needs the lock")
        dropOpenedStores()
        lock = nil
        let result = Result { try body() }
        lock = try storeOperation { try DataStore.takeLock(layout, tree: tree, timeout: lockTimeout) }
        return try result.get()
    }

    /// How long `letOthersIn` leaves the lock free: longer than a waiter's longest pause between
    /// attempts (see `FileLock`), so that one waiting always gets its turn.
    static let turnForOthers: useconds_t = 6_000

    /// Releases the lock for a moment between two short steps of a long run when a command is
    /// waiting for it (a clipboard watcher's `clip add`), so that it never waits for the whole run.
    /// Costs nothing when nobody waits: waiters hold `lock-waiters` shared, so it cannot be taken.
    /// `beforeHandingOver` runs only when someone waits, before the lock is released (to write what
    /// the run has kept in memory).
    public func letOthersIn(beforeHandingOver: () throws -> Void = {}) throws {
        guard try othersWait() else { return }
        try beforeHandingOver()
        try withLockReleased { usleep(DataStore.turnForOthers) }
    }

    /// Whether a command waits for the lock: waiters hold `lock-waiters` shared, so it cannot be taken.
    public func othersWait() throws -> Bool {
        try storeOperation({ try FileLock(path: layout.lockWaiters, in: tree, mode: .exclusive, timeout: 0) }) == nil
    }

    /// The sync lock (`sync/lock`), which keeps two syncs of the data directory apart, taken
    /// without waiting; nil when another process holds it. Taken again in this process while
    /// held, it is the same lock, released once no one keeps it: a key rotation holds it from
    /// start to end and runs two syncs meanwhile.
    public func takeSyncLock() throws -> FileLock? {
        if let heldSyncLock { return heldSyncLock }
        let taken = try storeOperation { try FileLock(path: layout.syncLock, in: tree, mode: .exclusive, timeout: 0) }
        heldSyncLock = taken
        return taken
    }

    /// Forgets open files after a staged change replaced them; they reopen on next use.
    package func reopenFiles() {
        openedClips = nil
        openedSettings = nil
        openedPending = nil
        openedLedger = nil
    }

    public var tabs: TabStore {
        TabStore(directory: layout.tabs, tree: tree, tags: TabTagStore(table: layout.tabTags, log: layout.tabTagsLog, tree: tree))
    }

    public func clips() throws -> ClipStore {
        precondition(!isReadOnly, "the clipboard history is opened only under the lock")
        // A store whose work after a change failed is opened again: opening finishes that work.
        if let openedClips, !openedClips.unfinished { return openedClips }
        let store = try ClipStore(directory: layout.clips, tree: tree, warn: warn)
        store.lookupStart = clipLookupStart
        openedClips = store
        return store
    }

    public func settings() throws -> SettingsStore {
        if let openedSettings { return openedSettings }
        let store = try SettingsStore(path: layout.settings, tree: tree)
        openedSettings = store
        return store
    }

    /// The stored settings of the data directory at `path`, read without its lock (settings.json is
    /// only ever replaced whole) and without creating or repairing anything: for a command that
    /// needs a setting before it may wait on a slow pipe (`clip add` and `clipboard.maxBytes`).
    public static func settingsWithoutLock(path: String) throws -> SettingsStore {
        try SettingsStore(path: DataDirectoryLayout(root: path).settings, tree: FileTree(root: path))
    }

    /// The queue of changes to send: every local change to a syncable item appends to it.
    public func pending() throws -> PendingQueue {
        if let openedPending { return openedPending }
        let queue = try PendingQueue(path: layout.pendingQueue, tree: tree)
        openedPending = queue
        return queue
    }

    /// The `clipboard.ignore` patterns, compiled once per run. The setting is
    /// synced, so it may hold a pattern this version refuses: that pattern is
    /// left out, with a warning, rather than failing or stalling every clip.
    public func ignorePatterns() throws -> SearchPatternList {
        let sources = try settings().list(.clipboardIgnore)
        if let compiledIgnorePatterns, compiledIgnorePatterns.sources == sources { return compiledIgnorePatterns }
        let list = SearchPatternList(sources)
        for (source, reason) in list.refused {
            warn("clipboard.ignore pattern \(JSONValue.string(source).serialized()) is ignored: \(reason)")
        }
        compiledIgnorePatterns = list
        return list
    }

    public func clipLedger() -> ClipSyncLedger {
        if let openedLedger { return openedLedger }
        let ledger = ClipSyncLedger(path: layout.clipLedger, tree: tree, named: ledgerNames)
        // Handed over rather than shared: the ledger adds to its filter in place.
        ledgerNames = nil
        openedLedger = ledger
        return ledger
    }

    /// The directory a data dir lives in when none is named: `$ITSYPAD_DATA_DIR`,
    /// else `$XDG_DATA_HOME/itsypad`, else `~/.local/share/itsypad`.
    /// `variable` looks up one environment variable.
    public static func defaultPath(variable: (String) -> String?) -> String? {
        if let dir = variable("ITSYPAD_DATA_DIR"), !dir.isEmpty { return dir }
        if let xdg = variable("XDG_DATA_HOME"), xdg.hasPrefix("/") { return xdg + "/itsypad" }
        if let home = variable("HOME"), !home.isEmpty { return home + "/.local/share/itsypad" }
        return nil
    }
}

/// Maps file system failures to user-facing errors around a block of store work.
package func storeOperation<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch let error as FileSystemError { throw ItsypadError.from(error) }
}

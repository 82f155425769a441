import ItsypadSupport

/// Where each file of a data directory lives: the one place its paths are spelled.
///
/// - `meta.json`: format version, device id, creation time (see ``MetaFile``)
/// - `lock`: the lock file (flock); `lock-waiters`: held shared by commands waiting for it
/// - `tabs/<id>.json`: one file per tab; `tabs/index`: their listing (see ``TabIndex``)
/// - `clips/log`, `clips/index`, `clips/blobs/`: the clipboard history (see ``ClipStore``)
/// - `settings.json`: stored settings
/// - `sync-key`: the sync key (see `KeyFile`); `sync-key.next`: a new one while a rotation
///   is under way; `sync-keys/<key check value>`: keys of backends used before
/// - `sync/`: the queue, the engine's state and what a sync keeps (see the properties below)
/// - `.staged/`: a change being staged, finished or dropped on open (see ``StagedChanges``)
public struct DataDirectoryLayout: Sendable, Equatable {
    public let root: String

    public init(root: String) {
        self.root = root
    }

    public var meta: String { root + "/meta.json" }
    public var lock: String { root + "/lock" }
    public var lockWaiters: String { root + "/lock-waiters" }
    public var tabs: String { root + "/tabs" }
    public var clips: String { root + "/clips" }
    public var settings: String { root + "/settings.json" }

    public var syncKey: String { root + "/sync-key" }
    public var nextSyncKey: String { root + "/sync-key.next" }
    /// Where the keys of backends this device used before are kept, one key file per key, named
    /// by its key check value (which a zone records).
    public var keptSyncKeys: String { root + "/sync-keys" }
    public func keptSyncKey(checkValue: String) -> String { keptSyncKeys + "/" + checkValue }

    public var sync: String { root + "/sync" }
    /// The queue of changes to send (see ``PendingQueue``).
    public var pendingQueue: String { sync + "/pending.log" }
    /// Each clip's synced version (see ``ClipSyncLedger``).
    public var clipLedger: String { sync + "/clips.log" }
    /// The tags this device's pushes were accepted with, kept out of the tab files (see
    /// ``TabTagStore``): the table, one line a tab sorted by id, and the log appended since.
    public var tabTags: String { sync + "/tab-tags" }
    public var tabTagsLog: String { sync + "/tab-tags.log" }
    /// What the engine remembers between runs (see ``EngineState``).
    public var engineState: String { sync + "/state.json" }
    /// The activity log `sync log` shows.
    public var activityLog: String { sync + "/log.jsonl" }
    /// This data directory's random instance id (a copy keeps it).
    public var instance: String { sync + "/instance" }
    /// Keeps two syncs of one data directory apart.
    public var syncLock: String { sync + "/lock" }
    /// The note a running sync leaves for `sync status`.
    public var runningSync: String { sync + "/running.json" }
    /// Held by `sync watch`: one watcher per data directory.
    public var watchLock: String { sync + "/watch.lock" }
    /// Held for a whole key rotation.
    public var rotationLock: String { sync + "/rotation.lock" }
    /// A git remote's clone, which is git's to keep.
    public var gitClone: String { sync + "/git" }
    /// An rclone remote's mirror of the backend (see `RcloneRemote`), thousands of files.
    public var rcloneMirror: String { sync + "/rclone/backend" }

    /// The folders atomic writes leave temporary files in when a crash stops them.
    var foldersWithTemporaryFiles: [String] {
        [root, tabs, clips, Self.clipBlobs(in: clips), sync, keptSyncKeys, gitClone]
    }

    /// What the privacy check does not look into, relative to the root: the git clone is git's,
    /// and tab files, binary clips' files and an rclone mirror's are too many to check one by one
    /// on every command (a private `tabs/`, `clips/blobs/` and mirror folder keep them). Nor their
    /// stages (`FileStage`): a joining sync stages hundreds of tabs at a time, which every `clip add`
    /// meanwhile looked at one by one (2.8 ms of CPU for 500); the stage's own bits are checked.
    var notCheckedForPrivacy: Set<String> {
        let skipped = [gitClone, rcloneMirror, tabs, Self.clipBlobs(in: clips)]
        return Set((skipped + skipped.map { FileStage.path(for: $0, root: root) }).map(relative))
    }
    /// The files of a clip history in `directory` (the data directory's `clips/`, or a test's).
    static func clipLog(in directory: String) -> String { directory + "/log" }
    static func clipIndex(in directory: String) -> String { directory + "/index" }
    /// The bytes of binary entries, a file per entry named by its id.
    static func clipBlobs(in directory: String) -> String { directory + "/blobs" }
    /// The same folder relative to the data directory, as a stage names it.
    static let stagedClipBlobs = "clips/blobs"
    /// The name of the tab listing in `tabs/`.
    static let tabIndexName = "index"
    /// Where a change is staged before it is committed.
    var staged: String { root + "/.staged" }

    /// `path` (inside the root) relative to the root.
    func relative(_ path: String) -> String {
        precondition(path.hasPrefix(root + "/"), "\(path) is not in \(root)")
        return String(path.dropFirst(root.count + 1))
    }
}

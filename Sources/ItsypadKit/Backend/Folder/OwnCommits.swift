import ItsypadModel

/// The lines this backend committed to its own journal one after another, and what a sweep of
/// tombstones and a compaction need of them: a sync does not read back what it wrote. Kept in
/// memory only; a line it did not write (another process of this data directory) starts a new run.
struct OwnCommits {
    /// Tombstones kept at most: past that many, a sweep reads them from the journal.
    static let maxTombstones = 10_000

    /// The journal's last sequence number before the first of these lines.
    let after: Int64
    private(set) var through: Int64
    private(set) var lines = 0
    /// Per device, the furthest change a drop among them waited for (see `FolderBackend.requirements`).
    private(set) var requires: [String: Int64] = [:]
    /// The tombstones among them; nil once there are more than `maxTombstones`.
    private(set) var tombstones: [(id: RecordID, seq: Int64, version: String)]? = []

    init(after: Int64) {
        self.after = after
        through = after
    }

    /// These lines and `batch`, committed next; `batch` alone when it does not follow them.
    func adding(_ batch: DeviceBatch) -> OwnCommits {
        var run = batch.seq == through + 1 ? self : OwnCommits(after: batch.seq - 1)
        run.lines += 1
        run.through = batch.lastSeq
        run.requires.merge(FolderBackend.requirements(of: [batch]), uniquingKeysWith: max)
        for change in batch.changes where change.op == .delete {
            if let version = change.version { run.tombstones?.append((change.id, change.seq, version.version)) }
        }
        if (run.tombstones?.count ?? 0) > Self.maxTombstones { run.tombstones = nil }
        return run
    }
}

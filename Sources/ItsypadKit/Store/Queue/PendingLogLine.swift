import ItsypadSupport

/// A line of `sync/pending.log` (see `PendingQueue`): the one place its keys and their meaning are
/// written down. A change is `op`, `type`, `id`, then `v`, `tag` and `hard` when they apply; the
/// first line of a compacted log is `op` "base", `queue` and `bytes`. `PendingQueue.appendLine` and
/// `baseLine` write these forms from bytes, and `PendingLine` reads the change form from bytes (a
/// queue holds 100,000 clips); `PendingLogLineTests` checks both against this type.
struct PendingLogLine: Codable, Equatable {
    /// `save`, `delete`, `done` (a confirmation) or `base`.
    var op: String
    var type: String?
    var id: String?
    /// The change's version; absent in lines appended by an enqueue (the next version is implied).
    var v: Int64?
    /// For a delete: the change tag last seen.
    var tag: String?
    /// Written only as true; absent is false.
    var hard: Bool?
    /// The base line's queue identity; absent in logs compacted before queues had one.
    var queue: String?
    /// The base line's size of the log after compaction.
    var bytes: Int64?
}

import ItsypadSupport

/// A line of `sync/clips.log` (see `ClipSyncLedger`): the one place its keys and their meaning are
/// written down. Each line starts with the clip's id, so that looking up a few clips finds their
/// lines without decoding the others; the first line of a rewritten log is `op` "base" and `bytes`.
struct ClipLedgerLine: Codable, Equatable {
    /// Absent only in the base line.
    var id: String?
    /// `set` (the whole entry), `change` (a pin change made here), `rm` (forgotten) or `base`.
    var op: String
    /// `set`: the synced version's change tag, absent when never synced.
    var tag: String?
    /// `set`: the synced version's pinned state, absent when never synced.
    var pinned: Bool?
    /// `set`: the pin changes the synced version includes (clocks).
    var history: [String]?
    /// `set` and `change`: the clock of a pin change made here and not sent yet.
    var change: String?
    /// `base`: the log's size after the rewrite.
    var bytes: Int64?
}

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

extension PendingLogLine {
    /// The line read as the Codable decoder reads it, without its run-time generic look-ups (which
    /// `clip add` would pay for the base line it reads); nil for anything the decoder rejects.
    init?(reading json: JSONValue) {
        guard let op = json["op"]?.stringValue, let type = json.optionalMember("type", \.stringValue),
            let id = json.optionalMember("id", \.stringValue), let v = json.optionalMember("v", \.int64Value),
            let tag = json.optionalMember("tag", \.stringValue), let hard = json.optionalMember("hard", \.boolValue),
            let queue = json.optionalMember("queue", \.stringValue), let bytes = json.optionalMember("bytes", \.int64Value)
        else { return nil }
        self.init(op: op, type: type, id: id, v: v, tag: tag, hard: hard, queue: queue, bytes: bytes)
    }
}

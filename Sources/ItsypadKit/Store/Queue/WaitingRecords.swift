import ItsypadModel
import ItsypadSupport

/// Which records have a waiting change, as `PendingQueue.waitingRecords()` read them: the queue's
/// summary, if it has one, and a replay of the lines after it (of the whole log when there is no
/// summary). A record the recent lines name is answered by them, any other by the summary.
package struct WaitingRecords {
    let summary: PendingSummary?
    let recent: PendingQueue.Replay

    package func contains(clip id: PackedID) -> Bool {
        recent.waits(.clip(id)) ?? (summary?.clipVersion(id) != nil)
    }

    package func contains(_ key: RecordKey) -> Bool {
        switch ReplayKey(key) {
        case .clip(let id): return contains(clip: id)
        case .other(let key): return recent.waits(.other(key)) ?? (summary?.others[key] != nil)
        }
    }

    /// Every waiting record; nil when the summary's clips turn out damaged (see `PendingSummary.forEachClip`).
    func all() -> RecordKeySet? {
        guard let summary else { return recent.waiting }
        var keys = recent.waiting
        keys.clips.reserveCapacity(summary.clipCount)
        let named = recent.namesAny
        let whole = summary.forEachClip { id, _ in
            if !named || recent.waits(.clip(id)) == nil { keys.clips.insert(id) }
        }
        guard whole else { return nil }
        for key in summary.others.keys where recent.waits(.other(key)) == nil { keys.insert(.other(key)) }
        return keys
    }

    /// A summary damaged under a writer: the summary is not written.
    private struct DamagedSummary: Error {}

    /// Writes the summary of the log `fd`'s first `covered` bytes, which these records were read from:
    /// the old summary's clips and the recent lines' merged in the order of their ids, a piece at a time.
    func writeSummary(to path: String, in tree: FileTree, log fd: Int32, inode: UInt64, logPath: String, covering covered: Int) throws {
        var named = recent.named()
        named.clips.sort { ($0.id.high, $0.id.low) < ($1.id.high, $1.id.low) }
        var others = summary?.others ?? [:]
        for (key, version) in named.others { others[key] = version }
        try PendingSummary.write(
            to: path, in: tree, log: fd, inode: inode, logPath: logPath, covered: covered, version: recent.version, others: others
        ) { emit in
            var next = 0
            // The recent lines' clips before `id` (all of them when nil), those that wait.
            func emitNamed(before id: PackedID?) throws {
                while next < named.clips.count,
                    id.map({ (named.clips[next].id.high, named.clips[next].id.low) < ($0.high, $0.low) }) ?? true
                {
                    if let version = named.clips[next].version { try emit(named.clips[next].id, version) }
                    next += 1
                }
            }
            let whole = try summary?.forEachClip { id, version in
                try emitNamed(before: id)
                if next < named.clips.count, named.clips[next].id == id {
                    next += 1
                    if let version = named.clips[next - 1].version { try emit(id, version) }
                } else {
                    try emit(id, version)
                }
            }
            guard whole ?? true else { throw DamagedSummary() }
            try emitNamed(before: nil)
        }
    }
}

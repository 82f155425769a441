import ItsypadModel
import ItsypadStore
import ItsypadSupport

/// The pending queue is the engine's list of what to send. If it was lost,
/// replaced or damaged, the engine re-derives it, as CKSyncEngine does with lost
/// state: every item is compared with its last synced version and whatever
/// differs is queued again. Nothing is dropped.
extension SyncEngine {
    /// Makes sure the queue can be trusted before anything relies on it, and names it so a later loss shows.
    func checkQueue() throws {
        let pending = try store.pending()
        // Read once for its damage, in the compact form: a first sync's queue holds every clip.
        _ = try pending.snapshot()
        let identity = pending.identity
        var problem: String?
        if let damage = pending.damage {
            let copy = pending.path + ".damaged-" + String(now())
            try storeOperation { try FileSystem.writeAtomically(copy, try FileSystem.read(pending.path) ?? []) }
            problem = "\(damage); it is kept as \(copy)"
        } else if let expected = state.queueID, identity != expected {
            problem = "\(pending.path) was " + (FileSystem.exists(pending.path) ? "replaced" : "missing")
        } else if state.queueID != nil {
            return
        }
        if let problem {
            let count = try rebuildQueue()
            report.warnings.append(
                "\(problem); rebuilt the queue of changes to send by comparing every item with its last synced version "
                    + "(\(count) to send)")
        }
        let named = identity ?? Identifier.make()
        try pending.compact(identity: named) { _ in true }
        state.queueID = named
        try state.save(to: store)
    }

    /// Queues every change the items show against their last synced versions; returns how many.
    /// Costs one pass over each type's items (the tabs, the clipboard history and its ledger, the settings).
    func rebuildQueue() throws -> Int {
        let pending = try store.pending()
        let changes = try types.all.flatMap { try $0.unsentChanges(engine: self) }
        for change in changes { try pending.enqueue(change.operation, change.key, tag: change.tag) }
        return changes.count
    }
}

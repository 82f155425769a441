/// Clips: the text never changes. Pins merge as logical OR only when changed
/// concurrently (a sequential unpin sticks), and a removal always wins: a pin
/// never brings a removed clip back.
extension SyncEngine {
    /// A clip's change within one fetched page (the last one per clip counts).
    enum ClipChange {
        case saved(BackendRecord)
        case deleted
    }

    /// Applies a page's clip changes together: one pass over the history, one ledger append.
    func applyClips(_ changes: [String: ClipChange]) throws {
        guard !changes.isEmpty else { return }
        var versions: [RemoteClip] = []
        var deletions: [String] = []
        for (id, change) in changes {
            switch change {
            case .deleted:
                deletions.append(id)
            case .saved(let record):
                guard let (entry, history) = RecordMapping.clip(from: record) else { continue }
                versions.append(RemoteClip(entry: entry, version: ClipSyncLedger.Entry(tag: record.recordChangeTag, pinned: entry.pinned,
                                                                                       history: history)))
            }
        }
        try applyClipDeletions(deletions.sorted())
        try applyClipVersions(versions.sorted { $0.entry.id < $1.entry.id })
    }

    struct RemoteClip {
        let entry: ClipEntry
        /// What the ledger records for it: tag, pinned state, pin history.
        let version: ClipSyncLedger.Entry
    }

    private func applyClipVersions(_ versions: [RemoteClip]) throws {
        guard !versions.isEmpty else { return }
        let clips = try store.clips()
        let pending = try store.pending()
        let local = try clips.live(ids: Set(versions.map(\.entry.id)))
        let changedHere = try versions.map(\.entry.id).filter { id in
            try local[id] != nil && pending.change(for: RecordKey(.clip, id))?.operation == .save
        }
        let ours = try store.clipLedger().entries(Set(changedHere))
        var inserts: [ClipEntry] = []
        var synced: [(id: String, entry: ClipSyncLedger.Entry)] = []
        var confirmations: [PendingChange] = []
        for remote in versions {
            let id = remote.entry.id
            let waiting = try pending.change(for: RecordKey(.clip, id))
            guard let existing = local[id] else {
                // Removed here and not sent yet: the removal wins. Otherwise the clip is new here,
                // or was created anew after our removal reached the backend: it is taken.
                if waiting?.operation != .delete {
                    inserts.append(remote.entry)
                    synced.append((id, remote.version))
                }
                continue
            }
            guard let waiting, waiting.operation == .save else {
                if existing.pinned != remote.entry.pinned { try clips.setPinned(id: id, remote.entry.pinned) }
                synced.append((id, remote.version))
                continue
            }
            switch SyncEngine.resolvePin(local: existing.pinned, ours: ours[id] ?? ClipSyncLedger.Entry(), remote: remote.version) {
            case .takeRemote:
                if existing.pinned != remote.entry.pinned { try clips.setPinned(id: id, remote.entry.pinned) }
                synced.append((id, remote.version))
                confirmations.append(waiting)
            case .sendOurs(let base):
                synced.append((id, base))
            }
        }
        report.pulled += try clips.insert(inserts).count
        try store.clipLedger().set(synced)
        try pending.confirm(confirmations)
    }

    enum PinResolution: Equatable {
        /// The remote version stands; nothing of ours is left to send.
        case takeRemote
        /// Ours is sent over the remote version: the ledger entry to send it from.
        case sendOurs(ClipSyncLedger.Entry)
    }

    /// A pin change waiting here (`local`, on top of `ours`) meets another version.
    /// Equal states agree; a version that has seen the other's change wins (so an unpin
    /// made after seeing the pin sticks); truly concurrent changes merge as logical OR.
    static func resolvePin(local: Bool, ours: ClipSyncLedger.Entry, remote: ClipSyncLedger.Entry) -> PinResolution {
        if local == remote.pinned || remote.history.includes(ours.localHistory) { return .takeRemote }
        var base = ours
        base.tag = remote.tag
        base.pinned = remote.pinned
        base.history = ours.history.union(remote.history)
        // Ours was made after every change the remote version has (perhaps our own
        // earlier one, committed by a run that did not hear back): ours follows it.
        if ours.localHistory.includes(remote.history) { return .sendOurs(base) }
        // Concurrent and different: one of them is pinned, and pinned it stays.
        return remote.pinned == true ? .takeRemote : .sendOurs(base)
    }

    /// Clips removed on the backend (with or without a tombstone): they go here too.
    func applyClipDeletions(_ ids: [String]) throws {
        guard !ids.isEmpty else { return }
        report.pulled += try store.clips().remove(ids: ids).count
        try store.clipLedger().forget(ids)
        let pending = try store.pending()
        try pending.confirm(try ids.compactMap { try pending.change(for: RecordKey(.clip, $0)) })
    }

    /// After a full fetch: clips the backend no longer has. One synced before was removed
    /// there, whatever waits here; one never synced and waiting to be sent is new.
    func applyClipDeletionsMissing(from accounted: Set<RecordKey>) throws {
        let ledger = try store.clipLedger().all()
        let waiting = try store.pending().keys()
        var gone: [String] = []
        try store.clips().forEachEntry { entry in
            let key = RecordKey(.clip, entry.id)
            guard entry.localOnly == nil, !accounted.contains(key) else { return }
            // No ledger entry and nothing waiting: synced before this version kept a ledger.
            if ledger[entry.id]?.tag != nil || !waiting.contains(key) { gone.append(entry.id) }
        }
        try applyClipDeletions(gone)
    }

    /// A save carrying a tag met no record: the clip was removed, and a removal wins.
    func clipWasRemoved(_ id: String) throws -> Bool {
        try applyClipDeletions([id])
        return true
    }

    // MARK: Sending

    func outgoingClip(_ change: PendingChange, clips: [String: ClipEntry], ledger: [String: ClipSyncLedger.Entry]) throws -> Outgoing? {
        switch change.operation {
        case .save:
            guard let entry = clips[change.key.name], entry.localOnly == nil else { return nil }
            let synced = ledger[entry.id] ?? ClipSyncLedger.Entry()
            // Pinned and unpinned again before sending: the backend already has this state.
            if synced.tag != nil, synced.pinned == entry.pinned { return nil }
            return Outgoing(change: change, saves: [RecordMapping.record(for: entry, tag: synced.tag, history: synced.localHistory)])
        case .delete:
            return outgoingDeletion(change, ifTag: nil, history: EditHistory())
        }
    }

    func acceptClips(_ items: [Outgoing], saved: [RecordID: BackendRecord]) throws {
        var synced: [(id: String, entry: ClipSyncLedger.Entry)] = []
        var removed: [String] = []
        for item in items {
            switch item.change.operation {
            case .save:
                guard let sent = item.saves.first, let record = saved[sent.id], let (entry, history) = RecordMapping.clip(from: record) else { continue }
                synced.append((entry.id, ClipSyncLedger.Entry(tag: record.recordChangeTag, pinned: entry.pinned, history: history)))
            case .delete:
                removed.append(item.change.key.name)
            }
        }
        try store.clipLedger().set(synced)
        try store.clipLedger().forget(removed)
    }

    // MARK: Bookkeeping

    /// Changes a lost or damaged queue may have held: clips never synced or pinned
    /// differently from their synced version, and synced clips removed here.
    func unsentClipChanges() throws -> [(PendingChange.Operation, RecordKey, String?)] {
        let ledger = try store.clipLedger().all()
        var live = Set<String>()
        var changes: [(PendingChange.Operation, RecordKey, String?)] = []
        try store.clips().forEachEntry { entry in
            guard entry.localOnly == nil else { return }
            live.insert(entry.id)
            let synced = ledger[entry.id]
            if synced?.tag == nil || synced?.pinned != entry.pinned { changes.append((.save, RecordKey(.clip, entry.id), nil)) }
        }
        for (id, synced) in ledger.sorted(by: { $0.key < $1.key }) where synced.tag != nil && !live.contains(id) {
            changes.append((.delete, RecordKey(.clip, id), nil))
        }
        return changes
    }

    /// The backend was replaced: every clip goes again as new.
    func forgetSyncedClips() throws {
        try store.clipLedger().reset()
        try store.pending().enqueue(.save, try store.clips().entries().filter { $0.localOnly == nil }.map { RecordKey(.clip, $0.id) })
    }
}

/// Tabs: content merges three ways, name and language follow the newer version,
/// and an edit beats a deletion made by a device that had not seen it.
extension SyncEngine {
    /// A tab as this run sees it: staged for writing, else on disk.
    func localTabEntry(_ id: String) throws -> TabStore.Entry? {
        if let staged = stagedTabs[id] { return .live(staged) }
        return try store.tabs.entry(id: id)
    }

    func writeStagedTabs() throws {
        guard !stagedTabs.isEmpty else { return }
        try store.tabs.save(Array(stagedTabs.values))
        stagedTabs = [:]
    }

    /// Takes a backend version as it is (written with the rest of the page).
    private func take(_ remote: Tab) {
        stagedTabs[remote.id] = remote
        report.pulled += 1
    }

    // MARK: Applying backend versions

    /// A version from the backend, fetched or returned by a conflict; false when it cannot be read.
    func applyTabRecord(_ record: BackendRecord) throws -> Bool {
        guard let remote = try RecordMapping.tab(from: record, backend: backend) else { return false }
        try applyTabVersion(remote, remoteDevice: RecordMapping.deviceName(of: record))
        return true
    }

    private func applyTabVersion(_ remote: Tab, remoteDevice: String) throws {
        let key = RecordKey(.tab, remote.id)
        let pending = try pendingChange(key)
        switch try localTabEntry(remote.id) {
        case nil:
            // A deletion queued by a version that kept no record of it: only a version it never saw comes back.
            if let pending, pending.operation == .delete {
                guard pending.tag != remote.sync?.tag else { return }
                report.conflicts += 1
                try store.pending().confirm([pending])
            }
            take(remote)
        case .deleted(var deletion):
            if deletion.history.includes(remote.history) {
                // Deleted here after seeing every edit of this version: the deletion stands, and must replace this version.
                guard deletion.tag != remote.sync?.tag else { return }
                deletion.tag = remote.sync?.tag
                try store.tabs.markDeleted(deletion)
            } else {
                // Edited elsewhere in a way the deletion had not seen: the edit wins.
                report.conflicts += 1
                try confirmPending(key)
                take(remote)
            }
        case .live(let local):
            if local.sync?.tag == remote.sync?.tag { return }
            if pending == nil, local.sync != nil, local.history != remote.history, local.history.includes(remote.history) {
                // This device holds the version it last applied or sent; every later version on the
                // backend was made on top of it, so includes its edits. One with fewer is a replay.
                quarantine(key, at: backend.location(of: RecordID(recordType: key.type.rawValue, recordName: key.name)),
                           "an older version than the one this device has (a replay); not applied")
                return
            }
            if pending == nil || remote.history.includes(local.history) {
                // Nothing of ours to send, or the remote version already has every edit of ours
                // (our own version, committed by a run that did not hear back, or one made on top of it).
                try confirmPending(key)
                take(remote)
            } else if local.history.includes(remote.history) {
                // Ours already has every edit of theirs: it goes in place of theirs.
                var rebased = local
                rebased.sync = remote.sync
                try writeStagedTabs()
                try store.tabs.save(rebased)
            } else {
                try writeStagedTabs()
                try mergeTab(local: local, remote: remote, remoteDevice: remoteDevice)
            }
        }
    }

    /// Concurrent versions: merged by `merged(_:_:ancestor:)` against the last synced version,
    /// the losing side of overlapping edits kept as a conflict copy. It stays queued for sending
    /// unless it is the remote version itself.
    private func mergeTab(local: Tab, remote: Tab, remoteDevice: String) throws {
        let key = RecordKey(.tab, local.id)
        var (merged, loser) = SyncEngine.merged(local, remote, ancestor: local.sync?.ancestor)
        if let loser {
            try keepConflictCopy(of: loser, device: loser == local ? deviceName : remoteDevice)
            report.conflicts += 1
        }
        merged.sync = remote.sync
        report.pulled += 1
        if merged.sameContent(as: remote) {
            try confirmPending(key)
            stagedTabs[remote.id] = remote
            try writeStagedTabs()
        } else {
            try store.tabs.save(merged)
            try store.pending().enqueue(.save, key)
        }
    }

    /// Two concurrent versions of a tab merged: the content three ways against `ancestor`; where
    /// both changed the same lines (or there is no ancestor) the newer version (by hybrid clock)
    /// wins the tab and the other is returned as the loser, to keep as a conflict copy. Name,
    /// language and locks follow the newer version. The result depends only on the two versions
    /// and the ancestor, so every device merging them agrees. Keeps `first`'s id.
    static func merged(_ first: Tab, _ second: Tab, ancestor: String?) -> (tab: Tab, loser: Tab?) {
        let firstWins = isNewer(first, than: second)
        var merged = firstWins ? first : second
        var loser: Tab?
        merged.id = first.id
        merged.fileURL = nil
        if first.content != second.content {
            if let ancestor, case .merged(let content) = ThreeWayMerge.merge(ancestor: ancestor, local: first.content, remote: second.content) {
                merged.content = content
            } else {
                loser = firstWins ? second : first
            }
        }
        merged.clock = .merged(first.clock, second.clock)
        merged.history = first.history.union(second.history)
        merged.lastModified = max(first.lastModified, second.lastModified)
        return (merged, loser)
    }

    /// The newer of two versions: by clock, then (equal clocks from a merge and an edit
    /// stamped alike) by their text, so every device picks the same one.
    static func isNewer(_ a: Tab, than b: Tab) -> Bool {
        (a.clock, a.content, a.name, a.language) > (b.clock, b.content, b.name, b.language)
    }

    private func keepConflictCopy(of tab: Tab, device: String) throws {
        let clock = HybridTimestamp.next(after: tab.clock, now: now(), device: store.deviceID)
        try store.saveTab(SyncEngine.conflictCopy(of: tab, device: device, id: Identifier.make(), clock: clock))
    }

    /// The copy of a tab's losing version, named after the device that wrote it and when.
    static func conflictCopy(of tab: Tab, device: String, id: String, clock: HybridTimestamp) -> Tab {
        let time = String(Time.iso8601(tab.lastModified).prefix(16)).replacingOccurrences("T", " ")
        var copy = tab
        copy.id = id
        copy.name = "\(tab.name) (conflict \(device) \(time))"
        copy.nameLocked = true
        copy.sync = nil
        copy.fileURL = nil
        copy.clock = clock
        copy.history = EditHistory([clock])
        return copy
    }

    // MARK: Deletions

    /// The tab was removed on the backend. It goes, unless it holds edits the
    /// deleter had not seen (`history` says what it had seen; nil: unknown), which win.
    func applyTabDeletion(_ id: String, history: EditHistory?) throws {
        try writeStagedTabs()
        let key = RecordKey(.tab, id)
        let pending = try pendingChange(key)
        switch try store.tabs.entry(id: id) {
        case nil:
            if let pending { try store.pending().confirm([pending]) }
        case .deleted:
            // Deleted on both sides.
            try store.tabs.remove(id: id)
            if let pending { try store.pending().confirm([pending]) }
        case .live(var local):
            let hasLocalEdits = pending != nil || local.sync == nil
            if hasLocalEdits && !(history?.includes(local.history) ?? false) {
                // An edit beats a deletion that had not seen it: the tab is created again.
                local.sync = nil
                try store.tabs.save(local)
                if pending == nil { try store.pending().enqueue(.save, key) }
                report.conflicts += 1
            } else {
                try store.tabs.remove(id: id)
                if let pending { try store.pending().confirm([pending]) }
                report.pulled += 1
            }
        }
    }

    /// After a full fetch: synced tabs the backend no longer has, and whose tombstone is gone too.
    func applyTabDeletionsMissing(from accounted: Set<RecordKey>) throws {
        for tab in try store.tabs.all() where tab.sync != nil && !accounted.contains(RecordKey(.tab, tab.id)) {
            try applyTabDeletion(tab.id, history: nil)
        }
    }

    /// A save carrying a tag met no record: it was removed after this run fetched. The fetch
    /// after this push brings the removal (and its tombstone), which decides; until then the tab waits.
    func tabWasRemoved(_: String) throws -> Bool {
        false
    }

    // MARK: Sending

    func outgoingTab(_ change: PendingChange) throws -> Outgoing? {
        let entry = try store.tabs.entry(id: change.key.name)
        switch (change.operation, entry) {
        case (.save, .live(let tab)?) where !tab.isFileBacked:
            let record = try RecordMapping.record(for: tab, deviceName: deviceName, backend: backend)
            return Outgoing(change: change, saves: [record], sentTab: tab)
        case (.delete, .deleted(let deletion)?):
            return outgoingDeletion(change, ifTag: deletion.tag, history: deletion.history)
        case (.delete, nil):
            // Queued by a version that kept no record of the deletion: it says only which tag it replaces.
            return outgoingDeletion(change, ifTag: change.tag, history: EditHistory())
        default:
            return nil
        }
    }

    /// Records the new tags, and for saved tabs the version sent as the next common ancestor
    /// (a tab edited since it was sent keeps its edit, still pending, on top of that ancestor).
    func acceptTabs(_ items: [Outgoing], saved: [RecordID: BackendRecord]) throws {
        var updated: [Tab] = []
        for item in items {
            let id = item.change.key.name
            switch try store.tabs.entry(id: id) {
            case .live(var tab)? where item.change.operation == .save:
                guard let sent = item.sentTab, let record = item.saves.first.flatMap({ saved[$0.id] }),
                      let tag = record.recordChangeTag else { continue }
                tab.sync = TabSyncMetadata(tag: tag, ancestor: sent.content, clock: sent.clock)
                updated.append(tab)
            case .deleted? where item.change.operation == .delete:
                try store.tabs.remove(id: id)
            default:
                continue
            }
        }
        try store.tabs.save(updated)
    }

    // MARK: Bookkeeping

    /// Changes a lost or damaged queue may have held: tabs that differ from their synced version, and deletions not sent.
    func unsentTabChanges() throws -> [(PendingChange.Operation, RecordKey, String?)] {
        let saves = try store.tabs.all().filter { !$0.isFileBacked && $0.hasUnsyncedChanges }
            .map { (PendingChange.Operation.save, RecordKey(.tab, $0.id), String?.none) }
        let deletions = try store.tabs.deletions().map { (PendingChange.Operation.delete, RecordKey(.tab, $0.id), $0.tag) }
        return saves + deletions
    }

    /// The backend was replaced: every tab goes again as new.
    func forgetSyncedTabs() throws {
        let pending = try store.pending()
        for var tab in try store.tabs.all() where !tab.isFileBacked {
            tab.sync = nil
            try store.tabs.save(tab)
            try pending.enqueue(.save, RecordKey(.tab, tab.id))
        }
    }
}

import ItsypadBackend
import ItsypadModel
import ItsypadStore
import ItsypadSupport

/// Tabs: content merges three ways, name and language each follow the version that set it
/// last, and an edit beats a deletion made by a device that had not seen it.
final class TabRecords: SyncedRecordType {
    typealias Item = Tab

    let recordType = RecordType.tab
    let noun = "tab"
    let removal = RemovalRule.editBeatsUnseenRemoval
    let mergesAgainstAncestor = true
    /// Fetched tabs accepted as they are, each with the device that wrote it, looked up here until
    /// `writeStaged` puts them in place. Each was decided against local state read under the lock,
    /// then written into `pulled` with the lock let go (`writeDecided`), so that putting them in
    /// place (under the lock) is renames, not encoding, writing and syncing.
    private var staged: [String: (tab: Tab, device: String)] = [:]
    private var unwritten: Set<String> = []
    private var pulled: FileStage?
    /// The pending log from the first decision staged in `pulled`: a staged tab that a command
    /// queued since (while the lock was let go) is decided again before `pulled` is put in place.
    private var pulledWatch: PendingWatch?
    /// The version of each tab sent in the batch on its way, and the stamp of the file it was read
    /// from (see `TabStamp`): the tab may be edited meanwhile.
    private var sent: [String: (tab: Tab, stamp: String?)] = [:]
    /// The pending log from before the batch on its way was read: a sent tab that was not queued
    /// again since is unchanged, and its file is not read again at acceptance.
    private var sentWatch: PendingWatch?
    /// The new tags of sent tabs, for the files they were read from (or read again from): appended
    /// to the tag store together by `finishAccept`, which writes no tab file for them.
    private var acceptedEntries: [(id: String, entry: TabTagStore.Entry)] = []
    /// Sent tabs whose file has no stamp (written by an older version), rewritten with their new
    /// tags, saved together by `finishAccept`.
    private var accepted: FileStage?

    func problem(with record: BackendRecord) -> String? {
        RecordMapping.tabProblem(with: record)
    }

    func item(from record: BackendRecord, backend: SyncBackend) throws -> Tab? { try RecordMapping.tab(from: record, backend: backend) }

    /// The files of the tabs `apply` is about to look up, read together; each is used once, for
    /// the lookup it was read for (a tab written meanwhile is read again).
    private var prefetched: [String: TabStore.Entry?] = [:]

    /// A tab as this run sees it: staged for writing, else on disk.
    private func localEntry(_ id: String, engine: SyncEngine) throws -> TabStore.Entry? {
        if let staged = staged[id] { return .live(staged.tab) }
        if let entry = prefetched.removeValue(forKey: id) { return entry }
        return try engine.store.tabs.entry(id: id)
    }

    func writeStaged(engine: SyncEngine) throws {
        try decideAgainWhatChanged(engine: engine)
        try writeTaken(engine: engine)
        guard let stage = pulled else { return }
        pulled = nil
        pulledWatch = nil
        try engine.store.tabs.commit(stage)
        staged = [:]
    }

    var hasDecided: Bool { !unwritten.isEmpty || pulled != nil }

    func writeDecided(durably: Bool, engine: SyncEngine) throws {
        try writeTaken(engine: engine)
        if durably, let pulled { try engine.store.tabs.makeDurable(pulled) }
    }

    /// Writes the tabs taken since the last call into `pulled`.
    private func writeTaken(engine: SyncEngine) throws {
        guard !unwritten.isEmpty else { return }
        let stage = try pulled ?? engine.store.tabs.makeStage()
        pulled = stage
        try engine.store.tabs.stage(unwritten.compactMap { staged[$0]?.tab }, in: stage)
        unwritten = []
    }

    /// Staged tabs that a command queued while the lock was let go (every local change queues
    /// its record before it is stored; any, when the log was replaced): each leaves the stage and
    /// is decided again against the tab as it is now, as if fetched only now (merged, or its
    /// version kept beside ours, as the merge rules say).
    private func decideAgainWhatChanged(engine: SyncEngine) throws {
        guard let watch = pulledWatch else { return }
        pulledWatch = nil
        let queued = try watch.queuedSince().map { Set($0.filter { $0.type == .tab }.map { $0.name.lowercased() }) }
        let changed = staged.keys.filter { queued?.contains($0.lowercased()) ?? true }.sorted()
        guard !changed.isEmpty else { return }
        let again = changed.compactMap { staged.removeValue(forKey: $0) }
        unwritten.subtract(changed)
        if let pulled { try engine.store.tabs.unstage(changed, from: pulled) }
        for (tab, device) in again {
            engine.report.pulled -= 1
            try applyVersion(tab, remoteDevice: device, engine: engine)
        }
    }

    /// Takes a backend version as it is (written into the stage by `writeDecided`).
    private func take(_ remote: Tab, from device: String, engine: SyncEngine) throws {
        try keep(remote, from: device, engine: engine)
        engine.report.pulled += 1
    }

    /// Stages `tab`, decided against local state read under this hold of the lock: the pending
    /// log is watched from now on, if it is not already, for changes made before it is put in place.
    private func keep(_ tab: Tab, from device: String, engine: SyncEngine) throws {
        if pulledWatch == nil { pulledWatch = try engine.store.pending().watch() }
        staged[tab.id] = (tab, device)
        unwritten.insert(tab.id)
    }

    // MARK: Applying backend versions

    func apply(_ fetched: [FetchedChange], engine: SyncEngine) throws {
        // Every version read before any local state is: reading a content asset lets go of the lock.
        var changes: [(version: (tab: Tab, device: String)?, deletion: (name: String, history: EditHistory?)?)] = []
        for change in fetched {
            switch change {
            case .saved(let record):
                do {
                    guard let remote = try RecordMapping.tab(from: record, backend: engine.backend) else { continue }
                    changes.append(((remote, RecordMapping.deviceName(of: record)), nil))
                } catch let error as BackendError where !error.isTransient {
                    // Its content asset is missing or malformed: the tab is quarantined, the rest goes on.
                    engine.quarantine(key(record.recordName), at: engine.backend.location(of: record.id), error.description)
                }
            case .deleted(let name, let history):
                changes.append((nil, (name, history)))
            }
        }
        let saved = changes.compactMap { change in change.version.flatMap { staged[$0.tab.id] == nil ? $0.tab.id : nil } }
        prefetched = saved.count > 1 ? try engine.store.tabs.entries(ids: saved) : [:]
        defer { prefetched = [:] }
        for change in changes {
            if let (remote, device) = change.version {
                try applyVersion(remote, remoteDevice: device, engine: engine)
            } else if let (name, history) = change.deletion {
                try applyDeletion(name, history: history, engine: engine)
            }
        }
    }

    func applyServerVersion(_ record: BackendRecord, engine: SyncEngine) throws -> Bool {
        // A version whose content asset cannot be read is one that cannot be read.
        do { return try applyRecord(record, engine: engine) } catch let error as BackendError where !error.isTransient { return false }
    }

    /// A version from the backend, fetched or returned by a conflict; false when it cannot be read.
    private func applyRecord(_ record: BackendRecord, engine: SyncEngine) throws -> Bool {
        guard let remote = try RecordMapping.tab(from: record, backend: engine.backend) else { return false }
        try applyVersion(remote, remoteDevice: RecordMapping.deviceName(of: record), engine: engine)
        return true
    }

    private func applyVersion(_ remote: Tab, remoteDevice: String, engine: SyncEngine) throws {
        let key = RecordKey(.tab, remote.id)
        let pending = try engine.pendingChange(key)
        switch try localEntry(remote.id, engine: engine) {
        case nil:
            // A deletion queued by a version that kept no record of it: only a version it never saw comes back.
            if let pending, pending.operation == .delete {
                guard pending.tag != remote.sync?.tag else { return }
                engine.report.conflicts += 1
                try engine.store.pending().confirm([pending])
            }
            try take(remote, from: remoteDevice, engine: engine)
        case .deleted(var deletion):
            if deletion.history.includes(remote.history) {
                // Deleted here after seeing every edit of this version: the deletion stands, and must replace this version.
                guard deletion.tag != remote.sync?.tag else { return }
                deletion.tag = remote.sync?.tag
                try engine.store.tabs.markDeleted(deletion)
            } else {
                // Edited elsewhere in a way the deletion had not seen: the edit wins.
                engine.report.conflicts += 1
                try engine.confirmPending(key)
                try take(remote, from: remoteDevice, engine: engine)
            }
        case .live(let local):
            if local.sync?.tag == remote.sync?.tag { return }
            if pending == nil, local.sync != nil, local.history != remote.history, local.history.includes(remote.history) {
                // This device holds the version it last applied or sent; every later version on the
                // backend was made on top of it, so includes its edits. One with fewer is a replay.
                engine.quarantine(
                    key, at: engine.backend.location(of: RecordID(recordType: key.type.rawValue, recordName: key.name)),
                    "an older version than the one this device has (a replay); not applied")
                return
            }
            if pending == nil || remote.history.includes(local.history) {
                // Nothing of ours to send, or the remote version already has every edit of ours
                // (our own version, committed by a run that did not hear back, or one made on top of it).
                try engine.confirmPending(key)
                try take(remote, from: remoteDevice, engine: engine)
            } else if local.history.includes(remote.history) {
                // Ours already has every edit of theirs: it goes in place of theirs.
                var rebased = local
                rebased.sync = remote.sync
                try writeStaged(engine: engine)
                try engine.store.tabs.save(rebased)
            } else {
                try writeStaged(engine: engine)
                try merge(local: local, remote: remote, remoteDevice: remoteDevice, engine: engine)
            }
        }
    }

    /// Concurrent versions: merged by `merged(_:_:ancestor:)` against the last synced version,
    /// the losing side of overlapping edits kept as a conflict copy. It stays queued for sending
    /// unless it is the remote version itself.
    private func merge(local: Tab, remote: Tab, remoteDevice: String, engine: SyncEngine) throws {
        let key = RecordKey(.tab, local.id)
        var (merged, loser) = TabRecords.merged(local, remote, ancestor: local.sync?.ancestor)
        if let loser {
            try keepConflictCopy(of: loser, device: loser == local ? engine.deviceName : remoteDevice, engine: engine)
            engine.report.conflicts += 1
        }
        merged.sync = remote.sync
        engine.report.pulled += 1
        if merged.sameContent(as: remote) {
            try engine.confirmPending(key)
            try keep(remote, from: remoteDevice, engine: engine)
            try writeStaged(engine: engine)
        } else {
            try engine.store.tabs.save(merged)
            try engine.store.pending().enqueue(.save, key)
        }
    }

    /// Two concurrent versions of a tab merged: the content three ways against `ancestor`; where
    /// both changed the same lines (or there is no ancestor) the newer version (by hybrid clock)
    /// wins the tab and the other is returned as the loser, to keep as a conflict copy. The name
    /// and the language (each with its lock) come from the version that chose them last, so a
    /// rename is not undone by a later edit that left the name alone; one that follows the content
    /// (no lock) follows the merged content. The result depends only on
    /// the two versions and the ancestor, so every device merging them agrees. Keeps `first`'s id.
    static func merged(_ first: Tab, _ second: Tab, ancestor: String?) -> (tab: Tab, loser: Tab?) {
        let firstWins = isNewer(first, than: second)
        var merged = firstWins ? first : second
        var loser: Tab?
        merged.id = first.id
        merged.fileURL = nil
        if first.content != second.content {
            if let ancestor,
                case .merged(let content) = ThreeWayMerge.merge(ancestor: ancestor, local: first.content, remote: second.content)
            {
                merged.content = content
            } else {
                loser = firstWins ? second : first
            }
        }
        let name = lastSet(first, second, \.nameClock) { "\($0.nameLocked) \($0.name)" }
        (merged.name, merged.nameLocked, merged.nameClock) = (name.name, name.nameLocked, name.nameClock)
        let language = lastSet(first, second, \.languageClock) { "\($0.languageLocked) \($0.language)" }
        (merged.language, merged.languageLocked, merged.languageClock) = (
            language.language, language.languageLocked, language.languageClock
        )
        merged.contentDidChange()
        merged.clock = .merged(first.clock, second.clock)
        merged.history = first.history.union(second.history)
        merged.lastModified = max(first.lastModified, second.lastModified)
        return (merged, loser)
    }

    /// Of two versions, the one that chose a label last: by the label's clock, then (equal clocks) by
    /// its value, so every device picks the same.
    private static func lastSet(_ a: Tab, _ b: Tab, _ clock: (Tab) -> HybridTimestamp, _ value: (Tab) -> String) -> Tab {
        (clock(b), value(b)) > (clock(a), value(a)) ? b : a
    }

    /// The newer of two versions: by clock, then (equal clocks from a merge and an edit
    /// stamped alike) by their text, so every device picks the same one.
    static func isNewer(_ a: Tab, than b: Tab) -> Bool {
        (a.clock, a.content, a.name, a.language) > (b.clock, b.content, b.name, b.language)
    }

    private func keepConflictCopy(of tab: Tab, device: String, engine: SyncEngine) throws {
        let clock = HybridTimestamp.next(after: tab.clock, now: engine.now(), device: engine.store.deviceID)
        try engine.store.saveTab(TabRecords.conflictCopy(of: tab, device: device, id: Identifier.make(), clock: clock))
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
        (copy.nameClock, copy.languageClock) = (clock, clock)
        copy.history = EditHistory([clock])
        return copy
    }

    // MARK: Deletions

    /// The tab was removed on the backend. It goes, unless it holds edits the
    /// deleter had not seen (`history` says what it had seen; nil: unknown), which win.
    private func applyDeletion(_ id: String, history: EditHistory?, engine: SyncEngine) throws {
        try writeStaged(engine: engine)
        let store = engine.store
        let key = RecordKey(.tab, id)
        let pending = try engine.pendingChange(key)
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
                engine.report.conflicts += 1
            } else {
                try store.tabs.remove(id: id)
                if let pending { try store.pending().confirm([pending]) }
                engine.report.pulled += 1
            }
        }
    }

    /// After a full fetch: synced tabs the backend no longer has, and whose tombstone is gone too.
    func applyDeletionsMissing(from accounted: Set<RecordKey>, engine: SyncEngine) throws {
        for tab in try engine.store.tabs.all() where tab.sync != nil && !accounted.contains(RecordKey(.tab, tab.id)) {
            try applyDeletion(tab.id, history: nil, engine: engine)
        }
    }

    /// A save carrying a tag met no record: it was removed after this run fetched. The fetch
    /// after this push brings the removal (and its tombstone), which decides; until then the tab waits.
    func wasRemoved(_: String, engine _: SyncEngine) throws -> Bool {
        false
    }

    /// A version on the backend that cannot be read would block every change to the tab: this
    /// device's version (or deletion) is sent again over it, carrying its tag.
    func replaceUnreadable(_ id: String, tag: String, engine: SyncEngine) throws -> Bool {
        switch try engine.store.tabs.entry(id: id) {
        case .live(var tab)?:
            tab.sync = TabSyncMetadata(tag: tag, ancestor: tab.sync?.ancestor ?? "", clock: tab.sync?.clock)
            try engine.store.tabs.save(tab)
            return true
        case .deleted(var deletion)?:
            deletion.tag = tag
            try engine.store.tabs.markDeleted(deletion)
            return true
        case nil:
            return false
        }
    }

    // MARK: Sending

    /// The tabs of `changes` are read `SyncEngine.stepSize` at a time as the batch takes them in
    /// order, each group's directory opened once: a batch full by its bytes leaves the rest unread.
    /// Each group is read with the data directory's lock let go (a `clip add` meanwhile need not
    /// wait for it): a tab file is replaced whole, so each read is one version of it, and a command
    /// that changes a tab queues the change first, after `sentWatch` started, so `accept` reads that
    /// tab again rather than trusting the version sent, as for a change made during the backend call.
    ///
    /// The tags' log is read only as far as it went before this push appended to it: what the push
    /// appended is of tabs it accepted, which it does not send again (a tab changed since waits for
    /// the next run), so each group reads none of it.
    func sender(for changes: [PendingChange], engine: SyncEngine) throws -> (PendingChange) throws -> SyncEngine.Outgoing? {
        let names = changes.map(\.key.name)
        var read = 0
        var group = Set<String>()
        if tagsLogBeforePush == nil { tagsLogBeforePush = tags(engine)?.logSize ?? 0 }
        let tabs = engine.store.tabs.readingTagsLog(upTo: tagsLogBeforePush ?? 0)
        var entry = tabs.stampedEntry(id:)
        sentWatch = try engine.store.pending().watch()
        return { [self] change in
            let name = change.key.name
            if !group.contains(name), read < names.count {
                let next = names[read..<min(read + SyncEngine.stepSize, names.count)]
                entry = try engine.withLockLetGo { try tabs.stampedLookUp(reading: Array(next)) }
                group = Set(next)
                read = next.endIndex
            }
            let found = try entry(name)
            return try outgoing(change, entry: found?.entry, stamp: found?.stamp, engine: engine)
        }
    }

    private func outgoing(
        _ change: PendingChange, entry: TabStore.Entry?, stamp: String?, engine: SyncEngine
    ) throws
        -> SyncEngine.Outgoing?
    {
        switch (change.operation, entry) {
        case (.save, .live(let tab)?) where !tab.isFileBacked:
            let record = try RecordMapping.record(for: tab, deviceName: engine.deviceName, backend: engine.backend)
            sent[tab.id] = (tab, stamp)
            return SyncEngine.Outgoing(change: change, saves: [record])
        case (.delete, .live(let tab)?) where !tab.isFileBacked && tab.hasUnsyncedChanges:
            // A deletion queued before a removal that did not happen (a crash or an error in between):
            // a save, of a tab with changes the backend lacks.
            var save = change
            save.operation = .save
            return try outgoing(save, entry: entry, stamp: stamp, engine: engine)
        case (.delete, .deleted(let deletion)?):
            return engine.outgoingDeletion(change, ifTag: deletion.tag, history: deletion.history)
        case (.delete, nil):
            // Queued by a version that kept no record of the deletion: it says only which tag it replaces.
            return engine.outgoingDeletion(change, ifTag: change.tag, history: EditHistory())
        default:
            return nil
        }
    }

    /// Records the new tags, and for saved tabs the version sent as the next common ancestor
    /// (a tab edited since it was sent keeps its edit, still pending, on top of that ancestor).
    /// Only the tabs queued again since they were read (`sentWatch`) are read again. A tag goes to
    /// the tag store for the stamp of the file it applies to (see `TabTagStore`): no tab file is
    /// written, but for a file without a stamp, rewritten with its tag as before.
    func accept(_ items: [SyncEngine.Outgoing], saved: [RecordID: BackendRecord], engine: SyncEngine) throws {
        var updated: [Tab] = []
        let queued = try sentWatch?.queuedSince()
        /// The sent version of a saved tab queued by nothing since: what its file still holds.
        func unchanged(_ item: SyncEngine.Outgoing) -> (entry: TabStore.Entry, stamp: String?)? {
            guard item.change.operation == .save, let queued, !queued.contains(item.change.key),
                let sent = sent[item.change.key.name]
            else { return nil }
            return (.live(sent.tab), sent.stamp)
        }
        let changed = items.filter { unchanged($0) == nil }.map(\.change.key.name)
        let entry = changed.isEmpty ? engine.store.tabs.stampedEntry(id:) : try engine.store.tabs.stampedLookUp(reading: changed)
        for item in items {
            let id = item.change.key.name
            let found = try unchanged(item) ?? entry(id)
            switch found?.entry {
            case .live(var tab)? where item.change.operation == .save:
                guard let sent = sent[id]?.tab, let record = item.saves.first.flatMap({ saved[$0.id] }),
                    let tag = record.recordChangeTag
                else { continue }
                if let stamp = found?.stamp {
                    let ancestor = tab.content == sent.content ? nil : sent.content
                    acceptedEntries.append(
                        (tab.id, TabTagStore.Entry(stamp: stamp, tag: tag, ancestor: ancestor, clock: sent.clock.description)))
                } else {
                    tab.sync = TabSyncMetadata(tag: tag, ancestor: sent.content, clock: sent.clock)
                    updated.append(tab)
                }
            case .deleted? where item.change.operation == .delete:
                try engine.store.tabs.remove(id: id)
            default:
                continue
            }
        }
        for item in items { sent[item.change.key.name] = nil }
        if !updated.isEmpty {
            let stage = try accepted ?? engine.store.tabs.makeStage()
            accepted = stage
            try engine.store.tabs.stage(updated, in: stage)
        }
    }

    /// The tags kept by this run's acceptance (one for the whole run: its log stays open).
    private var tagStore: TabTagStore?
    /// How far the tags' log went before the push under way appended to it (0 once merged into the table).
    private var tagsLogBeforePush: Int?

    private func tags(_ engine: SyncEngine) -> TabTagStore? {
        if tagStore == nil { tagStore = engine.store.tabs.tags }
        return tagStore
    }

    /// Tabs without a stamp, accepted, wait to be put in place (see `accepted`).
    var hasAcceptedFiles: Bool { accepted != nil }

    /// Makes the step's tags durable (one append and `fdatasync`) before the engine confirms it.
    func finishAccept(engine: SyncEngine) throws {
        if !acceptedEntries.isEmpty, let store = tags(engine) {
            try store.append(acceptedEntries)
            acceptedEntries = []
        }
        guard let stage = accepted else { return }
        accepted = nil
        try engine.store.tabs.commit(stage)
    }

    /// A log of accepted tags grown past its bound is merged into the table, once the step is
    /// confirmed, and after a command waiting for the lock has had it: the merge reads every tab
    /// file's name and rewrites the table, a hold as long as a step's acceptance.
    func tidyAccepted(engine: SyncEngine) throws {
        guard let store = tagStore, store.logIsLarge else { return }
        try engine.store.letOthersIn()
        try mergeTags(store, engine: engine)
    }

    /// After a push: the log of accepted tags merged into the table, where one tab's is found by
    /// search, unless it holds only a few (in a hold of its own, as between steps).
    func finishPush(engine: SyncEngine) throws {
        tagsLogBeforePush = nil
        guard let store = tagStore, store.logIsWorthMerging else { return }
        try engine.store.letOthersIn()
        try mergeTags(store, engine: engine)
    }

    private func mergeTags(_ store: TabTagStore, engine: SyncEngine) throws {
        let names = Set(try engine.store.tabs.tabFileNames())
        try store.merge { names.contains($0 + ".json") }
        // Every entry from before the push is in the table now; the log holds only the push's.
        if tagsLogBeforePush != nil { tagsLogBeforePush = 0 }
    }

    // MARK: Bookkeeping

    /// Tabs that differ from their synced version, and deletions not sent.
    func unsentChanges(engine: SyncEngine) throws -> [UnsentChange] {
        let saves = try engine.store.tabs.all().filter { !$0.isFileBacked && $0.hasUnsyncedChanges }
            .map { UnsentChange(operation: .save, key: RecordKey(.tab, $0.id)) }
        let deletions = try engine.store.tabs.deletions().map { UnsentChange(operation: .delete, key: RecordKey(.tab, $0.id), tag: $0.tag) }
        return saves + deletions
    }

    /// Each such tab goes again as new.
    func forgetSynced(except accounted: Set<RecordKey>?, engine: SyncEngine) throws {
        acceptedEntries = []
        let pending = try engine.store.pending()
        for var tab in try engine.store.tabs.all() where !tab.isFileBacked {
            if let accounted, tab.sync == nil || accounted.contains(RecordKey(.tab, tab.id)) { continue }
            tab.sync = nil
            try engine.store.tabs.save(tab)
            try pending.enqueue(.save, RecordKey(.tab, tab.id))
        }
        // Every tab file was written again: no entry of the tag store applies any more.
        if accounted == nil {
            try engine.store.tabs.tags?.reset()
            tagsLogBeforePush = nil
        }
    }

    // MARK: Concurrent versions

    /// Merged pairwise in canonical order, each pair three ways against their common ancestor; the
    /// losing side of overlapping edits becomes a conflict copy with a name derived from both.
    func merge(_ live: [RecordVersion], backend: SyncBackend) throws -> SiblingMerge.Outcome {
        var readable: [(version: RecordVersion, tab: Tab)] = []
        for version in live {
            // A sibling that cannot be read is left out (the engine quarantines it when it is the only one).
            if let tab = try? RecordMapping.tab(from: version.record, backend: backend) { readable.append((version, tab)) }
        }
        guard var (merged, tab) = readable.first else { return SiblingMerge.Outcome(record: live.last!.record) }
        var deviceName = RecordMapping.deviceName(of: merged.record)
        var copies: [BackendRecord] = []
        for (version, other) in readable.dropFirst() {
            let ancestor = VersionHistory.commonAncestor(of: merged, version)
            let content = try ancestor.flatMap { try ancestorContent($0, of: version.record, backend: backend) }
            let (result, loser) = TabRecords.merged(tab, other, ancestor: content)
            if TabRecords.isNewer(other, than: tab) { deviceName = RecordMapping.deviceName(of: version.record) }
            if let loser {
                let losing = loser == tab ? merged : version
                let copy = TabRecords.conflictCopy(
                    of: loser, device: RecordMapping.deviceName(of: losing.record),
                    id: VersionHistory.conflictCopyName(of: loser.id, losing: losing.version), clock: loser.clock)
                copies.append(
                    try RecordMapping.record(for: copy, deviceName: RecordMapping.deviceName(of: losing.record), backend: backend))
            }
            tab = result
            let record = try RecordMapping.record(for: tab, deviceName: deviceName, backend: backend)
            merged = RecordVersion(
                record: record, version: merged.version.joined(with: version.version), writer: "", isDerived: true, base: ancestor)
        }
        var record = merged.record
        record.recordChangeTag = nil
        return SiblingMerge.Outcome(record: record, base: merged.base, copies: copies)
    }

    /// The tab content an ancestor held (inline, or as an asset).
    private func ancestorContent(_ ancestor: RecordBase, of record: BackendRecord, backend: SyncBackend) throws -> String? {
        var fields = record.fields
        fields["content"] = ancestor.fields["content"]
        fields["contentAsset"] = ancestor.fields["contentAsset"]
        let old = BackendRecord(
            recordName: record.recordName, recordType: record.recordType, recordChangeTag: record.recordChangeTag,
            fields: fields, created: record.created, modified: record.modified)
        return try? RecordMapping.tab(from: old, backend: backend)?.content
    }
}

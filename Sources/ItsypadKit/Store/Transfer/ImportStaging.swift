import ItsypadModel
import ItsypadSupport

/// Everything one import changes, written to a stage first (`StagedChanges`)
/// so that the data directory takes all of it or none of it: tab files, the
/// clip log and index, settings and the pending queue move into place together.
final class ImportStaging {
    let store: DataStore
    private let stage: StagedChanges
    private let clips: ClipStore.Staging
    /// Only these clips are added (the newest ones, when `clipboard.maxEntries` leaves room for fewer).
    private let admitted: ((EscapedClip) -> Bool)?
    private var pending: StagedFile?
    /// The staged queue's summary, written with the import; nil when a replay alone can tell it.
    private var queueSummary: StagedQueueSummary?
    /// Tabs staged so far, so that a document naming a tab twice keeps the newer.
    private var stagedTabs: [String: Tab] = [:]
    private var removedTabs: [PackedID] = []
    /// Tab files not written to the stage yet, by name: they are written a few hundred at a time.
    private var unwrittenTabFiles: [String: [UInt8]] = [:]
    private static let tabFilesWrittenTogether = 512
    /// Whether the data directory has a tabs directory: when it has none, no tab is looked up.
    private let hasTabs: Bool
    private var settingsChanged = false
    /// Clips of the document that the history holds already (see `queueUnsent`).
    private var presentClips = Set<PackedID>()
    var summary = ImportSummary()
    /// The clips staged, for the cap.
    var clipStaging: ClipStore.Staging { clips }

    init(store: DataStore, admitting admitted: ((EscapedClip) -> Bool)? = nil) throws {
        self.store = store
        self.admitted = admitted
        hasTabs = try storeOperation { try store.tree.status(store.tabs.directory) != nil }
        stage = try StagedChanges(in: store.tree)
        do {
            clips = try ClipStore.Staging(try store.clips(), in: stage)
        } catch {
            stage.discard()
            throw error
        }
    }

    private func relative(_ path: String) -> String { stage.relative(path) }

    /// The staged queue: a base line (its size is filled in at commit, so that the queue is compacted only
    /// once it doubles again; it keeps the queue's name), then the current queue, then what the import adds.
    private func stagedQueue() throws -> StagedFile {
        if let pending { return pending }
        let queue = try store.pending()
        try queue.cutTornTail()
        queueSummary = try StagedQueueSummary(try queue.waitingRecords(), scratchDirectory: stage.scratchDirectory, in: store.tree)
        let file = try stage.file(relative(queue.path))
        try storeOperation {
            try file.append(PendingQueue.baseLine(bytes: 0, identity: queue.identity))
            try file.copy(from: queue.path, in: store.tree)
        }
        pending = file
        return file
    }

    func enqueue(_ operation: PendingChange.Operation, _ keys: [RecordKey], tag: String? = nil) throws {
        guard !keys.isEmpty else { return }
        var lines: [UInt8] = []
        for key in keys { PendingQueue.appendLine(operation.rawValue, key, tag: tag, to: &lines) }
        let file = try stagedQueue()
        try storeOperation { try file.append(lines) }
        for key in keys { try queueSummary?.queued(ReplayKey(key)) }
    }

    /// Queues the save of a record this device holds but never sent (an import cut short by an
    /// older version queued nothing), unless a change of it waits already: importing the same
    /// document again repairs the queue.
    private func queueUnlessWaiting(_ key: RecordKey) throws {
        if try store.pending().change(for: key) == nil { try enqueue(.save, [key]) }
    }

    /// `queueUnlessWaiting` for the clips of the document that the history holds already and
    /// that no backend has (the ledger knows no version of them).
    private func queueUnsent() throws {
        let ids = try clips.syncing(presentClips)
        guard !ids.isEmpty else { return }
        let synced = try store.clipLedger().entries(Set(ids.map(\.string)))
        for id in ids where synced[id.string]?.tag == nil { try queueUnlessWaiting(RecordKey(.clip, id.string)) }
    }

    /// Queues the deletion of records, as `DataStore` does: before this device's first sync there is
    /// nothing on a backend to delete, and what was waiting for those records is dropped instead.
    private func queueDeletion(_ keys: [RecordKey], tag: String? = nil) throws {
        guard !keys.isEmpty else { return }
        if try store.hasEverSynced() { return try enqueue(.delete, keys, tag: tag) }
        let waiting = try keys.compactMap { try store.pending().change(for: $0) }
        guard !waiting.isEmpty else { return }
        var lines: [UInt8] = []
        for change in waiting { PendingQueue.appendLine("done", change.key, version: change.version, to: &lines) }
        let file = try stagedQueue()
        try storeOperation { try file.append(lines) }
        queueSummary = nil
    }

    /// Keeps the newer of the local and the incoming tab (by lastModified, then clock).
    func merge(_ incoming: Tab) throws {
        var tab = incoming
        // A file the document names is never adopted (an export naming ~/.bashrc would have the
        // next edit overwrite it): its text, exported with the tab, is imported as a scratch tab.
        let namedFile = tab.fileURL != nil
        tab.fileURL = nil
        if let staged = stagedTabs[tab.id], (tab.lastModified, tab.clock) <= (staged.lastModified, staged.clock) { return }
        if stagedTabs[tab.id] == nil, hasTabs, let local = try store.tabs.tab(id: tab.id),
            (tab.lastModified, tab.clock) <= (local.lastModified, local.clock)
        {
            if local.sync == nil, !local.isFileBacked { try queueUnlessWaiting(RecordKey(.tab, local.id)) }
            return
        }
        guard let name = TabStore.fileName(tab.id) else { return }
        unwrittenTabFiles[name] = try TabStore.fileContent(tab)
        if unwrittenTabFiles.count >= Self.tabFilesWrittenTogether { try writeTabFiles() }
        dropTabIndex()
        if stagedTabs.updateValue(tab, forKey: tab.id) == nil {
            summary.tabs += 1
            if namedFile { summary.tabsNamingFiles += 1 }
        }
        try enqueue(.save, [RecordKey(.tab, tab.id)])
    }

    func add(_ clip: ClipEntry) throws {
        guard let escaped = EscapedClip(clip) else { return }
        try add(escaped, bytes: nil)
    }

    /// A binary clip comes with its bytes; it stays here when too large to sync, whatever the document says.
    func add(_ clip: EscapedClip, bytes: [UInt8]?) throws {
        if let admitted, !admitted(clip) { return }
        var clip = clip
        if let binary = clip.binary, clip.localOnly == nil {
            clip.localOnly = try store.localOnlyReason(forBinaryOf: binary.size, requested: false)
        }
        guard try clips.add(clip, bytes: bytes) else {
            if clip.localOnly == nil { presentClips.insert(clip.id) }
            return
        }
        summary.clips += 1
        guard clip.localOnly == nil else { return }
        let file = try stagedQueue()
        try storeOperation {
            try file.append(reserving: 128) { PendingQueue.appendLine(PendingChange.Operation.save.rawValue, clip: clip.id, to: &$0) }
        }
        try queueSummary?.queued(.clip(clip.id))
    }

    /// A device setting (the editor command, the backend, …) is this device's own: an import file
    /// never sets it, and names it in `summary.skippedDeviceSettings`.
    func mergeSetting(_ key: String, _ entry: SettingsStore.Entry) throws {
        if Settings.definition(key)?.scope == .device {
            summary.skippedDeviceSettings.append(key)
            return
        }
        let synced = Settings.definition(key)?.scope == .synced
        guard try store.settings().mergeWithoutWriting(key, entry) else {
            // Held already, but never sent in this version: importing the same document again repairs the queue.
            if synced, try store.settings().entries[key]?.hasUnsyncedChanges == true { try queueUnlessWaiting(RecordKey(.setting, key)) }
            return
        }
        settingsChanged = true
        summary.settings += 1
        if synced { try enqueue(.save, [RecordKey(.setting, key)]) }
    }

    /// Writes the tab files gathered so far to the stage.
    private func writeTabFiles() throws {
        guard !unwrittenTabFiles.isEmpty else { return }
        try stage.write(unwrittenTabFiles.map { (name: $0.key, bytes: $0.value) }, in: relative(store.tabs.directory))
        unwrittenTabFiles = [:]
    }

    /// Removes a tab as `DataStore.removeTab` does: on a device that has synced, it leaves the record of its deletion.
    func removeTab(_ tab: Tab) throws {
        guard let path = store.tabs.filePath(tab.id), let id = PackedID(tab.id) else { return }
        // A version of it staged earlier is written first, so that what follows replaces it.
        try writeTabFiles()
        if !tab.isFileBacked, try store.hasEverSynced() {
            try stage.write(relative(path), TabStore.fileContent(TabDeletion(id: tab.id, tag: tab.sync?.tag, history: tab.history)))
        } else {
            stage.remove(relative(path))
        }
        dropTabIndex()
        removedTabs.append(id)
        summary.deleted += 1
        if !tab.isFileBacked { try queueDeletion([RecordKey(.tab, tab.id)], tag: tab.sync?.tag) }
    }

    /// The tab index goes with the commit (a crash before it is carried over must not leave it stale).
    private func dropTabIndex() {
        if stagedTabs.isEmpty && removedTabs.isEmpty {
            stage.remove(relative(store.tabs.directory + "/" + DataDirectoryLayout.tabIndexName))
        }
    }

    /// Returns how many were in the history.
    @discardableResult
    func removeClips(_ ids: [String]) throws -> Int {
        let removed = try clips.remove(ids: ids)
        summary.deleted += removed.count
        try queueDeletion(removed.map { RecordKey(.clip, $0) })
        return removed.count
    }

    /// Adds the newest of `entries` that fit under `maxEntries` (the history holding `removed`
    /// fewer than it did), those whose ids are new to it: an import never evicts.
    func addNewest(
        _ entries: [ClipEntry], maxEntries: Int, removed: Int = 0, progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) throws {
        var fresh = entries.filter(clips.isFresh)
        let room = max(0, maxEntries - (try store.clips().count - removed))
        if fresh.count > room {
            summary.skippedClips = fresh.count - room
            fresh = Array(fresh.sorted { ($0.timestamp, $0.id) > ($1.timestamp, $1.id) }.prefix(room))
        }
        for (index, clip) in fresh.enumerated() {
            try add(clip)
            progress(index + 1, fresh.count)
        }
    }

    /// Puts everything in place at once; until then nothing has changed.
    func commit() throws {
        try queueUnsent()
        try writeTabFiles()
        try clips.finish()
        if settingsChanged { try stage.write(relative(try store.settings().path), try store.settings().encoded()) }
        try storeOperation {
            if let pending {
                try pending.overwrite(PendingQueue.baseLine(bytes: pending.size, identity: try store.pending().identity), at: 0)
            }
            try pending?.close()
        }
        var index = TabIndex.load(directory: store.tabs.directory, in: store.tree)
        try withInterruptsDeferred { try stage.commit() }
        store.reopenFiles()
        // Only a cache: without it, the next listing replays the queue.
        try? queueSummary?.write(forQueue: try store.pending().path, in: store.tree)
        queueSummary = nil
        // A current tab index stays current: the staged tabs replace their records.
        guard index != nil else { return }
        for tab in stagedTabs.values { index!.update(id: PackedID(tab.id)!, with: TabIndex.record(for: tab)) }
        for id in removedTabs { index!.update(id: id, with: nil) }
        try? index!.save(directory: store.tabs.directory, in: store.tree)
    }

    /// Drops the stage: the data directory is as it was.
    func discard() {
        try? clips.abandon()
        stage.discard()
        store.reopenFiles()
    }
}

import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The local mutations. Each one changes the store and records, in the same
/// locked run, what the sync engine must send (deletions included, so that
/// evictions, clears and prunes reach other devices). What to send is queued
/// before the change is stored: a crash or an error in between leaves a queued
/// change of something unchanged, which the engine sends as what it is (nothing,
/// when the backend has it so), never a change that would not sync.
extension DataStore {
    // MARK: Clips

    /// Why a clip stays on this device, from the flag and the settings.
    public func localOnlyReason(for text: String, requested: Bool) throws -> LocalOnlyReason? {
        if requested { return .requested }
        let oversized = text.utf8.count > ClipLimits.maxSyncedBytes
        // An oversized clip stays here whatever it matches: the patterns' cost is only ever paid on synced sizes.
        if !oversized, try ignorePatterns().matches(text) { return .ignored }
        if try settings().bool(.clipboardIgnoreSecrets), SecretDetector.looksSecret(text) { return .secret }
        if oversized { return .oversized }
        return nil
    }

    /// Why a binary clip of `size` bytes stays on this device: no pattern or detector reads bytes, a size does.
    public func localOnlyReason(forBinaryOf size: Int, requested: Bool) throws -> LocalOnlyReason? {
        if requested { return .requested }
        return size > (try settings().maxClipSyncBytes) ? .large : nil
    }

    /// Adds a clip, evicting beyond `clipboard.maxEntries`.
    public func addClip(_ text: String, local: Bool, now: Milliseconds) throws -> ClipStore.AddOutcome {
        let reason = try localOnlyReason(for: text, requested: local)
        return try addClip(ClipEntry(id: Identifier.make(), text: text, timestamp: now, localOnly: reason), bytes: nil)
    }

    /// Adds a binary clip: `bytes` of the MIME type `type` (not text).
    public func addClip(bytes: [UInt8], type: String, local: Bool, now: Milliseconds) throws -> ClipStore.AddOutcome {
        let binary = ClipBinary(describing: bytes, type: type)
        let reason = try localOnlyReason(forBinaryOf: bytes.count, requested: local)
        return try addClip(ClipEntry(id: Identifier.make(), text: "", timestamp: now, localOnly: reason, binary: binary), bytes: bytes)
    }

    private func addClip(_ entry: ClipEntry, bytes: [UInt8]?) throws -> ClipStore.AddOutcome {
        let maxEntries = try settings().maxClipEntries
        let pending = try pending()
        if let newest = try clips().newest(), newest.text == entry.text, newest.type == entry.type,
            newest.binary?.sha256 == entry.binary?.sha256
        {
            return .init(entry: newest, duplicate: true, evicted: [])
        }
        // Compacted before the change, so that nothing after it can fail the command.
        if pending.needsCompaction {
            let everSynced = try hasEverSynced()
            try pending.compact { _ in everSynced }
        }
        if entry.localOnly == nil { try pending.enqueue(.save, RecordKey(.clip, entry.id)) }
        return try removingClips(hard: true) { try clips().add(entry, bytes: bytes, maxEntries: maxEntries, beforeCommit: $0) }
    }

    /// Evicts beyond `clipboard.maxEntries` as `clip add` does (a sync's merge can take the history
    /// past it) and queues the deletions; returns the evicted ids.
    @discardableResult
    public func enforceClipLimit() throws -> [String] {
        let maxEntries = try settings().maxClipEntries
        return try removingClips(hard: true) { try clips().evict(keeping: maxEntries, beforeCommit: $0) }
    }

    /// Removes clips by id and queues their deletion. `hard` is for removals a policy
    /// makes (limits, pruning): they leave no tombstone, as any device would make them again.
    @discardableResult
    public func removeClips(_ ids: [String], hard: Bool = false) throws -> [String] {
        try removingClips(hard: hard) { try clips().remove(ids: ids, beforeCommit: $0) }
    }

    /// Runs a change of the history that may remove clips; `change` passes on the removed ones before
    /// it commits. A device that has synced queues their deletion then; one that never has has nothing
    /// on a backend to delete, and forgets their queued saves once they are gone. A local-only clip's
    /// removal stays here, as the clip did.
    private func removingClips<T>(hard: Bool, _ change: (_ beforeCommit: ([ClipSummary]) throws -> Void) throws -> T) throws -> T {
        let everSynced = try hasEverSynced()
        var shared: [RecordKey] = []
        let result = try change { removed in
            shared = removed.filter { !$0.localOnly }.map { RecordKey(.clip, $0.id) }
            if everSynced { try pending().enqueue(.delete, shared, hard: hard) }
        }
        // Only tidies the queue: a save left there of a clip that is gone sends nothing.
        if !everSynced { try? pending().discard(shared) }
        return result
    }

    /// Removes unpinned entries (every entry with `includingPinned`).
    public func clearClips(includingPinned: Bool) throws -> [String] {
        try removingClips(hard: false) { try clips().clear(includingPinned: includingPinned, beforeCommit: $0) }
    }

    /// Removes unpinned entries older than `age` and the oldest beyond `keep`; pinned entries never go.
    public func pruneClips(olderThan age: Milliseconds?, keep: Int, now: Milliseconds) throws -> [String] {
        try removingClips(hard: true) { try clips().prune(before: age.map { now - $0 }, keep: keep, beforeCommit: $0) }
    }

    /// A device that never synced has nothing on a backend to delete.
    package func hasEverSynced() throws -> Bool { try EngineState.load(from: self).zoneID != nil }

    /// Pins or unpins; returns false when it already was. The change is stamped so that
    /// other devices can tell an unpin made after seeing a pin from a concurrent one.
    public func setClipPinned(_ entry: ClipEntry, _ pinned: Bool, now: Milliseconds) throws -> Bool {
        try clips().setPinned(id: entry.id, pinned) {
            guard entry.localOnly == nil else { return }
            try pending().enqueue(.save, RecordKey(.clip, entry.id))
            try clipLedger().recordChange(ids: [entry.id], clock: HybridTimestamp(physical: now, device: deviceID))
        }
    }

    // MARK: Tabs

    /// Creates a tab from content; name and language follow the content unless given.
    public func createTab(content: String, name: String?, language: String?, fileURL: String?, now: Milliseconds) throws -> Tab {
        let tab = Tab(
            id: Identifier.make(), name: name ?? Tab.derivedName(for: content), nameLocked: name != nil,
            content: content, language: language ?? LanguageDetector.detect(content),
            languageLocked: language != nil, lastModified: now, fileURL: fileURL,
            clock: HybridTimestamp(physical: now, device: deviceID))
        try saveTab(tab)
        return tab
    }

    /// Stores a changed tab with a new clock, unless nothing changed and no label was chosen.
    /// `chosen`: the labels the person chose (a rename, a language), which take the edit's clock;
    /// a name or language that follows the content keeps its own. Returns whether it stored one.
    @discardableResult
    public func updateTab(_ original: Tab, now: Milliseconds, choosing chosen: Tab.Labels = [], change: (inout Tab) -> Void) throws -> Bool
    {
        var tab = original
        change(&tab)
        guard tab != original || !chosen.isEmpty else { return false }
        tab.lastModified = now
        tab.stamp(HybridTimestamp.next(after: original.clock, now: now, device: deviceID), choosing: chosen)
        try saveTab(tab)
        return true
    }

    /// Writes a tab (its file content too when file-backed) and queues it, queued first: a full disk
    /// cannot leave a changed tab that would not sync.
    public func saveTab(_ tab: Tab) throws {
        if !tab.isFileBacked { try pending().enqueue(.save, RecordKey(.tab, tab.id)) }
        if let fileURL = tab.fileURL { try writeUserFile(fileURL, tab.content, for: tab.id) }
        try tabs.updateIndex(id: tab.id, to: tab) { try tabs.save(tab) }
    }

    /// Removes a tab and queues its deletion. On a device that has synced, the tab leaves
    /// the record of its deletion (see ``TabDeletion``) until that reaches the backend:
    /// even a tab never acknowledged may have been stored there by a run that did not hear back.
    public func removeTab(_ tab: Tab) throws {
        if let fileURL = tab.fileURL {
            // Removing the tab leaves its file: finish what a crash interrupted if that still can be done.
            try? finishInterruptedWrite(fileURL, for: tab.id)
            try storeOperation { try tree.remove(userFileJournal(for: tab.id)) }
        }
        let key = RecordKey(.tab, tab.id)
        let sendsDeletion = try !tab.isFileBacked && hasEverSynced()
        if sendsDeletion { try pending().enqueue(.delete, key, tag: tab.sync?.tag) }
        try tabs.updateIndex(id: tab.id, to: nil) {
            if sendsDeletion {
                try tabs.markDeleted(TabDeletion(id: tab.id, tag: tab.sync?.tag, history: tab.history))
            } else {
                try tabs.remove(id: tab.id)
            }
        }
        // As for clips (`removingClips`): a device that never synced only forgets the tab's queued save.
        if !tab.isFileBacked, !sendsDeletion { try? pending().discard([key]) }
    }

    // MARK: A file-backed tab's file

    /// Where the text being written to a file-backed tab's file is kept until
    /// the file holds it: the user's file is written in place, which a crash can tear.
    /// (`id` is a tab's, checked when the tab was read: a UUID.)
    private func userFileJournal(for id: String) -> String { tabs.directory + "/" + id.lowercased() + ".writing" }

    /// Writes the user's own file in place (keeping its inode, mode, owner and
    /// links; through a symlink, its target), unless it already holds `content`.
    /// The journal exists exactly while the file may be torn.
    private func writeUserFile(_ path: String, _ content: String, for id: String) throws {
        let bytes = Array(content.utf8)
        try storeOperation {
            guard FileSystem.isRegularFile(path) else { throw ItsypadError.failure("\(path) is missing or not a regular file") }
            guard access(path, W_OK) == 0 else { throw FileSystem.fail("write", path) }
            if try FileSystem.read(path) == bytes { return }
            let journal = userFileJournal(for: id)
            try tree.writeAtomically(journal, bytes)
            try FileSystem.overwriteInPlace(path, bytes)
            try tree.remove(journal)
        }
    }

    /// Completes a write to a user's file that a crash interrupted: the text is
    /// in the journal, the file may be torn.
    private func finishInterruptedWrite(_ path: String, for id: String) throws {
        let journal = userFileJournal(for: id)
        try storeOperation {
            guard let bytes = try tree.read(journal) else { return }
            try FileSystem.overwriteInPlace(path, bytes)
            try tree.remove(journal)
        }
    }

    /// A tab with a file-backed tab's content read from its file.
    public func loadContent(_ tab: Tab) throws -> Tab {
        guard let fileURL = tab.fileURL else { return tab }
        try finishInterruptedWrite(fileURL, for: tab.id)
        guard let bytes = try storeOperation({ try FileSystem.read(fileURL) }) else {
            throw ItsypadError.failure("the file behind tab '\(tab.name)' is missing: \(fileURL)")
        }
        guard let text = Text.decodeUTF8(bytes) else {
            throw ItsypadError.failure("the file behind tab '\(tab.name)' is not valid UTF-8: \(fileURL)")
        }
        var loaded = tab
        loaded.content = text
        return loaded
    }

    /// Finds a tab by id, exact name or unique id prefix, through the index (an index that disagrees
    /// with the tab files is rebuilt and asked again). A reference that could mean more than one
    /// tab (a name that is also another tab's id prefix, say) is ambiguous: nothing is guessed.
    public func resolveTab(_ reference: String) throws -> Resolution<Tab> {
        if let resolution = try resolveTab(reference, among: try tabs.indexMatches(reference)), !resolution.isNotFound { return resolution }
        // Not found, or the index disagrees with a file: ask again after reading every file.
        return try resolveTab(reference, among: try tabs.rebuildIndex().matches(reference)) ?? .notFound
    }

    /// nil when a tab the index names is missing or no longer matches in its file.
    private func resolveTab(_ reference: String, among candidates: [PackedID]) throws -> Resolution<Tab>? {
        let id = reference.lowercased()
        let byPrefix = Identifier.isPrefixCandidate(reference)
        var matches: [Tab] = []
        for packed in candidates {
            guard let tab = try tabs.tab(id: packed.string),
                tab.id == id || tab.name == reference || (byPrefix && tab.id.hasPrefix(id))
            else { return nil }
            matches.append(tab)
        }
        switch matches.count {
        case 0: return .notFound
        case 1: return .found(matches[0])
        default: return .ambiguous(matches)
        }
    }

    // MARK: Settings

    /// Sets or unsets a key; synced keys are queued for sending.
    public func changeSetting(_ definition: SettingDefinition, to value: SettingValue?, now: Milliseconds) throws {
        let settings = try settings()
        let previous = settings.entries[definition.key]?.clock
        if definition.scope == .synced { try pending().enqueue(.save, RecordKey(.setting, definition.key)) }
        try settings.set(definition.key, value, clock: HybridTimestamp.next(after: previous, now: now, device: deviceID))
    }

    // MARK: Sync state

    /// syncState for listings (local-only items are decided by the caller):
    /// failed after repeated failures, pending while a change waits, else synced.
    /// Each record is looked up as it is asked for: a listing of 20 entries reads no more of the queue.
    public func syncStates() throws -> (RecordKey) -> SyncState {
        let waiting = try pending().waitingRecords()
        let failed = try EngineState.load(from: self).failedKeys
        return { SyncState(failed: failed.contains($0), pending: waiting.contains($0)) }
    }

    /// `syncStates` for clips by packed id. A listing that asks for many (a whole history) is
    /// answered from a set of every waiting record once it has asked for `lookupsBeforeSet`: one
    /// pass over the summary costs less than a search of it for each of 1,000,000 entries.
    package func clipSyncStates() throws -> (PackedID) -> SyncState {
        let waiting = try pending().waitingRecords()
        let failed = RecordKeySet(Array(try EngineState.load(from: self).failedKeys))
        var asked = 0
        var every: RecordKeySet?
        return { id in
            asked += 1
            // nil again when the summary turns out damaged: each record is then looked up.
            if asked == DataStore.lookupsBeforeSet { every = waiting.all() }
            return SyncState(failed: failed.contains(clip: id), pending: every?.contains(clip: id) ?? waiting.contains(clip: id))
        }
    }

    static let lookupsBeforeSet = 2048
}

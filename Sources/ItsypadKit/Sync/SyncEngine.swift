#if canImport(Glibc)
import Glibc
#endif

/// What one sync run did.
public struct SyncReport: Equatable, Sendable {
    public var pulled = 0
    public var pushed = 0
    public var conflicts = 0
    /// Items that failed in this run, with their errors.
    public var failed: [RecordKey: String] = [:]
    /// Fetched versions not applied because they are older than what this device last applied (a replay).
    public var refusedOlder: [RecordKey] = []
}

/// CKSyncEngine's semantics against a `SyncBackend`: fetch changes since a
/// token and apply them, send the pending queue in batches with change-tag
/// conditions, resolve conflicts so that nothing typed is lost.
///
/// The data directory stays locked for the whole run; the backend's own lock
/// is held only while a batch commits.
public final class SyncEngine {
    let store: DataStore
    let backend: SyncBackend
    let now: () -> Milliseconds
    public private(set) var state: EngineState
    public private(set) var report = SyncReport()
    let deviceName: String
    /// Called after each page fetched and batch sent, for a progress line.
    public var progress: ((SyncReport) -> Void)?
    /// Fetched tabs accepted as they are, written together at the end of each page.
    private var stagedTabs: [String: Tab] = [:]

    /// Changes fetched per page (each page is applied and its token saved together),
    /// and attempts per backend call for transient errors.
    static let pageSize = 2000
    static let attempts = 5

    public init(store: DataStore, backend: SyncBackend, now: @escaping () -> Milliseconds = Time.now) throws {
        self.store = store
        self.backend = backend
        self.now = now
        state = try EngineState.load(from: store)
        deviceName = try store.settings().string("device.name") ?? store.deviceID
    }

    // MARK: Runs

    /// Pull, push, pull: what `itsypad sync` does.
    public func sync() throws {
        try pull()
        try push()
        try pull()
    }

    /// Fetches and applies everything since the saved token.
    public func pull() throws {
        try checkZone()
        // Only a device that lost its place (an expired token) can hold records deleted
        // meanwhile; a first sync or a replaced zone has nothing to compare.
        var detectDeletions = false
        var seen = Set<RecordKey>()
        while true {
            let page: ChangesPage
            do {
                page = try retrying { try backend.fetchChanges(since: state.token.map(ChangeToken.init(rawValue:)), limit: SyncEngine.pageSize) }
            } catch BackendError.tokenExpired {
                // Compacted past our token: fetch everything and find deletions by comparison.
                state.token = nil
                detectDeletions = true
                seen = []
                continue
            }
            try apply(page.changes, seen: &seen)
            try writeStagedTabs()
            progress?(report)
            // Saved only after its changes are applied: a crash re-applies, never skips.
            state.token = page.token.rawValue
            try state.save(to: store)
            if !page.moreComing { break }
        }
        if detectDeletions { try applyDeletionsMissingFrom(seen) }
        try trimClipboardToLimit()
        state.lastPull = now()
        try state.save(to: store)
    }

    /// Sends the pending queue.
    public func push() throws {
        try checkZone()
        let pending = try store.pending()
        var skip = Set<RecordKey>()
        var batchLimit = BackendLimits.maxRecordsPerRequest
        for _ in 0..<50 {
            let changes = try pending.changes().filter { !skip.contains($0.key) }
            guard !changes.isEmpty else { break }
            let batch = try buildBatch(changes, limit: batchLimit)
            if batch.saves.isEmpty && batch.deletes.isEmpty {
                try pending.confirm(batch.obsolete)
                continue
            }
            let result: ModifyResult
            do {
                result = try retrying { try backend.modify(saves: batch.saves.map(\.1), deletes: batch.deletes.map(\.1), device: store.deviceID) }
            } catch BackendError.limitExceeded where batchLimit > 1 {
                batchLimit = max(1, batch.saves.count + batch.deletes.count) / 2
                continue
            } catch let error as BackendError {
                // Quota, permission, corruption — or a backend still busy after every retry: keep the
                // data and the queue, and show the batch as failed until a later sync sends it.
                for change in batch.saves.map(\.0) + batch.deletes.map(\.0) { recordFailure(change.key, error.description, permanent: true) }
                try state.save(to: store)
                throw error
            }
            try pending.confirm(batch.obsolete)
            if result.failures.isEmpty {
                try acceptSaved(result.saved, sent: batch.saves.map(\.0))
                try pending.confirm(batch.deletes.map(\.0))
                for change in batch.saves.map(\.0) + batch.deletes.map(\.0) { state.failures[change.key] = nil }
                report.pushed += batch.saves.count + batch.deletes.count
                progress?(report)
            } else {
                for failure in result.failures {
                    guard let type = RecordType(rawValue: failure.recordType) else { continue }
                    let key = RecordKey(type, failure.recordName)
                    let sent = (batch.saves.map(\.0) + batch.deletes.map(\.0)).first { $0.key == key }
                    if try !resolve(failure.error, key: key, sent: sent) { skip.insert(key) }
                }
            }
            try state.save(to: store)
        }
        if report.failed.isEmpty { state.lastPush = now() }
        try state.save(to: store)
        // Sent changes leave "done" lines behind: rewrite the log as what is still waiting.
        if (FileSystem.fileSize(pending.path) ?? 0) > 64 << 10 { try pending.compact { _ in true } }
    }

    // MARK: Zone

    /// Creates the zone if it is missing, and starts over when it was replaced:
    /// sync metadata is dropped and all local data is sent again; local data is never deleted for it.
    private func checkZone() throws {
        let zone: ZoneInfo
        do {
            zone = try retrying { try backend.zone() }
        } catch BackendError.zoneNotFound {
            zone = try retrying { try backend.createZoneIfNeeded() }
        }
        guard state.zoneID != zone.zoneID else { return }
        if state.zoneID != nil { try resendEverything() }
        state.zoneID = zone.zoneID
        state.token = nil
        try state.save(to: store)
    }

    private func resendEverything() throws {
        let pending = try store.pending()
        for var tab in try store.tabs.all() where !tab.isFileBacked {
            tab.sync = nil
            try store.tabs.save(tab)
            try pending.enqueue(.save, RecordKey(.tab, tab.id))
        }
        try pending.enqueue(.save, try store.clips().entries().filter { $0.localOnly == nil }.map { RecordKey(.clip, $0.id) })
        let settings = try store.settings()
        for (key, var entry) in settings.entries where Settings.definition(key)?.scope == .synced {
            entry.tag = nil
            try settings.replace(key, entry)
            try pending.enqueue(.save, RecordKey(.setting, key))
        }
    }

    // MARK: Applying fetched changes (never queued again: no sync loops)

    /// Applies one page. Clips are folded per id and applied in bulk, so a
    /// large first sync costs one pass over the history rather than one per entry.
    private func apply(_ changes: [Change], seen: inout Set<RecordKey>) throws {
        var clipChanges: [String: Change] = [:]
        for change in changes {
            switch change {
            case .saved(let record):
                guard let type = RecordType(rawValue: record.recordType) else { continue }
                seen.insert(RecordKey(type, record.recordName))
                switch type {
                case .clip: clipChanges[record.recordName.lowercased()] = change
                case .tab:
                    guard let remote = try RecordMapping.tab(from: record, backend: backend) else { continue }
                    try applyRemoteTab(remote, deviceName: RecordMapping.deviceName(of: record))
                case .setting:
                    guard let (key, entry) = RecordMapping.setting(from: record) else { continue }
                    try applyRemoteSetting(key, entry)
                }
            case .deleted(let typeName, let name):
                guard let type = RecordType(rawValue: typeName) else { continue }
                seen.remove(RecordKey(type, name))
                if type == .clip { clipChanges[name.lowercased()] = change } else { try applyRemoteDelete(RecordKey(type, name)) }
            }
        }
        try applyClips(clipChanges)
    }

    /// A tab as this run sees it: staged for writing, else on disk.
    private func localTab(_ id: String) throws -> Tab? {
        if let staged = stagedTabs[id] { return staged }
        return try store.tabs.tab(id: id)
    }

    private func writeStagedTabs() throws {
        try store.tabs.save(Array(stagedTabs.values))
        stagedTabs = [:]
    }

    private func pendingChange(_ key: RecordKey) throws -> PendingChange? {
        try store.pending().change(for: key)
    }

    /// Server wins for clips, except that pins merge as logical OR while a local
    /// pin change waits; a local deletion waiting to be sent wins over a save.
    private func applyClips(_ changes: [String: Change]) throws {
        guard !changes.isEmpty else { return }
        let clips = try store.clips()
        let pending = try store.pending()
        let local = try clips.live(ids: Set(changes.keys))
        var inserts: [ClipEntry] = []
        var deletes: [String] = []
        var confirmations: [PendingChange] = []
        for (id, change) in changes {
            let waiting = try pending.change(for: RecordKey(.clip, id))
            switch change {
            case .deleted:
                if local[id] != nil { deletes.append(id) }
                if let waiting { confirmations.append(waiting) }
            case .saved(let record):
                guard let remote = RecordMapping.clip(from: record), waiting?.operation != .delete else { continue }
                if let existing = local[id] {
                    let pinned = waiting == nil ? remote.pinned : (existing.pinned || remote.pinned)
                    if pinned != existing.pinned { try clips.setPinned(id: id, pinned) }
                } else {
                    inserts.append(remote)
                }
            }
        }
        report.pulled += try clips.insert(inserts).count
        report.pulled += try clips.remove(ids: deletes).count
        try pending.confirm(confirmations)
    }

    private func applyRemoteTab(_ remote: Tab, deviceName remoteDevice: String) throws {
        let key = RecordKey(.tab, remote.id)
        let pending = try pendingChange(key)
        guard let local = try localTab(remote.id) else {
            if let pending, pending.operation == .delete {
                // Deleted here: only a version we never saw (an edit elsewhere) brings it back.
                guard pending.tag != remote.sync?.tag else { return }
                report.conflicts += 1
                try store.pending().confirm([pending])
            }
            stagedTabs[remote.id] = remote
            report.pulled += 1
            return
        }
        if local.sync?.tag == remote.sync?.tag { return }
        if pending == nil, local.sync != nil {
            // Without local edits, this device holds the last version it applied: every version
            // saved after it succeeds it causally, so has a later clock. An older one is a replay.
            guard remote.clock > local.clock else {
                report.refusedOlder.append(key)
                return
            }
            stagedTabs[remote.id] = remote
            report.pulled += 1
            return
        }
        try writeStagedTabs()
        try mergeTab(local: local, remote: remote, remoteDevice: remoteDevice)
        report.pulled += 1
    }

    /// Local edits meet a newer remote version: merge the content three ways
    /// against the last synced version; where both changed the same lines the
    /// newer edit (by hybrid clock) wins the tab and the other is kept as a
    /// conflict copy. The result stays queued for sending.
    private func mergeTab(local: Tab, remote: Tab, remoteDevice: String) throws {
        var merged = local.clock > remote.clock ? local : remote
        merged.fileURL = nil
        if local.content != remote.content {
            switch ThreeWayMerge.merge(ancestor: local.sync?.ancestor ?? "", local: local.content, remote: remote.content) {
            case .merged(let content) where local.sync != nil:
                merged.content = content
            default:
                let loser = local.clock > remote.clock ? remote : local
                let loserDevice = loser.clock == local.clock ? deviceName : remoteDevice
                try keepConflictCopy(of: loser, device: loserDevice)
                report.conflicts += 1
            }
        }
        merged.id = local.id
        merged.sync = remote.sync
        merged.clock = HybridTimestamp.next(after: max(local.clock, remote.clock), now: now(), device: store.deviceID)
        merged.lastModified = max(local.lastModified, remote.lastModified)
        try store.tabs.save(merged)
        try store.pending().enqueue(.save, RecordKey(.tab, merged.id))
    }

    private func keepConflictCopy(of tab: Tab, device: String) throws {
        let time = String(Time.iso8601(tab.lastModified).prefix(16)).replacingOccurrences("T", " ")
        var copy = tab
        copy.id = Identifier.make()
        copy.name = "\(tab.name) (conflict \(device) \(time))"
        copy.nameLocked = true
        copy.sync = nil
        copy.fileURL = nil
        copy.clock = HybridTimestamp.next(after: tab.clock, now: now(), device: store.deviceID)
        try store.saveTab(copy)
    }

    private func applyRemoteSetting(_ key: String, _ remote: SettingsStore.Entry) throws {
        let settings = try store.settings()
        if let local = settings.entries[key], local.clock >= remote.clock {
            // Ours is newer and will be sent; remember the tag it must replace.
            if var updated = settings.entries[key], updated.tag != remote.tag {
                updated.tag = remote.tag
                try settings.replace(key, updated)
            }
            return
        }
        try settings.replace(key, remote)
        if let pending = try pendingChange(RecordKey(.setting, key)) { try store.pending().confirm([pending]) }
        report.pulled += 1
    }

    private func applyRemoteDelete(_ key: RecordKey) throws {
        try writeStagedTabs()
        let pending = try pendingChange(key)
        switch key.type {
        case .tab:
            guard var local = try store.tabs.tab(id: key.name) else {
                if let pending { try store.pending().confirm([pending]) }
                return
            }
            if pending?.operation == .save {
                // Edit beats delete: the tab comes back with the edit.
                local.sync = nil
                try store.tabs.save(local)
                report.conflicts += 1
                return
            }
            try store.tabs.remove(id: key.name)
            report.pulled += 1
        case .clip:
            try applyClips([key.name: .deleted(recordType: key.type.rawValue, recordName: key.name)])
        case .setting:
            return
        }
    }

    /// After a full fetch: what this device knew from the backend but the backend no longer has was deleted there.
    private func applyDeletionsMissingFrom(_ seen: Set<RecordKey>) throws {
        for tab in try store.tabs.all() where tab.sync != nil && !seen.contains(RecordKey(.tab, tab.id)) {
            try applyRemoteDelete(RecordKey(.tab, tab.id))
        }
        let waiting = Set(try store.pending().changes().map(\.key))
        let gone = try store.clips().entries().filter { entry in
            let key = RecordKey(.clip, entry.id)
            return entry.localOnly == nil && !waiting.contains(key) && !seen.contains(key)
        }
        report.pulled += try store.clips().remove(ids: gone.map(\.id)).count
    }

    /// Merged histories may exceed `clipboard.maxEntries`: evict as `clip add` would, and send the deletions.
    private func trimClipboardToLimit() throws {
        let limit = try store.settings().int("clipboard.maxEntries") ?? 1000
        let clips = try store.clips()
        guard clips.count > limit else { return }
        let unpinned = try clips.entries().filter { !$0.pinned }
        let excess = min(clips.count - limit, unpinned.count)
        try store.removeClips(unpinned.suffix(excess).map(\.id))
    }

    // MARK: Sending

    struct Batch {
        var saves: [(PendingChange, RecordSave)] = []
        var deletes: [(PendingChange, RecordDelete)] = []
        /// Queued changes with nothing left to send (item gone or now local-only).
        var obsolete: [PendingChange] = []
    }

    private func buildBatch(_ changes: [PendingChange], limit: Int) throws -> Batch {
        var batch = Batch()
        var bytes = 0
        let candidates = changes.prefix(limit)
        let clips = try store.clips().live(ids: Set(candidates.filter { $0.key.type == .clip && $0.operation == .save }.map(\.key.name)))
        for change in changes {
            if batch.saves.count + batch.deletes.count >= limit { break }
            if change.operation == .delete {
                let tag = change.key.type == .tab ? change.tag : nil
                batch.deletes.append((change, RecordDelete(recordType: change.key.type.rawValue, recordName: change.key.name, ifTag: tag)))
                continue
            }
            guard let record = try record(for: change.key, clips: clips) else {
                batch.obsolete.append(change)
                continue
            }
            let size = record.fields.values.reduce(512) { total, field in
                if case .string(let s) = field { return total + s.utf8.count * 6 / 5 + 32 }
                return total + 64
            }
            if bytes + size > BackendLimits.maxRequestBytes, !(batch.saves.isEmpty && batch.deletes.isEmpty) { break }
            bytes += size
            batch.saves.append((change, RecordSave(record: record)))
        }
        return batch
    }

    private func record(for key: RecordKey, clips: [String: ClipEntry]) throws -> BackendRecord? {
        switch key.type {
        case .tab:
            guard let tab = try store.tabs.tab(id: key.name), !tab.isFileBacked else { return nil }
            return try RecordMapping.record(for: tab, deviceName: deviceName, backend: backend)
        case .clip:
            guard let entry = clips[key.name], entry.localOnly == nil else { return nil }
            return RecordMapping.record(for: entry, tag: nil)
        case .setting:
            guard let entry = try store.settings().entries[key.name], Settings.definition(key.name)?.scope == .synced else { return nil }
            return RecordMapping.record(forSetting: key.name, entry)
        }
    }

    /// Records what the backend now holds: new tags, and for tabs the content sent as the new ancestor.
    private func acceptSaved(_ saved: [BackendRecord], sent: [PendingChange]) throws {
        for record in saved {
            guard let tag = record.recordChangeTag else { continue }
            switch RecordType(rawValue: record.recordType) {
            case .tab?:
                guard var tab = try store.tabs.tab(id: record.recordName) else { continue }
                let content: String
                if case .string(let inline)? = record.fields["content"] { content = inline } else { content = tab.content }
                tab.sync = TabSyncMetadata(tag: tag, ancestor: content)
                try store.tabs.save(tab)
            case .setting?:
                let settings = try store.settings()
                if var entry = settings.entries[record.recordName] {
                    entry.tag = tag
                    try settings.replace(record.recordName, entry)
                }
            default:
                continue
            }
        }
        try store.pending().confirm(sent)
    }

    /// Handles one per-record error; returns false when the item cannot be sent in this run.
    private func resolve(_ error: RecordError, key: RecordKey, sent: PendingChange?) throws -> Bool {
        switch error {
        case .batchRequestFailed:
            return true
        case .serverRecordChanged(let server):
            report.conflicts += 1
            try resolveConflict(key: key, server: server, sent: sent)
            return true
        case .unknownItem:
            // Deleted on the server while we edited: the edit wins, so create it again.
            if key.type == .tab, var tab = try store.tabs.tab(id: key.name) {
                tab.sync = nil
                try store.tabs.save(tab)
            } else if key.type == .setting, var entry = try store.settings().entries[key.name] {
                entry.tag = nil
                try store.settings().replace(key.name, entry)
            }
            return true
        case .limitExceeded:
            recordFailure(key, "record larger than the backend's 1 MiB limit", permanent: true)
            return false
        case .invalid(let reason):
            recordFailure(key, "rejected by the backend: \(reason)", permanent: true)
            return false
        }
    }

    private func resolveConflict(key: RecordKey, server: BackendRecord, sent: PendingChange?) throws {
        switch key.type {
        case .tab:
            guard let remote = try RecordMapping.tab(from: server, backend: backend) else { return }
            if sent?.operation == .delete {
                // Someone edited the tab we deleted: their edit wins and the tab returns.
                try store.tabs.save(remote)
                if let sent { try store.pending().confirm([sent]) }
            } else if let local = try store.tabs.tab(id: key.name) {
                try mergeTab(local: local, remote: remote, remoteDevice: RecordMapping.deviceName(of: server))
            }
        case .clip:
            // Server wins, except that a pin on either side keeps the entry pinned.
            guard let remote = RecordMapping.clip(from: server), case .found(let local) = try store.clips().resolve(key.name) else {
                if let sent { try store.pending().confirm([sent]) }
                return
            }
            if local.pinned && !remote.pinned {
                let merged = RecordMapping.record(for: ClipEntry(id: remote.id, text: remote.text, timestamp: remote.timestamp, pinned: true),
                                                  tag: server.recordChangeTag)
                let result = try retrying { try backend.modify(saves: [RecordSave(record: merged)], deletes: [], device: store.deviceID) }
                if !result.failures.isEmpty { return }
            } else if remote.pinned && !local.pinned {
                try store.clips().setPinned(id: local.id, true)
            }
            if let sent { try store.pending().confirm([sent]) }
        case .setting:
            guard let (name, remote) = RecordMapping.setting(from: server) else { return }
            let settings = try store.settings()
            if let local = settings.entries[name], local.clock > remote.clock {
                var updated = local
                updated.tag = remote.tag
                try settings.replace(name, updated)
            } else {
                try settings.replace(name, remote)
                if let sent { try store.pending().confirm([sent]) }
            }
        }
    }

    private func recordFailure(_ key: RecordKey, _ error: String, permanent: Bool) {
        var failure = state.failures[key] ?? EngineState.Failure(attempts: 0, error: error)
        failure.attempts = permanent ? max(failure.attempts + 1, EngineState.failureThreshold) : failure.attempts + 1
        failure.error = error
        state.failures[key] = failure
        report.failed[key] = error
    }

    // MARK: Retries

    /// Retries transient backend errors (lock busy, I/O) with exponential backoff and jitter.
    private func retrying<T>(_ body: () throws -> T) throws -> T {
        var delay = 0.05
        for attempt in 1...SyncEngine.attempts {
            do {
                return try body()
            } catch let error as BackendError where error.isTransient && attempt < SyncEngine.attempts {
                usleep(useconds_t((delay + Double.random(in: 0...delay)) * 1_000_000))
                delay *= 2
            }
        }
        throw BackendError.io("unreachable")
    }
}

extension BackendError {
    /// Worth retrying later: the backend is busy or unreachable, not wrong.
    var isTransient: Bool {
        switch self {
        case .locked, .unavailable, .io: return true
        default: return false
        }
    }
}

extension String {
    func replacingOccurrences(_ target: Character, _ replacement: Character) -> String {
        String(map { $0 == target ? replacement : $0 })
    }
}

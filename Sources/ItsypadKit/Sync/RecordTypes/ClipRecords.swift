import ItsypadBackend
import ItsypadModel
import ItsypadStore

/// Clips: the content never changes. Pins merge as logical OR only when changed
/// concurrently (a sequential unpin sticks), and a removal always wins: a pin
/// never brings a removed clip back. A binary clip's bytes travel as an asset,
/// read only when the clip is new here.
struct ClipRecords: SyncedRecordType {
    typealias Item = (entry: ClipEntry, history: EditHistory)

    let recordType = RecordType.clip
    let noun = "clip"
    let removal = RemovalRule.removalWins
    /// Ledger lines of sent clips the backend stored, appended together by `finishAccept`.
    private let accepted = AcceptedClips()
    /// Fetched versions not applied yet (see `apply`).
    private let held = HeldClips()

    func problem(with record: BackendRecord) -> String? { RecordMapping.clipProblem(with: record) }

    func item(from record: BackendRecord, backend _: SyncBackend) -> Item? { RecordMapping.clip(from: record) }

    /// Takes a step's clip changes: deletions are applied now, versions held until the page's end
    /// (`applyHeld`), so that a page of new clips costs one pass over the history, one insert into
    /// its index and one ledger append, not one a step (a join of 100,000 clips takes 1,000 steps).
    /// Held versions are decided only when applied: a command let in between steps meanwhile is
    /// seen as if the page had come after it. A deletion, or a record held already, applies what is
    /// held first, so that the order given is kept.
    func apply(_ changes: [FetchedChange], engine: SyncEngine) throws {
        var deletions: [String] = []
        for change in changes {
            switch change {
            case .deleted(let id, _):
                deletions.append(id)
            case .saved(let record):
                guard let remote = RemoteClip(record) else { continue }
                if held.ids.contains(remote.entry.id) { try applyHeld(engine: engine) }
                held.add(remote)
            }
        }
        if !deletions.isEmpty {
            try applyHeld(engine: engine)
            try applyDeletions(deletions.sorted(), engine: engine)
        }
    }

    func applyHeld(engine: SyncEngine) throws {
        let versions = held.take()
        try applyVersions(versions.sorted { $0.entry.id < $1.entry.id }, engine: engine)
    }

    func applyServerVersion(_ record: BackendRecord, engine: SyncEngine) throws -> Bool {
        guard let remote = RemoteClip(record) else { return false }
        try applyHeld(engine: engine)
        try applyVersions([remote], engine: engine)
        return true
    }

    /// After a pull: merged histories may exceed `clipboard.maxEntries`; evicted as `clip add`
    /// would, the deletions sent.
    func finishPull(engine: SyncEngine) throws {
        try engine.store.enforceClipLimit()
    }

    struct RemoteClip {
        let entry: ClipEntry
        /// What the ledger records for it: tag, pinned state, pin history.
        let version: ClipSyncLedger.Entry
        let record: BackendRecord

        init?(_ record: BackendRecord) {
            guard let (entry, history) = RecordMapping.clip(from: record) else { return nil }
            self.entry = entry
            self.record = record
            version = ClipSyncLedger.Entry(tag: record.recordChangeTag, pinned: entry.pinned, history: history)
        }
    }

    /// Most bytes of binary clips fetched before they are stored (a first sync may bring thousands of images).
    private static let heldBytes = 64 << 20

    private func applyVersions(_ versions: [RemoteClip], engine: SyncEngine) throws {
        guard !versions.isEmpty else { return }
        let store = engine.store
        let clips = try store.clips()
        let pending = try store.pending()
        let local = try clips.live(ids: Set(versions.map(\.entry.id)))
        let changedHere = try versions.map(\.entry.id).filter { id in
            try local[id] != nil && pending.change(for: RecordKey(.clip, id))?.operation == .save
        }
        let ours = try store.clipLedger().entries(Set(changedHere))
        var inserts: [ClipEntry] = []
        var blobs: [String: [UInt8]] = [:]
        var heldBytes = 0
        var synced: [(id: String, entry: ClipSyncLedger.Entry)] = []
        var confirmations: [PendingChange] = []
        for remote in versions {
            let id = remote.entry.id
            let waiting = try pending.change(for: RecordKey(.clip, id))
            guard let existing = local[id] else {
                // Removed here and not sent yet: the removal wins. Otherwise the clip is new here,
                // or was created anew after our removal reached the backend: it is taken.
                guard waiting?.operation != .delete else { continue }
                var entry = remote.entry
                if entry.binary != nil {
                    do {
                        blobs[id] = try RecordMapping.clipBytes(&entry, of: remote.record, backend: engine.backend)
                    } catch let error as BackendError where !error.isTransient {
                        // Its bytes are missing or not the ones described: the clip is quarantined, the rest goes on.
                        engine.quarantine(RecordKey(.clip, id), at: engine.backend.location(of: remote.record.id), error.description)
                        continue
                    }
                    heldBytes += entry.binary?.size ?? 0
                }
                inserts.append(entry)
                synced.append((id, remote.version))
                if heldBytes > ClipRecords.heldBytes {
                    engine.report.pulled += try clips.insert(inserts, bytes: blobs).count
                    (inserts, blobs, heldBytes) = ([], [:], 0)
                }
                continue
            }
            guard let waiting, waiting.operation == .save else {
                if existing.pinned != remote.entry.pinned { try clips.setPinned(id: id, remote.entry.pinned) }
                // A version this device wrote, with nothing waiting since, is in the ledger from its
                // acceptance (`accept`): the pull after a push of 1,000,000 does not write them all again.
                if remote.record.modified?.deviceID != store.deviceID { synced.append((id, remote.version)) }
                continue
            }
            switch ClipRecords.resolvePin(local: existing.pinned, ours: ours[id] ?? ClipSyncLedger.Entry(), remote: remote.version) {
            case .takeRemote:
                if existing.pinned != remote.entry.pinned { try clips.setPinned(id: id, remote.entry.pinned) }
                synced.append((id, remote.version))
                confirmations.append(waiting)
            case .sendOurs(let base):
                synced.append((id, base))
            }
        }
        engine.report.pulled += try clips.insert(inserts, bytes: blobs).count
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
    private func applyDeletions(_ ids: [String], engine: SyncEngine) throws {
        guard !ids.isEmpty else { return }
        let store = engine.store
        engine.report.pulled += try store.clips().remove(ids: ids).count
        try store.clipLedger().forget(ids)
        let pending = try store.pending()
        try pending.confirm(try ids.compactMap { try pending.change(for: RecordKey(.clip, $0)) })
    }

    /// After a full fetch: clips the backend no longer has. One synced before was removed
    /// there, whatever waits here; one never synced and waiting to be sent is new.
    func applyDeletionsMissing(from accounted: Set<RecordKey>, engine: SyncEngine) throws {
        let store = engine.store
        let ledger = try store.clipLedger().all()
        let waiting = try store.pending().keys()
        var gone: [String] = []
        try store.clips().forEachEntry { entry in
            let key = RecordKey(.clip, entry.id)
            guard entry.localOnly == nil, !accounted.contains(key) else { return }
            // No ledger entry and nothing waiting: synced before this version kept a ledger.
            if ledger[entry.id]?.tag != nil || !waiting.contains(key) { gone.append(entry.id) }
        }
        try applyDeletions(gone, engine: engine)
    }

    /// A save carrying a tag met no record: the clip was removed, and a removal wins.
    func wasRemoved(_ id: String, engine: SyncEngine) throws -> Bool {
        try applyDeletions([id], engine: engine)
        return true
    }

    // MARK: Sending

    /// Reads the batch's clips and their ledger entries in one pass each.
    func sender(for changes: [PendingChange], engine: SyncEngine) throws -> (PendingChange) throws -> SyncEngine.Outgoing? {
        let ids = Set(changes.map(\.key.name))
        let clips = try engine.store.clips().live(ids: ids)
        let ledger = try engine.store.clipLedger().entries(ids)
        return { change in try outgoing(change, clips: clips, ledger: ledger, engine: engine) }
    }

    private func outgoing(
        _ change: PendingChange, clips: [String: ClipEntry], ledger: [String: ClipSyncLedger.Entry],
        engine: SyncEngine
    ) throws -> SyncEngine.Outgoing? {
        var change = change
        // A deletion queued for a clip still here was queued before a removal that did not happen
        // (a crash or an error in between): it is a save, which sends nothing when the backend has the clip so.
        if clips[change.key.name] != nil { change.operation = .save }
        switch change.operation {
        case .save:
            guard let entry = clips[change.key.name], entry.localOnly == nil else { return nil }
            let synced = ledger[entry.id] ?? ClipSyncLedger.Entry()
            // Pinned and unpinned again before sending: the backend already has this state.
            if synced.tag != nil, synced.pinned == entry.pinned { return nil }
            var content: AssetReference?
            if entry.binary != nil {
                // Bytes that are gone or damaged here cannot be sent (reading them says which).
                guard let bytes = try? engine.store.clips().bytes(of: entry) else { return nil }
                content = try engine.backend.putAsset(bytes)
            }
            return SyncEngine.Outgoing(
                change: change,
                saves: [RecordMapping.record(for: entry, tag: synced.tag, history: synced.localHistory, content: content)])
        case .delete:
            return engine.outgoingDeletion(change, ifTag: nil, history: EditHistory())
        }
    }

    func accept(_ items: [SyncEngine.Outgoing], saved: [RecordID: BackendRecord], engine _: SyncEngine) throws {
        for item in items {
            switch item.change.operation {
            case .save:
                guard let sent = item.saves.first, let record = saved[sent.id], let (entry, history) = RecordMapping.clip(from: record)
                else { continue }
                accepted.synced.append(
                    (entry.id, ClipSyncLedger.Entry(tag: record.recordChangeTag, pinned: entry.pinned, history: history)))
            case .delete:
                accepted.removed.append(item.change.key.name)
            }
        }
    }

    func finishAccept(engine: SyncEngine) throws {
        defer { (accepted.synced, accepted.removed) = ([], []) }
        try engine.store.clipLedger().set(accepted.synced)
        try engine.store.clipLedger().forget(accepted.removed)
    }

    // MARK: Bookkeeping

    /// Clips never synced or pinned differently from their synced version, and synced clips removed here.
    func unsentChanges(engine: SyncEngine) throws -> [UnsentChange] {
        let store = engine.store
        let ledger = try store.clipLedger().all()
        var live = Set<String>()
        var changes: [UnsentChange] = []
        try store.clips().forEachEntry { entry in
            guard entry.localOnly == nil else { return }
            live.insert(entry.id)
            let synced = ledger[entry.id]
            if synced?.tag == nil || synced?.pinned != entry.pinned {
                changes.append(UnsentChange(operation: .save, key: RecordKey(.clip, entry.id)))
            }
        }
        for (id, synced) in ledger.sorted(by: { $0.key < $1.key }) where synced.tag != nil && !live.contains(id) {
            changes.append(UnsentChange(operation: .delete, key: RecordKey(.clip, id)))
        }
        return changes
    }

    /// Each such clip goes again as new.
    func forgetSynced(except accounted: Set<RecordKey>?, engine: SyncEngine) throws {
        let store = engine.store
        let shared = try store.clips().entries().filter { $0.localOnly == nil }.map(\.id)
        guard let accounted else {
            try store.clipLedger().reset()
            return try store.pending().enqueue(.save, shared.map { RecordKey(.clip, $0) })
        }
        let ledger = try store.clipLedger().all()
        let missing = shared.filter { ledger[$0]?.tag != nil && !accounted.contains(RecordKey(.clip, $0)) }
        try store.clipLedger().forget(missing)
        try store.pending().enqueue(.save, missing.map { RecordKey(.clip, $0) })
    }

    // MARK: Concurrent versions

    /// The content never changes: pinned if any version is (concurrent pin changes merge as logical OR).
    func merge(_ live: [RecordVersion], backend _: SyncBackend) throws -> SiblingMerge.Outcome {
        let clips = live.compactMap { RecordMapping.clip(from: $0.record) }
        guard var (entry, history) = clips.first,
            let first = live.first(where: { RecordMapping.clip(from: $0.record) != nil })
        else { return SiblingMerge.Outcome(record: live.last!.record) }
        for (other, otherHistory) in clips.dropFirst() {
            entry.pinned = entry.pinned || other.pinned
            history = history.union(otherHistory)
        }
        return SiblingMerge.Outcome(
            record: RecordMapping.record(for: entry, tag: nil, history: history, content: RecordMapping.clipContent(of: first.record)))
    }
}

/// What `ClipRecords.accept` recorded until its `finishAccept`.
private final class AcceptedClips {
    var synced: [(id: String, entry: ClipSyncLedger.Entry)] = []
    var removed: [String] = []
}

/// What `ClipRecords.apply` held until its `applyHeld`: each record once.
private final class HeldClips {
    private(set) var versions: [ClipRecords.RemoteClip] = []
    private(set) var ids = Set<String>()

    func add(_ version: ClipRecords.RemoteClip) {
        versions.append(version)
        ids.insert(version.entry.id)
    }

    /// The versions held, no longer held.
    func take() -> [ClipRecords.RemoteClip] {
        defer { (versions, ids) = ([], []) }
        return versions
    }
}

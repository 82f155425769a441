import ItsypadBackend
import ItsypadModel
import ItsypadStore

/// Synced settings: per key, the newer value (by hybrid clock) wins; an unset
/// travels as a value-less version. Settings are never deleted.
struct SettingRecords: SyncedRecordType {
    typealias Item = (key: String, entry: SettingsStore.Entry)

    let recordType = RecordType.setting
    let noun = "setting"
    let removal = RemovalRule.editBeatsRemoval

    /// Setting keys are compared as written.
    func canonicalName(_ recordName: String) -> String { recordName }

    func problem(with record: BackendRecord) -> String? { RecordMapping.settingProblem(with: record) }

    func item(from record: BackendRecord, backend _: SyncBackend) -> Item? { RecordMapping.setting(from: record) }

    func apply(_ changes: [FetchedChange], engine: SyncEngine) throws {
        for case .saved(let record) in changes { _ = try applyServerVersion(record, engine: engine) }
    }

    /// A version from the backend, fetched or returned by a conflict; false when it cannot be read.
    func applyServerVersion(_ record: BackendRecord, engine: SyncEngine) throws -> Bool {
        guard let (key, remote) = RecordMapping.setting(from: record) else { return false }
        let settings = try engine.store.settings()
        let recordKey = RecordKey(.setting, key)
        if let local = settings.entries[key], local.clock >= remote.clock {
            var updated = local
            updated.tag = remote.tag
            if local.clock == remote.clock {
                // The same version: ours, committed by a run that did not hear back.
                updated.syncedClock = remote.clock
                try engine.confirmPending(recordKey)
            } else if try engine.pendingChange(recordKey) == nil {
                // Ours is newer and must replace it.
                try engine.store.pending().enqueue(.save, recordKey)
            }
            if updated != local { try settings.replace(key, updated) }
            return true
        }
        var entry = remote
        entry.syncedClock = remote.clock
        try settings.replace(key, entry)
        try engine.confirmPending(recordKey)
        engine.report.pulled += 1
        return true
    }

    /// A save carrying a tag met no record (settings are never deleted, so the backend lost it): send it anew.
    func wasRemoved(_ key: String, engine: SyncEngine) throws -> Bool {
        let settings = try engine.store.settings()
        if var entry = settings.entries[key] {
            entry.tag = nil
            try settings.replace(key, entry)
        }
        return true
    }

    /// A version on the backend that cannot be read would block every change to the key: ours
    /// is sent again over it, carrying its tag.
    func replaceUnreadable(_ key: String, tag: String, engine: SyncEngine) throws -> Bool {
        guard var entry = try engine.store.settings().entries[key] else { return false }
        entry.tag = tag
        try engine.store.settings().replace(key, entry)
        return true
    }

    func sender(for _: [PendingChange], engine: SyncEngine) throws -> (PendingChange) throws -> SyncEngine.Outgoing? {
        { change in
            guard change.operation == .save, Settings.definition(change.key.name)?.scope == .synced,
                let entry = try engine.store.settings().entries[change.key.name]
            else { return nil }
            return SyncEngine.Outgoing(change: change, saves: [RecordMapping.record(forSetting: change.key.name, entry)])
        }
    }

    func accept(_ items: [SyncEngine.Outgoing], saved: [RecordID: BackendRecord], engine: SyncEngine) throws {
        let settings = try engine.store.settings()
        for item in items {
            guard let sent = item.saves.first, let record = saved[sent.id], var entry = settings.entries[item.change.key.name],
                let (_, stored) = RecordMapping.setting(from: record)
            else { continue }
            entry.tag = record.recordChangeTag
            entry.syncedClock = stored.clock
            try settings.replace(item.change.key.name, entry)
        }
    }

    /// Synced keys whose value differs from the one last synced.
    func unsentChanges(engine: SyncEngine) throws -> [UnsentChange] {
        try engine.store.settings().entries.filter { Settings.definition($0.key)?.scope == .synced && $0.value.hasUnsyncedChanges }
            .keys.sorted().map { UnsentChange(operation: .save, key: RecordKey(.setting, $0)) }
    }

    /// Each such synced key goes again as new.
    func forgetSynced(except accounted: Set<RecordKey>?, engine: SyncEngine) throws {
        let settings = try engine.store.settings()
        for (key, var entry) in settings.entries where Settings.definition(key)?.scope == .synced {
            if let accounted, entry.tag == nil || accounted.contains(RecordKey(.setting, key)) { continue }
            entry.tag = nil
            entry.syncedClock = nil
            try settings.replace(key, entry)
            try engine.store.pending().enqueue(.save, RecordKey(.setting, key))
        }
    }

    /// The value with the newest clock; equal (or unreadable) clocks are decided by the vector, the same on every device.
    func merge(_ live: [RecordVersion], backend _: SyncBackend) throws -> SiblingMerge.Outcome {
        func clock(_ version: RecordVersion) -> HybridTimestamp? { RecordMapping.setting(from: version.record)?.1.clock }
        let newest = live.max { a, b in
            switch (clock(a), clock(b)) {
            case let (x?, y?) where x != y: return x < y
            case (nil, _?): return true
            case (_?, nil): return false
            default: return a.version.tag < b.version.tag
            }
        }!
        var record = newest.record
        record.recordChangeTag = nil
        return SiblingMerge.Outcome(record: record)
    }
}

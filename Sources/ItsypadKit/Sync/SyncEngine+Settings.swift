/// Synced settings: per key, the newer value (by hybrid clock) wins; an unset
/// travels as a value-less version.
extension SyncEngine {
    /// A version from the backend, fetched or returned by a conflict; false when it cannot be read.
    func applySettingRecord(_ record: BackendRecord) throws -> Bool {
        guard let (key, remote) = RecordMapping.setting(from: record) else { return false }
        let settings = try store.settings()
        let recordKey = RecordKey(.setting, key)
        if let local = settings.entries[key], local.clock >= remote.clock {
            var updated = local
            updated.tag = remote.tag
            if local.clock == remote.clock {
                // The same version: ours, committed by a run that did not hear back.
                updated.syncedClock = remote.clock
                try confirmPending(recordKey)
            } else if try pendingChange(recordKey) == nil {
                // Ours is newer and must replace it.
                try store.pending().enqueue(.save, recordKey)
            }
            if updated != local { try settings.replace(key, updated) }
            return true
        }
        var entry = remote
        entry.syncedClock = remote.clock
        try settings.replace(key, entry)
        try confirmPending(recordKey)
        report.pulled += 1
        return true
    }

    /// A save carrying a tag met no record (settings are never deleted, so the backend lost it): send it anew.
    func settingWasRemoved(_ key: String) throws -> Bool {
        let settings = try store.settings()
        if var entry = settings.entries[key] {
            entry.tag = nil
            try settings.replace(key, entry)
        }
        return true
    }

    func outgoingSetting(_ change: PendingChange) throws -> Outgoing? {
        guard change.operation == .save, Settings.definition(change.key.name)?.scope == .synced,
              let entry = try store.settings().entries[change.key.name] else { return nil }
        return Outgoing(change: change, saves: [RecordMapping.record(forSetting: change.key.name, entry)])
    }

    func acceptSettings(_ items: [Outgoing], saved: [RecordID: BackendRecord]) throws {
        let settings = try store.settings()
        for item in items {
            guard let sent = item.saves.first, let record = saved[sent.id], var entry = settings.entries[item.change.key.name],
                  let (_, stored) = RecordMapping.setting(from: record) else { continue }
            entry.tag = record.recordChangeTag
            entry.syncedClock = stored.clock
            try settings.replace(item.change.key.name, entry)
        }
    }

    /// Changes a lost or damaged queue may have held: synced keys whose value differs from the one last synced.
    func unsentSettingChanges() throws -> [(PendingChange.Operation, RecordKey, String?)] {
        try store.settings().entries.filter { Settings.definition($0.key)?.scope == .synced && $0.value.hasUnsyncedChanges }
            .keys.sorted().map { (.save, RecordKey(.setting, $0), nil) }
    }

    /// The backend was replaced: every synced key goes again as new.
    func forgetSyncedSettings() throws {
        let settings = try store.settings()
        for (key, var entry) in settings.entries where Settings.definition(key)?.scope == .synced {
            entry.tag = nil
            entry.syncedClock = nil
            try settings.replace(key, entry)
            try store.pending().enqueue(.save, RecordKey(.setting, key))
        }
    }
}

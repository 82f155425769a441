import ItsypadBackend
import ItsypadModel

/// The merge of a record's concurrent versions (siblings of a replicated backend), computed from
/// the siblings alone with the engine's rules, so that every device merging the same siblings
/// writes the same version. Each record type's handler merges its own live versions
/// (`SyncedRecordType.merge`); tombstone records join what their deleters had seen. An edit beats
/// a concurrent deletion (a deleter whose version did not cover it had not seen it), except for a
/// type whose removal always sticks (`RemovalRule.removalWins`, as the engine applies it in every
/// format): a concurrent pin change does not bring a removed clip back. Siblings of a type this
/// version does not sync are not merged here (see `ReplicatedSyncBackend`).
enum SiblingMerge {
    struct Outcome {
        /// The merged record (tag unset), nil when every sibling is a deletion.
        var record: BackendRecord?
        /// The ancestor the merge was made against, kept in the merged version for later merges.
        var base: RecordBase?
        /// New records the merge makes: conflict copies.
        var copies: [BackendRecord] = []
    }

    /// `siblings` in canonical order (as `VersionHistory.siblings` gives them), merged by their
    /// type's handler in `types`. `backend` reads and stores tab content kept as an asset.
    static func merge(_ siblings: [RecordVersion], types: SyncedTypeTable, backend: SyncBackend) throws -> Outcome {
        let live = siblings.filter { !$0.isDeleted }
        guard let first = live.first else { return Outcome(record: nil) }
        let type = types.handler(for: first.record.recordType)
        if type?.removal == .removalWins, live.count < siblings.count { return Outcome(record: nil) }
        guard live.count > 1 else { return Outcome(record: first.record, base: first.base) }
        if let type { return try type.merge(live, backend: backend) }
        if first.record.recordType == RecordMapping.tombstoneType { return Outcome(record: mergeTombstones(live)) }
        return Outcome(record: live.last!.record)
    }

    // MARK: Tombstones

    private static func mergeTombstones(_ live: [RecordVersion]) -> BackendRecord {
        let tombstones = live.compactMap { RecordMapping.tombstone(from: $0.record) }
        guard let key = tombstones.first?.key else { return live.last!.record }
        let history = tombstones.reduce(EditHistory()) { $0.union($1.history) }
        return RecordMapping.tombstone(for: key, history: history, tag: nil)
    }
}

/// The merge of a record's concurrent versions (siblings of a replicated backend), computed from
/// the siblings alone with the engine's rules, so that every device merging the same siblings
/// writes the same version: tabs merge three ways against their common ancestor (the losing side
/// of overlapping edits becomes a conflict copy with a name derived from both); a clip keeps its
/// text and is pinned if any sibling is (concurrent pin changes merge as logical OR); a setting
/// takes the value with the newest clock; tombstone records join what their deleters had seen.
/// An edit of a tab or a setting beats a concurrent deletion: a deleter whose version did not cover
/// it had not seen it. A clip removal always sticks (as the engine applies it, in every format):
/// a concurrent pin change does not bring the clip back.
enum SiblingMerge {
    struct Outcome {
        /// The merged record (tag unset), nil when every sibling is a deletion.
        var record: BackendRecord?
        /// The ancestor the merge was made against, kept in the merged version for later merges.
        var base: RecordBase?
        /// New records the merge makes: conflict copies.
        var copies: [BackendRecord] = []
    }

    /// `siblings` in canonical order (as `VersionHistory.siblings` gives them). `backend` reads
    /// and stores tab content kept as an asset.
    static func merge(_ siblings: [RecordVersion], backend: SyncBackend) throws -> Outcome {
        let live = siblings.filter { !$0.isDeleted }
        guard let first = live.first else { return Outcome(record: nil) }
        if first.record.recordType == RecordType.clip.rawValue, live.count < siblings.count { return Outcome(record: nil) }
        guard live.count > 1 else { return Outcome(record: first.record, base: first.base) }
        switch RecordType(rawValue: first.record.recordType) {
        case .tab?: return try mergeTabs(live, backend: backend)
        case .clip?: return Outcome(record: mergeClips(live))
        case .setting?: return Outcome(record: mergeSettings(live))
        case nil where first.record.recordType == RecordMapping.tombstoneType: return Outcome(record: mergeTombstones(live))
        case nil: return Outcome(record: live.last!.record)
        }
    }

    // MARK: Tabs

    private static func mergeTabs(_ live: [RecordVersion], backend: SyncBackend) throws -> Outcome {
        var readable: [(version: RecordVersion, tab: Tab)] = []
        for version in live {
            // A sibling that cannot be read is left out (the engine quarantines it when it is the only one).
            if let tab = try? RecordMapping.tab(from: version.record, backend: backend) { readable.append((version, tab)) }
        }
        guard var (merged, tab) = readable.first else { return Outcome(record: live.last!.record) }
        var deviceName = RecordMapping.deviceName(of: merged.record)
        var copies: [BackendRecord] = []
        for (version, other) in readable.dropFirst() {
            let ancestor = VersionHistory.commonAncestor(of: merged, version)
            let content = try ancestor.flatMap { try ancestorContent($0, of: version.record, backend: backend) }
            let (result, loser) = SyncEngine.merged(tab, other, ancestor: content)
            if SyncEngine.isNewer(other, than: tab) { deviceName = RecordMapping.deviceName(of: version.record) }
            if let loser {
                let losing = loser == tab ? merged : version
                let copy = SyncEngine.conflictCopy(of: loser, device: RecordMapping.deviceName(of: losing.record),
                                                   id: VersionHistory.conflictCopyName(of: loser.id, losing: losing.version), clock: loser.clock)
                copies.append(try RecordMapping.record(for: copy, deviceName: RecordMapping.deviceName(of: losing.record), backend: backend))
            }
            tab = result
            let record = try RecordMapping.record(for: tab, deviceName: deviceName, backend: backend)
            merged = RecordVersion(record: record, version: merged.version.joined(with: version.version), writer: "", isDerived: true, base: ancestor)
        }
        var record = merged.record
        record.recordChangeTag = nil
        return Outcome(record: record, base: merged.base, copies: copies)
    }

    /// The tab content an ancestor held (inline, or as an asset).
    private static func ancestorContent(_ ancestor: RecordBase, of record: BackendRecord, backend: SyncBackend) throws -> String? {
        var fields = record.fields
        fields["content"] = ancestor.fields["content"]
        fields["contentAsset"] = ancestor.fields["contentAsset"]
        let old = BackendRecord(recordName: record.recordName, recordType: record.recordType, recordChangeTag: record.recordChangeTag,
                                fields: fields, created: record.created, modified: record.modified)
        return try? RecordMapping.tab(from: old, backend: backend)?.content
    }

    // MARK: Clips, settings, tombstones

    private static func mergeClips(_ live: [RecordVersion]) -> BackendRecord {
        let clips = live.compactMap { RecordMapping.clip(from: $0.record) }
        guard var (entry, history) = clips.first else { return live.last!.record }
        for (other, otherHistory) in clips.dropFirst() {
            entry.pinned = entry.pinned || other.pinned
            history = history.union(otherHistory)
        }
        return RecordMapping.record(for: entry, tag: nil, history: history)
    }

    private static func mergeSettings(_ live: [RecordVersion]) -> BackendRecord {
        func clock(_ version: RecordVersion) -> HybridTimestamp? { RecordMapping.setting(from: version.record)?.1.clock }
        // The newest clock; equal (or unreadable) clocks are decided by the vector, the same on every device.
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
        return record
    }

    private static func mergeTombstones(_ live: [RecordVersion]) -> BackendRecord {
        let tombstones = live.compactMap { RecordMapping.tombstone(from: $0.record) }
        guard let key = tombstones.first?.key else { return live.last!.record }
        let history = tombstones.reduce(EditHistory()) { $0.union($1.history) }
        return RecordMapping.tombstone(for: key, history: history, tag: nil)
    }
}

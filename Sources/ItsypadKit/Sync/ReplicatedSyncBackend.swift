/// A replicated backend (format 2) as the engine's `SyncBackend`, so that one sync loop serves
/// every format. A version's vector is its change tag: a save carrying a tag is based on that
/// version, and a save that does not cover every version in this copy fails with
/// `serverRecordChanged`, carrying the merge of those versions, which the engine merges its own
/// change into as it does for any backend. A record with several siblings is fetched as their
/// merge (`SiblingMerge`), tagged with their joined vector, and that merge is written back as a
/// derived version, so that the siblings collapse into one and two devices merging them at once
/// write the same version.
final class ReplicatedSyncBackend: SyncBackend, @unchecked Sendable {
    let replicated: any ReplicatedBackend

    init(_ replicated: any ReplicatedBackend) {
        self.replicated = replicated
    }

    func createZoneIfNeeded() throws -> ZoneInfo { try replicated.createZoneIfNeeded() }
    func zone() throws -> ZoneInfo { try replicated.zone() }
    func putAsset(_ bytes: [UInt8]) throws -> AssetReference { try replicated.putAsset(bytes) }
    func readAsset(_ reference: AssetReference) throws -> [UInt8] { try replicated.readAsset(reference) }
    func location(of id: RecordID) -> String { replicated.location(of: id) }

    func finishSync(acknowledging token: ChangeToken) throws {
        _ = try replicated.finishSync(acknowledging: token)
    }

    /// Each device compacts its own journal as it finishes a sync: nothing is left to do here.
    func compact() throws -> CompactionReport {
        CompactionReport(compactedThrough: 0, segmentsRemoved: 0, journalBytesRemoved: 0, assetsRemoved: 0, temporaryFilesRemoved: 0)
    }

    // MARK: Reading

    func fetchChanges(since token: ChangeToken?, limit: Int) throws -> ChangesPage {
        let page = try replicated.fetchChanges(since: token, limit: limit)
        var changes: [Change] = []
        var merges: [ReplicatedSave] = []
        var presentedTabs = Set<String>()
        for change in page.changes {
            if let tab = Self.tabName(of: change.id) {
                guard presentedTabs.insert(tab).inserted else { continue }
                let (current, derived) = try currentTab(tab, fetched: change)
                changes += current
                merges += derived
                continue
            }
            let (current, derived) = try current(change.id, siblings: change.siblings)
            changes += current
            merges += derived
        }
        try writeMerges(merges)
        return ChangesPage(changes: changes, token: page.token, moreComing: page.moreComing, quarantined: page.quarantined, waiting: page.waiting)
    }

    /// The tab a change is about: a tab record's, or a tab's tombstone's.
    private static func tabName(of id: RecordID) -> String? {
        if id.recordType == RecordType.tab.rawValue { return id.recordName }
        let prefix = RecordType.tab.rawValue + "."
        guard id.recordType == RecordMapping.tombstoneType, id.recordName.hasPrefix(prefix) else { return nil }
        return String(id.recordName.dropFirst(prefix.count))
    }

    /// A tab and the tombstone of its removal, read as one state, so that every device ends the same
    /// whatever order the devices' journals bring them in: the tab's version when it holds an edit
    /// the deleters had not seen (an edit beats a removal that had not seen it), else the removal.
    /// In a shared journal (format 1) the tombstone always comes before the version that brings the
    /// tab back; here each device's journal is read in turn, so it may come after it, and must then
    /// not remove it.
    private func currentTab(_ name: String, fetched change: ReplicatedChange) throws -> (changes: [Change], merges: [ReplicatedSave]) {
        let tabID = RecordID(recordType: RecordType.tab.rawValue, recordName: name)
        let tombstoneID = RecordID(recordType: RecordMapping.tombstoneType, recordName: RecordType.tab.rawValue + "." + name)
        let tabSiblings = change.id == tabID ? change.siblings : try readableSiblings(of: tabID)
        let tombstoneSiblings = change.id == tombstoneID ? change.siblings : try readableSiblings(of: tombstoneID)
        let tab = try current(tabID, siblings: tabSiblings)
        let tombstone = try current(tombstoneID, siblings: tombstoneSiblings)
        guard let removal = tombstone.changes.first, case .saved(let record) = removal,
              let (_, seen) = RecordMapping.tombstone(from: record) else { return tab }
        // The tab's version (the first change; conflict copies follow), if one is there.
        guard case .saved(let version)? = tab.changes.first, !seen.includes(RecordMapping.history(of: version)) else {
            return ([removal], tab.merges + tombstone.merges)
        }
        return (tab.changes, tab.merges + tombstone.merges)
    }

    /// Throws `.corrupt` for a record whose only versions cannot be read (the engine keeps it quarantined).
    func fetchRecord(_ id: RecordID) throws -> BackendRecord? {
        let siblings = try replicated.siblings(of: id)
        guard siblings.count > 1 else { return siblings.first.flatMap { $0.isDeleted ? nil : $0.record } }
        return try SiblingMerge.merge(siblings, backend: self).record.map { tagged($0, siblings) }
    }

    /// A record as the engine sees it (with the conflict copies a merge makes), and the derived
    /// versions that write the merge back.
    private func current(_ id: RecordID, siblings: [RecordVersion]) throws -> (changes: [Change], merges: [ReplicatedSave]) {
        guard siblings.count > 1 else {
            guard let only = siblings.first else { return ([], []) }
            return ([only.isDeleted ? .deleted(recordType: id.recordType, recordName: id.recordName) : .saved(only.record)], [])
        }
        let outcome = try SiblingMerge.merge(siblings, backend: self)
        // Concurrent deletions need no merge: the record is deleted either way.
        guard let merged = outcome.record else { return ([.deleted(recordType: id.recordType, recordName: id.recordName)], []) }
        let joined = Self.joined(siblings)
        let records = [merged] + outcome.copies
        return (records.map { .saved(tagged($0, siblings)) },
                records.enumerated().map { ReplicatedSave(record: $1, basedOn: joined, isDerived: true, base: $0 == 0 ? outcome.base : nil) })
    }

    /// Writes merges as derived versions. One that meets a version that arrived meanwhile is left
    /// for the next fetch, which merges that too; the engine already holds the merge it read.
    private func writeMerges(_ merges: [ReplicatedSave]) throws {
        var remaining = merges
        while !remaining.isEmpty {
            let result = try replicated.modify(saves: remaining, deletes: [])
            let refused = Set(result.failures.filter { $0.error != .batchRequestFailed }.map(\.id))
            guard !result.failures.isEmpty, !refused.isEmpty else { return }
            remaining.removeAll { refused.contains($0.record.id) }
        }
    }

    /// The record's siblings that can be read: a record whose only versions cannot (quarantined
    /// where a fetch meets them) has none here, so that it blocks no other record.
    private func readableSiblings(of id: RecordID) throws -> [RecordVersion] {
        do {
            return try replicated.siblings(of: id)
        } catch BackendError.corrupt {
            return []
        }
    }

    private func tagged(_ record: BackendRecord, _ siblings: [RecordVersion]) -> BackendRecord {
        var record = record
        record.recordChangeTag = Self.joined(siblings).tag
        return record
    }

    private static func joined(_ siblings: [RecordVersion]) -> VersionVector {
        siblings.reduce(VersionVector()) { $0.joined(with: $1.version) }
    }

    // MARK: Writing

    func modify(saves: [RecordSave], deletes: [RecordDelete], device _: String) throws -> ModifyResult {
        var replicatedSaves: [ReplicatedSave] = []
        for save in saves {
            // A tag that is no vector (from another format) is based on nothing: the record's versions come back to merge.
            let basedOn = save.record.recordChangeTag.flatMap(VersionVector.init(tag:)) ?? VersionVector()
            replicatedSaves.append(ReplicatedSave(record: save.record, basedOn: basedOn, base: try base(of: save.record, at: basedOn)))
        }
        var replicatedDeletes: [ReplicatedDelete] = []
        var alreadyGone: [RecordID] = []
        for delete in deletes {
            let id = RecordID(recordType: delete.recordType, recordName: delete.recordName)
            if let tag = delete.ifTag {
                replicatedDeletes.append(ReplicatedDelete(id: id, basedOn: VersionVector(tag: tag) ?? VersionVector()))
                continue
            }
            // Unconditional: it deletes whatever is there now; nothing there is already deleted.
            let siblings = try readableSiblings(of: id)
            if siblings.allSatisfy(\.isDeleted) {
                alreadyGone.append(id)
            } else {
                replicatedDeletes.append(ReplicatedDelete(id: id, basedOn: Self.joined(siblings)))
            }
        }
        var result = try replicated.modify(saves: replicatedSaves, deletes: replicatedDeletes)
        // A save that creates a record (no tag) over one deleted meanwhile creates it again, as in
        // format 1 where the deleted record is simply absent: based on the deletions, it goes again.
        for _ in 0..<3 where !result.failures.isEmpty {
            var rebased = false
            for failure in result.failures {
                guard case .concurrentVersions(let siblings) = failure.error, siblings.allSatisfy(\.isDeleted),
                      let index = replicatedSaves.firstIndex(where: { $0.record.id == failure.id && $0.record.recordChangeTag == nil }) else { continue }
                let save = replicatedSaves[index]
                replicatedSaves[index] = ReplicatedSave(record: save.record, basedOn: save.basedOn.joined(with: Self.joined(siblings)), base: save.base)
                rebased = true
            }
            guard rebased else { break }
            result = try replicated.modify(saves: replicatedSaves, deletes: replicatedDeletes)
        }
        guard result.failures.isEmpty else {
            let deleted = Set(replicatedDeletes.map(\.id))
            return ModifyResult(saved: [], deleted: [], failures: try result.failures.map { try failure($0, isDelete: deleted.contains($0.id)) })
        }
        return ModifyResult(saved: result.written.filter { !$0.isDeleted }.map(\.record),
                            deleted: result.written.filter(\.isDeleted).map(\.record.id) + alreadyGone, failures: [])
    }

    /// The version a save starts from, kept with it as the ancestor of later three-way merges
    /// (tabs only: other records merge without one).
    private func base(of record: BackendRecord, at version: VersionVector) throws -> RecordBase? {
        guard record.recordType == RecordType.tab.rawValue, !version.isEmpty else { return nil }
        return try readableSiblings(of: record.id).first { $0.version == version && !$0.isDeleted }?.asBase
    }

    /// A refused save or delete in the engine's terms: versions it had not seen come back merged,
    /// as the server's record; a save that finds only deletions is told the record is gone.
    private func failure(_ failure: ReplicatedFailure, isDelete: Bool) throws -> RecordFailure {
        let error: RecordError
        switch failure.error {
        case .concurrentVersions(let siblings):
            if let merged = try SiblingMerge.merge(siblings, backend: self).record {
                error = .serverRecordChanged(server: tagged(merged, siblings))
            } else if isDelete {
                // Deleted meanwhile by another device: sent again, the deletion covers it.
                error = .serverRecordChanged(server: BackendRecord(recordName: failure.id.recordName, recordType: failure.id.recordType,
                                                                   recordChangeTag: Self.joined(siblings).tag, created: nil, modified: nil))
            } else {
                error = .unknownItem
            }
        case .limitExceeded: error = .limitExceeded
        case .invalid(let reason): error = .invalid(reason)
        case .batchRequestFailed: error = .batchRequestFailed
        }
        return RecordFailure(recordType: failure.id.recordType, recordName: failure.id.recordName, error: error)
    }
}

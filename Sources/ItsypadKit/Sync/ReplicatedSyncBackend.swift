import ItsypadBackend

/// A replicated backend as the engine's `SyncBackend`, the interface the engine's one sync loop
/// speaks (the in-memory backend of the tests speaks it too). A version's vector is its change tag: a save carrying a tag is based on that
/// version, and a save that does not cover every version in this copy fails with
/// `serverRecordChanged`, carrying the merge of those versions, which the engine merges its own
/// change into as it does for any backend. A record with several siblings is fetched as their
/// merge (`SiblingMerge`), tagged with their joined vector, and that merge is written back as a
/// derived version, so that the siblings collapse into one and two devices merging them at once
/// write the same version. Siblings of a type this version does not sync are left as they are,
/// for a version that knows how to merge them.
final class ReplicatedSyncBackend: SyncBackend, @unchecked Sendable {
    let replicated: any ReplicatedBackend
    /// The record types whose versions this backend merges: those the engine syncs.
    let types: SyncedTypeTable

    init(_ replicated: any ReplicatedBackend, types: [any SyncedRecordType] = SyncedTypes.standard) {
        self.replicated = replicated
        self.types = SyncedTypeTable(types)
    }

    var limits: BackendLimits { replicated.limits }
    var absenceProvesDeletion: Bool { false }
    func sealedByteCount(of fields: [String: FieldValue]) throws -> Int? { try replicated.sealedByteCount(of: fields) }
    func createZoneIfNeeded() throws -> ZoneInfo { try replicated.createZoneIfNeeded() }
    func zone() throws -> ZoneInfo { try replicated.zone() }
    func putAsset(_ bytes: [UInt8]) throws -> AssetReference { try replicated.putAsset(bytes) }
    func readAsset(_ reference: AssetReference) throws -> [UInt8] { try replicated.readAsset(reference) }
    func location(of id: RecordID) -> String { replicated.location(of: id) }

    func finishSync(acknowledging token: ChangeToken) throws {
        _ = try replicated.finishSync(acknowledging: token)
    }

    func accepted(_ receipt: CommitReceipt) { replicated.accepted(receipt) }
    func finishWrites() throws { try replicated.finishWrites() }

    /// Each device compacts its own journal as it finishes a sync once it has grown; asked, it
    /// compacts it whatever its size, so that what was removed leaves this device's files.
    func compact() throws -> CompactionReport {
        try replicated.compactJournal()
    }

    // MARK: Reading

    func fetchChanges(since token: ChangeToken?, limit: Int) throws -> ChangesPage {
        let page = try replicated.fetchChanges(since: token, limit: limit)
        var changes: [Change] = []
        var merges = Merges()
        var presentedWithTombstone = Set<RecordID>()
        // The other half of each record read with its tombstone, read in one go.
        let companions = try replicated.readableSiblings(
            of: page.changes.compactMap { change in
                recordReadWithTombstone(change.id).map { $0 == change.id ? Self.tombstoneID(of: $0) : $0 }
            })
        for change in page.changes {
            if let id = recordReadWithTombstone(change.id) {
                guard presentedWithTombstone.insert(id).inserted else { continue }
                let (current, derived) = try currentWithTombstone(id, fetched: change, companions: companions)
                changes += current
                merges.add(derived)
                continue
            }
            let (current, derived) = try current(change.id, siblings: change.siblings)
            changes += current
            merges.add(derived)
        }
        try write(merges)
        return ChangesPage(
            changes: changes, token: page.token, moreComing: page.moreComing, quarantined: page.quarantined, waiting: page.waiting)
    }

    /// The record a change is about, when its type reads it together with its tombstone
    /// (`RemovalRule.editBeatsUnseenRemoval`): the record's own change, or its tombstone's.
    private func recordReadWithTombstone(_ id: RecordID) -> RecordID? {
        if types.handler(for: id.recordType)?.removal == .editBeatsUnseenRemoval { return id }
        guard id.recordType == RecordMapping.tombstoneType,
            let type = types.all.first(where: {
                $0.removal == .editBeatsUnseenRemoval && id.recordName.hasPrefix($0.recordType.rawValue + ".")
            })
        else { return nil }
        return RecordID(
            recordType: type.recordType.rawValue, recordName: String(id.recordName.dropFirst(type.recordType.rawValue.count + 1)))
    }

    /// A record and the tombstone of its removal, read as one state, so that every device ends the
    /// same whatever order the devices' journals bring them in: the record's version when it holds
    /// an edit the deleters had not seen (an edit beats a removal that had not seen it), else the
    /// removal. Each device's journal is read in turn, so the tombstone may come after the version
    /// that brings the record back, and must then not remove it.
    private func currentWithTombstone(
        _ recordID: RecordID, fetched change: ReplicatedChange,
        companions: [RecordID: [RecordVersion]]
    ) throws -> (changes: [Change], merges: Merges) {
        let tombstoneID = Self.tombstoneID(of: recordID)
        let recordSiblings = change.id == recordID ? change.siblings : companions[recordID, default: []]
        let tombstoneSiblings = change.id == tombstoneID ? change.siblings : companions[tombstoneID, default: []]
        let record = try current(recordID, siblings: recordSiblings)
        let tombstone = try current(tombstoneID, siblings: tombstoneSiblings)
        guard let removal = tombstone.changes.first, case .saved(let tombstoneRecord) = removal,
            let (_, seen) = RecordMapping.tombstone(from: tombstoneRecord)
        else { return record }
        // The record's version (the first change; conflict copies follow), if one is there.
        guard case .saved(let version)? = record.changes.first, !seen.includes(RecordMapping.history(of: version)) else {
            return ([removal], record.merges.adding(tombstone.merges))
        }
        return (record.changes, record.merges.adding(tombstone.merges))
    }

    /// Throws `.corrupt` for a record whose only versions cannot be read (the engine keeps it quarantined).
    func fetchRecord(_ id: RecordID) throws -> BackendRecord? {
        let siblings = try replicated.siblings(of: id)
        guard siblings.count > 1 else { return siblings.first.flatMap { $0.isDeleted ? nil : $0.record } }
        return try mergeKeepingCopies(siblings)
    }

    /// The merge of siblings met outside a fetch (by a save, or a read of one record), tagged with
    /// their joined vector; nil when every sibling is a deletion. The conflict copies the merge
    /// makes are written at once, as a fetch writes them: the engine goes on to send its version
    /// over every sibling, and the losing side of overlapping edits then lives on only in its copy.
    private func mergeKeepingCopies(_ siblings: [RecordVersion]) throws -> BackendRecord? {
        let outcome = try SiblingMerge.merge(siblings, types: types, backend: self)
        guard let merged = outcome.record else { return nil }
        let joined = Self.joined(siblings)
        try write(Merges(saves: outcome.copies.map { ReplicatedSave(record: $0, basedOn: joined, isDerived: true) }))
        return tagged(merged, siblings)
    }

    /// A record as the engine sees it (with the conflict copies a merge makes), and the versions
    /// that write the merge back.
    private func current(_ id: RecordID, siblings: [RecordVersion]) throws -> (changes: [Change], merges: Merges) {
        // Versions of a type this version does not sync are not merged: one of them tells the engine the type exists.
        guard siblings.count > 1, isMerged(id.recordType) else {
            guard let shown = siblings.last(where: { !$0.isDeleted }) ?? siblings.first else { return ([], Merges()) }
            return ([shown.isDeleted ? .deleted(recordType: id.recordType, recordName: id.recordName) : .saved(shown.record)], Merges())
        }
        let outcome = try SiblingMerge.merge(siblings, types: types, backend: self)
        let joined = Self.joined(siblings)
        guard let merged = outcome.record else {
            // Concurrent deletions need no merge: the record is deleted either way. A removal that
            // wins over a live version is written over it, or that version would outlast the
            // removal's tombstone once it is collected and come back on devices that read it then.
            let removal = siblings.contains { !$0.isDeleted } ? [ReplicatedDelete(id: id, basedOn: joined)] : []
            return ([.deleted(recordType: id.recordType, recordName: id.recordName)], Merges(deletes: removal))
        }
        let records = [merged] + outcome.copies
        return (
            records.map { .saved(tagged($0, siblings)) },
            Merges(
                saves: records.enumerated().map {
                    ReplicatedSave(record: $1, basedOn: joined, isDerived: true, base: $0 == 0 ? outcome.base : nil)
                })
        )
    }

    /// Merged siblings to write back: derived versions, and removals written over live versions.
    struct Merges {
        var saves: [ReplicatedSave] = []
        var deletes: [ReplicatedDelete] = []

        mutating func add(_ other: Merges) {
            saves += other.saves
            deletes += other.deletes
        }

        func adding(_ other: Merges) -> Merges {
            var merges = self
            merges.add(other)
            return merges
        }
    }

    /// Whether siblings of this record type are merged here: the types this version syncs, and tombstones.
    private func isMerged(_ recordType: String) -> Bool {
        recordType == RecordMapping.tombstoneType || types.handler(for: recordType) != nil
    }

    /// Writes merges back. One that meets a version that arrived meanwhile is left for the next
    /// fetch, which merges that too; the engine already holds the merge it read.
    private func write(_ merges: Merges) throws {
        var remaining = merges
        while !remaining.saves.isEmpty || !remaining.deletes.isEmpty {
            let result = try replicated.modify(saves: remaining.saves, deletes: remaining.deletes)
            let refused = Set(result.failures.filter { $0.error != .batchRequestFailed }.map(\.id))
            guard !result.failures.isEmpty, !refused.isEmpty else { break }
            remaining.saves.removeAll { refused.contains($0.record.id) }
            remaining.deletes.removeAll { refused.contains($0.id) }
        }
        if !merges.saves.isEmpty || !merges.deletes.isEmpty { try replicated.finishWrites() }
    }

    private static func tombstoneID(of recordID: RecordID) -> RecordID {
        RecordID(recordType: RecordMapping.tombstoneType, recordName: recordID.recordType + "." + recordID.recordName)
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
        // A tag that is no vector (from another format) is based on nothing: the record's versions come back to merge.
        let basedOn = saves.map { $0.record.recordChangeTag.flatMap(VersionVector.init(tag:)) ?? VersionVector() }
        let unconditional = deletes.filter { $0.ifTag == nil }.map { RecordID(recordType: $0.recordType, recordName: $0.recordName) }
        let current = try replicated.readableSiblings(
            of: zip(saves, basedOn).filter { hasBase($0.record, at: $1) }.map(\.0.record.id) + unconditional)
        var replicatedSaves = zip(saves, basedOn).map { save, basedOn in
            ReplicatedSave(
                record: save.record, basedOn: basedOn,
                base: hasBase(save.record, at: basedOn)
                    ? current[save.record.id, default: []].first { $0.version == basedOn && !$0.isDeleted }?.asBase : nil)
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
            let siblings = current[id, default: []]
            // None here may be versions this copy has not received yet: the removal is written anyway.
            if !siblings.isEmpty, siblings.allSatisfy(\.isDeleted) {
                alreadyGone.append(id)
            } else {
                replicatedDeletes.append(ReplicatedDelete(id: id, basedOn: Self.joined(siblings)))
            }
        }
        var result = try replicated.modify(saves: replicatedSaves, deletes: replicatedDeletes)
        // A save that creates a record (no tag) over one deleted meanwhile creates it again: based
        // on the deletions, it goes again.
        for _ in 0..<3 where !result.failures.isEmpty {
            var rebased = false
            for failure in result.failures {
                guard case .concurrentVersions(let siblings) = failure.error, siblings.allSatisfy(\.isDeleted),
                    let index = replicatedSaves.firstIndex(where: { $0.record.id == failure.id && $0.record.recordChangeTag == nil })
                else { continue }
                let save = replicatedSaves[index]
                replicatedSaves[index] = ReplicatedSave(
                    record: save.record, basedOn: save.basedOn.joined(with: Self.joined(siblings)), base: save.base)
                rebased = true
            }
            guard rebased else { break }
            result = try replicated.modify(saves: replicatedSaves, deletes: replicatedDeletes)
        }
        guard result.failures.isEmpty else {
            let deleted = Set(replicatedDeletes.map(\.id))
            return ModifyResult(
                saved: [], deleted: [], failures: try result.failures.map { try failure($0, isDelete: deleted.contains($0.id)) })
        }
        return ModifyResult(
            saved: result.written.filter { !$0.isDeleted }.map(\.record),
            deleted: result.written.filter(\.isDeleted).map(\.record.id) + alreadyGone, failures: [], receipt: result.receipt)
    }

    /// Whether a save keeps the version it starts from, as the ancestor of later three-way merges
    /// (for types that merge against one: `mergesAgainstAncestor`).
    private func hasBase(_ record: BackendRecord, at version: VersionVector) -> Bool {
        types.handler(for: record.recordType)?.mergesAgainstAncestor == true && !version.isEmpty
    }

    /// A refused save or delete in the engine's terms: versions it had not seen come back merged,
    /// as the server's record; a save that finds only deletions is told the record is gone.
    private func failure(_ failure: ReplicatedFailure, isDelete: Bool) throws -> RecordFailure {
        let error: RecordError
        switch failure.error {
        case .concurrentVersions(let siblings):
            if let merged = try mergeKeepingCopies(siblings) {
                error = .serverRecordChanged(server: merged)
            } else if isDelete {
                // Deleted meanwhile by another device: sent again, the deletion covers it.
                error = .serverRecordChanged(
                    server: BackendRecord(
                        recordName: failure.id.recordName, recordType: failure.id.recordType,
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

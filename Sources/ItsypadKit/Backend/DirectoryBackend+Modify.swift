import ItsypadSupport

extension DirectoryBackend {
    public func modify(saves: [RecordSave], deletes: [RecordDelete], device: String) throws -> ModifyResult {
        try limits.checkRequest(saves: saves, deletes: deletes)
        _ = try readZone()
        if saves.isEmpty && deletes.isEmpty {
            return ModifyResult(saved: [], deleted: [], failures: [])
        }
        return try withWriteLock {
            // The zone may have been replaced or upgraded while this writer waited for the lock.
            _ = try readZone()
            let (tail, state) = try prepareForWrite()
            let firstSeq = max(tail.latestSeq, state.appliedSeq) + 1
            guard firstSeq + Int64(saves.count + deletes.count) <= BackendLimits.maxSeq else {
                throw BackendError.corrupt(path: layout.journalDirectory, reason: "sequence numbers would pass \(BackendLimits.maxSeq)")
            }
            let plan = try planBatch(saves: saves, deletes: deletes, device: device, firstSeq: firstSeq, time: now())
            if plan.hasFailures {
                return plan.failedResult
            }
            if !plan.changes.isEmpty {
                let batch = JournalBatch(seq: firstSeq, device: device, time: plan.time, changes: plan.changes)
                try journal.append(batch, after: tail)
                // Committed. If updating records/ fails now, readers still see the batch through the
                // journal and the next writer rolls it forward, so this call must not report a failure.
                try? apply(batch.changes)
                try? BackendState(appliedSeq: batch.lastSeq, compactedThrough: state.compactedThrough).write(
                    to: layout.stateFile, files: files)
                compactIfJournalOutgrewRecords(after: batch)
            }
            return ModifyResult(saved: plan.saved, deleted: plan.deleted, failures: [])
        }
    }

    /// Checks every save and delete against the current records (ifServerRecordUnchanged) and
    /// builds the journal changes. Nothing is written here.
    private func planBatch(saves: [RecordSave], deletes: [RecordDelete], device: String, firstSeq: Int64, time: Int64) throws -> BatchPlan {
        var plan = BatchPlan(time: time)
        var seen = Set<RecordID>()
        var nextSeq = firstSeq
        for save in saves {
            let id = save.record.id
            if let error = try saveError(save.record, isDuplicate: !seen.insert(id).inserted) {
                plan.outcomes.append((id, error))
                continue
            }
            // A malformed stored version counts as absent: a device's good version replaces it.
            var malformed = false
            let current = try records.recordForWriting(id, malformed: &malformed)
            if let error = Self.conflict(sentTag: save.record.recordChangeTag, current: current) {
                plan.outcomes.append((id, error))
                continue
            }
            var stored = save.record
            stored.recordChangeTag = String(nextSeq)
            stored.created = current?.created ?? Stamp(timestamp: time, deviceID: device)
            stored.modified = Stamp(timestamp: time, deviceID: device)
            guard try JSONCoding.encode(stored).count <= limits.maxRecordBytes else {
                plan.outcomes.append((id, .limitExceeded))
                continue
            }
            plan.changes.append(.save(stored, seq: nextSeq))
            plan.saved.append(stored)
            plan.outcomes.append((id, nil))
            nextSeq += 1
        }
        for delete in deletes {
            let id = RecordID(recordType: delete.recordType, recordName: delete.recordName)
            if let problem = NameRules.problem(with: id) {
                plan.outcomes.append((id, .invalid(problem)))
                continue
            }
            guard seen.insert(id).inserted else {
                plan.outcomes.append((id, .invalid("\(id) appears more than once in the request")))
                continue
            }
            var malformed = false
            let current = try records.recordForWriting(id, malformed: &malformed)
            if let current, let ifTag = delete.ifTag, ifTag != current.recordChangeTag {
                plan.outcomes.append((id, .serverRecordChanged(server: current)))
                continue
            }
            plan.outcomes.append((id, nil))
            plan.deleted.append(id)
            // A record that is already gone needs no journal entry: deleting is idempotent.
            // A malformed one is deleted like any other.
            if current != nil || malformed {
                plan.changes.append(.delete(id, removedTag: current?.recordChangeTag, seq: nextSeq))
                nextSeq += 1
            }
        }
        return plan
    }

    /// A problem with the record itself (not its tag), or nil.
    private func saveError(_ record: BackendRecord, isDuplicate: Bool) throws -> RecordError? {
        if let problem = NameRules.problem(with: record) {
            return .invalid(problem)
        }
        if isDuplicate {
            return .invalid("\(record.id) appears more than once in the request")
        }
        if let problem = try missingAsset(in: record) {
            return .invalid(problem)
        }
        return nil
    }

    /// CloudKit's ifServerRecordUnchanged rule for a save carrying `sentTag`.
    static func conflict(sentTag: String?, current: BackendRecord?) -> RecordError? {
        switch (sentTag, current) {
        case (nil, nil):
            return nil
        case (nil, let current?):
            return .serverRecordChanged(server: current)
        case (_?, nil):
            return .unknownItem
        case (let sentTag?, let current?):
            return sentTag == current.recordChangeTag ? nil : .serverRecordChanged(server: current)
        }
    }

    /// Called under the lock after a commit. Errors are ignored: the batch is already committed and
    /// compaction will be tried again after the next one. Measuring the records means a stat per
    /// record file, so it is done once every `autoCompactionCheckInterval` changes, not on every commit.
    private func compactIfJournalOutgrewRecords(after batch: JournalBatch) {
        let interval = Int64(tuning.autoCompactionCheckInterval)
        guard tuning.autoCompaction, (batch.seq - 1) / interval != batch.lastSeq / interval,
            let journalSize = try? journal.totalSize(), journalSize > tuning.autoCompactionThreshold,
            let recordsSize = try? records.totalSize(), journalSize > recordsSize
        else { return }
        _ = try? compactHoldingLock()
    }
}

/// The checked form of one `modify` call.
private struct BatchPlan {
    let time: Int64
    var changes: [JournalChange] = []
    var saved: [BackendRecord] = []
    var deleted: [RecordID] = []
    /// Every save and delete in request order, with its error if it failed.
    var outcomes: [(id: RecordID, error: RecordError?)] = []

    var hasFailures: Bool { outcomes.contains { $0.error != nil } }

    /// Atomic zone: one failure fails the batch; the others report `.batchRequestFailed`.
    var failedResult: ModifyResult {
        let failures = outcomes.map { outcome in
            RecordFailure(recordType: outcome.id.recordType, recordName: outcome.id.recordName, error: outcome.error ?? .batchRequestFailed)
        }
        return ModifyResult(saved: [], deleted: [], failures: failures)
    }
}

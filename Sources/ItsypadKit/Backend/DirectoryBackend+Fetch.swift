extension DirectoryBackend {
    /// Reads racing a concurrent compaction are retried this many times.
    private static let readAttempts = 3

    public func fetchChanges(since token: ChangeToken?, limit: Int) throws -> ChangesPage {
        var stats = JournalReadStats()
        return try fetchChanges(since: token, limit: limit, stats: &stats)
    }

    /// `fetchChanges`, reporting how much of the journal it read.
    func fetchChanges(since token: ChangeToken?, limit: Int, stats: inout JournalReadStats) throws -> ChangesPage {
        let zone = try readZone()
        let pageSize = max(1, limit)
        let position = try token.map { try TokenContents(decoding: $0, zoneID: zone.zoneID) }
        for _ in 0..<Self.readAttempts {
            do {
                let state = try BackendState.read(from: layout.stateFile, files: files)
                if let position, position.seq < state.compactedThrough {
                    throw BackendError.tokenExpired
                }
                if let position, position.fullFetchCursor == nil {
                    return try incrementalPage(after: position, state: state, limit: pageSize, stats: &stats)
                }
                return try fullFetchPage(zoneID: zone.zoneID, continuing: position, state: state, limit: pageSize, stats: &stats)
            } catch JournalReadError.compactedMeanwhile {
                // Reading state.json again settles it: the token is either expired now or still good.
                continue
            }
        }
        throw BackendError.io("the journal in \(path) kept being compacted while reading it")
    }

    /// Journal changes after the token. Costs what it returns, not the size of the zone.
    private func incrementalPage(
        after position: TokenContents, state: BackendState, limit: Int, stats: inout JournalReadStats
    ) throws -> ChangesPage {
        let read: JournalRead
        do {
            read = try journal.read(after: position.seq, from: position.hint, maxChanges: limit, stats: &stats)
        } catch JournalReadError.gap {
            try requireUncompacted(since: state)
            throw BackendError.tokenExpired
        }
        guard let last = read.changes.last else {
            try requireUncompacted(since: state)
            // A token ahead of the journal comes from a newer copy of this backend (e.g. a restored backup).
            if position.seq > state.appliedSeq, position.seq > (try journal.tail().latestSeq) {
                throw BackendError.tokenExpired
            }
            return ChangesPage(changes: [], token: position.token, moreComing: false, quarantined: read.quarantined)
        }
        let next = TokenContents(zoneID: position.zoneID, seq: last.seq, hint: last.resume)
        return ChangesPage(
            changes: read.validChanges.map(Self.change(from:)), token: next.token, moreComing: read.moreComing,
            quarantined: read.quarantined)
    }

    /// Every current record (records/ plus committed batches not yet applied, overlaid in memory),
    /// sorted by ID and paged. The final token is the seq the full fetch started at, so changes made
    /// while paging come with the next incremental fetch.
    /// Malformed entries (record files, unapplied journal changes) are skipped and reported, on the
    /// page where their record would have been, or on the first page when no record can be named.
    private func fullFetchPage(
        zoneID: String, continuing position: TokenContents?, state: BackendState, limit: Int, stats: inout JournalReadStats
    ) throws -> ChangesPage {
        let (storedIDs, strays) = try records.ids()
        let pending: JournalRead
        do {
            pending = try journal.read(after: state.appliedSeq, from: nil, maxChanges: nil, stats: &stats)
        } catch JournalReadError.gap(let after, let next) {
            try requireUncompacted(since: state)
            throw BackendError.corrupt(
                path: layout.journalDirectory, reason: "state.json says seq \(after) is applied but the journal continues at \(next)")
        }
        try requireUncompacted(since: state)

        var unappliedChange: [RecordID: LocatedChange.Entry] = [:]
        var quarantined = position == nil ? strays : []
        for located in pending.changes {
            switch located.entry {
            case .change(let change): unappliedChange[change.id] = located.entry
            case .malformed(let item):
                if let id = item.id { unappliedChange[id] = located.entry } else if position == nil { quarantined.append(item) }
            }
        }
        if position == nil { quarantined += pending.malformedLines }
        var currentIDs = Set(storedIDs)
        for (id, entry) in unappliedChange {
            if case .change(let change) = entry, change.op == .delete {
                currentIDs.remove(id)
            } else {
                currentIDs.insert(id)
            }
        }
        let latestSeq = max(state.appliedSeq, pending.changes.last?.seq ?? 0)
        let snapshotSeq = position?.seq ?? latestSeq
        guard snapshotSeq <= latestSeq else { throw BackendError.tokenExpired }

        let remaining = currentIDs.filter { id in position?.fullFetchCursor.map { id > $0 } ?? true }.sorted()
        let pageIDs = remaining.prefix(limit)
        var changes: [Change] = []
        for id in pageIDs {
            switch unappliedChange[id] {
            case .change(let change)?:
                if let record = change.record { changes.append(.saved(record)) }
            case .malformed(let item)?:
                quarantined.append(item)
            case nil:
                do {
                    if let record = try records.record(id) { changes.append(.saved(record)) }
                    // Otherwise it was deleted after the listing; that deletion has a later seq and comes incrementally.
                } catch BackendError.corrupt(let path, let reason) {
                    quarantined.append(QuarantinedItem(id: id, location: path, reason: reason))
                }
            }
        }
        let moreComing = remaining.count > limit
        let next = TokenContents(zoneID: zoneID, seq: snapshotSeq, fullFetchCursor: moreComing ? pageIDs.last : nil)
        return ChangesPage(changes: changes, token: next.token, moreComing: moreComing, quarantined: quarantined)
    }

    public func fetchRecord(_ id: RecordID) throws -> BackendRecord? {
        _ = try readZone()
        for _ in 0..<Self.readAttempts {
            do {
                let state = try BackendState.read(from: layout.stateFile, files: files)
                var stats = JournalReadStats()
                let pending: JournalRead
                do {
                    pending = try journal.read(after: state.appliedSeq, from: nil, maxChanges: nil, stats: &stats)
                } catch JournalReadError.gap {
                    pending = JournalRead(changes: [], moreComing: false)
                }
                // The last unapplied change of this record, if any, is newer than its file.
                for located in pending.changes.reversed() {
                    switch located.entry {
                    case .change(let change) where change.id == id:
                        return change.record
                    case .malformed(let item) where item.id == id:
                        throw BackendError.corrupt(path: item.location, reason: item.reason)
                    default:
                        continue
                    }
                }
                return try records.record(id)
            } catch JournalReadError.compactedMeanwhile {
                continue
            }
        }
        throw BackendError.io("the journal in \(path) kept being compacted while reading it")
    }

    /// Throws `.compactedMeanwhile` if a compaction ran since `state` was read.
    private func requireUncompacted(since state: BackendState) throws {
        if try BackendState.read(from: layout.stateFile, files: files).compactedThrough != state.compactedThrough {
            throw JournalReadError.compactedMeanwhile
        }
    }

    private static func change(from journalChange: JournalChange) -> Change {
        if journalChange.op == .save, let record = journalChange.record {
            return .saved(record)
        }
        return .deleted(recordType: journalChange.recordType, recordName: journalChange.recordName)
    }
}

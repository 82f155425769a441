import ItsypadBackend
import ItsypadModel
import ItsypadStore
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// What one sync run did.
public struct SyncReport: Equatable, Sendable {
    public var pulled = 0
    public var pushed = 0
    /// The changes the push under way read from the queue: what `pushed` counts towards.
    public var toPush = 0
    public var conflicts = 0
    /// Items that failed in this run, with their errors.
    public var failed: [RecordKey: String] = [:]
    /// Problems found and repaired that the user should hear about (a damaged queue).
    public var warnings: [String] = []
    /// What this run skipped as malformed (found now, or still malformed when checked again).
    public var quarantined: [EngineState.Quarantined] = []

    package init() {}
}

/// CKSyncEngine's semantics against a `SyncBackend`: fetch changes since a
/// token and apply them, send the pending queue in batches with change-tag
/// conditions, resolve conflicts so that nothing typed is lost.
///
/// The engine names no record type: each synced type is a `SyncedRecordType` handler in the list
/// the engine is given (`SyncedTypes.standard` by default), which applies versions and deletions
/// from the backend, builds what to send for a queued change, accepts what the backend stored, and
/// lists the changes still to send. A conflict is resolved by applying the backend's version
/// exactly as if it had been fetched, so fetching and sending follow one set of rules. Records of
/// a type no handler knows (written by a newer version) are not applied; their type is remembered,
/// and once a version that syncs it runs, everything is fetched again.
///
/// The data directory is locked only while the run reads and writes local
/// state, in short steps: every backend call is made with its lock released
/// (see `LockReleasingBackend`), and long applies hand it over between steps,
/// so that `clip add` never waits for a sync. Local state is therefore read
/// again after every backend call, and a local edit made meanwhile is treated
/// exactly as one made before the call (it is pending, so it wins or merges).
/// Fetched versions taken as they are are written into a stage of the sync's own with the lock
/// let go, and put in place under it once the pending log shows no command changed them
/// meanwhile (one that did is decided again, against the change).
/// Two syncs of one data directory are kept apart by a lock of their own,
/// held for the engine's lifetime; the backend's own lock is held only while a
/// batch commits.
public final class SyncEngine {
    let store: DataStore
    let backend: LockReleasingBackend
    /// Held while this engine exists: a second sync of the data directory is refused, not queued.
    private var syncLock: FileLock?
    let now: () -> Milliseconds
    public internal(set) var state: EngineState
    public internal(set) var report = SyncReport()
    package let deviceName: String
    /// Called after each page fetched and batch sent, for a progress line.
    public var progress: ((SyncReport) -> Void)?
    /// The record types this engine syncs.
    let types: SyncedTypeTable
    /// Tombstones found on the backend while sending, by the record they stand for: a deletion sent again replaces them.
    var knownTombstones: [RecordKey: (tag: String?, history: EditHistory)] = [:]
    private var prepared = false

    /// Changes fetched per page (each page is applied and its token saved together),
    /// and attempts per backend call for transient errors.
    static let pageSize = 2000
    package static let attempts = 5
    /// Changes applied per hold of the data directory's lock, or sent changes accepted between two
    /// looks for a command waiting for it.
    static let stepSize = 100
    /// Fetched changes applied, or sent changes accepted with files to put in place (see
    /// `SyncedRecordType.hasAcceptedFiles`), made durable and put in place together while no command
    /// waits: what a command arriving just after a look waits for, besides a step (their files put
    /// in place, one sync; for fetched ones, the sync is made with the lock let go).
    static let durableStepSize = 5 * stepSize

    /// Takes the sync lock (`sync/lock`) without waiting: throws `.temporary` when another
    /// sync of this data directory is under way.
    public convenience init(store: DataStore, backend: SyncBackend, now: @escaping () -> Milliseconds = Time.now) throws {
        try self.init(store: store, backend: backend, types: SyncedTypes.standard, now: now)
    }

    /// `types`: the handlers of the record types to sync, each made for this engine.
    init(store: DataStore, backend: SyncBackend, types: [any SyncedRecordType], now: @escaping () -> Milliseconds = Time.now) throws {
        syncLock = try SyncEngine.takeSyncLock(store)
        self.types = SyncedTypeTable(types)
        self.store = store
        self.backend = LockReleasingBackend(backend, store: store)
        self.now = now
        state = try EngineState.load(from: store)
        deviceName = try store.settings().string(.deviceName) ?? store.deviceID
        // Items decided on must be on disk before anyone else may edit them.
        self.backend.beforeRelease = { [unowned self] in try writeStaged() }
    }

    /// The lock that keeps two syncs of one data directory apart, taken without waiting (held
    /// already by this process, it is shared: see `DataStore.takeSyncLock`).
    package static func takeSyncLock(_ store: DataStore) throws -> FileLock {
        guard let syncLock = try store.takeSyncLock() else {
            throw ItsypadError.temporary("another sync of \(store.path) is under way; try again once it has finished")
        }
        return syncLock
    }

    // MARK: Runs

    /// Pull, push, pull: what `itsypad sync` does.
    public func sync() throws {
        try pull()
        try push()
        try pull()
        // Tells the backend how far this device has read, for what waits for every device to have seen it.
        if let token = state.token { try retrying { try backend.finishSync(acknowledging: ChangeToken(rawValue: token)) } }
    }

    /// Checks the queue and the zone once per run, before anything relies on them, and sweeps
    /// the temporary files crashes left in the data directory (once a day; saved with the state).
    private func prepare() throws {
        guard !prepared else { return }
        _ = try store.removeAbandonedTemporaryFiles(lastSweep: &state.lastTemporaryFileSweep, now: now())
        try checkQueue()
        try checkZone()
        try fetchAgainIfTypesLearned()
        prepared = true
    }

    /// Records of a type this version does not sync were skipped by earlier fetches (the token
    /// moved past them): once a version that syncs the type runs, everything is fetched again.
    private func fetchAgainIfTypesLearned() throws {
        let learned = state.unknownTypes.filter { types.handler(for: $0) != nil }
        guard !learned.isEmpty else { return }
        state.unknownTypes.subtract(learned)
        state.token = nil
        state.fullFetch = state.fullFetch ?? .initial
        try state.save(to: store)
    }

    /// Writes what handlers staged while applying.
    func writeStaged() throws {
        for type in types.all { try type.writeStaged(engine: self) }
    }

    /// Runs `body` with the data directory's lock let go, as a backend call is: what handlers
    /// staged is written first, and everything local must be read again afterwards.
    func withLockLetGo<T>(_ body: () throws -> T) throws -> T {
        try writeStaged()
        return try store.withLockReleased(body)
    }

    /// Fetches and applies everything since the saved token.
    public func pull() throws {
        try prepare()
        // A full fetch interrupted earlier starts again: what it had seen was not kept.
        if state.token == nil || state.fullFetch != nil { try startFullFetch(state.fullFetch ?? .initial) }
        var pass = FetchPass(fullFetch: state.fullFetch)
        while true {
            let page: ChangesPage
            do {
                page = try retrying {
                    try backend.fetchChanges(since: state.token.map(ChangeToken.init(rawValue:)), limit: SyncEngine.pageSize)
                }
            } catch BackendError.tokenExpired {
                // Compacted past our token: fetch everything and find deletions by comparison.
                try startFullFetch(.expired)
                pass = FetchPass(fullFetch: .expired)
                continue
            } catch BackendError.zoneChanged {
                // A token of another zone (a state file copied or edited): start over as for a replaced backend.
                try startOver()
                pass = FetchPass(fullFetch: .initial)
                continue
            }
            quarantine(page.quarantined, in: &pass)
            pass.waiting += page.waiting
            try apply(page.changes, in: &pass)
            progress?(report)
            // Saved only after its changes are applied: a crash re-applies, never skips.
            state.token = page.token.rawValue
            try state.save(to: store)
            if !page.moreComing { break }
        }
        if let mode = pass.fullFetch { try finishFullFetch(pass, mode) }
        state.noteWaits(pass.waiting.map { ($0.path, $0.reason) }, now: now())
        // Every fetch names what it skipped that is no record: one no longer named was put right.
        state.quarantine.removeAll { $0.key == nil && !pass.skippedLocations.contains($0.location) }
        try recheckQuarantine()
        for type in types.all { try type.finishPull(engine: self) }
        state.lastPull = now()
        try forgetSettledFailures()
        try state.save(to: store)
    }

    /// Sends the whole pending queue, in batches as large as the backend takes. The queue is read
    /// once, as it stands when the push starts, and turned into changes a batch at a time: a change
    /// queued meanwhile waits for the next run, and one changed meanwhile is sent as it is now and
    /// confirmed only as far as the version read, so it stays queued. A change leaves the queue only
    /// once the backend has committed it (`accept`).
    public func push() throws {
        try prepare()
        do {
            try send(try store.pending().snapshot())
        } catch {
            // What the backend put off for the batches it committed is recorded even so (a backend
            // directory's next run would otherwise write their record files again).
            try? backend.finishWrites()
            throw error
        }
        try retrying { try backend.finishWrites() }
        for type in types.all { try type.finishPush(engine: self) }
        if report.failed.isEmpty { state.lastPush = now() }
        try forgetSettledFailures()
        try state.save(to: store)
        // Sent changes leave "done" lines behind: rewrite the log as what is still waiting (the
        // snapshot sent from is let go by then: a long queue is not held twice).
        // Its rewrite is a hold of its own: a command waiting for the lock has it first.
        if (store.tree.fileSize(try store.pending().path) ?? 0) > 64 << 10 {
            try store.letOthersIn()
            try store.pending().compact { _ in true }
        }
    }

    /// Sends the changes of `queue` that still wait, in batches.
    private func send(_ queue: PendingSnapshot) throws {
        var skip = Set<RecordKey>()
        var conflicts: [RecordKey: Int] = [:]
        var batchLimit = backend.limits.maxRecordsPerRequest
        report.toPush = report.pushed + queue.count
        var read = 0
        var waiting: [PendingChange] = []
        while true {
            if waiting.count < batchLimit, read < queue.count {
                let end = min(read + max(batchLimit, SyncEngine.stepSize), queue.count)
                waiting += queue.changes(read..<end)
                read = end
            }
            guard !waiting.isEmpty else { break }
            let batch = try buildBatch(waiting.prefix(batchLimit), limit: batchLimit, skipping: skip)
            waiting.removeFirst(batch.consumed)
            try store.pending().confirm(batch.obsolete)
            guard !batch.items.isEmpty else { continue }
            let result: ModifyResult
            do {
                result = try retrying { try backend.modify(saves: batch.saves, deletes: batch.deletes, device: store.deviceID) }
            } catch BackendError.limitExceeded where batchLimit > 1 {
                batchLimit = max(1, batch.recordCount / 2)
                waiting.insert(contentsOf: batch.items.map(\.change), at: 0)
                continue
            } catch let error as BackendError {
                // Quota, permission, corruption — or a backend still busy after every retry: keep the
                // data and the queue, and show the batch as failed until a later sync sends it.
                for item in batch.items { recordFailure(item.change.key, error.description, permanent: true) }
                try state.save(to: store)
                throw error
            }
            if result.failures.isEmpty {
                try accept(result, for: batch)
                // Recorded and durable: the fetch after the push need not bring these versions back.
                if let receipt = result.receipt { backend.accepted(receipt) }
                report.pushed += batch.items.count
                progress?(report)
            } else {
                for failure in result.failures {
                    let id = RecordID(recordType: failure.recordType, recordName: failure.recordName)
                    guard let item = batch.item(sending: id) else { continue }
                    let key = item.change.key
                    if failure.error != .batchRequestFailed { conflicts[key, default: 0] += 1 }
                    // A record that conflicts again after every resolution waits for a later sync.
                    if try !resolve(failure.error, record: id, item: item) || conflicts[key, default: 0] > SyncEngine.attempts {
                        skip.insert(key)
                    }
                }
                try writeStaged()
                // Sent again as the queue now holds them: resolving may have merged and queued them again, or confirmed them.
                let pending = try store.pending()
                let again = try batch.items.compactMap { item in
                    skip.contains(item.change.key) ? nil : try pending.change(for: item.change.key)
                }
                waiting.insert(contentsOf: again, at: 0)
            }
            try state.save(to: store)
        }
    }

    // MARK: Zone

    /// Starts over when the zone was replaced, or the engine state was damaged: sync metadata is
    /// dropped and all local data is sent again; local data is never deleted for it. A missing zone
    /// is never created here (`.zoneNotFound`): only `sync enable` creates a backend. A zone whose
    /// identity changed under its id is refused before anything is read or written.
    private func checkZone() throws {
        let zone = try retrying { try backend.zone() }
        let identity = EngineState.ZoneIdentity(format: zone.format, created: zone.created, keyCheckValue: zone.keyCheckValue)
        if state.zoneID == zone.zoneID, state.damage == nil, let known = state.zoneIdentity, known != identity {
            throw BackendError.zoneIdentityChanged(Self.describe(from: known, to: identity))
        }
        guard state.zoneID != zone.zoneID || state.zoneIdentity == nil || state.damage != nil else { return }
        if state.zoneID != zone.zoneID || state.damage != nil {
            if state.zoneID != nil || state.damage != nil { try startOver() }
            state.token = nil
            state.fullFetch = nil
        }
        state.zoneID = zone.zoneID
        state.zoneIdentity = identity
        try state.save(to: store)
    }

    private static func describe(from known: EngineState.ZoneIdentity, to found: EngineState.ZoneIdentity) -> String {
        var changes: [String] = []
        if known.format != found.format { changes.append("format \(known.format) -> \(found.format)") }
        if known.created != found.created { changes.append("created \(known.created) -> \(found.created)") }
        if known.keyCheckValue != found.keyCheckValue {
            changes.append(
                found.keyCheckValue == nil ? "no longer encrypted" : known.keyCheckValue == nil ? "now encrypted" : "another key")
        }
        return changes.joined(separator: ", ")
    }

    /// The backend's files were replaced under the engine with others of the same zone (a git
    /// remote's rewritten history): the replaced-zone path, then the zone is checked again.
    package func startOverOnReplacedBackend() throws {
        try startOver()
        prepared = false
    }

    /// Lets go of the sync lock; the engine must not be used afterwards.
    public func close() {
        syncLock = nil
    }

    /// The replaced-zone path: forget the token and what the backend was known to hold, send everything.
    /// Also what a data directory that was given a new device id does.
    public func startOver() throws {
        for type in types.all { try type.forgetSynced(except: nil, engine: self) }
        state.token = nil
        state.fullFetch = .initial
        state.damage = nil
        state.quarantine = []
        try state.save(to: store)
    }

    // MARK: Quarantine

    /// Records what the backend skipped as malformed. A quarantined record still exists there, so
    /// it counts as live: a full fetch must not take it for a deletion.
    private func quarantine(_ items: [QuarantinedItem], in pass: inout FetchPass) {
        for item in items {
            guard let id = item.id else {
                record(EngineState.Quarantined(key: nil, location: item.location, reason: item.reason, since: now()))
                pass.skippedLocations.insert(item.location)
                continue
            }
            guard let key = types.key(of: id) else {
                noteUnknownType(id.recordType)
                continue
            }
            pass.noteLive(key)
            quarantine(key, at: item.location, item.reason)
        }
    }

    /// A record of a type this version does not sync: kept on the backend, fetched again by a version that does.
    private func noteUnknownType(_ recordType: String) {
        guard recordType != RecordMapping.tombstoneType, RecordType(rawValue: recordType) != nil else { return }
        state.unknownTypes.insert(recordType)
    }

    func quarantine(_ key: RecordKey, at location: String, _ reason: String) {
        record(EngineState.Quarantined(key: key, location: location, reason: reason, since: now()))
    }

    private func record(_ item: EngineState.Quarantined) {
        state.quarantine(item)
        report.quarantined.removeAll { item.key != nil ? $0.key == item.key : $0.location == item.location }
        report.quarantined.append(item)
    }

    /// Reads again every record quarantined in an earlier run (the token has moved past it): a good
    /// version is applied like a fetched one, a deleted one is let go (deletions travel as changes),
    /// and one still malformed stays quarantined.
    private func recheckQuarantine() throws {
        let waiting = state.quarantine.compactMap(\.key).filter { key in !report.quarantined.contains { $0.key == key } }
        var pass = FetchPass(fullFetch: nil)
        for key in waiting {
            do {
                if let record = try retrying({ try backend.fetchRecord(RecordID(recordType: key.type.rawValue, recordName: key.name)) }) {
                    try apply([.saved(record)], in: &pass)
                } else {
                    state.release(key)
                }
            } catch BackendError.corrupt(let path, let reason) {
                quarantine(key, at: path, reason)
            }
        }
        try writeStaged()
    }

    // MARK: Fetching

    /// What one fetch has seen so far.
    struct FetchPass {
        /// Set when every current record comes (tombstones last, as records are sorted by type).
        let fullFetch: EngineState.FullFetch?
        /// Records present on the backend, kept in a full fetch only: any other pull would hold a
        /// key of every record it fetched (the pull after a push of 1,000,000 may bring them all back).
        private(set) var live = Set<RecordKey>()
        /// Tombstones met in a full fetch, applied at its end to records not present.
        var tombstones: [RecordKey: EditHistory] = [:]
        /// Files the backend waits for (not replicated completely yet): what they hold is not known.
        var waiting: [ReplicationWait] = []
        /// Where the backend skipped something that is no record (a journal, a folder), this pass.
        var skippedLocations = Set<String>()

        mutating func noteLive(_ key: RecordKey) {
            if fullFetch != nil { live.insert(key) }
        }

        mutating func noteRemoved(_ key: RecordKey) {
            live.remove(key)
        }
    }

    private func startFullFetch(_ mode: EngineState.FullFetch) throws {
        state.token = nil
        state.fullFetch = mode
        try state.save(to: store)
    }

    private func finishFullFetch(_ pass: FetchPass, _ mode: EngineState.FullFetch) throws {
        // A tombstone of a record that is present again (created anew after the deletion) no longer applies.
        var deletions = StepChanges()
        for (key, history) in pass.tombstones.sorted(by: { $0.key.name < $1.key.name }) where !pass.live.contains(key) {
            deletions.add(key, .deleted(name: key.name, history: history))
        }
        try deletions.apply(with: types, engine: self)
        // A record missing from a fetch that waits for files may only not have arrived yet. One that
        // is simply missing was deleted only where the backend alone decides what exists; anywhere
        // else it is sent again (only a tombstone proves a deletion).
        if mode == .expired && pass.waiting.isEmpty {
            let accounted = pass.live.union(pass.tombstones.keys)
            for type in types.all {
                if backend.absenceProvesDeletion {
                    try type.applyDeletionsMissing(from: accounted, engine: self)
                } else {
                    try type.forgetSynced(except: accounted, engine: self)
                }
            }
        }
        try writeStaged()
        state.fullFetch = nil
        try state.save(to: store)
    }

    /// Applies one page in order, in steps of `stepSize` changes. Each step is decided with the lock
    /// held (local state read, merges written); what it takes from the backend is then written into
    /// the handlers' own stage with the lock let go (`writeDecided`), and put in place with it held
    /// after at most `durableStepSize` changes (`writeStaged`, which first decides again what a
    /// command changed meanwhile). So a command waits for at most a step's decisions or one commit's
    /// renames (without the lock let go, it is handed over between steps to one waiting). A crash between steps applies the page again from its start (its token is saved
    /// after it), which changes nothing already applied. What a handler held back (new clips: one
    /// pass over the history a page, not a step) is applied at the page's end (`applyHeld`).
    private func apply(_ changes: [Change], in pass: inout FetchPass) throws {
        var start = changes.startIndex
        var uncommitted = 0
        while start < changes.endIndex {
            let end = min(start + SyncEngine.stepSize, changes.endIndex)
            try applyStep(changes[start..<end], in: &pass)
            uncommitted += end - start
            start = end
            let commits = uncommitted >= SyncEngine.durableStepSize || start == changes.endIndex
            if types.all.contains(where: \.hasDecided) {
                try store.withLockReleased {
                    for type in types.all { try type.writeDecided(durably: commits, engine: self) }
                }
            } else if start < changes.endIndex {
                // Nothing to write outside the lock (clips are stored as they are applied): it is
                // handed over between steps to a command waiting for it.
                try store.letOthersIn()
            }
            if commits {
                try writeStaged()
                uncommitted = 0
            }
        }
        for type in types.all { try type.applyHeld(engine: self) }
        try writeStaged()
    }

    /// Applies changes in order (the handlers stage or write them). Each type's changes are handed to its handler
    /// together (clips are applied in bulk, so a large first sync costs one pass over the history
    /// per step rather than one per entry); a record met again first applies what came before.
    private func applyStep(_ changes: ArraySlice<Change>, in pass: inout FetchPass) throws {
        var step = StepChanges()
        func add(_ key: RecordKey, _ change: FetchedChange) throws {
            if step.contains(key) {
                try step.apply(with: types, engine: self)
                step = StepChanges()
            }
            step.add(key, change)
        }
        for change in changes {
            switch change {
            case .saved(let record) where record.recordType == RecordMapping.tombstoneType:
                guard let (key, history) = types.tombstone(from: record) else { continue }
                if pass.fullFetch != nil {
                    pass.tombstones[key] = history
                } else {
                    try add(key, .deleted(name: key.name, history: history))
                }
            case .saved(let record):
                guard let key = types.key(of: record.id), let type = types[key.type] else {
                    noteUnknownType(record.recordType)
                    continue
                }
                pass.noteLive(key)
                state.release(key)
                if let problem = type.problem(with: record) {
                    quarantine(key, at: backend.location(of: record.id), problem)
                    continue
                }
                try add(key, .saved(record))
            case .deleted(let recordType, let recordName):
                // Tombstones removed by a purge need nothing.
                guard let key = types.key(of: RecordID(recordType: recordType, recordName: recordName)) else { continue }
                pass.noteRemoved(key)
                state.release(key)
                try add(key, .deleted(name: key.name, history: nil))
            }
        }
        try step.apply(with: types, engine: self)
    }

    /// Fetched changes grouped by record type, each record at most once, in the order met.
    struct StepChanges {
        private var byType: [RecordType: [FetchedChange]] = [:]
        private var keys = Set<RecordKey>()

        func contains(_ key: RecordKey) -> Bool { keys.contains(key) }

        mutating func add(_ key: RecordKey, _ change: FetchedChange) {
            keys.insert(key)
            byType[key.type, default: []].append(change)
        }

        func apply(with types: SyncedTypeTable, engine: SyncEngine) throws {
            for type in types.all {
                if let changes = byType[type.recordType] { try type.apply(changes, engine: engine) }
            }
        }
    }

    func pendingChange(_ key: RecordKey) throws -> PendingChange? {
        try store.pending().change(for: key)
    }

    func confirmPending(_ key: RecordKey) throws {
        if let change = try pendingChange(key) { try store.pending().confirm([change]) }
    }

    // MARK: Sending

    /// What one queued change sends: its records to save and to delete.
    struct Outgoing {
        let change: PendingChange
        var saves: [BackendRecord] = []
        var deletes: [RecordDelete] = []

        var recordIDs: [RecordID] {
            saves.map(\.id) + deletes.map { RecordID(recordType: $0.recordType, recordName: $0.recordName) }
        }
    }

    struct Batch {
        var items: [Outgoing] = []
        /// Queued changes with nothing left to send (item gone or now local-only).
        var obsolete: [PendingChange] = []
        /// How many of the changes offered it took: sent, obsolete, or passed over in this run.
        var consumed = 0

        var saves: [RecordSave] { items.flatMap { $0.saves.map(RecordSave.init(record:)) } }
        var deletes: [RecordDelete] { items.flatMap(\.deletes) }
        var recordCount: Int { items.reduce(0) { $0 + $1.saves.count + $1.deletes.count } }

        func item(sending id: RecordID) -> Outgoing? {
            items.first { $0.recordIDs.contains(id) }
        }
    }

    /// The batch the first of `waiting` make, within `limit` records and the backend's request bytes.
    /// A change in `skip`, or of a type this version does not sync, is passed over and stays queued
    /// (for a later run, or a version that syncs the type). Before every `stepSize` changes the lock
    /// is handed over to a command waiting for it: what was read before stays as valid as across a
    /// backend call (a change edited meanwhile is sent as read and stays queued).
    private func buildBatch(_ waiting: ArraySlice<PendingChange>, limit: Int, skipping skip: Set<RecordKey>) throws -> Batch {
        var batch = Batch()
        var bytes = 0
        let candidates = waiting.filter { !skip.contains($0.key) }
        var senders: [RecordType: (PendingChange) throws -> Outgoing?] = [:]
        for type in types.all {
            let ofType = candidates.filter { $0.key.type == type.recordType }
            if !ofType.isEmpty { senders[type.recordType] = try type.sender(for: ofType, engine: self) }
        }
        for (taken, change) in waiting.enumerated() {
            if batch.recordCount >= limit { break }
            if taken % SyncEngine.stepSize == 0 { try store.letOthersIn(beforeHandingOver: writeStaged) }
            guard !skip.contains(change.key), let sender = senders[change.key.type] else {
                batch.consumed += 1
                continue
            }
            guard let outgoing = try sender(change) else {
                batch.obsolete.append(change)
                batch.consumed += 1
                continue
            }
            let records = outgoing.saves.count + outgoing.deletes.count
            guard batch.recordCount + records <= limit || batch.items.isEmpty else { break }
            let size = outgoing.saves.reduce(0) { $0 + SyncEngine.estimatedSize($1) }
            if bytes + size > backend.limits.maxRequestBytes, !batch.items.isEmpty { break }
            bytes += size
            batch.items.append(outgoing)
            batch.consumed += 1
        }
        return batch
    }

    private static func estimatedSize(_ record: BackendRecord) -> Int {
        record.fields.values.reduce(512) { total, field in
            switch field {
            case .string(let s): return total + s.utf8.count * 6 / 5 + 32
            case .stringList(let list): return list.reduce(total + 32) { $0 + $1.utf8.count + 8 }
            default: return total + 64
            }
        }
    }

    /// A deletion: the record goes and, unless the change is `hard`, a tombstone records
    /// which edits the deleter had seen (replacing any tombstone left by an earlier deletion).
    func outgoingDeletion(_ change: PendingChange, ifTag: String?, history: EditHistory) -> Outgoing {
        var outgoing = Outgoing(change: change)
        if !change.hard {
            let known = knownTombstones[change.key]
            outgoing.saves.append(
                RecordMapping.tombstone(
                    for: change.key, history: history.union(known?.history ?? EditHistory()),
                    tag: known?.tag))
        }
        outgoing.deletes.append(RecordDelete(recordType: change.key.type.rawValue, recordName: change.key.name, ifTag: ifTag))
        return outgoing
    }

    /// Records what the backend now holds, and marks the changes sent, in steps with the lock handed
    /// over between them: a step takes `stepSize` items at a time while no command waits for the
    /// lock, up to the whole batch (up to `durableStepSize` while they have files to put in place),
    /// then makes them durable together (an `fdatasync` of each log they went to) and confirms them,
    /// so that a waiter waits for at most `stepSize` items and one commit, however large the batch;
    /// while nobody waits, a batch costs one commit, not one every `durableStepSize`. A crash
    /// between steps leaves the rest pending, to be matched with their own versions by the next
    /// fetch, as for a run that did not hear back; so does an error here: only once this returns is
    /// the backend told the batch was accepted (`SyncBackend.accepted`), and a fetch then no longer
    /// brings it back.
    private func accept(_ result: ModifyResult, for batch: Batch) throws {
        let saved = Dictionary(result.saved.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        var start = batch.items.startIndex
        while start < batch.items.endIndex {
            if start > batch.items.startIndex { try store.letOthersIn() }
            var end = start
            repeat {
                let part = batch.items[end..<min(end + SyncEngine.stepSize, batch.items.endIndex)]
                for type in types.all {
                    let items = part.filter { $0.change.key.type == type.recordType }
                    if !items.isEmpty { try type.accept(items, saved: saved, engine: self) }
                }
                end = part.endIndex
            } while try end < batch.items.endIndex && !store.othersWait()
                && (end - start < SyncEngine.durableStepSize || !types.all.contains(where: \.hasAcceptedFiles))
            try finishAccept(batch.items[start..<end])
            for type in types.all { try type.tidyAccepted(engine: self) }
            start = end
        }
    }

    /// Makes the accepted `items` durable, then confirms them: they leave the queue.
    private func finishAccept(_ items: ArraySlice<Outgoing>) throws {
        for type in types.all { try type.finishAccept(engine: self) }
        for item in items {
            state.failures[item.change.key] = nil
            knownTombstones[item.change.key] = nil
        }
        try store.pending().confirm(items.map(\.change))
    }

    /// Handles one per-record error; returns false when the item cannot be sent in this run.
    private func resolve(_ error: RecordError, record id: RecordID, item: Outgoing) throws -> Bool {
        let key = item.change.key
        switch error {
        case .batchRequestFailed:
            return true
        case .serverRecordChanged(let server):
            report.conflicts += 1
            if let (_, history) = types.tombstone(from: server) {
                // An earlier deletion left its tombstone: replace it.
                knownTombstones[key] = (server.recordChangeTag, history)
                return true
            }
            // Resolved exactly as if the server's version had been fetched.
            if try applyServerVersion(server) { return true }
            if let tag = server.recordChangeTag, try types[key.type]?.replaceUnreadable(key.name, tag: tag, engine: self) == true {
                return true
            }
            recordFailure(key, "the backend holds a version of \(id) that cannot be read", permanent: true)
            return false
        case .unknownItem:
            if id.recordType == RecordMapping.tombstoneType {
                knownTombstones[key] = nil
                return true
            }
            return try types[key.type]?.wasRemoved(key.name, engine: self) ?? false
        case .limitExceeded:
            recordFailure(key, "record larger than the backend's 1 MiB limit", permanent: true)
            return false
        case .invalid(let reason):
            recordFailure(key, "rejected by the backend: \(reason)", permanent: true)
            return false
        }
    }

    private func applyServerVersion(_ server: BackendRecord) throws -> Bool {
        guard let type = types.handler(for: server.recordType) else { return false }
        return try type.applyServerVersion(server, engine: self)
    }

    /// An item is shown as failed only while its change waits: one settled any other way (a conflict
    /// resolved it, it became obsolete, a run against another zone failed it) leaves the list.
    private func forgetSettledFailures() throws {
        guard !state.failures.isEmpty else { return }
        let waiting = try store.pending().keys()
        state.failures = state.failures.filter { waiting.contains($0.key) }
    }

    private func recordFailure(_ key: RecordKey, _ error: String, permanent: Bool) {
        var failure = state.failures[key] ?? EngineState.Failure(attempts: 0, error: error)
        failure.attempts = permanent ? max(failure.attempts + 1, EngineState.failureThreshold) : failure.attempts + 1
        failure.error = error
        state.failures[key] = failure
        report.failed[key] = error
    }

    // MARK: Tombstones

    /// How long tombstones stay: a device offline longer than this, whose last sync was
    /// killed after its batch committed, can no longer tell what a deletion had seen.
    public static let tombstoneLifetime: Milliseconds = 90 * 86_400_000

    /// Deletes tombstones written more than `age` ago; returns how many. Reads every
    /// record (as compaction does), so it runs with `sync compact`, not every sync.
    public static func purgeTombstones(
        in backend: SyncBackend, olderThan age: Milliseconds, now: Milliseconds, device: String
    ) throws -> Int {
        var expired: [RecordDelete] = []
        var token: ChangeToken?
        var moreComing = true
        while moreComing {
            let page = try backend.fetchChanges(since: token, limit: pageSize)
            for case .saved(let record) in page.changes where record.recordType == RecordMapping.tombstoneType {
                guard let written = record.modified?.timestamp, written < now - age else { continue }
                expired.append(RecordDelete(recordType: record.recordType, recordName: record.recordName, ifTag: record.recordChangeTag))
            }
            token = page.token
            moreComing = page.moreComing
        }
        var purged = 0
        var start = 0
        while start < expired.count {
            var batch = Array(expired[start..<min(start + backend.limits.maxRecordsPerRequest, expired.count)])
            start += batch.count
            // A tombstone replaced meanwhile (a new deletion of a record created again) stays.
            for _ in 0..<2 {
                let result = try backend.modify(saves: [], deletes: batch, device: device)
                if result.failures.isEmpty {
                    purged += result.deleted.count
                    break
                }
                let changed = Set(result.failures.filter { $0.error != .batchRequestFailed }.map(\.recordName))
                batch.removeAll { changed.contains($0.recordName) }
            }
        }
        try backend.finishWrites()
        return purged
    }

    // MARK: Retries

    /// Retries transient backend errors (lock busy, I/O) with exponential backoff and jitter.
    func retrying<T>(_ body: () throws -> T) throws -> T {
        var delay = 0.05
        for attempt in 1...SyncEngine.attempts {
            do {
                return try body()
            } catch let error as BackendError where error.isTransient && attempt < SyncEngine.attempts {
                let pause = useconds_t((delay + Double.random(in: 0...delay)) * 1_000_000)
                try store.withLockReleased { usleep(pause) }
                delay *= 2
            }
        }
        throw BackendError.io("unreachable")
    }
}

extension BackendError {
    /// Worth retrying within a sync: the backend is busy or unreachable, or an I/O error that may be a
    /// glitch. Whether the sync then ends with exit 75 is `passesWithTime`'s to say.
    package var isTransient: Bool {
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

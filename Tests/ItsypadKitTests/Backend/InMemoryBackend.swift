import ItsypadModel
import ItsypadSupport
import Synchronization

@testable import ItsypadBackend

/// A `SyncBackend` held in memory, with CloudKit's semantics: one zone, change tags that are the
/// seq of the change that wrote them, all-or-nothing batches, tokens that stay valid per page,
/// compaction that expires older tokens, and assets stored under their SHA-256.
///
/// For tests: it makes engine scenarios fast, and `injectFault` makes it unreachable or locked
/// on demand. Every call is serialized by one mutex, so it can be shared between threads.
public final class InMemoryBackend: SyncBackend {
    private let now: @Sendable () -> Int64
    public let limits: BackendLimits
    private let storage = Mutex(Storage())
    private let faults = Mutex<[Fault]>([])

    /// - Parameters:
    ///   - now: Current time in milliseconds since 1970, for zone creation, record stamps and asset ages.
    ///   - limits: What it accepts (smaller ones make the engine's batching easy to test).
    public init(now: @escaping @Sendable () -> Int64 = { Time.now() }, limits: BackendLimits = .cloudKit) {
        self.now = now
        self.limits = limits
    }

    // MARK: Test hooks

    /// Makes the next `calls` calls (any method) throw `error` before doing anything, as a
    /// backend behind an unmounted share (`.unavailable`) or a busy lock (`.locked`) would.
    /// Faults queue up: the first one is used up before the next applies.
    public func injectFault(_ error: BackendError, calls: Int = 1) {
        guard calls > 0 else { return }
        faults.withLock { $0.append(Fault(error: error, remaining: calls)) }
    }

    /// Deletes the zone with everything in it, as wiping the backend would. Seqs keep counting,
    /// so a re-created zone never repeats a change tag.
    public func deleteZone() {
        storage.withLock { storage in
            storage = Storage(latestSeq: storage.latestSeq)
        }
    }

    private func throwInjectedFault() throws {
        let error: BackendError? = faults.withLock { faults in
            guard !faults.isEmpty else { return nil }
            faults[0].remaining -= 1
            let error = faults[0].error
            if faults[0].remaining <= 0 { faults.removeFirst() }
            return error
        }
        if let error { throw error }
    }

    // MARK: Zone

    public func createZoneIfNeeded() throws -> ZoneInfo {
        try throwInjectedFault()
        let time = now()
        return storage.withLock { storage in
            if let zone = storage.zone { return zone }
            let zone = ZoneInfo(zoneID: Identifier.make().uppercased(), format: ZoneDocument.plainFormat, created: time)
            storage.zone = zone
            return zone
        }
    }

    public func zone() throws -> ZoneInfo {
        try throwInjectedFault()
        return try storage.withLock { try $0.existingZone() }
    }

    // MARK: Fetching

    public func fetchChanges(since token: ChangeToken?, limit: Int) throws -> ChangesPage {
        try throwInjectedFault()
        return try storage.withLock { storage in
            let zone = try storage.existingZone()
            let limit = max(1, limit)
            guard let token else { return storage.fullFetchPage(zoneID: zone.zoneID, continuing: nil, limit: limit) }
            let position = try InMemoryToken(decoding: token, zoneID: zone.zoneID)
            guard position.seq >= storage.compactedThrough, position.seq <= storage.latestSeq else {
                // Older than the compaction point, or ahead of this backend (a token from a newer copy).
                throw BackendError.tokenExpired
            }
            if position.fullFetchCursor != nil {
                return storage.fullFetchPage(zoneID: zone.zoneID, continuing: position, limit: limit)
            }
            return storage.incrementalPage(after: position, limit: limit)
        }
    }

    public func fetchRecord(_ id: RecordID) throws -> BackendRecord? {
        try throwInjectedFault()
        return try storage.withLock { storage in
            _ = try storage.existingZone()
            return storage.records[id]
        }
    }

    public func location(of id: RecordID) -> String { "record \(id) (in memory)" }

    public func sealedByteCount(of _: [String: FieldValue]) throws -> Int? { nil }
    /// A model of CloudKit's server: what it no longer holds was deleted.
    public var absenceProvesDeletion: Bool { true }

    // MARK: Writing

    public func modify(saves: [RecordSave], deletes: [RecordDelete], device: String) throws -> ModifyResult {
        try throwInjectedFault()
        try limits.checkRequest(saves: saves, deletes: deletes)
        let time = now()
        return try storage.withLock { storage in
            _ = try storage.existingZone()
            var batch = Batch(firstSeq: storage.latestSeq + 1, device: device, time: time, maxRecordBytes: limits.maxRecordBytes)
            for save in saves { batch.plan(save.record, in: storage) }
            for delete in deletes { batch.plan(delete, in: storage) }
            guard !batch.hasFailures else { return batch.failedResult }
            storage.commit(batch)
            return ModifyResult(saved: batch.saved, deleted: batch.deleted, failures: [])
        }
    }

    // MARK: Assets

    public func putAsset(_ bytes: [UInt8]) throws -> AssetReference {
        try throwInjectedFault()
        guard bytes.count <= limits.maxAssetBytes else { throw BackendError.limitExceeded }
        let reference = AssetReference(fileChecksum: SHA256.hexDigest(of: bytes), size: bytes.count)
        let time = now()
        try storage.withLock { storage in
            _ = try storage.existingZone()
            // Storing it again refreshes its age, so compaction does not take it before the record referencing it is saved.
            storage.assets[reference.fileChecksum] = StoredAsset(bytes: bytes, stored: time)
        }
        return reference
    }

    public func readAsset(_ reference: AssetReference) throws -> [UInt8] {
        try throwInjectedFault()
        let asset = try storage.withLock { storage in
            _ = try storage.existingZone()
            return storage.assets[reference.fileChecksum]
        }
        guard let asset else { throw BackendError.assetNotFound(reference.fileChecksum) }
        // Content is stored under its own checksum, so only the size in the reference can be wrong.
        guard asset.bytes.count == reference.size else {
            throw BackendError.corrupt(
                path: "asset \(reference.fileChecksum)", reason: "expected \(reference.size) bytes, found \(asset.bytes.count)")
        }
        return asset.bytes
    }

    // MARK: Compaction

    public func compact() throws -> CompactionReport {
        try throwInjectedFault()
        let time = now()
        return try storage.withLock { storage in
            _ = try storage.existingZone()
            return storage.compact(now: time)
        }
    }
}

/// An error `InMemoryBackend` throws for a number of calls.
private struct Fault {
    let error: BackendError
    var remaining: Int
}

private struct StoredAsset {
    let bytes: [UInt8]
    /// When it was last stored, for compaction's age check.
    let stored: Int64
}

/// One committed change, as the directory backend's journal keeps it.
private struct LoggedChange {
    let seq: Int64
    let change: Change
    /// Encoded size of the saved record (0 for a delete): what compaction reports as removed.
    let bytes: Int
}

/// Everything an `InMemoryBackend` holds; only touched under its mutex.
private struct Storage {
    var zone: ZoneInfo?
    /// Seq of the last committed change; never reused, even across zones.
    var latestSeq: Int64 = 0
    /// Tokens before this seq are expired.
    var compactedThrough: Int64 = 0
    var records: [RecordID: BackendRecord] = [:]
    /// Changes after `compactedThrough`, in commit order.
    var log: [LoggedChange] = []
    var assets: [String: StoredAsset] = [:]

    /// Unreferenced assets younger than this are kept: another device may be between `putAsset`
    /// and the `modify` that references it.
    static let abandonedAssetAge: Int64 = 60 * 60 * 1000

    func existingZone() throws -> ZoneInfo {
        guard let zone else { throw BackendError.zoneNotFound }
        return zone
    }

    /// Log changes after the token's seq; the token of the last one returned resumes after it.
    func incrementalPage(after position: InMemoryToken, limit: Int) -> ChangesPage {
        let start = log.firstIndex { $0.seq > position.seq } ?? log.endIndex
        let page = log[start...].prefix(limit)
        guard let last = page.last else {
            return ChangesPage(changes: [], token: position.token, moreComing: false)
        }
        let next = InMemoryToken(zoneID: position.zoneID, seq: last.seq)
        return ChangesPage(changes: page.map(\.change), token: next.token, moreComing: start + page.count < log.count)
    }

    /// Every current record sorted by ID, after the token's cursor. The final token is the seq the
    /// full fetch started at, so changes made while paging come with the next incremental fetch.
    func fullFetchPage(zoneID: String, continuing position: InMemoryToken?, limit: Int) -> ChangesPage {
        let remaining = records.keys.filter { id in position?.fullFetchCursor.map { id > $0 } ?? true }.sorted()
        let pageIDs = remaining.prefix(limit)
        let moreComing = remaining.count > limit
        let next = InMemoryToken(zoneID: zoneID, seq: position?.seq ?? latestSeq, fullFetchCursor: moreComing ? pageIDs.last : nil)
        return ChangesPage(changes: pageIDs.compactMap { records[$0].map(Change.saved) }, token: next.token, moreComing: moreComing)
    }

    mutating func commit(_ batch: Batch) {
        for change in batch.changes {
            switch change.change {
            case .saved(let record): records[record.id] = record
            case .deleted(let recordType, let recordName): records[RecordID(recordType: recordType, recordName: recordName)] = nil
            }
            latestSeq = change.seq
        }
        log += batch.changes
    }

    /// Drops the log (the records stay) and unreferenced assets older than an hour.
    mutating func compact(now: Int64) -> CompactionReport {
        let removedBytes = log.reduce(0) { $0 + $1.bytes }
        if !log.isEmpty {
            compactedThrough = latestSeq
        }
        let segmentsRemoved = log.isEmpty ? 0 : 1
        log = []
        var referenced = Set<String>()
        for record in records.values {
            for case .asset(let reference) in record.fields.values {
                referenced.insert(reference.fileChecksum)
            }
        }
        let abandoned = assets.filter { !referenced.contains($0.key) && now - $0.value.stored > Self.abandonedAssetAge }.keys
        for checksum in abandoned {
            assets[checksum] = nil
        }
        return CompactionReport(
            compactedThrough: compactedThrough, segmentsRemoved: segmentsRemoved, journalBytesRemoved: removedBytes,
            assetsRemoved: abandoned.count, temporaryFilesRemoved: 0)
    }
}

/// One `modify` call checked against the records (ifServerRecordUnchanged), before anything is committed.
private struct Batch {
    let firstSeq: Int64
    let device: String
    let time: Int64
    let maxRecordBytes: Int
    private(set) var changes: [LoggedChange] = []
    private(set) var saved: [BackendRecord] = []
    private(set) var deleted: [RecordID] = []
    /// Every save and delete in request order, with its error if it failed.
    private var outcomes: [(id: RecordID, error: RecordError?)] = []
    private var seen = Set<RecordID>()

    init(firstSeq: Int64, device: String, time: Int64, maxRecordBytes: Int) {
        self.firstSeq = firstSeq
        self.device = device
        self.time = time
        self.maxRecordBytes = maxRecordBytes
    }

    private var nextSeq: Int64 { firstSeq + Int64(changes.count) }

    var hasFailures: Bool { outcomes.contains { $0.error != nil } }

    /// Atomic zone: one failure fails the batch; the others report `.batchRequestFailed`.
    var failedResult: ModifyResult {
        let failures = outcomes.map { outcome in
            RecordFailure(recordType: outcome.id.recordType, recordName: outcome.id.recordName, error: outcome.error ?? .batchRequestFailed)
        }
        return ModifyResult(saved: [], deleted: [], failures: failures)
    }

    /// CloudKit's ifServerRecordUnchanged rule for a save carrying `sentTag`.
    static func conflict(sentTag: String?, current: BackendRecord?) -> RecordError? {
        switch (sentTag, current) {
        case (nil, nil): nil
        case (nil, let current?): .serverRecordChanged(server: current)
        case (_?, nil): .unknownItem
        case (let sentTag?, let current?): sentTag == current.recordChangeTag ? nil : .serverRecordChanged(server: current)
        }
    }

    mutating func plan(_ record: BackendRecord, in storage: Storage) {
        let id = record.id
        let current = storage.records[id]
        if let error = problem(with: record, in: storage) ?? Self.conflict(sentTag: record.recordChangeTag, current: current) {
            outcomes.append((id, error))
            return
        }
        var stored = record
        stored.recordChangeTag = String(nextSeq)
        stored.created = current?.created ?? Stamp(timestamp: time, deviceID: device)
        stored.modified = Stamp(timestamp: time, deviceID: device)
        let bytes = (try? JSONCoding.encode(stored).count) ?? Int.max
        guard bytes <= maxRecordBytes else {
            outcomes.append((id, .limitExceeded))
            return
        }
        changes.append(LoggedChange(seq: nextSeq, change: .saved(stored), bytes: bytes))
        saved.append(stored)
        outcomes.append((id, nil))
    }

    mutating func plan(_ delete: RecordDelete, in storage: Storage) {
        let id = RecordID(recordType: delete.recordType, recordName: delete.recordName)
        if let problem = NameRules.problem(with: id) {
            outcomes.append((id, .invalid(problem)))
            return
        }
        guard seen.insert(id).inserted else {
            outcomes.append((id, .invalid("\(id) appears more than once in the request")))
            return
        }
        let current = storage.records[id]
        if let current, let ifTag = delete.ifTag, ifTag != current.recordChangeTag {
            outcomes.append((id, .serverRecordChanged(server: current)))
            return
        }
        outcomes.append((id, nil))
        deleted.append(id)
        // A record that is already gone needs no change: deleting is idempotent.
        if current != nil {
            changes.append(LoggedChange(seq: nextSeq, change: .deleted(recordType: id.recordType, recordName: id.recordName), bytes: 0))
        }
    }

    /// A problem with the record itself (not its tag), or nil.
    private mutating func problem(with record: BackendRecord, in storage: Storage) -> RecordError? {
        if let problem = NameRules.problem(with: record) {
            return .invalid(problem)
        }
        guard seen.insert(record.id).inserted else {
            return .invalid("\(record.id) appears more than once in the request")
        }
        for (name, value) in record.fields.sorted(by: { $0.key < $1.key }) {
            guard case .asset(let reference) = value else { continue }
            guard storage.assets[reference.fileChecksum]?.bytes.count == reference.size else {
                return .invalid("field '\(name)' references asset \(reference.fileChecksum), which has not been uploaded")
            }
        }
        return nil
    }
}

import Synchronization
import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadSupport
@testable import ItsypadSync

/// One `SyncBackend` implementation, as the conformance suite sees it. Every conformance test runs
/// once per entry of `all`: a new implementation joins the suite by adding itself there.
///
/// (The replicated-folder tests have their own `BackendFactory`, which opens a backend in a folder.)
struct SyncBackendFactory: Sendable, CustomTestStringConvertible {
    let name: String
    /// Whether the backend encrypts what it stores (`EncryptedReplicatedBackend`): an asset's reference then
    /// names its sealed bytes, which differ on every upload, and sealing takes room in a record.
    var seals = false
    /// The device every change is stamped with, whatever device a request names; nil when the
    /// request's device is. In a backend directory every file has one writer, the device the backend was
    /// opened for, so `modify`'s device is not used.
    var writesAs: String? = nil
    /// When a change token stops working (the backend then throws `.tokenExpired`).
    var tokensExpire = TokenExpiry.atCompaction
    /// The longest record name it stores; longer ones are refused per record. A backend
    /// directory's record files name the writing device too, and must still fit a file name.
    var maxRecordNameLength = NameRules.maxRecordNameLength
    /// Whether a fetch reports every change of a record, or the record once per page as it is now
    /// (a backend directory: each change comes with the record's current versions, so one changed twice comes once).
    var reportsEachChange = true
    /// Whether a page ends only between batches (a backend directory: a token is a position between journal
    /// lines), so it holds whole batches, as many as reach the limit.
    var pagesEndBetweenBatches = false
    /// Whether a full fetch reads the journal from its start, as an incremental fetch from nothing
    /// would (a backend directory, for a device whose journal was not compacted): it may report deletions, and
    /// changes made while paging through it come in its later pages rather than in the next fetch.
    var fullFetchReadsJournal = false
    /// Whether deleting a record absent here writes a deletion that fetches report (a backend directory: the
    /// record may have versions in copies that have not replicated here yet).
    var writesDeletionsOfAbsentRecords = false
    /// A fresh, empty backend reading `clock`; nothing else shares its storage.
    let make: @Sendable (_ clock: TestClock) throws -> BackendFixture

    var testDescription: String { name }

    static let inMemory = SyncBackendFactory(name: "in-memory") { clock in
        let backend = InMemoryBackend(now: { clock.now })
        return BackendFixture(backend: backend, clock: clock, deleteZone: backend.deleteZone, remove: {})
    }

    /// A backend directory as the engine reaches it (`BackendOpener`): a `FolderBackend`
    /// behind `ReplicatedSyncBackend`, sealed by `EncryptedReplicatedBackend` when `sealed`. Every
    /// `finishSync` compacts the device's journal, so that the compaction tests compact however
    /// little was written.
    static func directory(name: String, sealed: Bool) -> SyncBackendFactory {
        SyncBackendFactory(
            name: name, seals: sealed, writesAs: directoryDevice,
            tokensExpire: .afterRetention(FolderBackend.tombstoneRetention),
            maxRecordNameLength: NameRules.maxFolderRecordNameLength, reportsEachChange: false, pagesEndBetweenBatches: true,
            fullFetchReadsJournal: true, writesDeletionsOfAbsentRecords: true
        ) { clock in
            let temporary = try TemporaryBackend(clock: { clock.now }, createZone: false)
            let cipher = sealed ? try RecordCipher(masterKey: try SecretBytes.random(count: RecordCipher.masterKeyByteCount)) : nil
            let inner = FolderBackend(
                path: temporary.path, deviceID: directoryDevice, instance: "instance-a", deviceName: "a",
                sealer: cipher.map(VersionSealer.init), lockTimeout: 5, now: { clock.now }, segmentSizeLimit: 4 * 1024 * 1024,
                compactionThreshold: 0)
            let backend = ReplicatedSyncBackend(cipher.map { EncryptedReplicatedBackend(inner: inner, cipher: $0) } ?? inner)
            return BackendFixture(backend: backend, clock: clock, deleteZone: temporary.wipe, remove: temporary.remove)
        }
    }

    static let directoryDevice = "devA"
    static let plainDirectory = directory(name: "directory", sealed: false)
    static let encryptedDirectory = directory(name: "encrypted directory", sealed: true)

    static let all = [inMemory, plainDirectory, encryptedDirectory]

    /// The device a change requested as `device` is stamped with.
    func stampedDevice(_ device: String) -> String { writesAs ?? device }

    /// The records a full fetch's changes leave a device with, checking that they hold no deletion
    /// and each record once unless the backend reads its journal for a full fetch.
    func records(ofFullFetch changes: [Change]) -> [BackendRecord] {
        if !fullFetchReadsJournal {
            #expect(changes.allSatisfy { $0.savedRecord != nil })
            #expect(Set(changes.map(\.recordID)).count == changes.count)
        }
        return changes.applied
    }

    /// The records a full fetch returns now (see `records(ofFullFetch:)`).
    func fullFetch(_ backend: any SyncBackend, limit: Int = 1000) throws -> [BackendRecord] {
        records(ofFullFetch: try backend.fetchAll(since: nil, limit: limit).changes)
    }

    /// Makes `fixture`'s tokens expire as the backend expires them, after a sync that read as far
    /// as `token`: by compacting, or by letting the retention pass after compacting.
    func expireTokens(_ fixture: BackendFixture, acknowledging token: ChangeToken) throws {
        try fixture.compact(acknowledging: token)
        if case .afterRetention(let retention) = tokensExpire {
            fixture.clock.advance(by: retention + 1)
        }
    }

    /// The longest text a record field holds within the record limit, with room for the rest of the record.
    func largestFittingText(_ limits: BackendLimits) -> Int {
        let inTheClear = limits.maxRecordBytes - 400
        // Sealed: base64 of the encrypted JSON.
        return seals ? inTheClear / 4 * 3 - 100 : inTheClear
    }

    /// A fresh backend at `testNow`, its zone created unless told otherwise. Call `remove()` (in a `defer`) when done.
    func make(createZone: Bool = true) throws -> BackendFixture {
        let fixture = try make(TestClock())
        if createZone {
            _ = try fixture.backend.createZoneIfNeeded()
        }
        return fixture
    }
}

/// When a backend's change tokens expire.
enum TokenExpiry {
    /// `compact()` drops the journal before the latest change: every older token expires.
    case atCompaction
    /// A folder backend: a device compacts only its own journal, as it finishes a sync, and a reader behind
    /// its checkpoint reads its record files instead, so compaction expires nothing. Every token
    /// expires once its device has not finished a sync for this many milliseconds, when tombstones
    /// it has not read may be gone.
    case afterRetention(Int64)
}

/// A backend under test, the clock it reads, and what only a test may do to it.
struct BackendFixture {
    let backend: any SyncBackend
    let clock: TestClock
    /// Deletes the zone and everything in it, as wiping the backend does; `createZoneIfNeeded()` then makes a new one.
    let deleteZone: () throws -> Void
    /// Frees whatever the backend stored outside the process.
    let remove: () -> Void

    /// Compacts as the engine does: a sync ends by acknowledging `token` (a backend directory compacts its
    /// journal then), and `sync compact` compacts.
    func compact(acknowledging token: ChangeToken) throws {
        try backend.finishSync(acknowledging: token)
        _ = try backend.compact()
    }
}

/// A clock tests move by hand; starts at `testNow`.
final class TestClock: Sendable {
    private let milliseconds = Mutex(testNow)

    var now: Int64 { milliseconds.withLock { $0 } }

    func advance(by delta: Int64) {
        milliseconds.withLock { $0 += delta }
    }
}

extension SyncBackend {
    /// Every page from `token` on, each as the backend returned it.
    func pages(since token: ChangeToken?, limit: Int) throws -> [ChangesPage] {
        var pages: [ChangesPage] = []
        var token = token
        repeat {
            let page = try fetchChanges(since: token, limit: limit)
            pages.append(page)
            token = page.token
        } while pages.last?.moreComing == true
        return pages
    }
}

extension [Change] {
    /// A full fetch's changes in a fixed order: the protocol does not say which order a full fetch uses.
    var sortedByID: [Change] { sorted { $0.recordID < $1.recordID } }

    /// The records left once the changes are applied in order (a later change wins), by ID.
    var applied: [BackendRecord] {
        var records: [RecordID: BackendRecord] = [:]
        for change in self {
            records[change.recordID] = change.savedRecord
        }
        return records.values.sorted { $0.id < $1.id }
    }
}

extension Change {
    var recordID: RecordID {
        switch self {
        case .saved(let record): record.id
        case .deleted(let recordType, let recordName): RecordID(recordType: recordType, recordName: recordName)
        }
    }
}

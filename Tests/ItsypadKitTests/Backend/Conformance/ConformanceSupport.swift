import Synchronization
import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

/// One `SyncBackend` implementation, as the conformance suite sees it. Every conformance test runs
/// once per entry of `all`: a new implementation joins the suite by adding itself there.
///
/// (The replicated-folder tests have their own `BackendFactory`, which opens a backend in a folder.)
struct SyncBackendFactory: Sendable, CustomTestStringConvertible {
    let name: String
    /// Whether the backend encrypts what it stores (`EncryptedBackend`): an asset's reference then
    /// names its sealed bytes, which differ on every upload, and sealing takes room in a record.
    var seals = false
    /// A fresh, empty backend reading `clock`; nothing else shares its storage.
    let make: @Sendable (_ clock: TestClock) throws -> BackendFixture

    var testDescription: String { name }

    static let directory = SyncBackendFactory(name: "directory") { clock in
        let temporary = try TemporaryBackend(clock: { clock.now }, createZone: false)
        return BackendFixture(backend: temporary.backend, clock: clock, deleteZone: temporary.wipe, remove: temporary.remove)
    }

    static let inMemory = SyncBackendFactory(name: "in-memory") { clock in
        let backend = InMemoryBackend(now: { clock.now })
        return BackendFixture(backend: backend, clock: clock, deleteZone: backend.deleteZone, remove: {})
    }

    /// A directory backend behind `EncryptedBackend`, with a fresh key.
    static let encryptedDirectory = SyncBackendFactory(name: "encrypted directory", seals: true) { clock in
        let temporary = try TemporaryBackend(clock: { clock.now }, createZone: false)
        let cipher = try RecordCipher(masterKey: try SecretBytes.random(count: RecordCipher.masterKeyByteCount))
        let inner = DirectoryBackend(path: temporary.path, lockTimeout: 5, now: { clock.now }, newZoneKeyCheckValue: cipher.keyCheckValue)
        return BackendFixture(
            backend: EncryptedBackend(inner: inner, cipher: cipher), clock: clock, deleteZone: temporary.wipe, remove: temporary.remove)
    }

    static let all = [directory, inMemory, encryptedDirectory]

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

/// A backend under test, the clock it reads, and what only a test may do to it.
struct BackendFixture {
    let backend: any SyncBackend
    let clock: TestClock
    /// Deletes the zone and everything in it, as wiping the backend does; `createZoneIfNeeded()` then makes a new one.
    let deleteZone: () throws -> Void
    /// Frees whatever the backend stored outside the process.
    let remove: () -> Void
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
}

extension Change {
    var recordID: RecordID {
        switch self {
        case .saved(let record): record.id
        case .deleted(let recordType, let recordName): RecordID(recordType: recordType, recordName: recordName)
        }
    }
}

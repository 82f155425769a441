import Synchronization
import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport
@testable import ItsypadSync

/// The engine sizes what it sends by the limits its backend states, not by CloudKit's.
@Suite("Sync: backend limits")
struct BackendLimitsSyncTests {
    @Test("the engine's batches keep within the backend's stated records per request")
    func batchesWithinStatedLimits() throws {
        let device = Device()
        for index in 0..<12 { #expect(device.inProcess(["tab", "new", "tab \(index)"]).0 == 0) }
        let limits = BackendLimits(
            maxRecordsPerRequest: 5, maxRequestBytes: 64 * 1024, maxRecordBytes: 16 * 1024, maxAssetBytes: 64 * 1024,
            maxInlineValueBytes: 8 * 1024)
        let backend = CountingBackend(InMemoryBackend(limits: limits))
        _ = try backend.createZoneIfNeeded()
        try SyncEngine(store: try DataStore(path: device.dataDir, lockTimeout: 1), backend: backend).sync()

        let batches = backend.batchSizes.withLock { $0 }
        #expect(batches.allSatisfy { $0 <= 5 }, "batches of \(batches)")
        #expect(batches.reduce(0, +) == 12)
        #expect(backend.refusals.withLock { $0 } == 0, "the engine never sent a batch the backend refused")
        #expect(try backend.fetchAll(since: nil).changes.filter { $0.recordID.recordType == "ScratchTab" }.count == 12)
    }

    @Test("one sync sends the whole queue, however many batches it takes")
    func wholeQueueInOneSync() throws {
        let device = Device()
        // 300 clips in batches of 5: 60 batches, past the 50 a sync once stopped at.
        let clips = (0..<300).map { index in
            JSONValue.object([
                ("id", .string(Identifier.make())), ("text", .string("clip \(index)")),
                ("timestamp", .string(Time.iso8601(1_767_400_000_000 + Int64(index)))),
            ])
        }
        let document = JSONValue.object([("format", .string("itsypad-export")), ("version", .integer(1)), ("clips", .array(clips))])
        #expect(device.inProcess(["import", "-"], stdin: document.serialized()).0 == 0)
        let limits = BackendLimits(
            maxRecordsPerRequest: 5, maxRequestBytes: 64 * 1024, maxRecordBytes: 16 * 1024, maxAssetBytes: 64 * 1024,
            maxInlineValueBytes: 8 * 1024)
        let backend = CountingBackend(InMemoryBackend(limits: limits))
        _ = try backend.createZoneIfNeeded()
        let store = try DataStore(path: device.dataDir, lockTimeout: 1)
        let engine = try SyncEngine(store: store, backend: backend)
        try engine.sync()

        #expect(engine.report.pushed == 300)
        #expect(try store.pending().changes().isEmpty)
        #expect(try backend.fetchAll(since: nil).changes.filter { $0.recordID.recordType == "ClipboardEntry" }.count == 300)
        #expect(backend.batchSizes.withLock { $0 }.allSatisfy { $0 <= 5 })
    }

    @Test("tab content that fits inline in the clear but not sealed travels as an asset to an encrypted backend")
    func sealedContentMeasured() throws {
        let device = Device()
        // About 1.07 MiB once sealed (base64 adds a third): over the record limit, under the inline limit in the clear.
        let content = String(repeating: "0123456789abcdef", count: 50_000)
        #expect(device.inProcess(["tab", "new", "--name", "big"], stdin: content).0 == 0)
        let cipher = try RecordCipher(masterKey: try SecretBytes.random(count: RecordCipher.masterKeyByteCount))
        let directory = TemporaryDirectory()
        let store = try DataStore(path: device.dataDir, lockTimeout: 1)
        let backend = try BackendOpener.open(directory.path + "/backend", for: store, cipher: cipher, lockTimeout: 1)
        _ = try backend.createZoneIfNeeded()
        try SyncEngine(store: store, backend: backend).sync()

        let records = try backend.fetchAll(since: nil).changes.compactMap { change -> BackendRecord? in
            if case .saved(let record) = change, record.recordType == "ScratchTab" { return record }
            return nil
        }
        let record = try #require(records.first)
        #expect(records.count == 1)
        #expect(record.fields["content"] == nil)
        guard case .asset(let reference)? = record.fields["contentAsset"] else {
            Issue.record("no content asset in \(record.fields.keys.sorted())")
            return
        }
        #expect(try backend.readAsset(reference) == Array(content.utf8))
    }
}

/// Counts the records of every `modify` call its base accepted, and the calls it refused.
private final class CountingBackend: SyncBackend, @unchecked Sendable {
    let base: SyncBackend
    let batchSizes = Mutex<[Int]>([])
    let refusals = Mutex(0)

    init(_ base: SyncBackend) { self.base = base }

    var limits: BackendLimits { base.limits }
    var absenceProvesDeletion: Bool { base.absenceProvesDeletion }
    func sealedByteCount(of fields: [String: FieldValue]) throws -> Int? { try base.sealedByteCount(of: fields) }
    func createZoneIfNeeded() throws -> ZoneInfo { try base.createZoneIfNeeded() }
    func zone() throws -> ZoneInfo { try base.zone() }
    func fetchChanges(since token: ChangeToken?, limit: Int) throws -> ChangesPage { try base.fetchChanges(since: token, limit: limit) }
    func modify(saves: [RecordSave], deletes: [RecordDelete], device: String) throws -> ModifyResult {
        do {
            let result = try base.modify(saves: saves, deletes: deletes, device: device)
            batchSizes.withLock { $0.append(saves.count + deletes.count) }
            return result
        } catch BackendError.limitExceeded {
            refusals.withLock { $0 += 1 }
            throw BackendError.limitExceeded
        }
    }
    func putAsset(_ bytes: [UInt8]) throws -> AssetReference { try base.putAsset(bytes) }
    func readAsset(_ reference: AssetReference) throws -> [UInt8] { try base.readAsset(reference) }
    func fetchRecord(_ id: RecordID) throws -> BackendRecord? { try base.fetchRecord(id) }
    func location(of id: RecordID) -> String { base.location(of: id) }
    func compact() throws -> CompactionReport { try base.compact() }
}

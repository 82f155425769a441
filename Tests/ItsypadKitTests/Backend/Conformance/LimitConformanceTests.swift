import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport
@testable import ItsypadSync

/// Every `SyncBackend` implementation honours the limits it states: what is over them is refused
/// with `limitExceeded` and commits nothing, what is at them is accepted.
@Suite("Conformance: stated limits")
struct LimitConformanceTests {
    /// One implementation, fresh and with its zone created; `remove` frees its storage.
    struct Subject: Sendable, CustomTestStringConvertible {
        let name: String
        let make: @Sendable () throws -> (backend: any SyncBackend, remove: () -> Void)

        var testDescription: String { name }

        /// The conformance suite's implementations, and an in-memory backend with limits far below CloudKit's.
        static let all: [Subject] =
            SyncBackendFactory.all.map { factory in
                Subject(name: factory.name) {
                    let fixture = try factory.make()
                    return (fixture.backend, fixture.remove)
                }
            } + [
                Subject(name: "in-memory, small limits") {
                    let backend = InMemoryBackend(limits: small)
                    _ = try backend.createZoneIfNeeded()
                    return (backend, {})
                }
            ]

        static let small = BackendLimits(
            maxRecordsPerRequest: 5, maxRequestBytes: 4096, maxRecordBytes: 2048, maxAssetBytes: 1000, maxInlineValueBytes: 1500)
    }

    @Test("a request of more records than stated is refused and commits nothing; one at the limit is accepted", arguments: Subject.all)
    func recordCount(_ subject: Subject) throws {
        let (backend, remove) = try subject.make()
        defer { remove() }
        let limit = backend.limits.maxRecordsPerRequest
        let saves = (0...limit).map { RecordSave(record: tab("r\($0)")) }
        let before = try backend.currentToken()
        #expect(throws: BackendError.limitExceeded) { try backend.modify(saves: saves, deletes: [], device: "devA") }
        #expect(throws: BackendError.limitExceeded) {
            try backend.modify(
                saves: [saves[0]], deletes: (0..<limit).map { RecordDelete(recordType: "ScratchTab", recordName: "d\($0)") }, device: "devA"
            )
        }
        #expect(try backend.fetchChanges(since: before, limit: 10).changes == [])
        #expect(try backend.modify(saves: Array(saves.prefix(limit)), deletes: [], device: "devA").saved.count == limit)
    }

    @Test("a request over the stated bytes is refused, though each record fits", arguments: Subject.all)
    func requestBytes(_ subject: Subject) throws {
        let (backend, remove) = try subject.make()
        defer { remove() }
        let limits = backend.limits
        // Records of about half the record limit, enough of them to pass the request limit.
        let text = String(repeating: "y", count: limits.maxRecordBytes / 2)
        let count = limits.maxRequestBytes / text.utf8.count + 1
        try #require(count <= limits.maxRecordsPerRequest, "the request byte limit is reachable within the record count")
        let saves = (0..<count).map { RecordSave(record: tab("l\($0)", text: text)) }
        let before = try backend.currentToken()
        #expect(throws: BackendError.limitExceeded) { try backend.modify(saves: saves, deletes: [], device: "devA") }
        #expect(try backend.fetchChanges(since: before, limit: 10).changes == [])
    }

    @Test("a record with one value of the stated inline size fits; a record over the record limit is refused", arguments: Subject.all)
    func inlineValue(_ subject: Subject) throws {
        let (backend, remove) = try subject.make()
        defer { remove() }
        let limits = backend.limits
        // The longest text whose stored size is within the inline limit, as the engine measures it.
        var length = limits.maxInlineValueBytes
        func fields(_ length: Int) -> [String: FieldValue] {
            [
                "name": .string("inline"), "lastModified": .timestamp(testNow), "clock": .string("1700000000000-0-devA"),
                "deviceName": .string("a device"), "history": .stringList(["1700000000000-0-devA"]),
                "content": .string(String(repeating: "x", count: length)),
            ]
        }
        while let sealed = try backend.sealedByteCount(of: fields(length)), sealed > limits.maxInlineValueBytes {
            length -= (sealed - limits.maxInlineValueBytes) / 2 + 1
        }
        let record = BackendRecord(recordName: "inline", recordType: "ScratchTab", fields: fields(length))
        #expect(try backend.modify(saves: [RecordSave(record: record)], deletes: [], device: "devA").failures == [])

        let big = tab("big", text: String(repeating: "x", count: limits.maxRecordBytes))
        #expect(try backend.modify(saves: [RecordSave(record: big)], deletes: [], device: "devA").failures.map(\.error) == [.limitExceeded])
    }

    @Test("an asset over the stated size is refused", arguments: Subject.all)
    func assetSize(_ subject: Subject) throws {
        let (backend, remove) = try subject.make()
        defer { remove() }
        let limit = backend.limits.maxAssetBytes
        #expect(throws: BackendError.limitExceeded) { try backend.putAsset([UInt8](repeating: 1, count: limit + 1)) }
        // At the limit it is stored (where the limit is small enough to store it quickly).
        if limit <= 1024 * 1024 {
            let reference = try backend.putAsset([UInt8](repeating: 1, count: limit))
            #expect(try backend.readAsset(reference).count == limit)
        }
    }
}

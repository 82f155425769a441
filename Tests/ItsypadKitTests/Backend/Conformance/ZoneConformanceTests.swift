import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

/// The one record zone: created once, identified by a stable ID, replaced only by wiping the backend.
@Suite("Conformance: zone")
struct ZoneConformanceTests {
    @Test("createZoneIfNeeded creates the zone once and returns the same zone afterwards", arguments: SyncBackendFactory.all)
    func createIsIdempotent(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make(createZone: false)
        defer { fixture.remove() }
        let created = try fixture.backend.createZoneIfNeeded()
        #expect(created.created == testNow)
        #expect(!created.zoneID.isEmpty)
        fixture.clock.advance(by: 1000)
        #expect(try fixture.backend.createZoneIfNeeded() == created)
        #expect(try fixture.backend.zone() == created)
    }

    @Test("before the zone is created, everything but createZoneIfNeeded throws zoneNotFound", arguments: SyncBackendFactory.all)
    func zoneNotFound(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make(createZone: false)
        defer { fixture.remove() }
        let backend = fixture.backend
        let reference = AssetReference(fileChecksum: SHA256.hexDigest(of: [1]), size: 1)
        #expect(throws: BackendError.zoneNotFound) { try backend.zone() }
        #expect(throws: BackendError.zoneNotFound) { try backend.fetchChanges(since: nil, limit: 10) }
        #expect(throws: BackendError.zoneNotFound) { try backend.modify(saves: [RecordSave(record: tab("a"))], deletes: [], device: "A") }
        #expect(throws: BackendError.zoneNotFound) { try backend.modify(saves: [], deletes: [], device: "A") }
        #expect(throws: BackendError.zoneNotFound) { try backend.putAsset([1]) }
        #expect(throws: BackendError.zoneNotFound) { try backend.readAsset(reference) }
        #expect(throws: BackendError.zoneNotFound) { try backend.compact() }
    }

    @Test("the zone ID stays the same through writes and compaction, and differs between backends", arguments: SyncBackendFactory.all)
    func stableZoneID(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let zone = try fixture.backend.zone()
        try fixture.backend.save(tab("a"))
        _ = try fixture.backend.compact()
        #expect(try fixture.backend.zone() == zone)
        let other = try factory.make()
        defer { other.remove() }
        #expect(try other.backend.zone().zoneID != zone.zoneID)
    }

    @Test("a token from another zone throws zoneChanged: a replaced backend, or another backend", arguments: SyncBackendFactory.all)
    func zoneChanged(_ factory: SyncBackendFactory) throws {
        let fixture = try factory.make()
        defer { fixture.remove() }
        let backend = fixture.backend
        try backend.save(tab("a"), tab("b"))
        let incremental = try backend.currentToken()
        let midFullFetch = try backend.fetchChanges(since: nil, limit: 1).token
        let before = try backend.zone()

        try fixture.deleteZone()
        #expect(throws: BackendError.zoneNotFound) { try backend.fetchChanges(since: incremental, limit: 10) }
        let replaced = try backend.createZoneIfNeeded()
        #expect(replaced.zoneID != before.zoneID)
        #expect(throws: BackendError.zoneChanged) { try backend.fetchChanges(since: incremental, limit: 10) }
        #expect(throws: BackendError.zoneChanged) { try backend.fetchChanges(since: midFullFetch, limit: 10) }
        // What a device does then: fetch from nil.
        #expect(try backend.fetchAll(since: nil).changes == [])

        let other = try factory.make()
        defer { other.remove() }
        #expect(throws: BackendError.zoneChanged) { try other.backend.fetchChanges(since: try backend.currentToken(), limit: 10) }
    }
}

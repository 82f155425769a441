import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

/// A backend replaced by a complete one built beside it, as a key rotation does.
@Suite("Replacement")
struct ReplacementTests {
    /// A backend with record "new" beside `fixture`'s, where a replacement is built.
    func replacement(beside fixture: TemporaryBackend) throws -> (BackendReplacement, ZoneInfo) {
        let replacement = BackendReplacement(path: fixture.path, lockTimeout: 5)
        let beside = try TemporaryBackend.opened(at: replacement.replacementPath)
        let zone = try beside.createZoneIfNeeded()
        try beside.save(tab("new"))
        return (replacement, zone)
    }

    @Test("the replacement takes the backend's place and nothing else is left beside it")
    func replaces() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        try fixture.backend.save(tab("old"))
        let (replacement, newZone) = try replacement(beside: fixture)
        try replacement.replace(expecting: try fixture.backend.zone())
        #expect(try fixture.backend.zone() == newZone)
        #expect(try fixture.backend.fetchAll(since: nil).changes.map(\.recordName) == ["new"])
        #expect(try FileSystem.list(fixture.parent, includingHidden: true) == ["backend"])
    }

    @Test("a backend replaced by someone else meanwhile is not replaced again")
    func replacedMeanwhile() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let expected = try fixture.backend.zone()
        let (replacement, _) = try replacement(beside: fixture)
        try fixture.wipe()
        let other = try fixture.backend.createZoneIfNeeded()
        #expect(throws: BackendError.zoneChanged) { try replacement.replace(expecting: expected) }
        #expect(try fixture.backend.zone() == other)
        #expect(FileSystem.exists(replacement.replacementPath + "/zone.json"))
    }

    @Test("without a complete replacement nothing moves")
    func noReplacement() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let zone = try fixture.backend.zone()
        let replacement = BackendReplacement(path: fixture.path, lockTimeout: 5)
        #expect(throws: BackendError.self) { try replacement.replace(expecting: zone) }
        #expect(try fixture.backend.zone() == zone)
        #expect(try !replacement.finishInterruptedReplacement())
    }

    @Test("a replacement a crash stopped between its renames is finished; leftovers are removed")
    func interrupted() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let (replacement, newZone) = try replacement(beside: fixture)
        // The crash: the backend moved aside, the replacement not yet moved in.
        try FileTree(root: fixture.parent).rename(fixture.path, to: replacement.retiredPath)
        #expect(try replacement.finishInterruptedReplacement())
        #expect(try fixture.backend.zone() == newZone)
        try replacement.removeReplacementLeftovers()
        #expect(try FileSystem.list(fixture.parent, includingHidden: true) == ["backend"])
    }
}

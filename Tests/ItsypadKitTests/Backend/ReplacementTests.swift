import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

/// A backend replaced by a complete one built beside it, as a key rotation does.
@Suite("Replacement")
struct ReplacementTests {
    func replacement(beside fixture: TemporaryBackend) throws -> (DirectoryBackend, ZoneInfo) {
        let replacement = DirectoryBackend(path: fixture.backend.replacementPath, lockTimeout: 5, now: { testNow })
        let zone = try replacement.createZoneIfNeeded()
        try replacement.save(tab("new"))
        return (replacement, zone)
    }

    @Test("the replacement takes the backend's place and nothing else is left beside it")
    func replaces() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        try fixture.backend.save(tab("old"))
        let (_, newZone) = try replacement(beside: fixture)
        try fixture.backend.replace(expecting: try fixture.backend.zone())
        #expect(try fixture.backend.zone() == newZone)
        #expect(try fixture.backend.fetchChanges(since: nil, limit: 10).changes.map(\.recordName) == ["new"])
        #expect(try FileSystem.list(fixture.parent, includingHidden: true) == ["backend"])
    }

    @Test("a backend replaced by someone else meanwhile is not replaced again")
    func replacedMeanwhile() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let expected = try fixture.backend.zone()
        _ = try replacement(beside: fixture)
        try FileIO.removeFile(fixture.layout.zoneFile)
        let other = try fixture.backend.createZoneIfNeeded()
        #expect(throws: BackendError.zoneChanged) { try fixture.backend.replace(expecting: expected) }
        #expect(try fixture.backend.zone() == other)
        #expect(FileSystem.exists(fixture.backend.replacementPath + "/zone.json"))
    }

    @Test("without a complete replacement nothing moves")
    func noReplacement() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let zone = try fixture.backend.zone()
        #expect(throws: BackendError.self) { try fixture.backend.replace(expecting: zone) }
        #expect(try fixture.backend.zone() == zone)
        #expect(try !fixture.backend.finishInterruptedReplacement())
    }

    @Test("a replacement a crash stopped between its renames is finished; leftovers are removed")
    func interrupted() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let (_, newZone) = try replacement(beside: fixture)
        // The crash: the backend moved aside, the replacement not yet moved in.
        try FileTree(root: fixture.parent).rename(fixture.path, to: fixture.backend.retiredPath)
        #expect(try fixture.backend.finishInterruptedReplacement())
        #expect(try fixture.backend.zone() == newZone)
        try fixture.backend.removeReplacementLeftovers()
        #expect(try FileSystem.list(fixture.parent, includingHidden: true) == ["backend"])
    }
}

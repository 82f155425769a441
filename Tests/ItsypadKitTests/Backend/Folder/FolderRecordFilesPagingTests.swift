import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

/// A reader whose position is before a device's checkpoint reads that device's record files a page
/// at a time, the page limit holding, with where it is in them kept in the token.
@Suite struct FolderRecordFilesPagingTests {
    typealias Devices = ReplicatedDevices

    /// Two devices on one folder: devA wrote `count` notes (`n0` …) and compacted its journal.
    static func compacted(notes count: Int) throws -> Devices {
        let devices = try Devices(shared: 2)
        for index in 0..<2 { _ = try devices[index].createZoneIfNeeded() }
        for index in 0..<count {
            _ = try devices[0].write(ReplicatedSave(record: Devices.note("n\(index)", "text \(index)"), basedOn: VersionVector()))
        }
        _ = try devices[0].compactJournal()
        #expect(try devices[0].journal(of: "devA").checkpoint() != nil, "readers read devA's record files")
        return devices
    }

    @Test func aRestartFromRecordFilesHoldsThePageLimitAndGoesOnFromTheToken() throws {
        let devices = try Self.compacted(notes: 25)
        var token: ChangeToken?
        var names: [String] = []
        var pages = 0
        while true {
            // A new backend for every page: only the token carries where the read is.
            let page = try Devices.backend(devices[1].path, 1).fetchChanges(since: token, limit: 4)
            #expect(page.changes.count <= 4, "a page of \(page.changes.count) changes for a limit of 4")
            #expect(page.waiting.isEmpty, "\(page.waiting)")
            names += page.changes.map(\.id.recordName)
            token = page.token
            pages += 1
            if !page.moreComing { break }
        }
        #expect(names.sorted() == (0..<25).map { "n\($0)" }.sorted(), "each record once")
        #expect(pages >= 7)
        let end = try FolderToken(decoding: try #require(token), zoneID: try devices[1].readZone().zoneID)
        #expect(end.positions["devA"]?.restart == nil, "the read settled")
        #expect(end.positions["devA"]?.seq == (try devices[0].journal(of: "devA").checkpoint()?.batch.seq))
    }

    /// A record file that changes part way through the read makes the files match no journal line:
    /// the read waits, and the next one starts from the first file and gets the new version.
    @Test func filesChangedDuringThePagedReadAreReadAgain() throws {
        let devices = try Self.compacted(notes: 12)
        let first = try devices[1].fetchChanges(since: nil, limit: 4)
        #expect(first.moreComing)
        let changed = try #require(first.changes.first?.siblings.first)
        _ = try devices[0].write(ReplicatedSave(record: Devices.note(changed.record.recordName, "changed"), basedOn: changed.version))
        _ = try devices[0].compactJournal()
        let rest = try devices[1].fetchAll(since: first.token)
        #expect(!rest.waiting.isEmpty, "the files read no longer match a line")
        let again = try devices[1].fetchAll(since: rest.token)
        #expect(again.waiting.isEmpty, "\(again.waiting)")
        #expect(again.changes.count == 12)
        #expect(again.changes[changed.record.id].flatMap { $0.siblings.first.flatMap(Devices.text) } == "changed")
    }

    @Test func aTokenPartWayThroughRecordFilesRoundTrips() throws {
        var digest = FilesDigest()
        digest.toggle(RecordID(recordType: "ScratchTab", recordName: "n1"), version: "devA:3")
        let token = FolderToken(
            zoneID: "ZONE",
            positions: [
                "devA": .init(seq: 2, resume: nil, restart: RecordFilesCursor(folder: 17, file: 3, digest: digest)),
                "devB": .init(seq: 5, resume: JournalPosition(segment: 1, offset: 80)),
            ])
        #expect(token.token.rawValue == "2:ZONE:devA.2.0.0.17.3.\(digest.hex)/devB.5.1.80")
        #expect(try FolderToken(decoding: token.token, zoneID: "ZONE") == token)
        for raw in ["2:ZONE:devA.2.0.0.17.3", "2:ZONE:devA.2.0.0.17.3.zz", "2:ZONE:devA.2.0.0.-1.3.\(digest.hex)"] {
            #expect(throws: BackendError.tokenExpired) { try FolderToken(decoding: ChangeToken(rawValue: raw), zoneID: "ZONE") }
        }
    }
}

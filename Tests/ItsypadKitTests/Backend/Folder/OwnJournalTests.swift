import Testing

@testable import ItsypadBackend

/// What a folder backend knows of its own journal without reading it again (where it ends, read
/// on from where it last ended; the lines it committed, `OwnCommits`; whether it holds record
/// files, from its last line) is what a reading of the whole journal, or a listing of its record
/// files, finds: the general paths beside those fast paths (see FAST-PATHS.md).
@Suite struct OwnJournalTests {
    /// Saves, then deletions of some of them, a batch each, over segments of a few lines.
    static func writes(_ backend: FolderBackend, after: (Int) throws -> Void) throws {
        var written: [RecordVersion] = []
        for index in 0..<24 {
            let record = ReplicatedDevices.note("n\(index)", "text \(index)")
            written += try backend.write(ReplicatedSave(record: record, basedOn: VersionVector()))
            try after(index)
        }
        for (index, version) in written.prefix(8).enumerated() {
            let result = try backend.modify(saves: [], deletes: [ReplicatedDelete(id: version.record.id, basedOn: version.version)])
            #expect(result.failures.isEmpty)
            try after(24 + index)
        }
    }

    @Test func theEndReadOnIsTheEndAWholeReadFinds() throws {
        let devices = try ReplicatedDevices(shared: 1, segmentSizeLimit: 2048)
        let backend = devices[0]
        _ = try backend.createZoneIfNeeded()
        let journal = backend.journal(of: ReplicatedDevices.deviceID(0))
        var known = try journal.end()
        try Self.writes(backend) { step in
            let readOn = try journal.end(after: known)
            #expect(readOn == (try journal.end()), "after write \(step)")
            #expect(try backend.ownLastBatch() == (try journal.last()), "after write \(step)")
            known = readOn
        }
        #expect(try journal.segments().count > 1, "the writes fill more than one segment")
    }

    @Test func theOwnCommitsAreWhatTheJournalsLastLinesHold() throws {
        let devices = try ReplicatedDevices(shared: 1)
        let backend = devices[0]
        _ = try backend.createZoneIfNeeded()
        try Self.writes(backend) { _ in }
        let run = try #require(try backend.ownCommitsEndingJournal())
        var batches: [DeviceBatch] = []
        _ = try backend.journal(of: ReplicatedDevices.deviceID(0)).scan(after: run.after, hint: nil, maxChanges: .max) { batch, _ in
            batches.append(batch)
        }
        let tombstones = batches.flatMap(\.changes).filter { $0.op == .delete }.compactMap { change in
            change.version.map { "\(change.id.recordName) \(change.seq) \($0.version)" }
        }
        #expect(run.lines == batches.count)
        #expect(run.through == batches.last?.lastSeq)
        #expect(run.requires == FolderBackend.requirements(of: batches))
        #expect(run.tombstones?.map { "\($0.id.recordName) \($0.seq) \($0.version)" } == tombstones)
        #expect(tombstones.count == 8)
    }

    @Test func theLastLineSaysWhetherTheDeviceHoldsRecordFiles() throws {
        let devices = try ReplicatedDevices(shared: 1)
        let backend = devices[0]
        _ = try backend.createZoneIfNeeded()
        func holds() throws -> Bool { try backend.ownLastBatch().map { $0.files != FilesDigest().hex } ?? false }
        let (byLastLine, listed) = (try holds(), try backend.ownRecordFiles())
        #expect(!byLastLine && listed.isEmpty)
        try Self.writes(backend) { step in
            let (byLastLine, listed) = (try holds(), try backend.ownRecordFiles())
            #expect(byLastLine == !listed.isEmpty, "after write \(step)")
        }
        let holdsAtTheEnd = try holds()
        #expect(holdsAtTheEnd)
    }
}

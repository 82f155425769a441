import ItsypadSupport
import Testing

@testable import ItsypadBackend

/// What a folder backend knows of its own journal without reading it again (where it ends, read
/// on from where it last ended; the lines it committed, `OwnCommits`; whether it holds record
/// files, from its last line; where the lines end whose writer recorded them, `AcceptedLines`) is what a
/// reading of the whole journal, or a listing of its record files, finds: the general paths beside
/// those fast paths (see FAST-PATHS.md).
@Suite struct OwnJournalTests {
    /// Saves, then deletions of some of them, a batch each, over segments of a few lines.
    static func writes(_ backend: FolderBackend, named prefix: String = "n", after: (Int) throws -> Void) throws {
        var written: [RecordVersion] = []
        for index in 0..<24 {
            let record = ReplicatedDevices.note("\(prefix)\(index)", "text \(index)")
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

    /// Writes records `prefix0` … in lines of one save each, then deletes the first few, a line
    /// each, over segments of a few lines, telling the backend each line's writer recorded it
    /// (`accepted`) where `accepting` says so (by the line's index). Returns the records of the lines not accepted.
    @discardableResult
    static func writesAccepting(
        _ backend: FolderBackend, named prefix: String = "n", _ accepting: (Int) -> Bool
    ) throws -> Set<String> {
        var notAccepted = Set<String>()
        var index = 0
        func note(_ result: ReplicatedModifyResult, _ name: String) throws {
            #expect(result.failures.isEmpty)
            let receipt = try #require(result.receipt, "a line written with its record files has a receipt")
            if accepting(index) { backend.accepted(receipt) } else { notAccepted.insert(name) }
            index += 1
        }
        var written: [RecordVersion] = []
        for number in 0..<24 {
            let name = "\(prefix)\(number)"
            let result = try backend.modify(
                saves: [ReplicatedSave(record: ReplicatedDevices.note(name, "text \(number)"), basedOn: VersionVector())], deletes: [])
            written += result.written
            try note(result, name)
        }
        for version in written.prefix(8) {
            let result = try backend.modify(saves: [], deletes: [ReplicatedDelete(id: version.record.id, basedOn: version.version)])
            try note(result, version.record.id.recordName)
        }
        return notAccepted
    }

    /// A fetch from a token passes over the lines whose writer recorded them and returns what a
    /// reading of the whole journal (another process's backend, which holds nothing in memory)
    /// returns of the other records, as far as the same token: pages of 3 over segments of 2 KiB,
    /// the accepted lines in runs of two between lines that were not.
    @Test(arguments: [false, true])
    func aFetchPassesOverTheAcceptedLinesAndReadsTheRest(encrypted: Bool) throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/backend"
        let cipher = encrypted ? try RecordCipher(masterKey: try SecretBytes.random(count: 32)) : nil
        let backend = ReplicatedDevices.backend(path, 0, segmentSizeLimit: 2048, cipher: cipher)
        _ = try backend.createZoneIfNeeded()
        let start = try backend.fetchAll(since: nil).token
        let notAccepted = try Self.writesAccepting(backend) { $0 % 3 != 0 }
        #expect(try backend.journal(of: backend.deviceID).segments().count > 1, "the writes fill more than one segment")
        let reader = ReplicatedDevices.backend(path, 0, segmentSizeLimit: 2048, cipher: cipher)
        let (passing, read) = (try backend.fetchAll(since: start), try reader.fetchAll(since: start))
        #expect(passing.token == read.token)
        #expect(Set(passing.changes.keys.map(\.recordName)) == notAccepted)
        #expect(passing.changes == read.changes.filter { notAccepted.contains($0.key.recordName) })
        // Passed over once, they are let go: a fetch from before them reads the journal, and finds all.
        #expect(try backend.fetchAll(since: start).changes == read.changes)
    }

    /// A full fetch (no token), and every page of it, returns every record, the accepted lines'
    /// too: what it does not return, the engine takes for deleted. A fetch from its last token
    /// then passes over lines accepted since.
    @Test func aFullFetchPassesOverNothing() throws {
        let directory = TemporaryDirectory()
        let backend = ReplicatedDevices.backend(directory.path + "/backend", 0, segmentSizeLimit: 2048)
        _ = try backend.createZoneIfNeeded()
        try Self.writesAccepting(backend) { _ in true }
        let full = try backend.fetchAll(since: nil)
        #expect(full.changes.count == 24)
        #expect(full.changes.values.filter(\.isDeleted).count == 8)
        let notAccepted = try Self.writesAccepting(backend, named: "m") { $0 != 5 }
        #expect(notAccepted == ["m5"])
        #expect(Set(try backend.fetchAll(since: full.token).changes.keys.map(\.recordName)) == notAccepted)
    }

    /// A line that another process of the same data directory appends after the accepted ones
    /// makes the fetch read them all: the journal no longer ends with what this backend wrote.
    @Test func aLineAnotherProcessAppendedIsRead() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/backend"
        let backend = ReplicatedDevices.backend(path, 0)
        _ = try backend.createZoneIfNeeded()
        let token = try backend.fetchChanges(since: nil, limit: 100).token
        let mine = try backend.modify(
            saves: [ReplicatedSave(record: ReplicatedDevices.note("mine", "accepted"), basedOn: VersionVector())], deletes: [])
        backend.accepted(try #require(mine.receipt))
        // Another process of the same data directory appends a line (a copy of the data directory is refused: `deviceIDInUse`).
        let other = ReplicatedDevices.backend(path, 0)
        try other.write(ReplicatedSave(record: ReplicatedDevices.note("other", "appended"), basedOn: VersionVector()))
        let page = try backend.fetchChanges(since: token, limit: 100)
        #expect(page.changes.map(\.id.recordName).sorted() == ["mine", "other"])
        #expect(page.changes.compactMap { $0.siblings.first.flatMap(ReplicatedDevices.text) }.sorted() == ["accepted", "appended"])
    }

    /// Lines accepted one after another are held as one run of where they end, however many: a
    /// push of 1,000,000 holds a few bytes.
    @Test func linesOneAfterAnotherAreOneRun() {
        var lines = AcceptedLines(zone: "z")
        for line in 0..<1000 {
            let after = Int64(line) * 5
            lines.add(CommitReceipt(zone: "z", after: after, through: after + 5, resume: JournalPosition(segment: 1, offset: line)))
        }
        #expect(lines.runs == [AcceptedLines.Run(after: 0, through: 5000, resume: JournalPosition(segment: 1, offset: 999))])
        lines.add(CommitReceipt(zone: "other", after: 5000, through: 5001, resume: JournalPosition(segment: 1, offset: 1000)))
        lines.add(CommitReceipt(zone: "z", after: 5002, through: 5003, resume: JournalPosition(segment: 1, offset: 1001)))
        #expect(lines.runs.count == 2)
        #expect(lines.run(after: 5002)?.through == 5003)
        #expect(lines.nextRun(after: 0) == 5002)
        lines.forget(through: 5000)
        #expect(lines.runs.map(\.after) == [5002])
    }
}

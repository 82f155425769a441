import ItsypadSupport
import Testing

@testable import ItsypadBackend

/// What a folder backend knows of its own journal without reading it again (where it ends, read
/// on from where it last ended; the lines it committed, `OwnCommits`; whether it holds record
/// files, from its last line; the versions of its lines no fetch has read, `OwnEchoes`) is what a
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

    /// A page as compared: its changes, token and whether more come.
    static func page(_ page: ReplicatedChangesPage) -> String {
        "\(page.changes) \(page.token.rawValue) \(page.moreComing) \(page.waiting.count) \(page.quarantined.count)"
    }

    @Test(arguments: [false, true])
    func theFetchAfterAWriteReturnsFromMemoryWhatAReadOfTheJournalReturns(encrypted: Bool) throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/backend"
        let cipher = encrypted ? try RecordCipher(masterKey: try SecretBytes.random(count: 32)) : nil
        let backend = ReplicatedDevices.backend(path, 0, segmentSizeLimit: 2048, cipher: cipher)
        _ = try backend.createZoneIfNeeded()
        let zone = try backend.readZone().zoneID
        var token = try backend.fetchChanges(since: nil, limit: 100).token
        try Self.writes(backend) { step in
            // Another backend of the same device and folder (a later process) holds nothing in memory: it reads the journal.
            let reader = ReplicatedDevices.backend(path, 0, segmentSizeLimit: 2048, cipher: cipher)
            let from = try FolderToken(decoding: token, zoneID: zone).positions[ReplicatedDevices.deviceID(0)]?.seq ?? 0
            let held = try backend.echoedOwnLines(after: from, zone: zone, maxChanges: .max, devices: [ReplicatedDevices.deviceID(0)])
            #expect(held?.lines.isEmpty == false, "after write \(step): the line is held")
            let fromMemory = try backend.fetchChanges(since: token, limit: 100)
            let read = try reader.fetchChanges(since: token, limit: 100)
            #expect(Self.page(fromMemory) == Self.page(read), "after write \(step)")
            #expect(fromMemory.changes.count == 1)
            token = fromMemory.token
        }
        // Several lines, a page at a time, from where the writes began.
        let start = token
        try Self.writes(backend, named: "m") { _ in }
        let reader = ReplicatedDevices.backend(path, 0, segmentSizeLimit: 2048, cipher: cipher)
        var (memory, journal) = (start, start)
        while true {
            let (fromMemory, read) = (try backend.fetchChanges(since: memory, limit: 5), try reader.fetchChanges(since: journal, limit: 5))
            #expect(Self.page(fromMemory) == Self.page(read))
            (memory, journal) = (fromMemory.token, read.token)
            if !read.moreComing || !fromMemory.moreComing { break }
        }
        // Read once, the lines are let go: a fetch from before them reads the journal, and finds the same.
        #expect(
            Self.page(try backend.fetchChanges(since: start, limit: 100)) == Self.page(try reader.fetchChanges(since: start, limit: 100)))
    }

    @Test func aLineAnotherProcessAppendedIsRead() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/backend"
        let backend = ReplicatedDevices.backend(path, 0)
        _ = try backend.createZoneIfNeeded()
        let token = try backend.fetchChanges(since: nil, limit: 100).token
        try backend.write(ReplicatedSave(record: ReplicatedDevices.note("mine", "held"), basedOn: VersionVector()))
        // Another process of the same data directory appends a line (a copy of the data directory is refused: `deviceIDInUse`).
        let other = ReplicatedDevices.backend(path, 0)
        try other.write(ReplicatedSave(record: ReplicatedDevices.note("other", "appended"), basedOn: VersionVector()))
        let page = try backend.fetchChanges(since: token, limit: 100)
        #expect(page.changes.map(\.id.recordName).sorted() == ["mine", "other"])
        #expect(page.changes.compactMap { $0.siblings.first.flatMap(ReplicatedDevices.text) }.sorted() == ["appended", "held"])
    }

    /// A push told it sends more than the bound holds none of its lines (its working set is large
    /// already); once a fetch ends, the lines of a push of a few are held again.
    @Test func aPushOfMoreThanTheBoundHoldsNone() throws {
        let directory = TemporaryDirectory()
        let backend = ReplicatedDevices.backend(directory.path + "/backend", 0)
        let zone = try backend.createZoneIfNeeded().zoneID
        let token = try backend.fetchChanges(since: nil, limit: 100).token
        /// Writes a record in a line of its own; the held lines after `seq`, nil for none held.
        func heldAfterWriting(_ name: String, after seq: Int64) throws -> Int? {
            try backend.write(ReplicatedSave(record: ReplicatedDevices.note(name, "text"), basedOn: VersionVector()))
            return try backend.echoedOwnLines(after: seq, zone: zone, maxChanges: .max, devices: [backend.deviceID])?.lines.count
        }
        backend.willPush(OwnEchoes.maxChanges + 1)
        #expect(try heldAfterWriting("large", after: 0) == nil)
        #expect(try backend.fetchChanges(since: token, limit: 100).changes.map(\.id.recordName) == ["large"])
        backend.willPush(1)
        #expect(try heldAfterWriting("few", after: 1) == 1)
    }

    @Test func pastTheBoundNothingIsHeldUntilAFetchEnds() {
        let version = RecordVersion(record: ReplicatedDevices.note("n", "text"), version: VersionVector(), writer: "devA")
        func add(_ count: Int, to echoes: inout OwnEchoes) {
            let seq = echoes.through + 1
            let changes = (0..<count).map { index in
                DeviceChange(
                    seq: seq + Int64(index), op: .save, id: RecordID(recordType: "ScratchTab", recordName: "n\(seq + Int64(index))"))
            }
            let batch = DeviceBatch(seq: seq, device: "devA", instance: "i", zone: "z", time: 0, changes: changes, files: FilesDigest().hex)
            echoes.add(
                batch, ending: JournalPosition(segment: 1, offset: Int(seq)), written: Array(repeating: version, count: count), bytes: count
            )
        }
        var echoes = OwnEchoes(after: 0, zone: "z")
        let half = OwnEchoes.maxChanges / 2 + 1
        add(half, to: &echoes)
        #expect(echoes.lines(after: 0, maxChanges: .max)?.lines.count == 1)
        add(half, to: &echoes)
        #expect(echoes.isFull)
        #expect(echoes.lines.isEmpty)
        #expect(echoes.lines(after: 0, maxChanges: .max) == nil)
        add(1, to: &echoes)
        #expect(echoes.lines.isEmpty, "nothing is held again before a fetch ends")
    }
}

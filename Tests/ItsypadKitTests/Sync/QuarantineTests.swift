import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

/// A malformed record from a peer is skipped, named, and remembered: a token moving past it does
/// not lose it, and once it is fixed (or deleted) the next sync picks that up.
@Suite struct QuarantineTests {
    /// The peer's writes are made by hand in format 1's journal.
    let fleet = Fleet(2, format1: true)
    var peer: Device { fleet[0] }
    var victim: Device { fleet[1] }
    var files: FileIO { FileIO(root: fleet.backendPath) }
    var journal: Journal { Journal(files: files, directory: fleet.backendPath + "/journal", segmentSizeLimit: .max) }

    init() {
        _ = fleet[0].output("tab", "new", "--name", "shared", "good content")
        fleet.enable(0)
        fleet.enable(1)
    }

    func sharedTab() throws -> String { try #require(try fleet.tabs(1).first { $0.value == "shared|good content" }?.key) }

    /// The peer's current version of the tab, as the journal holds it.
    func currentRecord(_ id: String) throws -> BackendRecord {
        var stats = JournalReadStats()
        return try #require(
            try journal.read(after: 0, from: nil, maxChanges: nil, stats: &stats).validChanges.last { $0.recordName == id }?.record)
    }

    /// Appends a save of `record` as a peer's writer would, without touching records/.
    func appendSave(_ record: BackendRecord) throws {
        let seq = try journal.tail().latestSeq + 1
        var record = record
        record.recordChangeTag = String(seq)
        let change = JournalChange(
            seq: seq, op: .save, recordType: record.recordType, recordName: record.recordName, tag: String(seq), record: record)
        try journal.append(JournalBatch(seq: seq, device: "hostile", time: testNow, changes: [change]), after: try journal.tail())
    }

    func sync(_ device: Device) -> (Int32, String, String) { device.inProcess(["sync"]) }

    @Test func aQuarantinedRecordIsCheckedAgainUntilItIsFixed() throws {
        let id = try sharedTab()
        var bad = try currentRecord(id)
        bad.fields["lastModified"] = .timestamp(.min)
        bad.fields["content"] = .string("bad content")
        try appendSave(bad)

        let (status, _, err) = sync(victim)
        #expect(status == ExitCode.failure)
        #expect(err.contains("ScratchTab/\(id).json") && err.contains("lastModified"), "\(err)")
        #expect(try fleet.tabs(1)[id] == "shared|good content", "the local version stays")
        let shown = victim.inProcess(["sync", "status"]).1
        #expect(shown.contains("quarantined: 1") && shown.contains(id), "\(shown)")
        #expect(victim.inProcess(["sync", "log"]).1.contains("quarantined: "))
        let json = try JSONValue.parse(victim.inProcess(["sync", "status", "--json"]).1)
        #expect(json["quarantined"]?.arrayValue?.first?["id"]?.stringValue == id)

        // Other changes move the token past it; it stays quarantined, and each sync says so.
        _ = peer.output("tab", "new", "later")
        #expect(sync(peer).0 == ExitCode.failure, "the peer meets it too")
        #expect(sync(victim).0 == ExitCode.failure)
        #expect(try fleet.tabs(1).values.contains("later|later"))

        // Fixed in place (a backup restored, by hand): no journal change, yet the next sync applies it.
        let file = fleet.backendPath + "/records/ScratchTab/" + id + ".json"
        var fixed = try JSONCoding.decode(BackendRecord.self, from: try #require(try files.readFileIfExists(file)))
        #expect(fixed.fields["content"] == .string("bad content"), "a writer applied the bad version to records/")
        fixed.fields["lastModified"] = .timestamp(testNow)
        fixed.fields["content"] = .string("fixed content")
        try files.writeAtomically(try JSONCoding.encode(fixed), to: file)
        let (after, _, afterErr) = sync(victim)
        #expect(after == ExitCode.success, "\(afterErr)")
        #expect(try fleet.tabs(1)[id] == "shared|fixed content")
        #expect(victim.inProcess(["sync", "status"]).1.contains("quarantined: 0"))
    }

    @Test func aGoodVersionOrADeletionReleasesIt() throws {
        let id = try sharedTab()
        var bad = try currentRecord(id)
        bad.fields["name"] = .int64(7)
        try appendSave(bad)
        #expect(sync(victim).0 == ExitCode.failure)

        _ = peer.output("tab", "edit", id, "edited again")
        #expect(sync(peer).0 == ExitCode.failure)
        let (status, _, err) = sync(victim)
        #expect(status == ExitCode.success, "\(err)")
        #expect(try fleet.tabs(1)[id] == "shared|edited again")
        #expect(victim.inProcess(["sync", "status"]).1.contains("quarantined: 0"))

        bad = try currentRecord(id)
        bad.fields["clock"] = .string("not a clock")
        try appendSave(bad)
        #expect(sync(victim).0 == ExitCode.failure)
        _ = peer.output("tab", "rm", id)
        _ = sync(peer)
        #expect(sync(victim).0 == ExitCode.success)
        #expect(try fleet.tabs(1)[id] == nil)
        #expect(victim.inProcess(["sync", "status"]).1.contains("quarantined: 0"))
    }

    @Test func aQuarantinedRecordIsNotTakenForADeletion() throws {
        let id = try sharedTab()
        let file = fleet.backendPath + "/records/ScratchTab/" + id + ".json"
        try files.writeAtomically(Array("{ not json".utf8), to: file)
        // A device that lost its place reads every record and compares: the malformed one is still there.
        let statePath = victim.dataDir + "/sync/state.json"
        guard case .object(let members) = try JSONValue.parse(try #require(try FileSystem.read(statePath))) else {
            Issue.record("\(statePath) is not a JSON object")
            return
        }
        try FileSystem.writeAtomically(
            statePath, Array(JSONValue.object(members.map { $0.0 == "token" ? ($0.0, .string("1:X")) : $0 }).serialized().utf8))
        #expect(sync(victim).0 == ExitCode.failure)
        #expect(try fleet.tabs(1)[id] == "shared|good content")
    }
}

import Testing
@testable import ItsypadKit

/// Format 2's convergence rule on its own, before the engine uses it: three devices on their own
/// copies of one folder, replicated in random order, create, edit and delete records, and merge
/// whatever siblings they fetch with a deterministic function (the union of the siblings' lines,
/// written as a derived version). After quiescence every device holds the same single version of
/// every record, no typed line of a record nobody deleted is lost, and the service never made a
/// conflict copy.
@Suite struct ReplicatedBackendConvergenceTests {
    /// One device: its backend, its token and what it last fetched of each record.
    struct Replica {
        let backend: ReplicatedDirectoryBackend
        var token: ChangeToken?
        var records: [RecordID: ReplicatedChange] = [:]
        /// Derived merges this device wrote.
        var merges = 0

        /// Fetches everything new, then merges every record that has several siblings.
        mutating func sync() throws {
            let fetched = try backend.fetchAll(since: token)
            token = fetched.token
            records.merge(fetched.changes) { _, new in new }
            for (id, change) in records.sorted(by: { $0.key < $1.key }) where change.siblings.count > 1 {
                let live = change.siblings.filter { !$0.isDeleted }
                let save = ReplicatedSave(record: ReplicatedDevices.note(id.recordName, Self.merged(change)), basedOn: change.joinedVersion, isDerived: true)
                let result = live.isEmpty
                    ? try backend.modify(saves: [], deletes: [ReplicatedDelete(id: id, basedOn: change.joinedVersion)])
                    : try backend.modify(saves: [save], deletes: [])
                #expect(result.failures.isEmpty, "\(result.failures)")
                merges += 1
            }
            _ = try backend.finishSync(acknowledging: fetched.token)
        }

        /// The deterministic merge: the union of the live siblings' lines, sorted (an edit beats a delete).
        static func merged(_ change: ReplicatedChange) -> String {
            let live = change.siblings.filter { !$0.isDeleted }
            return Set(live.flatMap { (ReplicatedDevices.text($0) ?? "").split(separator: "\n") }).sorted().joined(separator: "\n")
        }

        /// The single version of each record (nil while siblings remain) as text; deleted records left out.
        func contents() -> [String: String?] {
            var result: [String: String?] = [:]
            for (id, change) in records where !change.isDeleted {
                result[id.recordName] = change.siblings.count == 1 ? ReplicatedDevices.text(change.siblings[0]) : nil
            }
            return result
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func threeCopiesConverge(seed: UInt64) throws {
        var options = ReplicationSimulator.Options()
        options.temporaryNaming = ReplicationSimulator.TemporaryNaming.allCases[Int(seed) % 4]
        options.dropConflictCopyChance = seed % 2 == 0 ? 0.5 : 0
        let devices = try ReplicatedDevices(copies: 3, seed: seed, options: options, segmentSizeLimit: 2048)
        let simulator = try #require(devices.simulator)
        var replicas = devices.backends.map { Replica(backend: $0) }
        var random = SeededGenerator(seed: seed)
        var typed: [String: [String]] = [:]
        var deleted = Set<String>()
        for step in 0..<80 {
            let index = Int.random(in: 0..<3, using: &random)
            let name = "note\(Int.random(in: 0..<4, using: &random))"
            let id = RecordID(recordType: "ScratchTab", recordName: name)
            let known = replicas[index].records[id]
            switch Int.random(in: 0..<10, using: &random) {
            case 0...5:
                // Type a line, on the version this device holds (or a new record).
                let line = "line-\(seed)-\(step)"
                // With siblings not merged yet, this device types into what their merge shows.
                let current = known.flatMap { $0.isDeleted ? nil : Replica.merged($0) }
                let content = current.map { $0 + "\n" + line } ?? line
                let result = try replicas[index].backend.modify(saves: [ReplicatedSave(record: ReplicatedDevices.note(name, content), basedOn: known?.joinedVersion ?? VersionVector())], deletes: [])
                if result.failures.isEmpty { typed[name, default: []].append(line) }
            case 6:
                guard let known, !known.isDeleted else { continue }
                let result = try replicas[index].backend.modify(saves: [], deletes: [ReplicatedDelete(id: id, basedOn: known.joinedVersion)])
                if result.failures.isEmpty { deleted.insert(name) }
            default:
                try replicas[index].sync()
            }
            try simulator.run(steps: Int.random(in: 0...4, using: &random))
        }
        var settled = false
        for _ in 0..<10 where !settled {
            try simulator.quiesce()
            for index in replicas.indices { try replicas[index].sync() }
            settled = simulator.isQuiet
        }
        #expect(settled, "devices kept writing merges")
        #expect(replicas.map(\.merges).reduce(0, +) > 0, "the run should have made siblings to merge")
        let contents = replicas[0].contents()
        for index in 1..<3 { #expect(replicas[index].contents() == contents, "dev\(index) differs") }
        for (name, lines) in typed where !deleted.contains(name) {
            let final = (contents[name] ?? nil) ?? ""
            #expect(lines.allSatisfy { final.contains($0) }, "\(name) lost lines: \(lines.filter { !final.contains($0) })")
        }
        let files = try ReplicationSimulatorTests.files(simulator.root(0)).keys
        #expect(!files.contains { $0.contains("sync-conflict") || $0.contains("conflicted copy") }, "\(files.sorted())")
    }
}

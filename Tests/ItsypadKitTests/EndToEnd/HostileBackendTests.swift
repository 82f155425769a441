import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A peer that can write the backend tries every name, number, file type and size it controls.
/// Each test runs the built binary and asserts containment, no crash or hang, the victim's data
/// intact, and the documented exit status with a reason.
@Suite struct HostileBackendTests {
    // MARK: Names

    static let hostileNames = [
        "../../outside/canary", "../../../../../../../../tmp/itsypad-escape", "/etc/passwd", "ok/../../../outside/canary",
        "..", ".", "", "canary\u{0}", "../outside/canary\u{0}.txt", String(repeating: "a", count: 5000), "\u{1B}]52;c;ZXZpbA==\u{7}",
        "5c0066cb-6694-4f25-8e5a-b27c67a9433f/../../../outside/canary",
    ]

    /// Every hostile name as a saved record's name, in both deletes, and as a record type: one batch
    /// that also carries a good change, which still arrives.
    @Test func traversalInJournalNamesIsQuarantined() throws {
        let world = try HostileWorld()
        let first = try world.nextSeq
        var changes: [JournalChange] = []
        for name in Self.hostileNames {
            var record = world.tabRecord()
            record.recordName = name
            changes.append(world.save(record, seq: first + Int64(changes.count)))
            changes.append(world.delete("ScratchTab", name, seq: first + Int64(changes.count)))
            changes.append(world.delete("ClipboardEntry", name, seq: first + Int64(changes.count)))
            var typed = world.tabRecord()
            typed.recordType = name
            changes.append(world.save(typed, seq: first + Int64(changes.count)))
            changes.append(world.delete(name, "canary", seq: first + Int64(changes.count)))
        }
        let legit = world.tabRecord(name: "legit")
        changes.append(world.save(legit, seq: first + Int64(changes.count)))
        try world.appendBatch(changes)

        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 1, mentioning: ["malformed"])
        #expect(try world.tabs(world.victim)[legit.recordName] == "peer content", "the rest of the sync goes on")
        try world.expectVictimIntact()
        let status = try world.run(world.victim, "sync", "status")
        #expect(status.stdout.contains("quarantined: \(changes.count - 1)"), "\(status.stdout)")
        #expect(!status.stdout.contains("\u{1B}") && !status.stdout.contains("\u{0}"), "names are escaped when shown")
        // Writers are not blocked either, and apply nothing outside records/.
        try world.setUp(world.peer, "tab", "new", "after the attack")
        let peerSync = try world.run(world.peer, "sync")
        world.expectContained(peerSync)
        world.expectExit(peerSync, 1, mentioning: ["malformed"])
        let again = try world.run(world.victim, "sync")
        world.expectContained(again)
        world.expectExit(again, 0)
        #expect(try world.tabs(world.victim).values.contains("after the attack"))
        #expect(!FileSystem.exists("/tmp/itsypad-escape"))
    }

    @Test func aRemoteTabDeleteNamingAPathNeverLeavesTabs() throws {
        let world = try HostileWorld()
        // A valid record name (NameRules) that is not a tab id, and one that is another file of the data directory.
        for name in ["meta", "..json", "x.json", "lock"] {
            try world.appendBatch([world.delete("ScratchTab", name, seq: try world.nextSeq)])
        }
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        #expect(sync.status == 0 || sync.status == 1, "\(sync.stderr)")
        #expect(FileSystem.exists(world.victim + "/meta.json"))
        #expect(FileSystem.exists(world.victim + "/lock"))
        try world.expectVictimIntact()
    }

    @Test(arguments: ["../../outside/target", "/etc/passwd", String(repeating: "0", count: 63) + "\u{0}", "00"])
    func traversalInAssetReferencesIsQuarantined(_ checksum: String) throws {
        let world = try HostileWorld()
        let record = world.tabRecord(fields: ["contentAsset": .asset(AssetReference(fileChecksum: checksum, size: 7))])
        var withoutContent = record
        withoutContent.fields["content"] = nil
        try world.appendBatch([world.save(withoutContent, seq: try world.nextSeq)])
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 1, mentioning: ["malformed"])
        try world.expectVictimIntact()
    }

    @Test(arguments: [
        "1:ZONE:5:after:../../outside/target", "1:ZONE:9223372036854775807", "1:ZONE:1:at:9223372036854775807:0",
        "1:ZONE:1:at:1:9223372036854775807", "1:ZONE:-5", "1:ZONE:1:after:ScratchTab/..%00", "garbage\u{0}",
    ])
    func hostileTokensRecoverByThemselves(_ token: String) throws {
        let world = try HostileWorld()
        let statePath = world.victim + "/sync/state.json"
        var state = try JSONValue.parse(try #require(try FileSystem.read(statePath)))
        let zone = try #require(state["zoneID"]?.stringValue)
        guard case .object(var members) = state else {
            Issue.record("\(statePath) is not a JSON object")
            return
        }
        members.removeAll { $0.0 == "token" }
        members.append(("token", .string(token.replacing("ZONE", with: zone))))
        state = .object(members)
        try FileSystem.writeAtomically(statePath, Array(state.serialized().utf8))
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 0)
        try world.expectVictimIntact()
        #expect(try world.tabs(world.victim).values.contains("from the peer"))
    }

    // MARK: Record files

    /// Malformed records/ files, each with why: quarantined by a full fetch, which goes on with the
    /// rest; compaction still works.
    static let malformedRecordFiles: [(String, @Sendable (HostileWorld, String) throws -> String)] = [
        (
            "another record's name inside",
            { world, id in
                var record = world.tabRecord(id: id)
                record.recordName = "../../outside/canary"
                return try world.encoded(record)
            }
        ),
        ("not JSON", { _, _ in "{\"recordName\":" }),
        ("deeply nested", { _, _ in String(repeating: "[", count: 100_000) }),
        ("over 1 MiB", { world, id in try world.encoded(world.tabRecord(id: id, content: String(repeating: "x", count: 1_100_000))) }),
        ("lastModified Int64.min", { world, id in try world.encoded(world.tabRecord(id: id, fields: ["lastModified": .timestamp(.min)])) }),
        ("lastModified Int64.max", { world, id in try world.encoded(world.tabRecord(id: id, fields: ["lastModified": .timestamp(.max)])) }),
        (
            "clock counter Int64.max",
            { world, id in try world.encoded(world.tabRecord(id: id, fields: ["clock": .string("\(testNow).9223372036854775807.x")])) }
        ),
        (
            "clock time Int64.max",
            { world, id in try world.encoded(world.tabRecord(id: id, fields: ["clock": .string("9223372036854775807.0.x")])) }
        ),
        ("tag Int64.max", { world, id in try world.encoded(world.tabRecord(id: id), tag: "9223372036854775807") }),
        ("tag not a number", { world, id in try world.encoded(world.tabRecord(id: id), tag: "../../x") }),
        (
            "asset size Int64.max",
            { world, id in
                try world.encoded(
                    world.tabRecord(
                        id: id,
                        fields: ["contentAsset": .asset(AssetReference(fileChecksum: String(repeating: "a", count: 64), size: .max))]))
            }
        ),
        (
            "a number as a string",
            { world, id in
                try world.encoded(world.tabRecord(id: id)).replacing("\"value\":\(testNow)", with: "\"value\":1e400")
            }
        ),
    ]

    @Test func malformedRecordFilesAreQuarantinedAndDoNotBlockNewDevicesOrCompaction() throws {
        let world = try HostileWorld()
        var ids: [String: String] = [:]
        for (label, content) in Self.malformedRecordFiles {
            let id = Identifier.make()
            ids[id] = label
            try world.writeRecordFile("ScratchTab", id, try content(world, id))
        }
        let enable = try world.run(world.newcomer, "sync", "enable", world.backend)
        world.expectContained(enable)
        world.expectExit(enable, 1, mentioning: ["malformed"])
        #expect(try world.tabs(world.newcomer).values.contains("from the peer"), "the first sync of a new device goes on")
        let status = try world.run(world.newcomer, "sync", "status")
        #expect(status.stdout.contains("quarantined: \(ids.count)"), "\(status.stdout)")
        for (id, label) in ids { #expect(status.stdout.contains(id), "\(label) is not named in sync status") }
        let compact = try world.run(world.peer, "sync", "compact")
        world.expectContained(compact)
        world.expectExit(compact, 0)
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 0)
        try world.expectVictimIntact()
    }

    @Test func aFolderNamedLikeARecordIsMalformedNotTemporary() throws {
        let world = try HostileWorld()
        let id = Identifier.make()
        try FileSystem.makeDirectory(world.recordPath("ScratchTab", id))
        let newcomer = world.newcomer
        let enable = try world.run(newcomer, "sync", "enable", world.backend)
        world.expectContained(enable)
        world.expectExit(enable, 1, mentioning: [id])
        // A peer deleting that record, and a writer applying it, are not blocked by the folder.
        try world.appendBatch([world.delete("ScratchTab", id, seq: try world.nextSeq)])
        #expect(try world.run(world.peer, "tab", "new", "later").status == 0)
        let sync = try world.run(world.peer, "sync")
        world.expectContained(sync)
        #expect(sync.status != ExitCode.temporary, "\(sync.stderr)")
    }

    @Test func strayNamesInRecordsAreReportedNotFollowed() throws {
        let world = try HostileWorld()
        try FileSystem.writeAtomically(world.backend + "/records/ScratchTab/not-an-id", [1])
        try FileSystem.writeAtomically(world.backend + "/records/Bad Type", [1])
        try #require(symlink(world.outside, world.backend + "/records/Linked") == 0)
        let newcomer = world.newcomer
        let enable = try world.run(newcomer, "sync", "enable", world.backend)
        world.expectContained(enable)
        world.expectExit(enable, 1, mentioning: ["malformed"])
        #expect(try world.tabs(newcomer).values.contains("from the peer"))
    }

    // MARK: Journal numbers and lines

    static let malformedJournalLines: [(String, @Sendable (Int64) -> String)] = [
        (
            "seq Int64.max",
            { _ in
                #"{"seq":9223372036854775807,"device":"x","time":0,"changes":[{"seq":9223372036854775807,"op":"delete","recordType":"ScratchTab","recordName":"a"}]}"#
            }
        ),
        (
            "seq Int64.max - 1 with two changes",
            { _ in
                #"{"seq":9223372036854775806,"device":"x","time":0,"changes":[{"seq":9223372036854775806,"op":"delete","recordType":"ScratchTab","recordName":"a"},{"seq":9223372036854775807,"op":"delete","recordType":"ScratchTab","recordName":"b"}]}"#
            }
        ),
        (
            "seq -1",
            { _ in #"{"seq":-1,"device":"x","time":0,"changes":[{"seq":-1,"op":"delete","recordType":"ScratchTab","recordName":"a"}]}"# }
        ),
        ("seq 1e300", { _ in #"{"seq":1e300,"device":"x","time":0,"changes":[]}"# }),
        (
            "time Int64.min",
            { seq in
                #"{"seq":\#(seq),"device":"x","time":-9223372036854775808,"changes":[{"seq":\#(seq),"op":"delete","recordType":"ScratchTab","recordName":"a"}]}"#
            }
        ),
        (
            "change out of sequence",
            { seq in
                #"{"seq":\#(seq),"device":"x","time":0,"changes":[{"seq":9223372036854775807,"op":"delete","recordType":"ScratchTab","recordName":"a"}]}"#
            }
        ),
        (
            "seq repeated",
            { _ in #"{"seq":1,"device":"x","time":0,"changes":[{"seq":1,"op":"delete","recordType":"ScratchTab","recordName":"a"}]}"# }
        ),
        ("deeply nested", { _ in String(repeating: "[", count: 200_000) }),
        ("a 5 MiB line", { seq in #"{"seq":\#(seq),"device":""# + String(repeating: "x", count: 5 << 20) + #"","time":0,"changes":[]}"# }),
        ("not JSON", { _ in "\u{0}\u{0}\u{FF}garbage" }),
    ]

    @Test func malformedJournalLinesAreSkipped() throws {
        let world = try HostileWorld()
        var legit: [String: String] = [:]
        for (label, line) in Self.malformedJournalLines {
            try world.appendJournalLine(line(try world.nextSeq))
            // A good batch after each: the journal goes on there.
            let record = world.tabRecord(name: "after " + label)
            legit[record.recordName] = label
            try world.appendBatch([world.save(record, seq: try world.nextSeq)])
        }
        for device in [world.victim, world.newcomer] {
            let sync = device == world.victim ? try world.run(device, "sync") : try world.run(device, "sync", "enable", world.backend)
            world.expectContained(sync)
            world.expectExit(sync, 1, mentioning: ["malformed"])
            let tabs = try world.tabs(device)
            for (id, label) in legit { #expect(tabs[id] != nil, "\(label): the batch after a bad line did not arrive") }
        }
        try world.expectVictimIntact()
        try world.setUp(world.peer, "tab", "new", "x")
        let write = try world.run(world.peer, "sync")
        world.expectContained(write)
        world.expectExit(write, 1, mentioning: ["malformed"])
    }

    static let extremeRecords: [(String, @Sendable (HostileWorld) -> BackendRecord)] = [
        ("tab lastModified Int64.min", { $0.tabRecord(fields: ["lastModified": .timestamp(.min)]) }),
        ("tab lastModified Int64.max", { $0.tabRecord(fields: ["lastModified": .timestamp(.max)]) }),
        ("tab clock counter Int64.max", { $0.tabRecord(fields: ["clock": .string("\(testNow).9223372036854775807.x")]) }),
        ("tab clock time Int64.max", { $0.tabRecord(fields: ["clock": .string("9223372036854775807.0.x")]) }),
        ("tab clock time Int64.min", { $0.tabRecord(fields: ["clock": .string("-9223372036854775808.0.x")]) }),
        ("tab flags Int64.min", { $0.tabRecord(fields: ["nameLocked": .int64(.min), "languageLocked": .int64(.max)]) }),
        ("clip timestamp Int64.min", { $0.clipRecord(timestamp: .min) }),
        ("clip timestamp Int64.max", { $0.clipRecord(timestamp: .max) }),
        (
            "setting clock Int64.max",
            { _ in
                BackendRecord(
                    recordName: "clipboard.maxEntries", recordType: "Setting",
                    fields: ["clock": .string("9223372036854775807.9223372036854775807.x"), "value": .string("5")])
            }
        ),
        (
            "setting value Int64.max",
            { _ in
                BackendRecord(
                    recordName: "clipboard.maxEntries", recordType: "Setting",
                    fields: ["clock": .string("\(testNow + 1).0.x"), "value": .string("9223372036854775807")])
            }
        ),
        (
            "device setting from a peer",
            { _ in
                BackendRecord(
                    recordName: "sync.backend", recordType: "Setting",
                    fields: ["clock": .string("\(testNow + 1).0.x"), "value": .string("\"/tmp\"")])
            }
        ),
        (
            "asset size -1",
            { world in
                var record = world.tabRecord(fields: [
                    "contentAsset": .asset(AssetReference(fileChecksum: String(repeating: "a", count: 64), size: -1))
                ])
                record.fields["content"] = nil
                return record
            }
        ),
    ]

    @Test func extremeNumbersInRecordsNeverTrap() throws {
        let world = try HostileWorld()
        let first = try world.nextSeq
        try world.appendBatch(
            Self.extremeRecords.enumerated().map { index, entry in world.save(entry.1(world), seq: first + Int64(index)) })
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 1, mentioning: ["malformed"])
        try world.expectVictimIntact()
        // Editing afterwards does not trap either; a device setting from a peer was ignored.
        let mine = try #require(try world.tabs(world.victim).first { $0.value == "the victim's own tab" }?.key)
        let edit = try world.run(world.victim, "tab", "edit", mine, "edited after the attack")
        world.expectContained(edit)
        world.expectExit(edit, 0)
        let again = try world.run(world.victim, "sync")
        world.expectContained(again)
        world.expectExit(again, 1, mentioning: ["malformed"])
        #expect(try world.run(world.victim, "settings", "get", "sync.backend").stdout.contains(world.backend))
        #expect(try world.run(world.victim, "settings", "get", "clipboard.maxEntries").stdout == "1000\n")
    }

    @Test func aConflictAgainstAnExtremeClockDoesNotTrap() throws {
        let world = try HostileWorld()
        let shared = try #require(try world.tabs(world.victim).first { $0.value == "from the peer" }?.key)
        // The victim edits the shared tab while a peer saves a version with the largest clock.
        #expect(try world.run(world.victim, "tab", "edit", shared, "victim edit").status == 0)
        var stats = JournalReadStats()
        let changes = try world.journal.read(after: 0, from: nil, maxChanges: nil, stats: &stats).validChanges
        var record = try #require(changes.last { $0.recordName == shared }?.record)
        record.fields["clock"] = .string("\(Time.validRange.upperBound).\(HybridTimestamp.maxCounter).peer")
        record.fields["content"] = .string("peer edit")
        try world.appendBatch([world.save(record, seq: try world.nextSeq)])
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 0)
        let edit = try world.run(world.victim, "tab", "edit", shared, "and again")
        world.expectContained(edit)
        #expect(edit.status == 0)
        try world.expectVictimIntact()
    }

    @Test(arguments: [
        ("appliedSeq Int64.max", #"{"appliedSeq":9223372036854775807,"compactedThrough":0}"#),
        ("compactedThrough Int64.max", #"{"appliedSeq":5,"compactedThrough":9223372036854775807}"#),
        ("negative", #"{"appliedSeq":-1,"compactedThrough":-9223372036854775808}"#),
        ("1e300", #"{"appliedSeq":1e300,"compactedThrough":0}"#),
        ("deeply nested", String(repeating: "{\"a\":", count: 50_000)),
        ("huge", "{\"appliedSeq\":1,\"pad\":\"" + String(repeating: "x", count: 1 << 20) + "\"}"),
    ])
    func malformedBackendStateIsAClearFailure(_ label: String, _ content: String) throws {
        let world = try HostileWorld()
        try FileSystem.writeAtomically(world.backend + "/state.json", Array(content.utf8))
        #expect(try world.run(world.victim, "tab", "new", "pending").status == 0)
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 1, mentioning: ["state.json"])
        try world.expectVictimIntact()
        #expect(try world.run(world.victim, "sync", "status").stdout.contains("pending:    1 tab,"), "\(label): pending work stays pending")
    }

    @Test(arguments: [
        ("another format", #"{"format":"1","zoneID":"Z","created":0}"#),
        ("zone with a colon", #"{"format":1,"zoneID":"a:b","created":0}"#),
        ("zone with traversal", #"{"format":1,"zoneID":"../../outside","created":0}"#),
        ("created Int64.min", #"{"format":1,"zoneID":"Z","created":-9223372036854775808}"#),
        ("format Int64.max", #"{"format":9223372036854775807,"zoneID":"Z","created":0}"#),
        ("deeply nested", String(repeating: "[", count: 100_000)),
        ("huge", "{\"format\":1,\"zoneID\":\"Z\",\"created\":0,\"pad\":\"" + String(repeating: "x", count: 1 << 20) + "\"}"),
    ])
    func hostileZoneFilesNeverTrap(_ label: String, _ content: String) throws {
        let world = try HostileWorld()
        try FileSystem.writeAtomically(world.backend + "/zone.json", Array(content.utf8))
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        #expect(sync.status == 0 || sync.status == 1, "\(label): \(sync.stderr)")
        if sync.status != 0 { world.expectExit(sync, 1) }
        try world.expectVictimIntact()
    }

    // MARK: Symlinks and FIFOs in the backend

    /// Each backend path a peer could replace by a symlink to a file or folder outside.
    static let backendPaths: [(String, @Sendable (HostileWorld) throws -> String, Bool)] = [
        ("journal segment", { try $0.lastSegment }, false),
        ("records/ScratchTab folder", { $0.backend + "/records/ScratchTab" }, true),
        (
            "a record file",
            { world in
                let id = try #require(try world.tabs(world.peer).first { $0.value == "from the peer" }?.key)
                return world.recordPath("ScratchTab", id)
            }, false
        ),
        ("assets folder", { $0.backend + "/assets" }, true),
        ("lock", { $0.backend + "/lock" }, false),
        ("state.json", { $0.backend + "/state.json" }, false),
        ("zone.json", { $0.backend + "/zone.json" }, false),
        ("journal folder", { $0.journalDirectory }, true),
    ]

    @Test(arguments: backendPaths.indices)
    func symlinksInTheBackendAreNeverFollowed(_ index: Int) throws {
        let (label, path, isFolder) = Self.backendPaths[index]
        let world = try HostileWorld()
        // Pending work of every kind, a large tab included (it travels as an asset).
        try world.setUp(world.victim, "tab", "new", "pending")
        try world.setUp(world.victim, "tab", "new", stdin: String(repeating: "large ", count: 200_000))
        try world.replaceWithSymlink(try path(world), to: isFolder ? world.outside + "/dir" : world.target)
        for device in [world.victim, world.peer] {
            let sync = try world.run(device, "sync")
            world.expectContained(sync)
            #expect(sync.status == 0 || sync.status == 1, "\(label): \(sync.stderr)")
            #expect(sync.status == 0 || sync.stderr.contains("Error:"), "\(label)")
        }
        let compact = try world.run(world.peer, "sync", "compact")
        world.expectContained(compact)
        try world.expectVictimIntact()
        // A dangling link must not be created by anything either.
        try world.replaceWithSymlink(try path(world), to: world.outside + "/created")
        let again = try world.run(world.victim, "sync")
        world.expectContained(again)
        #expect(!FileSystem.exists(world.outside + "/created"), "\(label): a dangling link's target was created")
    }

    @Test(arguments: backendPaths.indices.filter { !backendPaths[$0].2 })
    func fifosInTheBackendAreRefusedWithoutHanging(_ index: Int) throws {
        let (label, path, _) = Self.backendPaths[index]
        let world = try HostileWorld()
        #expect(try world.run(world.victim, "tab", "new", "pending").status == 0)
        try world.replaceWithFIFO(try path(world))
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        #expect(sync.status == 0 || sync.status == 1, "\(label): exit \(sync.status): \(sync.stderr)")
        // Meanwhile the data directory is not held: a clipboard watcher keeps working.
        let add = try world.run(world.victim, "clip", "add", "copied meanwhile")
        #expect(add.status == 0, "\(label): \(add.stderr)")
        try world.expectVictimIntact()
    }

    /// A journal segment that is no plain file of a sane size is skipped and named like a malformed
    /// line (exit 1, in sync status and sync log); everything else still syncs, both ways.
    @Test(arguments: ["symlink", "FIFO", "oversize"])
    func anUnreadableJournalSegmentIsQuarantined(_ kind: String) throws {
        let world = try HostileWorld()
        try world.setUp(world.peer, "tab", "new", "lost with the segment")
        try world.setUp(world.peer, "sync")
        let segment = try world.lastSegment
        switch kind {
        case "symlink": try world.replaceWithSymlink(segment, to: world.target)
        case "FIFO": try world.replaceWithFIFO(segment)
        default: try #require(truncate(segment, off_t(BackendLimits.maxSegmentBytes + 1)) == 0)
        }
        try world.setUp(world.victim, "tab", "new", "sent past it")
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 1, mentioning: ["malformed", segment])
        #expect(try world.run(world.victim, "sync", "status").stdout.contains(segment), "\(kind): not named in sync status")
        #expect(try world.run(world.victim, "sync", "log").stdout.contains(segment), "\(kind): not named in sync log")
        let peerSync = try world.run(world.peer, "sync")
        world.expectContained(peerSync)
        #expect(peerSync.status == 0 || peerSync.status == 1, "\(kind): \(peerSync.stderr)")
        #expect(try world.tabs(world.peer).values.contains("sent past it"), "\(kind): the victim's tab did not arrive")
        // Later syncs go on from the segment after it.
        try world.setUp(world.peer, "tab", "new", "sent later")
        #expect(try world.run(world.peer, "sync").status != ExitCode.temporary)
        #expect(try world.run(world.victim, "sync").status != ExitCode.temporary)
        #expect(try world.tabs(world.victim).values.contains("sent later"), "\(kind)")
        try world.expectVictimIntact()
    }

    @Test func aFIFOAssetIsRefusedWithoutHanging() throws {
        let world = try HostileWorld()
        try world.setUp(world.peer, "tab", "new", stdin: String(repeating: "large ", count: 200_000))
        try world.setUp(world.peer, "sync")
        let asset = try #require(try FileSystem.list(world.backend + "/assets").first)
        try world.replaceWithFIFO(world.backend + "/assets/" + asset)
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 1, mentioning: ["malformed"])
        try world.expectVictimIntact()
    }

    @Test func anAssetLargerThanItsReferenceIsNotRead() throws {
        let world = try HostileWorld()
        try world.setUp(world.peer, "tab", "new", stdin: String(repeating: "large ", count: 200_000))
        try world.setUp(world.peer, "sync")
        let asset = world.backend + "/assets/" + (try #require(try FileSystem.list(world.backend + "/assets").first))
        try FileSystem.writeAtomically(asset, [UInt8](repeating: 0x41, count: 2_000_000))
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 1, mentioning: ["too large"])
        try world.expectVictimIntact()
    }

    // MARK: A backend that is not there

    @Test(arguments: ["deleted", "emptied"])
    func aMissingBackendIsNeverRecreatedBySync(_ how: String) throws {
        let world = try HostileWorld()
        #expect(try world.run(world.victim, "tab", "new", "made while it was gone").status == 0)
        _ = try Process.run("/bin/rm", ["-rf", world.backend])
        if how == "emptied" { try FileSystem.makeDirectory(world.backend) }
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, ExitCode.temporary, mentioning: [world.backend, "unmounted", "sync enable"])
        #expect((try? FileSystem.list(world.backend)) ?? [] == [], "nothing was created in place of the backend")
        #expect(FileSystem.exists(world.backend) == (how == "emptied"))
        #expect(try world.run(world.victim, "sync", "status").stdout.contains("pending:    1 tab,"))
        // Re-created on purpose, it gets everything again.
        let enable = try world.run(world.victim, "sync", "enable", world.backend)
        world.expectExit(enable, 0)
        let newcomer = world.newcomer
        #expect(try world.run(newcomer, "sync", "enable", world.backend).status == 0)
        #expect(Set(try world.tabs(newcomer).values).isSuperset(of: ["made while it was gone", "the victim's own tab", "from the peer"]))
        try world.expectVictimIntact()
    }

    @Test func enablingUnderAMissingParentIsATypo() throws {
        let world = try HostileWorld()
        let typo = world.scratch.path + "/no-such-parent/backend"
        let enable = try world.run(world.victim, "sync", "enable", typo)
        world.expectContained(enable)
        world.expectExit(enable, 1, mentioning: ["does not exist"])
        #expect(!FileSystem.exists(world.scratch.path + "/no-such-parent"))
        #expect(try world.run(world.victim, "settings", "get", "sync.backend").stdout.contains(world.backend), "the setting is unchanged")
    }

    @Test func aTokenFromAnotherZoneRecoversByItself() throws {
        let world = try HostileWorld()
        let statePath = world.victim + "/sync/state.json"
        let text = String(decoding: try #require(try FileSystem.read(statePath)), as: UTF8.self)
        let zone = try #require(try JSONValue.parse(text)["zoneID"]?.stringValue)
        try FileSystem.writeAtomically(statePath, Array(text.replacing("\"1:\(zone):", with: "\"1:OTHERZONE:").utf8))
        #expect(try world.run(world.peer, "tab", "new", "new on the peer").status == 0)
        #expect(try world.run(world.peer, "sync").status == 0)
        let sync = try world.run(world.victim, "sync")
        world.expectContained(sync)
        world.expectExit(sync, 0)
        #expect(try world.tabs(world.victim).values.contains("new on the peer"))
        #expect(try world.run(world.peer, "sync").status == 0)
        #expect(Set(try world.tabs(world.peer).values) == Set(try world.tabs(world.victim).values))
        try world.expectVictimIntact()
    }

    @Test func backendAccessibleByOthersIsWarnedAbout() throws {
        let world = try HostileWorld()
        try #require(chmod(world.backend, 0o777) == 0)
        let sync = try world.run(world.victim, "sync")
        #expect(sync.status == 0)
        #expect(sync.stderr.split(separator: "\n").filter { $0.contains("accessible by other users") }.count == 1, "\(sync.stderr)")
    }
}

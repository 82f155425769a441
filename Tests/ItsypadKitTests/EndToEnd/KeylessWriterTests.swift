import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Someone who can write an encrypted backend but has no key changes every field of `zone.json`
/// and `device.json`, removes folders, and truncates and reorders journals. Each case runs the
/// built binary on two synced devices: whatever the sync then reports, not one synced item is
/// lost on either device, and nothing traps.
@Suite struct KeylessWriterTests {
    /// Two devices syncing through one encrypted backend, each with a tab and a clip of its own.
    struct Fleet {
        let scratch = TemporaryDirectory()
        let a = Device()
        let b = Device()
        var backend: String { scratch.path + "/backend" }
        static let tabs = ["tab of a", "tab of b"]
        static let clips = ["clip of a", "clip of b"]

        init() throws {
            try expectSuccess(a.run("tab", "new", "--name", "ta", Self.tabs[0]))
            try expectSuccess(a.run("clip", "add", Self.clips[0]))
            try expectSuccess(b.run("tab", "new", "--name", "tb", Self.tabs[1]))
            try expectSuccess(b.run("clip", "add", Self.clips[1]))
            try expectSuccess(a.run("sync", "enable", backend, "--encrypt"))
            let key = try a.run("sync", "key", "show").stdout
            try expectSuccess(b.run("sync", "enable", backend, "--key", "-", stdin: key))
            try expectSuccess(a.run("sync"))
            try expectEverythingKept()
        }

        func expectSuccess(_ result: RunResult, sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(result.status == 0, "\(result.stderr)", sourceLocation: sourceLocation)
        }

        /// Every item of both devices is on both devices.
        func expectEverythingKept(_ label: String = "", sourceLocation: SourceLocation = #_sourceLocation) throws {
            for device in [a, b] {
                let tabs = try device.run("tab", "ls", "--json").stdout
                let clips = try device.run("clip", "ls", "--json").stdout
                for text in Self.tabs { #expect(tabs.contains(text), "\(label): \(text) lost", sourceLocation: sourceLocation) }
                for text in Self.clips { #expect(clips.contains(text), "\(label): \(text) lost", sourceLocation: sourceLocation) }
            }
        }

        /// Both devices sync twice; none may trap or hang, and each exits 0 or 1 with a reason.
        func syncBoth(_ label: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [RunResult] {
            var results: [RunResult] = []
            for _ in 0..<2 {
                for device in [a, b] {
                    let result = try device.run("sync")
                    #expect(result.signal == nil && !result.timedOut, "\(label): \(result.stderr)", sourceLocation: sourceLocation)
                    #expect(
                        [0, 1, 75].contains(result.status), "\(label): exit \(result.status) \(result.stderr)",
                        sourceLocation: sourceLocation)
                    if result.status != 0 {
                        #expect(!result.stderr.isEmpty, "\(label): a failure says why", sourceLocation: sourceLocation)
                    }
                    results.append(result)
                }
            }
            return results
        }

        func devices() throws -> [String] { try FileSystem.list(backend + "/devices").sorted() }

        static func editJSON(_ path: String, _ edit: (inout [(String, JSONValue)]) -> Void) throws {
            guard case .object(var members) = try JSONValue.parse(#require(try FileSystem.read(path))) else {
                Issue.record("\(path) is not a JSON object")
                return
            }
            edit(&members)
            try FileSystem.writeAtomically(path, JSONValue.object(members).serializedBytes())
        }
    }

    static func set(_ key: String, _ value: JSONValue) -> (inout [(String, JSONValue)]) -> Void {
        { members in
            members.removeAll { $0.0 == key }
            if value != .null { members.append((key, value)) }
        }
    }

    /// A changed value for each member of `zone.json` (null: the member removed).
    static let zoneEdits: [(String, String, JSONValue)] = [
        ("zoneID changed", "zoneID", .string("00000000-0000-0000-0000-000000000000")),
        ("format 1", "format", .integer(1)),
        ("format 2", "format", .integer(2)),
        ("format 4 (plain)", "format", .integer(4)),
        ("format 99", "format", .integer(99)),
        ("layout 1", "layout", .integer(1)),
        ("layout 2", "layout", .integer(2)),
        ("layout removed", "layout", .null),
        ("created changed", "created", .integer(1)),
        ("created Int64.min", "created", .integer(.min)),
        ("encryption removed", "encryption", .null),
        ("encryption renamed", "encryption", .string("none")),
        ("keyCheckValue removed", "keyCheckValue", .null),
        ("keyCheckValue changed", "keyCheckValue", .string(String(repeating: "0", count: 32))),
        ("mac removed", "mac", .null),
        ("mac changed", "mac", .string(String(repeating: "0", count: 64))),
    ]

    @Test(arguments: zoneEdits.indices)
    func aChangedZoneFileLosesNothing(_ index: Int) throws {
        let (label, key, value) = Self.zoneEdits[index]
        let fleet = try Fleet()
        try Fleet.editJSON(fleet.backend + "/zone.json", Self.set(key, value))
        let results = try fleet.syncBoth(label)
        try fleet.expectEverythingKept(label)
        // Under the same zone id nothing of the zone's identity may change: refused, with the reason named.
        if key != "zoneID" {
            #expect(results.allSatisfy { $0.status == 1 }, "\(label): \(results.map(\.status))")
            let status = try fleet.a.run("sync", "status").stdout
            #expect(
                status.contains("last error: ") && !status.contains("last error: none"), "\(label): sync status names the reason: \(status)"
            )
        }
    }

    /// A changed value for each member of the other device's `device.json`.
    static let deviceEdits: [(String, String, JSONValue)] = [
        ("format", "format", .integer(1)), ("deviceID", "deviceID", .string("x")), ("instance", "instance", .string("other")),
        ("zoneID", "zoneID", .string("00000000-0000-0000-0000-000000000000")), ("zoneCreated", "zoneCreated", .integer(.max)),
        ("zoneKeyCheckValue", "zoneKeyCheckValue", .string(String(repeating: "0", count: 32))),
        ("created Int64.min", "created", .integer(.min)), ("lastSync Int64.min", "lastSync", .integer(.min)),
        ("lastSync 0", "lastSync", .integer(0)), ("appliedSeq max", "appliedSeq", .integer(.max)),
        ("appliedSeq 0", "appliedSeq", .integer(0)), ("seen everything", "seen", .null),
        ("collectedThrough", "collectedThrough", .string("garbage")),
        ("tombstonesSweptThrough max", "tombstonesSweptThrough", .integer(.max)),
    ]

    @Test(arguments: deviceEdits.indices)
    func aChangedDeviceFileLosesNothing(_ index: Int) throws {
        let (label, key, value) = Self.deviceEdits[index]
        let fleet = try Fleet()
        for device in try fleet.devices() {
            try Fleet.editJSON(fleet.backend + "/devices/\(device)/device.json", Self.set(key, value))
        }
        _ = try fleet.syncBoth(label)
        try fleet.expectEverythingKept(label)
    }

    static let removals: [(String, [String])] = [
        ("records", ["records"]), ("devices", ["devices"]), ("records and devices", ["records", "devices"]),
    ]

    @Test(arguments: removals.indices)
    func removedFoldersLoseNothing(_ index: Int) throws {
        let (label, folders) = Self.removals[index]
        let fleet = try Fleet()
        for folder in folders { _ = try Process.run("/bin/rm", ["-rf", fleet.backend + "/" + folder]) }
        _ = try fleet.syncBoth(label)
        try fleet.expectEverythingKept(label)
        // What the backend lost is sent again.
        _ = try fleet.syncBoth(label)
        let newcomer = Device()
        let key = try fleet.a.run("sync", "key", "show").stdout
        _ = try newcomer.run("sync", "enable", fleet.backend, "--key", "-", stdin: key)
        let tabs = try newcomer.run("tab", "ls", "--json").stdout
        let clips = try newcomer.run("clip", "ls", "--json").stdout
        for text in Fleet.tabs { #expect(tabs.contains(text), "\(label): the backend holds \(text) again") }
        for text in Fleet.clips { #expect(clips.contains(text), "\(label): the backend holds \(text) again") }
    }

    /// After compaction, a record type's folder replaced by a symbolic link stops nobody: a new
    /// device joins and the others sync on, losing nothing; each names the folder it skipped (exit
    /// 1, as for anything malformed it skips) until the folder is put right.
    @Test func aSymlinkedRecordTypeFolderStopsNobodyAndIsNamed() throws {
        let fleet = try Fleet()
        for device in [fleet.a, fleet.b] { try fleet.expectSuccess(device.run("sync", "compact")) }
        let folder = fleet.backend + "/records/ClipboardEntry"
        let outside = fleet.scratch.path + "/outside"
        try FileSystem.makeDirectory(outside)
        _ = try Process.run("/bin/mv", [folder, outside + "/ClipboardEntry"])
        try #require(symlink(outside + "/ClipboardEntry", folder) == 0)
        let newcomer = Device()
        let key = try fleet.a.run("sync", "key", "show").stdout
        let joined = try newcomer.run("sync", "enable", fleet.backend, "--key", "-", stdin: key)
        #expect(joined.status == 1 && joined.stderr.contains("records/ClipboardEntry"), "\(joined.stderr)")
        #expect(try newcomer.run("sync", "status").stdout.contains("records/ClipboardEntry"))
        _ = try fleet.syncBoth("symlinked type folder")
        for device in [fleet.a, fleet.b] {
            let synced = try device.run("sync")
            #expect(synced.status == 1 && synced.stderr.contains("records/ClipboardEntry"), "\(synced.stderr)")
            #expect(try device.run("sync", "status").stdout.contains("records/ClipboardEntry"))
        }
        try fleet.expectEverythingKept("symlinked type folder")
        // Put right, it is no longer named.
        try #require(unlink(folder) == 0)
        _ = try Process.run("/bin/mv", [outside + "/ClipboardEntry", folder])
        for device in [fleet.a, fleet.b, newcomer] {
            try fleet.expectSuccess(device.run("sync"))
            #expect(try !device.run("sync", "status").stdout.contains("records/ClipboardEntry"))
        }
        try fleet.expectEverythingKept("symlinked type folder put right")
    }

    static let journalEdits = ["emptied", "truncated", "reordered", "removed"]

    @Test(arguments: journalEdits)
    func damagedJournalsLoseNothing(_ how: String) throws {
        let fleet = try Fleet()
        try Self.damageJournals(in: fleet.backend, how)
        _ = try fleet.syncBoth(how)
        try fleet.expectEverythingKept(how)
    }

    /// Damages every device's journal in `backend` as `how` (one of `journalEdits`) says.
    static func damageJournals(in backend: String, _ how: String) throws {
        for device in try FileSystem.list(backend + "/devices") {
            let journal = backend + "/devices/\(device)/journal"
            if how == "removed" {
                _ = try Process.run("/bin/rm", ["-rf", journal])
                continue
            }
            for segment in try FileSystem.list(journal) {
                let path = journal + "/" + segment
                let bytes = try #require(try FileSystem.read(path))
                var lines = bytes.split(separator: UInt8(ascii: "\n")).map(Array.init)
                switch how {
                case "emptied": lines = []
                case "truncated": lines = Array(lines.prefix(1))
                default: lines.reverse()
                }
                try FileSystem.writeAtomically(path, Array(lines.joined(separator: [10])) + [10])
            }
        }
    }
}

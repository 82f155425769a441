import Testing

@testable import ItsypadSupport

/// A removed clip's text does not stay on disk: once the command that removed it returns, no file
/// of the data directory holds it (the log, its index, the queue, the ledger, anything staged), and
/// once `sync compact` returns, no file of an unencrypted backend does.
@Suite struct RemovedTextTests {
    static let secret = "the removed words zq"

    /// The files under `directory` whose bytes contain `text` (symbolic links are not followed).
    static func files(containing text: String, under directory: String) throws -> [String] {
        let found = try Process.run("/usr/bin/grep", ["-rlaF", "--", text, directory])
        #expect(found.status == 0 || found.status == 1, "grep: \(found.stderr)")
        return found.stdout.split(separator: "\n").map(String.init)
    }

    static func expectGone(from directory: String, _ what: String) throws {
        let left = try files(containing: secret, under: directory)
        #expect(left.isEmpty, "\(what): the removed text is still in \(left)")
    }

    /// Adds the secret between two other clips and returns its id.
    static func addSecret(_ device: Device) throws -> String {
        try device.run("clip", "add", "before")
        let id = try device.run("clip", "add", secret).stdout.trimmingNewline
        try device.run("clip", "add", "after")
        #expect(try !files(containing: secret, under: device.dataDir).isEmpty)
        return id
    }

    static let removals: [(String, @Sendable (Device, String) throws -> RunResult)] = [
        ("clip rm", { device, id in try device.run("clip", "rm", id) }),
        ("clip clear", { device, _ in try device.run("clip", "clear") }),
        ("clip prune", { device, _ in try device.run("clip", "prune", "--keep", "1") }),
        (
            "eviction at clipboard.maxEntries",
            { device, _ in
                try device.run("settings", "set", "clipboard.maxEntries", "2")
                return try device.run("clip", "add", "evicts the oldest")
            }
        ),
    ]

    @Test(arguments: removals.indices)
    func aRemovalLeavesNoCopyInTheDataDirectory(_ index: Int) throws {
        let (name, remove) = Self.removals[index]
        let device = Device()
        let id = try Self.addSecret(device)
        let removed = try remove(device, id)
        #expect(removed.status == 0, "\(name): \(removed.stderr)")
        try Self.expectGone(from: device.dataDir, name)
        // The history still opens and changes.
        #expect(try device.run("clip", "ls").status == 0)
        #expect(try device.run("clip", "add", "later").status == 0)
        try Self.expectGone(from: device.dataDir, name + ", then an add")
    }

    @Test func aRemovalBeforeAndAfterTheFirstSyncLeavesNoCopy() throws {
        let device = Device()
        let backend = device.directory.path + "/backend"
        #expect(try device.run("sync", "enable", backend).status == 0)
        let id = try Self.addSecret(device)
        #expect(try device.run("sync").status == 0)
        #expect(try device.run("clip", "rm", id).status == 0)
        try Self.expectGone(from: device.dataDir, "clip rm on a syncing device")
        #expect(try device.run("sync").status == 0)
        try Self.expectGone(from: device.dataDir, "the removal sent")
    }

    @Test func anImportThatRemovesAClipLeavesNoCopy() throws {
        let device = Device()
        let id = "9F9619FF-8B86-D011-B42D-00C04FC964FF"
        let clip = #"{"id":"\#(id)","text":"\#(Self.secret)","timestamp":754000002}"#
        let kept = #"{"id":"8F9619FF-8B86-D011-B42D-00C04FC964FF","text":"kept","timestamp":754000001}"#
        #expect(try device.run("import", "--kvs", "-", stdin: #"{"clipboard":[\#(kept),\#(clip)]}"#).status == 0)
        #expect(try device.run("clip", "ls").stdout.contains(Self.secret))
        let imported = try device.run("import", "--kvs", "-", stdin: #"{"clipboard":[],"deletedClipboardIDs":["\#(id)"]}"#)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try device.run("clip", "ls").stdout == "8f9619ff\tkept\n")
        try Self.expectGone(from: device.dataDir, "an import's deletion")
    }

    @Test func aRemovalFromAnotherDeviceLeavesNoCopyHereNorInTheBackendAfterCompaction() throws {
        let first = Device()
        let second = Device()
        let backend = first.directory.path + "/backend"
        for device in [first, second] { #expect(try device.run("sync", "enable", backend).status == 0) }
        let id = try Self.addSecret(first)
        #expect(try first.run("sync").status == 0)
        #expect(try second.run("sync").status == 0)
        #expect(try second.run("clip", "show", id).stdout == Self.secret)
        #expect(try second.run("clip", "rm", id).status == 0)
        try Self.expectGone(from: second.dataDir, "the remover's data directory")
        #expect(try second.run("sync").status == 0)
        #expect(try first.run("sync").status == 0)
        try Self.expectGone(from: first.dataDir, "a removal applied by a sync")
        for device in [first, second] {
            let compacted = try device.run("sync", "compact")
            #expect(compacted.status == 0, "\(compacted.stderr)")
        }
        try Self.expectGone(from: backend, "the backend after sync compact on each device")
        // Both devices still sync, and still agree.
        for device in [first, second] { #expect(try device.run("sync").status == 0) }
        #expect(try first.run("clip", "ls").stdout == second.run("clip", "ls").stdout)
    }
}

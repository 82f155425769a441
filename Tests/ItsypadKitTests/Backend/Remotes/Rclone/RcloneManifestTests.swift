import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

/// The manifest as written and read back (see `RcloneManifest`): every entry with its stamps and
/// whether this device sent it, a line each in the order of the paths; a line of other than four
/// fields is skipped, and another mirror's manifest is none.
struct RcloneManifestTests {
    let scratch = TemporaryDirectory()

    @Test func aManifestWrittenIsReadBackTheSame() throws {
        try FileSystem.makeDirectory(scratch.file("mirror"))
        try FileSystem.makeDirectory(scratch.file("other"))
        let files = FileTree(root: scratch.path)
        let mirror = try #require(try files.status(scratch.file("mirror")))
        var manifest = RcloneManifest()
        manifest.fullyListed = 1_796_596_000_960
        manifest["zone.json"] = .init(remote: "412 2026-12-06 10:00:00.5", local: "412:1796596000.500000000", sent: false)
        manifest["records/ScratchTab/0a/x.A.json"] = .init(remote: "", local: "", sent: false)
        manifest["devices/A/journal/0000000000000001.log"] = .init(remote: "", local: "30:1796596000.250000000", sent: true)
        manifest["records/Clip/ff/y.A.json"] = .init(remote: "9 2026-12-06 10:00:01", local: "9:1796596001.000000000", sent: true)
        let path = scratch.file("manifest")
        try manifest.write(path, mirror: mirror)
        #expect(RcloneManifest.read(path, mirror: mirror) == manifest)

        let text = String(decoding: try #require(try FileSystem.read(path)), as: UTF8.self)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first == "mirror\t\(mirror.inode)\t1796596000960")
        #expect(lines.dropFirst().map { $0.prefix { $0 != "\t" } } == manifest.entries.keys.sorted().map { Substring($0) })
        #expect(lines.contains("devices/A/journal/0000000000000001.log\t\t30:1796596000.250000000\ts"))
        #expect(lines.contains("records/ScratchTab/0a/x.A.json\t\t\t-"))

        try FileSystem.writeAtomically(path, Array((text + "three\tfields\tonly\nfive\ta\tb\tc\td\n").utf8))
        #expect(RcloneManifest.read(path, mirror: mirror) == manifest)
        #expect(RcloneManifest.read(path, mirror: try #require(try files.status(scratch.file("other")))) == nil)
    }

    /// Saving appends the changes to the log, which a reader applies over the manifest (a torn last
    /// line left out); a log grown past its bound is folded into the manifest, and a manifest made
    /// anew drops the log.
    @Test func changesAreAppendedToTheLogAndReadBackOverTheManifest() throws {
        try FileSystem.makeDirectory(scratch.file("mirror"))
        let mirror = try #require(try FileTree(root: scratch.path).status(scratch.file("mirror")))
        let file = RcloneManifestFile(scratch.file("manifest"))
        var manifest = RcloneManifest()
        for index in 0..<100 { manifest["records/ScratchTab/0a/r\(index).A.json"] = .init(local: "1:\(index).0", sent: true) }
        try file.replace(with: manifest, mirror: mirror)
        let whole = try #require(try FileSystem.read(file.path))
        manifest.markSaved()

        manifest["records/ScratchTab/0a/r1.A.json"] = nil
        manifest["devices/B/journal/0000000000000001.log"] = .init(remote: "30 2026-12-06 10:00:00", local: "30:5.0")
        manifest.fullyListed = 1_796_596_000_960
        try file.save(&manifest, mirror: mirror)
        #expect(!manifest.hasChanges)
        #expect(try FileSystem.read(file.path) == whole, "the manifest itself is not written again")
        let log = String(decoding: try #require(try FileSystem.read(file.logPath)), as: UTF8.self)
        #expect(
            log
                == "manifest\t\(manifest.token)\nlisted\t1796596000960\ndevices/B/journal/0000000000000001.log\t30 2026-12-06 10:00:00\t30:5.0\t-\nrecords/ScratchTab/0a/r1.A.json\t\n"
        )
        // A reader that kept nothing (another process) reads both; a torn line is left out.
        try FileSystem.writeAtomically(file.logPath, Array((log + "records/ScratchTab/0a/r2.A.json\t\t").utf8))
        #expect(RcloneManifestFile(file.path).read(mirror: mirror) == manifest)

        // Past its bound (64 KiB here), the log is folded into the manifest.
        var grown = manifest
        let reader = RcloneManifestFile(file.path)
        _ = reader.read(mirror: mirror)
        for round in 0..<600 {
            grown["records/ScratchTab/0b/s\(round).A.json"] = .init(local: "\(round):\(String(repeating: "9", count: 90))", sent: true)
            try reader.save(&grown, mirror: mirror)
        }
        #expect((try FileTree(root: scratch.path).status(file.logPath))?.size ?? 0 < 64 << 10)
        #expect(RcloneManifest.read(file.path, mirror: mirror)?.entries.count ?? 0 > manifest.entries.count)
        #expect(RcloneManifestFile(file.path).read(mirror: mirror) == grown)

        try reader.replace(with: RcloneManifest(), mirror: mirror)
        #expect(try FileTree(root: scratch.path).status(file.logPath) == nil)
        #expect(RcloneManifestFile(file.path).read(mirror: mirror) == RcloneManifest())
    }

    /// A log is read only over the manifest it was begun over: not over one an earlier version wrote
    /// whole (which knows no log and leaves it), whose versions in turn read a manifest with a log
    /// as never listed whole, so that they list the whole remote rather than trust it.
    @Test func aLogIsReadOnlyOverTheManifestItFollows() throws {
        try FileSystem.makeDirectory(scratch.file("mirror"))
        let mirror = try #require(try FileTree(root: scratch.path).status(scratch.file("mirror")))
        let file = RcloneManifestFile(scratch.file("manifest"))
        var manifest = RcloneManifest()
        manifest.fullyListed = 1_796_596_000_960
        manifest["records/ScratchTab/0a/r0.A.json"] = .init(local: "1:0.0", sent: true)
        try file.replace(with: manifest, mirror: mirror)
        manifest = try #require(file.read(mirror: mirror))
        let header = String(decoding: try #require(try FileSystem.read(file.path)), as: UTF8.self).prefix { $0 != "\n" }
        #expect(header == "mirror\t\(mirror.inode)\t1796596000960\t\(manifest.token)", "a fourth field: the token")
        manifest["records/ScratchTab/0a/r1.A.json"] = .init(local: "1:1.0", sent: true)
        try file.save(&manifest, mirror: mirror)

        // An earlier version syncs: it rewrites the manifest whole, with no token, and leaves the log.
        var earlier = RcloneManifest()
        earlier["records/ScratchTab/0a/r2.A.json"] = .init(remote: "1 2026-12-06 10:00:00", local: "1:2.0")
        try earlier.write(file.path, mirror: mirror)
        let reader = RcloneManifestFile(file.path)
        var read = try #require(reader.read(mirror: mirror))
        #expect(read == earlier, "the log of another manifest is not read over it")

        read["records/ScratchTab/0a/r3.A.json"] = .init(local: "1:3.0", sent: true)
        try reader.save(&read, mirror: mirror)
        var expected = earlier
        expected["records/ScratchTab/0a/r3.A.json"] = .init(local: "1:3.0", sent: true)
        #expect(RcloneManifestFile(file.path).read(mirror: mirror) == expected)
        #expect(try FileTree(root: scratch.path).status(file.logPath) == nil, "the stale log went with the save")
    }
}

/// What one sync of one change each way does with a manifest of a few hundred files: reads it
/// once and appends its changes to `manifest.log`, instead of reading it twice and writing it
/// whole four times (after each download, after each part of the send).
@Suite(.needs(RcloneServer.Kind.rcloneWebDAV.tools + ["strace"]))
struct RcloneManifestSyncTests {
    @Test func oneChangeEachWayReadsTheManifestOnceAndAppendsItsChanges() throws {
        let fleet = try RcloneFleet(.rcloneWebDAV, devices: 2)
        let (a, b) = (fleet.devices[0], fleet.devices[1])
        FirstPushTests.importing("tabs", count: 300, into: a, fields: FirstPushTests.tab)
        func succeed(_ device: Device, _ arguments: String...) throws {
            let result = try device.runArguments(arguments, environment: fleet.environment)
            try #require(result.status == 0, "\(arguments.joined(separator: " ")): \(result.stderr)")
        }
        for round in 0..<2 {
            try succeed(a, "sync")
            try succeed(b, "sync")
            try succeed(b, "clip", "add", "B round \(round)")
        }
        try succeed(b, "sync")
        try succeed(a, "clip", "add", "A measured")
        let lines = try RcloneSendTests.tracedSync(a, environment: fleet.environment, calls: "openat,renameat,renameat2")
        #expect(try a.run("clip", "ls").stdout.contains("B round 1"))
        // `openat(…, "manifest", O_RDONLY…) = 7</…/sync/rclone/manifest>`; a replacement is a rename onto "manifest".
        let reads = lines.filter { $0.contains("/sync/rclone/manifest>") && $0.contains("O_RDONLY") }
        let replacements = lines.filter { $0.hasPrefix("renameat") || $0.contains(" renameat") }.filter { $0.contains("\"manifest\")") }
        let appends = lines.filter { $0.contains("/sync/rclone/manifest.log>") && $0.contains("O_RDWR") }
        #expect(reads.count == 1, "\(reads.count) reads of the manifest:\n\(reads.joined(separator: "\n"))")
        #expect(replacements.isEmpty, "\(replacements.count) manifests written whole:\n\(replacements.joined(separator: "\n"))")
        #expect(!appends.isEmpty, "the changes were not appended to manifest.log")
    }
}

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
}

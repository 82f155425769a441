import Testing

@testable import ItsypadBackend
@testable import ItsypadStore
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The data directory's privacy check looks at an rclone mirror's folder, not at each of its
/// files: thousands of them were read on every command.
@Suite(.needs(RcloneServer.Kind.rcloneWebDAV.tools))
struct RcloneMirrorPrivacyTests {
    @Test func theMirrorFolderIsCheckedNotEachOfItsFiles() throws {
        let fleet = try RcloneFleet(.rcloneWebDAV, devices: 1)
        let device = fleet.devices[0]
        let layout = DataDirectoryLayout(root: device.dataDir)
        let configured = try ConfiguredBackend(
            .remote(scheme: "rclone", address: "server:itsypad"), mirrors: layout.sync, environment: fleet.environment)
        #expect(configured.path == layout.rcloneMirror)
        let file = try #require(try RcloneRemote.transferredFiles(in: layout.rcloneMirror).first).path
        try #require(chmod(layout.rcloneMirror + "/" + file, 0o666) == 0)
        let listed = try device.run("clip", "ls")
        #expect(listed.status == 0, "\(listed.stderr)")
        try #require(chmod(layout.rcloneMirror, 0o777) == 0)
        let refused = try device.run("clip", "ls")
        #expect(refused.status == 1 && refused.stderr.contains("chmod 700 \(layout.rcloneMirror)"), "\(refused.stderr)")
    }
}

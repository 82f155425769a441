import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A password in an rclone connection string (`rclone::sftp,…,pass=SECRET:path`) reaches neither a
/// terminal nor a file but the setting's own: rclone echoes the string in its errors, and those
/// are kept in `sync status`, the state and the activity log.
@Suite(.needs(RcloneServer.Kind.rcloneSFTP.tools))
struct RcloneSecretsTests {
    @Test func aConnectionStringsPasswordIsLeftOutOfMessagesStatusAndLogs() throws {
        let server = try RcloneServer(.rcloneSFTP)
        let obscured = Text.trim(try Process.run("rclone", ["obscure", RcloneServer.password]).stdout)
        let location = "rclone::sftp,host=127.0.0.1,port=\(server.port),user=\(RcloneServer.user),pass=\(obscured):itsypad"
        let device = Device()
        let environment = ["RCLONE_CONFIG": "/dev/null", "ITSYPAD_RCLONE_TIMEOUT": "60"]
        let enabled = try device.runArguments(["sync", "enable", location], environment: environment)
        try #require(enabled.status == 0, "\(enabled.stderr)")
        server.stop()
        _ = try device.run("clip", "add", "written while the server was down")
        let failed = try device.runArguments(["sync"], environment: environment)
        #expect(failed.status == 75, "\(failed.stderr)")
        // rclone's own words are there, and the connection string without the password.
        #expect(failed.stderr.contains("couldn't connect SSH") && failed.stderr.contains("pass=***"), "\(failed.stderr)")
        var shown = [failed.stdout, failed.stderr, enabled.stdout, enabled.stderr]
        for arguments in [["sync", "status"], ["sync", "status", "--json"], ["sync", "log"]] {
            let result = try device.runArguments(arguments, environment: environment)
            #expect(result.status == 0, "\(result.stderr)")
            shown += [result.stdout, result.stderr]
        }
        #expect(shown[4].contains("pass=***") && shown[4].contains("rclone error:"), "\(shown[4])")
        for text in shown { #expect(!text.contains(obscured), "\(text)") }
        // Every file of the data directory but the settings, which must hold it to sync.
        for path in try Self.files(in: device.dataDir) where !path.hasSuffix("/settings.json") {
            let bytes = (try? FileSystem.read(path)).flatMap { $0 } ?? []
            #expect(!String(decoding: bytes, as: UTF8.self).contains(obscured), "\(path)")
        }
    }

    /// The regular files under `root`, recursively.
    static func files(in root: String) throws -> [String] {
        var found: [String] = []
        for name in try FileSystem.list(root, includingHidden: true) {
            let path = root + "/" + name
            if FileSystem.isDirectory(path) { found += try files(in: path) } else { found.append(path) }
        }
        return found
    }
}

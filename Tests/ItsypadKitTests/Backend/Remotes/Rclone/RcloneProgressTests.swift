import Testing

@testable import ItsypadModel
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Large transfers through `rclone serve webdav`: the time-out follows rclone's progress rather
/// than bounding a whole call, and each chunk of files is recorded as it lands, so a sync cut
/// short resumes with only the files not sent yet.
@Suite(.needs(RcloneServer.Kind.rcloneWebDAV.tools))
struct RcloneProgressTests {
    static let tabCount = 300

    /// Imports `tabCount` tabs of about 1 KB each into `device`.
    static func importTabs(_ device: Device) throws {
        let tabs = (0..<tabCount).map {
            "{\"id\":\"\(Identifier.make())\",\"content\":\"tab \($0) \(String(repeating: "x", count: 1000))\",\"lastModified\":\"2026-01-01T00:00:00.000Z\"}"
        }
        let imported = try device.run(
            "import", "-", stdin: "{\"format\":\"itsypad-export\",\"version\":1,\"tabs\":[\(tabs.joined(separator: ","))]}")
        try #require(imported.status == 0, "\(imported.stderr)")
    }

    /// A device joining `server` with `key` holds every tab once.
    static func expectANewcomerGetsEveryTabOnce(_ server: RcloneServer, key: String) throws {
        let newcomer = Device()
        let joined = try newcomer.runArguments(
            ["sync", "enable", server.location, "--key", "-"], stdin: Array(key.utf8), environment: try server.environment())
        #expect(joined.status == 0, "\(joined.stderr)")
        let ids = try newcomer.run("tab", "ls").stdout.split(separator: "\n").map { $0.split(separator: "\t").first ?? "" }
        #expect(ids.count == tabCount && Set(ids).count == tabCount, "\(ids.count) tabs")
    }

    /// The paths the manifest records as sent (see `RcloneManifest`): its lines, then its log's.
    static func sentPaths(_ device: Device) -> [String] {
        var sent: [String: Bool] = [:]
        for file in ["manifest", "manifest.log"] {
            let text = (try? FileSystem.read(device.dataDir + "/sync/rclone/" + file)).flatMap { $0 }.map {
                String(decoding: $0, as: UTF8.self)
            }
            for line in (text ?? "").split(separator: "\n") {
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
                if fields.count == 4 { sent[String(fields[0])] = fields[3] == "s" }
                // A path removed: `path TAB`.
                if fields.count == 2, fields[1].isEmpty { sent[String(fields[0])] = nil }
            }
        }
        return sent.filter(\.value).keys.sorted()
    }

    /// The first sync of 300 tabs, slowed to take longer than ITSYPAD_RCLONE_TIMEOUT in all, ends
    /// in one `sync enable`: rclone is only killed when it makes no progress for that long.
    @Test func aFirstSyncLongerThanTheTimeOutFinishesInOneSync() throws {
        let server = try RcloneServer(.rcloneWebDAV)
        let device = Device()
        try Self.importTabs(device)
        // rclone reads its options from RCLONE_*: 40 kB/s makes the upload of 300 encrypted tabs last several seconds.
        let slow = try server.environment().merging(["ITSYPAD_RCLONE_TIMEOUT": "3", "RCLONE_BWLIMIT": "40k"]) { $1 }
        let started = Monotonic.seconds()
        let enabled = try device.runArguments(["sync", "enable", server.location], environment: slow)
        let seconds = Monotonic.seconds() - started
        #expect(enabled.status == 0, "\(enabled.stderr)")
        #expect(seconds > 3, "the upload lasted \(seconds) s: longer than the time-out, or the test shows nothing")
        try Self.expectANewcomerGetsEveryTabOnce(server, key: try device.run("sync", "key", "show").stdout)
    }

    /// A sync killed (SIGKILL of itsypad, then of its rclone) after some chunks of 20 files
    /// landed: the next sync uploads only the rest (the files sent before keep their time on the
    /// server), and a device that joins gets every tab once.
    @Test func aSyncKilledMidwayResumesWithTheRest() throws {
        let fleet = try RcloneFleet(.rcloneWebDAV, devices: 1)
        let device = fleet.devices[0]
        try Self.importTabs(device)
        let alreadySent = Set(Self.sentPaths(device))
        var env = Process.baseEnvironment.merging(fleet.environment) { $1 }
        env["ITSYPAD_DATA_DIR"] = device.dataDir
        env["ITSYPAD_RCLONE_CHUNK"] = "20"
        env["RCLONE_BWLIMIT"] = "40k"
        let scratch = TemporaryScratch()
        let sync = try Process.spawn(
            Process.itsypad, ["sync"], stdin: "/dev/null", stdout: scratch.path + "/out", stderr: scratch.path + "/err", environment: env)
        // Until three chunks of this sync are recorded, or the sync ended on its own.
        var sentBeforeKill = Set<String>()
        var status: Int32 = 0
        while waitpid(sync, &status, WNOHANG) == 0 {
            sentBeforeKill = Set(Self.sentPaths(device)).subtracting(alreadySent)
            if sentBeforeKill.count >= 60 { break }
            usleep(2_000)
        }
        let uploader = RcloneFleet.waitForChild(of: sync, running: "rcd")
        let killed = kill(sync, SIGKILL) == 0
        if let uploader { kill(uploader, SIGKILL) }
        while waitpid(sync, &status, 0) < 0 && errno == EINTR {}
        try #require(killed && sentBeforeKill.count >= 60, "the sync ended before three chunks were recorded: \(sentBeforeKill.count)")
        // Sent once more, a file would have a new modification time on the server.
        func serverTimes() -> [String: String] {
            Dictionary(
                uniqueKeysWithValues: sentBeforeKill.map { path in
                    let status = (try? FileTree(root: fleet.server.backend).status(fleet.server.backend + "/" + path)) ?? nil
                    return (path, status.map { "\($0.modifiedSeconds).\($0.modifiedNanoseconds)" } ?? "missing")
                })
        }
        let before = serverTimes()
        #expect(!before.values.contains("missing"))
        let resumed = try fleet.run(device, "sync")
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(serverTimes() == before, "the files sent before the kill were not sent again")
        #expect(Set(Self.sentPaths(device)).subtracting(alreadySent).count > sentBeforeKill.count, "the rest was sent")
        try Self.expectANewcomerGetsEveryTabOnce(fleet.server, key: try device.run("sync", "key", "show").stdout)
    }
}

import Testing

@testable import ItsypadModel
@testable import ItsypadSupport

/// What a sync's send through rclone looks at in its mirror: what this device wrote since its
/// last send, not every file of the backend.
@Suite(.needs(RcloneServer.Kind.rcloneWebDAV.tools + ["strace"]))
struct RcloneSendTests {
    /// Calls that stat or open a file of the mirror's record folders while a device that sent
    /// `count` tabs, and then one, syncs one new tab (`strace -f -y`, which names each call's folder).
    static func recordFilesLookedAt(tabs count: Int) throws -> Int {
        let fleet = try RcloneFleet(.rcloneWebDAV, devices: 1)
        let device = fleet.devices[0]
        FirstPushTests.importing("tabs", count: count, into: device, fields: FirstPushTests.tab)
        // The push, then a sync of one change: the engine's first pull after a push of a whole
        // page reads the record files back, whatever the send does.
        for (index, arguments) in [["sync"], ["tab", "new", "one more"], ["sync"], ["tab", "new", "two more"]].enumerated() {
            let result = try device.runArguments(arguments, environment: fleet.environment)
            try #require(result.status == 0, "step \(index): \(result.stderr)")
        }
        let lines = try tracedSync(device, environment: fleet.environment, calls: "openat,newfstatat,statx")
        return lines.count { $0.contains("/sync/rclone/backend/records/") }
    }

    /// The `calls` that `itsypad sync` on `device` and its rclone made (`strace -f -y`, which names
    /// each call's file), a line each; the sync must succeed.
    static func tracedSync(_ device: Device, environment: [String: String], calls: String) throws -> [Substring] {
        let scratch = TemporaryDirectory()
        let trace = scratch.file("trace")
        let synced = try device.runArguments(
            ["-f", "-y", "-qq", "-e", "trace=" + calls, "-o", trace, Process.itsypad, "sync"], environment: environment,
            program: "/usr/bin/strace")
        try #require(synced.status == 0, "\(synced.stderr)")
        return String(decoding: try FileSystem.read(trace) ?? [], as: UTF8.self).split(separator: "\n")
    }

    /// Ten times the tabs in the backend costs the send of one change no more files looked at:
    /// walking every file of the mirror looked at each of the 1,800 more.
    @Test func oneChangeLooksAtTheSameRecordFilesWhateverTheBackendHolds() throws {
        let small = try Self.recordFilesLookedAt(tabs: 200)
        let large = try Self.recordFilesLookedAt(tabs: 2000)
        #expect(small > 0, "the trace names no record file of the mirror")
        #expect(large < small + 180, "\(small) calls on record files at 200 tabs, \(large) at 2,000")
    }
}

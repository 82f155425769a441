import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The requests one sync makes to a WebDAV server (`rclone serve webdav`), whose rclone backend
/// spaces its requests at least 10 ms apart: what a sync waits for is mostly their number.
@Suite(.needs(RcloneServer.Kind.rcloneWebDAV.tools))
struct RcloneRequestTests {
    let scratch = TemporaryDirectory()
    /// rclone's log of every HTTP request it makes (`--dump headers`).
    var requests: String { scratch.file("requests.log") }

    /// The fleet's environment with an rclone on PATH that logs each request its `rclone rcd` makes.
    func logging(_ fleet: RcloneFleet) throws -> [String: String] {
        try FileSystem.makeDirectory(scratch.file("bin"))
        scratch.write(
            "bin/rclone",
            """
            #!/bin/sh
            [ "$1" = rcd ] || exec /usr/bin/rclone "$@"
            /usr/bin/rclone "$@" --dump headers --log-level DEBUG 2>&1 | tee -a '\(requests)' | grep --line-buffered 'Serving remote' >&2

            """, mode: 0o700)
        return fleet.environment.merging(["PATH": scratch.file("bin") + ":/usr/bin:/bin"]) { $1 }
    }

    /// The requests `body` made, as `METHOD PATH` lines.
    func requestsMade(_ body: () throws -> Void) throws -> [String] {
        let before = (try FileSystem.read(requests))?.count ?? 0
        try body()
        let log = String(decoding: (try FileSystem.read(requests, from: before)) ?? [], as: UTF8.self)
        // A request's line: `… DEBUG : PROPFIND /itsypad/devices/ HTTP/1.1`, ending as HTTP's lines do.
        return log.split(separator: "\n").compactMap { line in
            guard let start = line.firstRange(of: "DEBUG : "), let end = line[start.upperBound...].firstRange(of: " HTTP/1.1")
            else { return nil }
            let request = line[start.upperBound..<end.lowerBound]
            return request.first?.isUppercase == true && request.contains(" /") ? String(request) : nil
        }
    }

    /// One change each way (B syncs one new clip, A adds one, then A syncs): A's sync lists the
    /// devices' folders and the record folder of B's change, downloads B's journal and record file,
    /// and uploads its own; what each device has read (its device.json) goes at most once a minute,
    /// not with every sync, so 5 requests of the 23 such a sync made are left; and the remote is
    /// named as a folder (`server:itsypad/`), so rclone does not first ask whether it is a file.
    @Test func oneChangeEachWayMakesAtMostSeventeenRequests() throws {
        let fleet = try RcloneFleet(.rcloneWebDAV, devices: 2)
        let (a, b) = (fleet.devices[0], fleet.devices[1])
        let environment = try logging(fleet)
        func succeed(_ device: Device, _ arguments: String...) throws {
            let result = try device.runArguments(arguments, environment: environment)
            try #require(result.status == 0, "\(arguments.joined(separator: " ")): \(result.stderr)")
        }
        // Settled: each has the other's clips, and has sent what it read. A lists B's files once they
        // are older than the 2 s within which a listed time may hide a later change (see
        // `RcloneRemote.isSettled`): else the measured sync fetches again those in its record folder.
        for round in 0..<3 {
            try succeed(b, "clip", "add", "B round \(round)")
            try succeed(b, "sync")
            usleep(2_200_000)
            try succeed(a, "clip", "add", "A round \(round)")
            try succeed(a, "sync")
        }
        try succeed(b, "clip", "add", "B measured")
        try succeed(b, "sync")
        try succeed(a, "clip", "add", "A measured")
        let made = try requestsMade { try succeed(a, "sync") }
        try succeed(b, "sync")
        #expect(try a.run("clip", "ls").stdout.contains("B measured"))
        #expect(try b.run("clip", "ls").stdout.contains("A measured"))
        #expect(made.contains { $0.hasPrefix("PUT ") }, "the wrapper logged no upload: \(made)")
        #expect(made.count <= 17, "\(made.count) requests:\n\(made.joined(separator: "\n"))")
        #expect(!made.contains("PROPFIND /itsypad"), "asked whether the remote is a file: \(made)")
        #expect(!made.contains { $0.hasPrefix("PUT ") && $0.contains("/device.json") }, "\(made)")
    }

    /// A change of this device's device.json waits while the copy sent is younger than the delay;
    /// then a send takes it, and a send of everything (a compaction) always does.
    @Test func aDeviceDocumentChangedWaitsUntilTheOneSentIsOld() throws {
        let server = try RcloneServer(.rcloneWebDAV)
        let environment = Process.baseEnvironment.merging(try server.environment()) { $1 }
        func remote(delay: Milliseconds) -> RcloneRemote {
            RcloneRemote(
                remote: "server:ack", directory: scratch.file("a"), environment: environment, timeout: 60, acknowledgementDelay: delay)
        }
        let waiting = remote(delay: 3_600_000)
        func write(_ path: String, _ text: String) throws {
            try FileSystem.makeDirectory(FileSystem.directoryName(waiting.mirror + "/" + path))
            try FileSystem.writeAtomically(waiting.mirror + "/" + path, Array(text.utf8))
        }
        func served(_ path: String) throws -> String? {
            try FileSystem.read(server.served + "/ack/" + path).map { String(decoding: $0, as: UTF8.self) }
        }
        let journal = "devices/A/journal/0000000000000001.log"
        var lines = ""
        /// The device's next change: a record, its journal line and its device.json saying `seen`.
        func change(_ seq: Int) throws {
            lines += RcloneListingTests.line(seq: seq, "r\(seq)")
            try write(RcloneListingTests.recordFile("r\(seq)", "A"), "record \(seq)")
            try write(journal, lines)
            try write("devices/A/device.json", "seen \(seq)")
        }
        try waiting.prepare()
        try write("zone.json", "zone")
        try change(1)
        #expect(try waiting.send(message: ""))
        #expect(try served("devices/A/device.json") == "seen 1", "a first send sends it")
        try change(2)
        #expect(try waiting.send(message: ""))
        #expect(try served(journal) == lines && served(RcloneListingTests.recordFile("r2", "A")) == "record 2")
        #expect(try served("devices/A/device.json") == "seen 1", "sent again within the delay")
        #expect(try remote(delay: 0).send(message: ""))
        #expect(try served("devices/A/device.json") == "seen 2", "not sent once the copy sent is older than the delay")
        try change(3)
        #expect(try waiting.sendCompaction(message: ""))
        #expect(try served("devices/A/device.json") == "seen 3", "a compaction's send left it")
    }
}

import Testing

@testable import ItsypadModel
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Devices syncing through one `RcloneServer` as `rclone:server:itsypad`, the backend encrypted
/// (the default for a remote): the first device creates it, the others join with its key.
struct RcloneFleet {
    let server: RcloneServer
    let devices: [Device]
    let environment: [String: String]

    init(_ kind: RcloneServer.Kind, devices count: Int) throws {
        server = try RcloneServer(kind)
        devices = (0..<count).map { _ in Device() }
        environment = try server.environment()
        for (index, device) in devices.enumerated() {
            _ = try device.run("clip", "add", "clip of device \(index)")
        }
        let created = try run(devices[0], "sync", "enable", server.location)
        try #require(created.status == 0, "\(created.stderr)")
        let key = try devices[0].run("sync", "key", "show").stdout
        for device in devices.dropFirst() {
            let joined = try run(device, "sync", "enable", server.location, "--key", "-", stdin: key)
            try #require(joined.status == 0, "\(joined.stderr)")
        }
    }

    @discardableResult
    func run(_ device: Device, _ arguments: String..., stdin: String? = nil, environment extra: [String: String] = [:]) throws -> RunResult
    {
        try device.runArguments(arguments, stdin: stdin.map { Array($0.utf8) }, environment: environment.merging(extra) { $1 })
    }

    /// `itsypad sync` on every device at once.
    func syncConcurrently() throws -> [RunResult] {
        let runs = try devices.map { device in
            let scratch = TemporaryScratch()
            var env = Process.baseEnvironment.merging(environment) { $1 }
            env["ITSYPAD_DATA_DIR"] = device.dataDir
            env["TMPDIR"] = device.directory.path
            let pid = try Process.spawn(
                Process.itsypad, ["sync"], stdin: "/dev/null", stdout: scratch.path + "/out", stderr: scratch.path + "/err",
                environment: env)
            return (pid, scratch)
        }
        return runs.map { pid, scratch in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let err = (try? FileSystem.read(scratch.path + "/err")).flatMap { $0 } ?? []
            return RunResult(
                status: (status >> 8) & 0xFF, stdout: "", stderr: String(decoding: err, as: UTF8.self), stdoutBytes: [],
                signal: status & 0x7F == 0 ? nil : status & 0x7F)
        }
    }

    func clips(_ device: Device) throws -> String { try device.run("clip", "ls", "--json").stdout }

    /// Syncs every device in turn until each holds every text of `texts` (or `rounds` rounds went by).
    func syncUntilEveryDeviceHolds(_ texts: [String], rounds: Int = 3) throws -> Bool {
        for _ in 0..<rounds {
            for device in devices { try run(device, "sync") }
            if try devices.allSatisfy({ device in try texts.allSatisfy(clips(device).contains) }) { return true }
        }
        return false
    }
}

/// What every server must do; each suite below runs it against one kind of server.
enum RcloneScenarios {
    /// Three devices that add clips and sync at the same moment end up with every clip on each.
    static func threeDevicesSyncingConcurrentlyConverge(_ kind: RcloneServer.Kind) throws {
        let fleet = try RcloneFleet(kind, devices: 3)
        for (index, device) in fleet.devices.enumerated() { _ = try device.run("clip", "add", "concurrent \(index)") }
        for result in try fleet.syncConcurrently() {
            #expect(result.signal == nil && [0, 1, 75].contains(result.status), "\(result.stderr)")
        }
        let texts = (0..<3).flatMap { ["clip of device \($0)", "concurrent \($0)"] }
        #expect(try fleet.syncUntilEveryDeviceHolds(texts))
        for device in fleet.devices { #expect(try fleet.run(device, "sync").status == 0) }
    }

    /// With the server down a sync exits 75 naming rclone's reason and keeps the queue; once the
    /// server is back the change goes through.
    static func aStoppedServerExits75AndCatchesUp(_ kind: RcloneServer.Kind) throws {
        let fleet = try RcloneFleet(kind, devices: 2)
        let (a, b) = (fleet.devices[0], fleet.devices[1])
        fleet.server.stop()
        _ = try a.run("clip", "add", "written while the server was down")
        let down = try fleet.run(a, "sync")
        #expect(down.status == 75, "\(down.stderr)")
        #expect(down.stderr.contains("rclone could not") && down.stderr.contains("stay queued"), "\(down.stderr)")
        let status = try fleet.run(a, "sync", "status").stdout
        #expect(status.contains("pending:    0 tabs, 1 clip, 0 settings"), "\(status)")
        try fleet.server.start()
        #expect(try fleet.run(a, "sync").status == 0)
        #expect(try fleet.run(b, "sync").status == 0)
        #expect(try fleet.clips(b).contains("written while the server was down"))
    }

    /// Refused credentials are no reason to retry: exit 1 with rclone's reason, the queue kept.
    static func refusedCredentialsExit1AndKeepTheQueue(_ kind: RcloneServer.Kind) throws {
        let fleet = try RcloneFleet(kind, devices: 1)
        let a = fleet.devices[0]
        _ = try a.run("clip", "add", "kept when refused")
        let refused = try fleet.run(a, "sync", environment: try fleet.server.environment(rightCredentials: false))
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("rclone could not") && refused.stderr.contains("  "), "\(refused.stderr)")
        #expect(try fleet.run(a, "sync", "status").stdout.contains("pending:    0 tabs, 1 clip, 0 settings"))
        #expect(try fleet.run(a, "sync").status == 0)
        #expect(try fleet.run(a, "sync", "status").stdout.contains("pending:    0 tabs, 0 clips, 0 settings"))
    }

    /// An upload killed midway (rclone killed with SIGKILL while it sends 300 tabs) is done again
    /// by the next sync: a device that joins afterwards gets every tab.
    static func aTransferKilledMidwayResumes(_ kind: RcloneServer.Kind) throws {
        let fleet = try RcloneFleet(kind, devices: 1)
        let a = fleet.devices[0]
        let tabs = (0..<300).map {
            "{\"id\":\"\(Identifier.make())\",\"content\":\"tab \($0) \(String(repeating: "x", count: 2000))\",\"lastModified\":\"2026-01-01T00:00:00.000Z\"}"
        }
        let imported = try a.run(
            "import", "-", stdin: "{\"format\":\"itsypad-export\",\"version\":1,\"tabs\":[\(tabs.joined(separator: ","))]}")
        try #require(imported.status == 0, "\(imported.stderr)")
        var env = Process.baseEnvironment.merging(fleet.environment) { $1 }
        env["ITSYPAD_DATA_DIR"] = a.dataDir
        // rclone reads its options from RCLONE_*: the upload lasts seconds, long enough to be cut.
        env["RCLONE_BWLIMIT"] = "200k"
        let scratch = TemporaryScratch()
        let recordsBefore = RcloneFleet.recordFiles(on: fleet.server)
        let sync = try Process.spawn(
            Process.itsypad, ["sync"], stdin: "/dev/null", stdout: scratch.path + "/out", stderr: scratch.path + "/err", environment: env)
        // Once the first tabs have landed on the server.
        let uploader = RcloneFleet.waitForChild(of: sync, running: "rcd") { RcloneFleet.recordFiles(on: fleet.server) > recordsBefore }
        if let uploader { kill(uploader, SIGKILL) }
        var status: Int32 = 0
        while waitpid(sync, &status, 0) < 0 && errno == EINTR {}
        try #require(uploader != nil, "no rclone upload was seen running")
        #expect((status >> 8) & 0xFF != 0, "the sync whose upload was killed fails")
        #expect(try fleet.run(a, "sync").status == 0)
        let newcomer = Device()
        let key = try a.run("sync", "key", "show").stdout
        #expect(try fleet.run(newcomer, "sync", "enable", fleet.server.location, "--key", "-", stdin: key).status == 0)
        #expect(try newcomer.run("tab", "ls").stdout.split(separator: "\n").count == 300)
    }
}

extension RcloneFleet {
    /// The process id of a child of `parent` whose command line holds `word`, once one runs and
    /// `ready` holds; nil when `parent` ends first.
    static func waitForChild(of parent: pid_t, running word: String, once ready: () -> Bool = { true }) -> pid_t? {
        while kill(parent, 0) == 0 {
            for name in (try? FileSystem.list("/proc")) ?? [] {
                guard let pid = pid_t(name), let stat = readProcFile("/proc/\(name)/stat"),
                    let cmdline = readProcFile("/proc/\(name)/cmdline")
                else { continue }
                let fields = String(decoding: stat, as: UTF8.self).split(separator: ")").last?.split(separator: " ")
                let arguments = cmdline.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
                if fields.flatMap({ $0.count > 1 ? pid_t($0[1]) : nil }) == parent, arguments.contains(word), ready() { return pid }
            }
            var status: Int32 = 0
            if waitpid(parent, &status, WNOHANG) == parent { return nil }
            usleep(2_000)
        }
        return nil
    }

    /// The record files the server holds.
    static func recordFiles(on server: RcloneServer) -> Int {
        func count(_ directory: String) -> Int {
            ((try? FileSystem.list(directory, includingHidden: true)) ?? []).reduce(0) { total, name in
                let path = directory + "/" + name
                return total + (FileSystem.isDirectory(path) ? count(path) : 1)
            }
        }
        return count(server.backend + "/records")
    }

    /// A file of /proc, whose size stat reports as 0: read to its end.
    static func readProcFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return try? FileSystem.readAll(fd: fd, path: path, limit: 1 << 16)
    }
}

@Suite(.needs(RcloneServer.Kind.rcloneWebDAV.tools))
struct RcloneWebDAVTests {
    @Test func threeDevicesSyncingConcurrentlyConverge() throws {
        try RcloneScenarios.threeDevicesSyncingConcurrentlyConverge(.rcloneWebDAV)
    }
    @Test func aStoppedServerExits75AndCatchesUp() throws { try RcloneScenarios.aStoppedServerExits75AndCatchesUp(.rcloneWebDAV) }
    @Test func refusedCredentialsExit1() throws { try RcloneScenarios.refusedCredentialsExit1AndKeepTheQueue(.rcloneWebDAV) }
    @Test func aTransferKilledMidwayResumes() throws { try RcloneScenarios.aTransferKilledMidwayResumes(.rcloneWebDAV) }
}

@Suite(.needs(RcloneServer.Kind.rcloneSFTP.tools))
struct RcloneSFTPTests {
    @Test func threeDevicesSyncingConcurrentlyConverge() throws { try RcloneScenarios.threeDevicesSyncingConcurrentlyConverge(.rcloneSFTP) }
    @Test func aStoppedServerExits75AndCatchesUp() throws { try RcloneScenarios.aStoppedServerExits75AndCatchesUp(.rcloneSFTP) }
    @Test func refusedCredentialsExit1() throws { try RcloneScenarios.refusedCredentialsExit1AndKeepTheQueue(.rcloneSFTP) }
    @Test func aTransferKilledMidwayResumes() throws { try RcloneScenarios.aTransferKilledMidwayResumes(.rcloneSFTP) }
}

@Suite(.needs(RcloneServer.Kind.sshd.tools))
struct RcloneOverSSHDTests {
    @Test func threeDevicesSyncingConcurrentlyConverge() throws { try RcloneScenarios.threeDevicesSyncingConcurrentlyConverge(.sshd) }
    @Test func aStrangersKeyExits1() throws { try RcloneScenarios.refusedCredentialsExit1AndKeepTheQueue(.sshd) }
    @Test func aTransferKilledMidwayResumes() throws { try RcloneScenarios.aTransferKilledMidwayResumes(.sshd) }
}

@Suite(.needs(RcloneServer.Kind.apacheWebDAV.tools))
struct RcloneApacheWebDAVTests {
    @Test func threeDevicesSyncingConcurrentlyConverge() throws {
        try RcloneScenarios.threeDevicesSyncingConcurrentlyConverge(.apacheWebDAV)
    }
    @Test func aStoppedServerExits75AndCatchesUp() throws { try RcloneScenarios.aStoppedServerExits75AndCatchesUp(.apacheWebDAV) }
    @Test func refusedCredentialsExit1() throws { try RcloneScenarios.refusedCredentialsExit1AndKeepTheQueue(.apacheWebDAV) }
    @Test func aTransferKilledMidwayResumes() throws { try RcloneScenarios.aTransferKilledMidwayResumes(.apacheWebDAV) }
}

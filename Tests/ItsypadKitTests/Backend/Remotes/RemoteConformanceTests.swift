import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// What every registered remote does, run with the built binary against each remote's fixture
/// (`RemoteFixtures`): devices that sync at the same time converge, a transfer killed midway is
/// resumed, an unreachable remote is retryable (75) and refused credentials are not (1), both
/// keeping the queue, and a keyless writer's change on the remote is handled as in a folder.
@Suite(.needs(RemoteFixtures.tools))
struct RemoteConformanceTests {
    @discardableResult
    func succeed(_ device: Device, _ arguments: String..., environment: [String: String] = [:]) throws -> String {
        let result = try device.runArguments(arguments, environment: environment)
        try #require(result.status == 0, "\(arguments.joined(separator: " ")): exit \(result.status): \(result.stderr)")
        return result.stdout
    }

    func pending(_ device: Device) throws -> String {
        try succeed(device, "sync", "status").split(separator: "\n").first { $0.hasPrefix("pending:") }.map(String.init) ?? ""
    }

    /// Devices enabled on the fixture's remote, encrypted, the first creating it and the others joining with its key.
    func enabled(_ fixture: any RemoteFixture, count: Int) throws -> [Device] {
        let devices = (0..<count).map { _ in Device() }
        try succeed(devices[0], "sync", "enable", fixture.location, environment: fixture.environment)
        let key = try succeed(devices[0], "sync", "key", "show")
        for device in devices.dropFirst() {
            let joined = try device.runArguments(
                ["sync", "enable", fixture.location, "--key", "-"], stdin: Array(key.utf8), environment: fixture.environment)
            try #require(joined.status == 0, "\(joined.stderr)")
        }
        return devices
    }

    @Test func everyRegisteredRemoteHasAFixture() {
        #expect(RemoteKinds.all.map(\.scheme).sorted() == RemoteFixtures.schemes)
    }

    @Test(arguments: RemoteFixtures.schemes)
    func threeDevicesSyncingAtOnceConverge(_ scheme: String) throws {
        let fixture = try RemoteFixtures.make(scheme)
        let devices = try enabled(fixture, count: 3)
        var environment = Process.baseEnvironment
        for (key, value) in fixture.environment { environment[key] = value }
        for round in 0..<3 {
            for (index, device) in devices.enumerated() { try succeed(device, "clip", "add", "device \(index) round \(round)") }
            // All three at once: a send refused because another moved the remote is fetched and sent again, or left for the next sync (75).
            let pids = try devices.map { device in
                try Process.spawn(
                    Process.itsypad, ["sync"], stdin: "/dev/null", stdout: "/dev/null", stderr: "/dev/null",
                    environment: environment.merging(["ITSYPAD_DATA_DIR": device.dataDir]) { $1 })
            }
            for pid in pids {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                #expect(status & 0x7F == 0 && [0, 75].contains(status >> 8 & 0xFF), "exit \(status >> 8 & 0xFF), signal \(status & 0x7F)")
            }
        }
        // Two rounds one after another: each device sends what it kept, then gets the others'.
        for _ in 0..<2 { for device in devices { try succeed(device, "sync", environment: fixture.environment) } }
        for device in devices {
            let listed = try succeed(device, "clip", "ls")
            for index in devices.indices {
                for round in 0..<3 { #expect(listed.contains("device \(index) round \(round)"), "\(listed)") }
            }
        }
    }

    @Test(arguments: RemoteFixtures.schemes)
    func aTransferKilledMidwayIsResumedByTheNextSync(_ scheme: String) throws {
        let fixture = try RemoteFixtures.make(scheme)
        let devices = try enabled(fixture, count: 2)
        try succeed(devices[0], "clip", "add", "sent when killed")
        let device = try deviceID(devices[0])
        let killed = try devices[0].runArguments(["sync"], environment: fixture.environment.merging(try fixture.killedMidSend()) { $1 })
        #expect(killed.signal == SIGKILL, "exit \(killed.status): \(killed.stderr)")
        // Its own upload cut short is no other writer of its device id.
        let resumed = try devices[0].runArguments(["sync"], environment: fixture.environment)
        #expect(resumed.status == 0 && !resumed.stderr.contains("is a copy of another"), "exit \(resumed.status): \(resumed.stderr)")
        #expect(try deviceID(devices[0]) == device)
        #expect(try pending(devices[0]).contains("0 clips"))
        try succeed(devices[1], "sync", environment: fixture.environment)
        #expect(try succeed(devices[1], "clip", "ls").contains("sent when killed"))
    }

    @Test(arguments: RemoteFixtures.schemes)
    func anUnreachableRemoteIsRetryableAndKeepsTheQueue(_ scheme: String) throws {
        let fixture = try RemoteFixtures.make(scheme)
        let devices = try enabled(fixture, count: 2)
        try succeed(devices[0], "clip", "add", "kept while unreachable")
        try succeed(devices[0], "settings", "set", "sync.backend", fixture.unreachable)
        let result = try devices[0].runArguments(["sync"], environment: fixture.environment)
        #expect(result.status == 75, "\(result.stderr)")
        #expect(result.stderr.contains("try again later"), "\(result.stderr)")
        #expect(try pending(devices[0]).contains("1 clip"))
        // Reachable again: it catches up.
        try succeed(devices[0], "settings", "set", "sync.backend", fixture.location)
        try succeed(devices[0], "sync", environment: fixture.environment)
        try succeed(devices[1], "sync", environment: fixture.environment)
        #expect(try succeed(devices[1], "clip", "ls").contains("kept while unreachable"))
    }

    @Test(arguments: RemoteFixtures.schemes)
    func refusedCredentialsAreNotRetryableAndKeepTheQueue(_ scheme: String) throws {
        let fixture = try RemoteFixtures.make(scheme)
        let device = try enabled(fixture, count: 1)[0]
        try succeed(device, "clip", "add", "kept when refused")
        let (location, environment) = try fixture.refusingCredentials()
        try succeed(device, "settings", "set", "sync.backend", location)
        let result = try device.runArguments(["sync"], environment: environment)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(try pending(device).contains("1 clip"))
        let status = try succeed(device, "sync", "status")
        #expect(status.contains("\(scheme) error:  "), "\(status)")
    }

    /// The device id a data directory syncs as (its meta.json).
    func deviceID(_ device: Device) throws -> String {
        let meta = try JSONValue.parse(#require(try FileSystem.read(device.dataDir + "/meta.json")))
        return try #require(meta["deviceID"]?.stringValue)
    }

    /// A data directory copied to another machine (`cp -a`) brings its device id and its mirror of
    /// the remote: no clip of the original, the copy or a third device is lost, whichever of the two
    /// syncs first; a remote that tells the copy (rclone) makes it take a new device id, as a
    /// replicated folder does, rather than overwrite the original's files.
    @Test(arguments: RemoteFixtures.schemes, [false, true])
    func aCopiedDataDirectoryTakesANewDeviceIDAndLosesNothing(_ scheme: String, copySyncsFirst: Bool) throws {
        try copyDataDirectory(scheme, copySyncsFirst: copySyncsFirst, enablingAgain: false)
    }

    /// `sync enable` of the same remote run again on the copy recovers as `sync` does: a new
    /// device id, with a warning, and nothing lost.
    @Test(arguments: RemoteFixtures.schemes, [false, true])
    func aCopiedDataDirectoryEnabledAgainTakesANewDeviceIDAndLosesNothing(_ scheme: String, copySyncsFirst: Bool) throws {
        try copyDataDirectory(scheme, copySyncsFirst: copySyncsFirst, enablingAgain: true)
    }

    /// The original and a third device sync with the remote, the original's data directory is
    /// copied, each of the three adds a clip, and the copy runs `sync` (or `sync enable` of the
    /// same remote when `enablingAgain`) before or after the original syncs again: then every
    /// device holds every clip.
    func copyDataDirectory(_ scheme: String, copySyncsFirst: Bool, enablingAgain: Bool) throws {
        let fixture = try RemoteFixtures.make(scheme)
        let devices = try enabled(fixture, count: 2)
        let (original, other) = (devices[0], devices[1])
        try succeed(original, "clip", "add", "before the copy")
        try succeed(original, "sync", environment: fixture.environment)
        let copy = Device()
        let copied = try Process.run("/bin/cp", ["-a", original.dataDir, copy.dataDir])
        try #require(copied.status == 0, "\(copied.stderr)")
        if fixture.tellsACopiedDataDirectory {
            let compacted = try copy.runArguments(["sync", "compact"], environment: fixture.environment)
            #expect(compacted.status == 1 && compacted.stderr.contains("run 'itsypad sync' first"), "\(compacted.stderr)")
        }
        try succeed(original, "clip", "add", "original after the copy")
        try succeed(copy, "clip", "add", "copy after the copy")
        try succeed(other, "clip", "add", "third device")
        let copyRuns = enablingAgain ? ["sync", "enable", fixture.location] : ["sync"]
        let copyRun = { try copy.runArguments(copyRuns, environment: fixture.environment) }
        var told = [RunResult]()
        if copySyncsFirst { told.append(try copyRun()) }
        try succeed(original, "sync", environment: fixture.environment)
        if !copySyncsFirst { told.append(try copyRun()) }
        let first = try #require(told.first)
        #expect(first.status == 0, "exit \(first.status): \(first.stderr)")
        #expect(first.stderr.contains("is a copy of another") == fixture.tellsACopiedDataDirectory, "\(first.stderr)")
        #expect(try (deviceID(copy) != deviceID(original)) == fixture.tellsACopiedDataDirectory)
        for _ in 0..<2 {
            for device in [original, copy, other] {
                let result = try device.runArguments(["sync"], environment: fixture.environment)
                #expect(result.status == 0 && !result.stderr.contains("is a copy of another"), "exit \(result.status): \(result.stderr)")
            }
        }
        for device in [original, copy, other] {
            let listed = try succeed(device, "clip", "ls")
            for text in ["before the copy", "original after the copy", "copy after the copy", "third device"] {
                #expect(listed.contains(text), "\(text) missing: \(listed)")
            }
        }
    }

    /// A writer without the key changes the zone's identity on the remote: as in a folder (see
    /// `KeylessWriterTests`), every sync is refused with exit 1 and its reason, and nothing is lost.
    @Test(arguments: RemoteFixtures.schemes)
    func aKeylessWritersChangeIsRefusedAndLosesNothing(_ scheme: String) throws {
        let fixture = try RemoteFixtures.make(scheme)
        let devices = try enabled(fixture, count: 2)
        for (index, device) in devices.enumerated() {
            try succeed(device, "clip", "add", "clip of \(index)")
            try succeed(device, "sync", environment: fixture.environment)
        }
        try succeed(devices[0], "sync", environment: fixture.environment)
        try fixture.editBackend { backend in
            let path = backend + "/zone.json"
            guard case .object(var members) = try JSONValue.parse(#require(try FileSystem.read(path))) else {
                Issue.record("zone.json is not a JSON object")
                return
            }
            members.removeAll { $0.0 == "mac" }
            members.append(("mac", .string(String(repeating: "0", count: 64))))
            try FileSystem.writeAtomically(path, JSONValue.object(members).serializedBytes())
        }
        for device in devices {
            let result = try device.runArguments(["sync"], environment: fixture.environment)
            #expect(result.status == 1 && !result.stderr.isEmpty, "exit \(result.status): \(result.stderr)")
        }
        for device in devices {
            let listed = try succeed(device, "clip", "ls")
            #expect(listed.contains("clip of 0") && listed.contains("clip of 1"), "\(listed)")
        }
    }
}

import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// `itsypad sync` killed with -9 at steps of the conversion of a format 1 backend: strace stops
/// the binary at the Nth call of one file system call, before it runs, as a crash at that
/// instant would. Whatever the step, the backend is still a whole format 1 or a format 2 that the
/// next sync (of the killed device or of another) finishes converting, and once every device is
/// upgraded everything typed anywhere is everywhere.
@Suite(.enabled(if: SyscallKiller.unavailable == nil, "\(SyscallKiller.unavailable ?? "")"))
struct Format1UpgradeKillTests {
    /// The steps a kill is tried at, at most: evenly spread over the sync's writes to the backend,
    /// plus those that commit the conversion (`zone.json`) and end it (`state.json`).
    static let spreadSteps = 8

    @Test func aKillAtAnyStepOfTheConversionLosesNothing() throws {
        let steps = try Self.backendSteps()
        let decisive = steps.indices.filter { steps[$0].line.contains("zone.json") || steps[$0].line.contains("state.json") }
        let spread = (0..<Self.spreadSteps).map { $0 * steps.count / Self.spreadSteps }
        let chosen = Set(decisive + decisive.map { $0 + 1 } + spread).filter { $0 < steps.count }.sorted()
        #expect(!decisive.isEmpty, "no conversion seen in \(steps.map(\.line))")
        var states: Set<String> = []
        for (attempt, index) in chosen.enumerated() {
            let step = steps[index]
            let scene = Format1UpgradeTests.Scene(devices: 2)
            let zone = try scene.zoneID()
            let records = try Self.format1Records(scene)
            try scene.fleet[0].runsOnlyFormat1(false)
            let killed = try SyscallKiller.run(scene.fleet[0], ["sync"], killingAt: step.call, occurrence: step.occurrence)
            try #require(killed.signal == SIGKILL, "not killed at \(step.line): \(killed.status) \(killed.stderr)")
            let state = try Self.backendState(scene)
            states.insert(state)
            if state == "format 1" {
                #expect(try Self.format1Records(scene) == records, "killed at \(step.line)")
            }
            // The next sync is the killed device's, or another upgraded device's.
            let next = attempt % 2
            try scene.fleet[next].runsOnlyFormat1(false)
            let resumed = try scene.fleet[next].run("sync")
            #expect(resumed.status == 0, "after a kill at \(step.line): \(resumed.stderr)")
            try scene.expectConverted(zone: zone)
            try scene.fleet[1 - next].runsOnlyFormat1(false)
            scene.fleet.converge()
            try scene.expectEverythingEverywhere()
        }
        // The kills fell inside the conversion, before and after its commit.
        #expect(states.isSuperset(of: ["format 1", "format 2, format 1's files not all removed"]), "\(states)")
    }

    /// What a killed conversion left.
    static func backendState(_ scene: Format1UpgradeTests.Scene) throws -> String {
        let path = scene.fleet.backendPath
        let zone = try JSONValue.parse(try #require(try FileSystem.read(path + "/zone.json")))
        guard zone["format"]?.int64Value == 4 else { return "format 1" }
        return FileSystem.exists(path + "/state.json") ? "format 2, format 1's files not all removed" : "format 2"
    }

    /// Every record of the format 1 backend, with its fields.
    static func format1Records(_ scene: Format1UpgradeTests.Scene) throws -> [RecordID: [String: FieldValue]] {
        let changes = try DirectoryBackend(path: scene.fleet.backendPath).fetchAll(since: nil).changes
        return Dictionary(uniqueKeysWithValues: changes.compactMap(\.savedRecord).map { ($0.id, $0.fields) })
    }

    /// The calls of the upgraded device's first sync that write to the backend, traced once.
    static func backendSteps(firstTry: Bool = true) throws -> [SyscallKiller.Step] {
        let scene = Format1UpgradeTests.Scene(devices: 2)
        try scene.fleet[0].runsOnlyFormat1(false)
        let (result, steps, traced) = try SyscallKiller.trace(scene.fleet[0], ["sync"], touching: scene.fleet.backendPath)
        try #require(result.status == 0, "\(result.stderr)")
        // Once, in a full parallel run, a trace held none: it is traced again, and what it held is shown.
        if steps.isEmpty, firstTry { return try backendSteps(firstTry: false) }
        try #require(
            !steps.isEmpty, "no call below the backend among \(traced.count) traced:\n\(traced.prefix(30).joined(separator: "\n"))")
        return withExtendedLifetime(scene) { steps }
    }
}

/// Runs the binary under strace, to list the file system calls it makes or to kill it with
/// SIGKILL at one of them.
enum SyscallKiller {
    /// The calls that change files: a kill before any of them is a crash between two changes.
    static let calls = [
        "write", "pwrite64", "fsync", "fdatasync", "rename", "renameat", "renameat2", "link", "linkat",
        "unlink", "unlinkat", "mkdir", "mkdirat", "rmdir",
    ]

    /// One call: the `occurrence`th call of `call` in the run.
    struct Step {
        let call: String
        let occurrence: Int
        let line: String
    }

    /// Why strace cannot be used here (not installed, or tracing not permitted), or nil.
    static let unavailable: String? = {
        guard let result = try? Process.run("/usr/bin/strace", ["-f", "-qq", "-o", "/dev/null", "/bin/true"]) else {
            return "strace is not installed (apt-get install strace)"
        }
        return result.status == 0 ? nil : "strace cannot trace here: \(result.stderr)"
    }()

    /// The calls of a run of `arguments` on `device` whose file or directory is below `path`.
    static func trace(_ device: Device, _ arguments: [String], touching path: String) throws -> (RunResult, [Step], traced: [Substring]) {
        let log = device.directory.path + "/strace.log"
        let result = try strace(device, ["-y", "-o", log, "-e", "trace=" + calls.joined(separator: ",")], arguments)
        var counts: [String: Int] = [:]
        var steps: [Step] = []
        let lines = String(decoding: try #require(try FileSystem.read(log)), as: UTF8.self).split(separator: "\n")
        for line in lines {
            // "<pid> <call>(<arguments>) = <result>"; with -y a descriptor shows as "3</its/path>".
            // strace pads the pid to five columns, so a shorter pid is followed by more than one space.
            let words = line.split(separator: " ", maxSplits: 1)
            guard words.count == 2, case let rest = words[1].drop(while: { $0 == " " }), let open = rest.firstIndex(of: "(") else {
                continue
            }
            let call = String(rest[..<open])
            guard calls.contains(call) else { continue }
            counts[call, default: 0] += 1
            if line.contains("<" + path + "/") || line.contains("\"" + path + "/") || line.contains("<" + path + ">") {
                steps.append(Step(call: call, occurrence: counts[call]!, line: String(line)))
            }
        }
        return (result, steps, lines)
    }

    /// Runs `arguments` on `device`, killed with SIGKILL just before the `occurrence`th call of `call`.
    static func run(_ device: Device, _ arguments: [String], killingAt call: String, occurrence: Int) throws -> RunResult {
        try strace(device, ["-o", "/dev/null", "-e", "trace=" + call, "-e", "inject=\(call):signal=SIGKILL:when=\(occurrence)"], arguments)
    }

    private static func strace(_ device: Device, _ options: [String], _ arguments: [String]) throws -> RunResult {
        var environment = Process.baseEnvironment
        environment["ITSYPAD_DATA_DIR"] = device.dataDir
        environment["TMPDIR"] = device.directory.path
        return try Process.run(
            "/usr/bin/strace", ["-f", "-qq"] + options + [Process.itsypad] + arguments, environment: environment, timeout: 60)
    }
}

import Testing

@testable import ItsypadBackend
@testable import ItsypadCLI
@testable import ItsypadModel
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Two devices syncing through one backend, inside a scratch directory that also holds files no
/// itsypad command may touch (a canary, symlink targets). A test plays the hostile peer by writing
/// to the backend (or damaging a data directory), runs the built binary, and checks with
/// `expectContained` and `expectVictimIntact` what the issue asks: nothing outside the data
/// directories and the backend written or deleted, no crash, no hang, earlier data intact.
final class HostileWorld {
    let scratch = TemporaryDirectory()
    var backend: String { scratch.path + "/backend" }
    var outside: String { scratch.path + "/outside" }
    var victim: String { scratch.path + "/victim" }
    var peer: String { scratch.path + "/peer" }
    /// A third device that joins after the attack.
    var newcomer: String { scratch.path + "/newcomer" }
    /// Where a test puts files it hands to a command (an import).
    var input: String { scratch.path + "/input" }
    /// A file a symlink may point at: it must never change.
    var target: String { outside + "/target" }

    /// The victim's tabs (id → content) and clips (id → text) before the attack.
    private(set) var victimTabs: [String: String] = [:]
    private(set) var victimClips: [String: String] = [:]
    private var outsideBefore: [String: [UInt8]] = [:]
    private var scratchEntriesBefore: [String] = []

    /// Commands that must finish; a hang past this is a failure, not a measurement.
    static let timeout = 20.0

    init() throws {
        try FileSystem.makeDirectory(outside + "/dir")
        try FileSystem.writeAtomically(outside + "/canary", Array("canary\n".utf8))
        try FileSystem.writeAtomically(target, Array("target\n".utf8))
        try FileSystem.writeAtomically(outside + "/dir/inside", Array("inside\n".utf8))
        // Set up in-process (fast); everything after the attack runs the binary, where a crash is a signal.
        try setUp(peer, "settings", "set", "device.name", "peer")
        try setUp(peer, "tab", "new", "--name", "shared", "from the peer")
        try setUp(peer, "clip", "add", "peer clip")
        try setUp(peer, "sync", "enable", backend)
        try setUp(victim, "settings", "set", "device.name", "victim")
        try setUp(victim, "tab", "new", "--name", "mine", "the victim's own tab")
        try setUp(victim, "clip", "add", "the victim's own clip")
        try setUp(victim, "sync", "enable", backend)
        try setUp(peer, "sync")
        victimTabs = try tabs(victim)
        victimClips = try clips(victim)
        outsideBefore = try snapshot(outside)
        scratchEntriesBefore = try entriesBesideTheStores()
    }

    /// What the scratch directory holds besides the data directories and the backend.
    private func entriesBesideTheStores() throws -> [String] {
        try FileSystem.list(scratch.path, includingHidden: true).filter {
            !["backend", "victim", "peer", "newcomer", "input"].contains($0)
        }
    }

    // MARK: Running

    @discardableResult
    func run(_ dataDir: String, _ arguments: String..., stdin: String? = nil) throws -> RunResult {
        try runArguments(dataDir, arguments, stdin: stdin)
    }

    /// Runs the binary on `dataDir`, under `prefix` (strace and its options) when given.
    func runArguments(_ dataDir: String, _ arguments: [String], stdin: String? = nil, under prefix: [String] = []) throws -> RunResult {
        var environment = Process.baseEnvironment
        environment["ITSYPAD_DATA_DIR"] = dataDir
        environment["ITSYPAD_LOCK_TIMEOUT"] = "1"
        environment["TMPDIR"] = scratch.path
        let command = prefix + [Process.itsypad] + arguments
        return try Process.run(
            command[0], Array(command.dropFirst()), stdin: stdin.map { Array($0.utf8) }, environment: environment, timeout: Self.timeout)
    }

    /// Runs a command in this process, for setting up; it must succeed.
    func setUp(_ dataDir: String, _ arguments: String..., stdin: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let context = Context.memory(
            environment: ["ITSYPAD_DATA_DIR": dataDir, "ITSYPAD_LOCK_TIMEOUT": "1", "TMPDIR": scratch.path],
            stdin: stdin.map { Array($0.utf8) })
        let status = Itsypad.run(arguments, context: context)
        try #require(status == 0, "set-up command failed: \(context.standardError.text)", sourceLocation: sourceLocation)
    }

    // MARK: What must hold

    /// Finished in time, not killed by a signal, no stack trace; and nothing outside the data
    /// directories and the backend was written, deleted or created.
    func expectContained(_ result: RunResult, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!result.timedOut, "hung: killed after \(Self.timeout) s", sourceLocation: sourceLocation)
        #expect(result.signal == nil, "crashed with signal \(result.signal ?? 0): \(result.stderr)", sourceLocation: sourceLocation)
        #expect(
            !result.stderr.contains("Fatal error") && !result.stderr.contains("Stack dump"), "\(result.stderr)",
            sourceLocation: sourceLocation)
        expectOutsideUntouched(sourceLocation: sourceLocation)
    }

    func expectOutsideUntouched(sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            (try? snapshot(outside)) == outsideBefore, "files outside the data directories and backend changed",
            sourceLocation: sourceLocation)
        #expect(
            (try? entriesBesideTheStores()) == scratchEntriesBefore,
            "a file appeared next to the data directories and backend", sourceLocation: sourceLocation)
    }

    /// The victim's own tabs and clips are all still there, unchanged, and listing and export work.
    func expectVictimIntact(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let tabs = try tabs(victim)
        for (id, content) in victimTabs where !content.hasPrefix("from the peer") {
            #expect(tabs[id] == content, "the victim's tab \(id) was lost or changed", sourceLocation: sourceLocation)
        }
        let clips = try clips(victim)
        for (id, text) in victimClips where text == "the victim's own clip" {
            #expect(clips[id] == text, "the victim's clip \(id) was lost", sourceLocation: sourceLocation)
        }
        for command in [["export"], ["sync", "status"]] {
            let result = try runArguments(victim, command)
            expectContained(result, sourceLocation: sourceLocation)
            #expect(result.status == 0, "\(command.joined(separator: " ")): \(result.stderr)", sourceLocation: sourceLocation)
        }
    }

    /// A documented exit code, with a reason on stderr when it is not 0.
    func expectExit(
        _ result: RunResult, _ status: Int32, mentioning words: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(result.status == status, "exit \(result.status), expected \(status): \(result.stderr)", sourceLocation: sourceLocation)
        if status != 0 { #expect(result.stderr.contains("Error:"), "no reason given", sourceLocation: sourceLocation) }
        for word in words {
            #expect(result.stderr.contains(word), "stderr does not mention \(word): \(result.stderr)", sourceLocation: sourceLocation)
        }
    }

    func tabs(_ dataDir: String) throws -> [String: String] {
        let result = try run(dataDir, "tab", "ls", "--json")
        guard result.status == 0, let items = try JSONValue.parse(result.stdout).arrayValue else { return [:] }
        return Dictionary(
            items.compactMap { item in item["id"]?.stringValue.map { ($0, item["content"]?.stringValue ?? "") } }, uniquingKeysWith: { $1 })
    }

    func clips(_ dataDir: String) throws -> [String: String] {
        let result = try run(dataDir, "clip", "ls", "--json")
        guard result.status == 0, let items = try JSONValue.parse(result.stdout).arrayValue else { return [:] }
        return Dictionary(
            items.compactMap { item in item["id"]?.stringValue.map { ($0, item["text"]?.stringValue ?? "") } }, uniquingKeysWith: { $1 })
    }

    /// Every file below `root` with its bytes; symlinks as "-> target".
    private func snapshot(_ root: String) throws -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        for name in try FileSystem.list(root, includingHidden: true) {
            let path = root + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR: for (inner, bytes) in try snapshot(path) { result[name + "/" + inner] = bytes }
            case S_IFREG: result[name] = try FileSystem.read(path) ?? []
            default: result[name] = Array("special".utf8)
            }
        }
        return result
    }

    // MARK: Playing the peer

    /// The peer's folder in the backend, `devices/<its device id>`.
    var peerFolder: String {
        get throws {
            let folders = try FileSystem.list(backend + "/devices").map { backend + "/devices/" + $0 }
            return try #require(
                folders.first { folder in
                    (try? FileSystem.read(folder + "/device.json")).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) }?
                        .contains(#""name":"peer""#) == true
                })
        }
    }

    /// A well-formed tab record, with fields replaced or added.
    func tabRecord(
        id: String = Identifier.make(), name: String = "from a peer", content: String = "peer content",
        fields extra: [String: FieldValue] = [:]
    ) -> BackendRecord {
        var fields: [String: FieldValue] = [
            "name": .string(name), "content": .string(content), "language": .string("plain"),
            "lastModified": .timestamp(testNow), "clock": .string("\(testNow).0.hostile"),
            "nameLocked": .int64(1), "languageLocked": .int64(0),
        ]
        for (key, value) in extra { fields[key] = value }
        return BackendRecord(
            recordName: id, recordType: RecordType.tab.rawValue, fields: fields,
            created: Stamp(timestamp: testNow, deviceID: "hostile"), modified: Stamp(timestamp: testNow, deviceID: "hostile"))
    }

    func clipRecord(id: String = Identifier.make(), text: String = "peer clip", timestamp: Int64 = testNow) -> BackendRecord {
        BackendRecord(
            recordName: id, recordType: RecordType.clip.rawValue,
            fields: ["text": .string(text), "timestamp": .timestamp(timestamp), "pinned": .int64(0)])
    }

    /// Replaces `path` (file or directory) by a symlink to `destination`.
    func replaceWithSymlink(_ path: String, to destination: String) throws {
        _ = try Process.run("/bin/rm", ["-rf", path])
        try #require(symlink(destination, path) == 0)
    }

    /// Replaces `path` by a FIFO nobody writes to.
    func replaceWithFIFO(_ path: String) throws {
        _ = try Process.run("/bin/rm", ["-rf", path])
        try #require(mkfifo(path, 0o600) == 0)
    }
}

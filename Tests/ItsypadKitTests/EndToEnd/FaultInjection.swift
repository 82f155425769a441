import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Two devices, `a` and `b`, syncing through a folder backend, and a third, `c`, that has never
/// synced: a command of one of them is run under `strace` with a fault injected into one system
/// call, then the data is checked (see `FaultCase.check`). The fixture is made once and copied
/// back before each case, at the same paths (the backend's path is in the devices' settings).
final class FaultFixture {
    let directory = TemporaryDirectory()
    var work: String { directory.path + "/work" }
    var pristine: String { directory.path + "/pristine" }
    var backend: String { work + "/backend" }
    func dataDir(_ device: String) -> String { work + "/" + device }
    /// Ids of the fixture's items, by the text they were made with.
    private(set) var ids: [String: String] = [:]

    init() throws {
        _ = try Process.run("/bin/mkdir", ["-p", work])
        for text in ["oldest", "older", "old", "to pin"] { ids[text] = try add("a", ["clip", "add", text]) }
        ids["pinned"] = try add("a", ["clip", "add", "pinned"])
        try run("a", ["clip", "pin", ids["pinned"]!])
        ids["private"] = try add("a", ["clip", "add", "--local", "private"])
        ids["alpha"] = try add("a", ["tab", "new", "--name", "alpha", "alpha content"])
        ids["beta"] = try add("a", ["tab", "new", "--name", "beta", "beta content"])
        try run("a", ["settings", "set", "clipboard.retention", "30d"])
        try run("a", ["sync", "enable", backend])
        try run("b", ["sync", "enable", backend])
        try run("a", ["sync"])
        // Something for a sync to bring each way.
        try run("b", ["clip", "add", "from b"])
        try run("a", ["clip", "add", "not sent yet"])
        try run("c", ["clip", "add", "on c"])
        ids["export"] = directory.path + "/export.json"
        try run("c", ["tab", "new", "--name", "gamma", "gamma content"])
        let export = try run("c", ["export"])
        try FileSystem.writeAtomically(ids["export"]!, export.stdoutBytes)
        _ = try Process.run("/bin/cp", ["-a", work, pristine])
    }

    func id(_ text: String) -> String { ids[text]! }

    /// Puts the fixture back as it was made.
    func restore() throws {
        _ = try Process.run("/bin/rm", ["-rf", work])
        let copy = try Process.run("/bin/cp", ["-a", pristine, work])
        #expect(copy.status == 0, "\(copy.stderr)")
    }

    /// Runs itsypad on `device`, under `prefix` (strace and its options) when given.
    @discardableResult
    func run(_ device: String, _ arguments: [String], under prefix: [String] = []) throws -> RunResult {
        let command = prefix + [Process.itsypad, "--data-dir", dataDir(device)] + arguments
        var environment = Process.baseEnvironment
        environment["TMPDIR"] = directory.path
        return try Process.run(command[0], Array(command.dropFirst()), environment: environment, timeout: 120)
    }

    private func add(_ device: String, _ arguments: [String]) throws -> String {
        let result = try run(device, arguments)
        precondition(result.status == 0, "\(arguments): \(result.stderr)")
        return result.stdout.split(separator: "\n").last.map(String.init) ?? ""
    }

    /// What a device holds that a user sees, without ids (a new clip's or tab's id is new on every run):
    /// `shared` leaves out what stays on the device (local-only clips, device settings).
    func snapshot(_ device: String, shared: Bool = false) throws -> [String] {
        var lines: [String] = []
        let clips = try JSONValue.parse(Array(try run(device, ["clip", "ls", "--json"]).stdout.utf8))
        for clip in clips.arrayValue ?? [] where !(shared && clip["localOnly"]?.boolValue == true) {
            lines.append("clip \(clip["text"]?.stringValue ?? "") pinned=\(clip["pinned"]?.boolValue ?? false)")
        }
        let tabs = try JSONValue.parse(Array(try run(device, ["tab", "ls", "--json"]).stdout.utf8))
        for tab in tabs.arrayValue ?? [] {
            lines.append("tab \(tab["name"]?.stringValue ?? "") \(tab["content"]?.stringValue ?? "")")
        }
        let settings = try JSONValue.parse(Array(try run(device, ["settings", "--json"]).stdout.utf8))
        for setting in settings.arrayValue ?? [] where !shared || setting["scope"]?.stringValue == "synced" {
            lines.append("setting \(setting["key"]?.stringValue ?? "")=\(setting["value"].map { $0.serialized() } ?? "")")
        }
        return lines.sorted()
    }
}

/// The system calls a fault is injected into, and the faults.
enum InjectedFault: String, CaseIterable, Sendable {
    case kill, enospc, eio

    /// strace's `inject=` action.
    var action: String {
        switch self {
        case .kill: return "signal=KILL"
        case .enospc: return "error=ENOSPC"
        case .eio: return "error=EIO"
        }
    }

    static let syscalls = [
        "fsync", "fdatasync", "rename", "renameat", "renameat2", "unlink", "unlinkat", "truncate", "ftruncate", "write",
        "pwrite64", "openat",
    ]
}

/// One command that changes data, run on `device` of the fixture.
struct FaultCommand: CustomStringConvertible, Sendable {
    let device: String
    let arguments: @Sendable (FaultFixture) -> [String]
    let name: String
    /// Whether its change is all or nothing: then exit 0 means the data is as after a run without a
    /// fault, and "nothing was changed" means it is as before. A sync moves in steps, each complete.
    var isOneChange = true

    var description: String { "\(device): \(name)" }

    static let all: [FaultCommand] = [
        FaultCommand(device: "a", arguments: { _ in ["clip", "add", "added"] }, name: "clip add"),
        FaultCommand(device: "a", arguments: { _ in ["clip", "add", "--local", "added here"] }, name: "clip add --local"),
        FaultCommand(device: "a", arguments: { ["clip", "rm", $0.id("older")] }, name: "clip rm"),
        FaultCommand(device: "a", arguments: { ["clip", "rm", $0.id("private")] }, name: "clip rm (local-only)"),
        FaultCommand(device: "a", arguments: { ["clip", "pin", $0.id("to pin")] }, name: "clip pin"),
        FaultCommand(device: "a", arguments: { ["clip", "unpin", $0.id("pinned")] }, name: "clip unpin"),
        FaultCommand(device: "a", arguments: { _ in ["clip", "clear"] }, name: "clip clear"),
        FaultCommand(device: "a", arguments: { _ in ["clip", "prune", "--keep", "3"] }, name: "clip prune"),
        FaultCommand(device: "a", arguments: { _ in ["tab", "new", "--name", "delta", "delta content"] }, name: "tab new"),
        FaultCommand(device: "a", arguments: { _ in ["tab", "edit", "alpha", "alpha edited"] }, name: "tab edit"),
        FaultCommand(device: "a", arguments: { _ in ["tab", "rm", "beta"] }, name: "tab rm"),
        FaultCommand(device: "a", arguments: { _ in ["settings", "set", "clipboard.maxEntries", "500"] }, name: "settings set"),
        FaultCommand(device: "a", arguments: { _ in ["settings", "unset", "clipboard.retention"] }, name: "settings unset"),
        FaultCommand(device: "a", arguments: { _ in ["settings", "set", "device.name", "laptop"] }, name: "settings set (device)"),
        FaultCommand(device: "a", arguments: { ["import", $0.id("export")] }, name: "import"),
        FaultCommand(device: "c", arguments: { ["import", $0.id("export")] }, name: "import (never synced)"),
        FaultCommand(device: "c", arguments: { _ in ["clip", "clear"] }, name: "clip clear (never synced)"),
        FaultCommand(device: "a", arguments: { _ in ["sync"] }, name: "sync", isOneChange: false),
        FaultCommand(device: "c", arguments: { ["sync", "enable", $0.backend] }, name: "sync enable", isOneChange: false),
        FaultCommand(device: "a", arguments: { _ in ["sync", "compact"] }, name: "sync compact", isOneChange: false),
    ]
}

/// A fault at the `call`th call (counted from 1, as strace's `when=` counts) of `syscall` in `command`.
struct FaultCase: CustomStringConvertible, Sendable {
    let command: FaultCommand
    let syscall: String
    let call: Int
    let fault: InjectedFault

    var description: String { "\(command) with \(fault) at \(syscall) #\(call)" }

    /// The calls of each system call `command` makes when nothing fails, from a trace of a run:
    /// their numbers, as `when=` counts them (an `openat` only when it may create a file).
    static func calls(of command: FaultCommand, in fixture: FaultFixture) throws -> [String: [Int]] {
        try fixture.restore()
        let trace = fixture.directory.path + "/trace"
        let traced = try fixture.run(
            command.device, command.arguments(fixture),
            under: ["strace", "-f", "-qq", "-o", trace, "-e", "trace=" + InjectedFault.syscalls.joined(separator: ",")])
        precondition(traced.status == 0, "\(command) fails without a fault: \(traced.stderr)")
        var counts: [String: Int] = [:]
        var calls: [String: [Int]] = [:]
        for line in (try FileSystem.read(trace)).map({ String(decoding: $0, as: UTF8.self) })?.split(separator: "\n") ?? [] {
            // "PID  name(args) = result"
            guard let open = line.firstIndex(of: "("), let name = line[..<open].split(separator: " ").last.map(String.init),
                InjectedFault.syscalls.contains(name)
            else { continue }
            counts[name, default: 0] += 1
            if name == "openat" && !line.contains("O_CREAT") { continue }
            calls[name, default: []].append(counts[name]!)
        }
        return calls
    }

    /// Runs the case on the restored fixture and checks what it left (see the suite).
    func check(in fixture: FaultFixture, before: [String], after: [String]) throws {
        try fixture.restore()
        let device = command.device
        let result = try fixture.run(
            device, command.arguments(fixture),
            under: [
                "strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=\(syscall)", "-e", "inject=\(syscall):\(fault.action):when=\(call)",
            ])
        let outcome = "\(self): exit \(result.status), \(result.stderr)"
        #expect(!result.timedOut, "\(outcome)")
        // Retrying cannot help a full disk.
        if fault == .enospc { #expect(result.status != ExitCode.temporary, "\(outcome)") }
        // Readable, whatever happened.
        for arguments in [["tab", "ls"], ["clip", "ls"], ["settings"], ["sync", "status"]] {
            let read = try fixture.run(device, arguments)
            #expect(read.status == 0, "\(outcome); then \(arguments.joined(separator: " ")): \(read.stderr)")
        }
        // Honest.
        if command.isOneChange {
            let now = try fixture.snapshot(device)
            if result.status == 0 { #expect(now == after, "\(outcome): exit 0 but the change is not there") }
            if result.stderr.contains("nothing was changed") || result.stderr.contains("nothing was stored") {
                #expect(now == before, "\(outcome): the change was made")
            }
        }
        // Nothing kept here and never sent: the device that never synced starts (a failed `sync enable`
        // is run again), then both devices sync until they agree.
        if device == "c", command.name != "sync enable" || result.status != 0 {
            let enable = try fixture.run(device, ["sync", "enable", fixture.backend])
            #expect(enable.status == 0, "\(outcome); then sync enable: \(enable.stderr)")
        }
        for _ in 0..<2 {
            for syncing in [device, "b"] {
                let sync = try fixture.run(syncing, ["sync"])
                #expect(sync.status == 0, "\(outcome); then \(syncing): sync: \(sync.stderr)")
            }
        }
        let here = try fixture.snapshot(device, shared: true)
        let there = try fixture.snapshot("b", shared: true)
        #expect(here == there, "\(outcome): \(device) and b differ after syncing")
    }
}

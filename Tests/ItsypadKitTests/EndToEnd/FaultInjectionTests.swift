import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A crash (SIGKILL just before a system call) or an I/O error (ENOSPC, EIO) injected with strace
/// into the commands that change data (`FaultCommand.all`). After each, the data directory is
/// readable, the command's exit status and message are true to what it left (exit 0: the change is
/// there; "nothing was changed": it is not), and after syncing both devices agree: no change is
/// kept on one and never sent.
@Suite(.serialized) struct FaultInjectionTests {
    /// A crash before each of its appends is made durable leaves a removal, a pin or a setting either not made or
    /// made and queued: the other device ends as this one (the issue's `clip rm` killed at its
    /// second fdatasync kept the clip on the other device for ever).
    @Test(
        .needs(["strace"]),
        arguments: ["clip rm", "clip pin", "clip unpin", "clip clear", "clip prune", "tab rm", "settings set", "settings unset"])
    func aCrashBeforeAnySyncOfAChangeLeavesItSentOrNotMade(name: String) throws {
        let fixture = try FaultFixture()
        let command = FaultCommand.all.first { $0.name == name }!
        let (before, after) = try Self.snapshots(of: command, in: fixture)
        let calls = try FaultCase.calls(of: command, in: fixture)
        #expect(!(calls["fdatasync"] ?? []).isEmpty, "\(calls)")
        // Each append (the queue's, the history's) is made durable by an fdatasync.
        for call in calls["fdatasync"] ?? [] {
            try FaultCase(command: command, syscall: "fdatasync", call: call, fault: .kill).check(in: fixture, before: before, after: after)
        }
    }

    /// A full disk while the clipboard history's index (a cache) is written, after the removal
    /// was committed: the removal is made, said so, and synced; no "nothing was changed".
    @Test(.needs(["strace"]))
    func aFailedCacheWriteAfterARemovalIsAWarning() throws {
        let fixture = try FaultFixture()
        let index = fixture.dataDir("a") + "/clips/index"
        let removed = fixture.id("older")
        let result = try fixture.run(
            "a", ["clip", "rm", removed],
            under: [
                "strace", "-f", "-qq", "-o", "/dev/null", "-P", index, "-e", "trace=pwrite64", "-e", "inject=pwrite64:error=ENOSPC:when=1",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("the change was made") && !result.stderr.contains("nothing was changed"), "\(result.stderr)")
        #expect(!(try fixture.run("a", ["clip", "ls"])).stdout.contains("older"))
        for device in ["a", "b"] { #expect(try fixture.run(device, ["sync"]).status == 0) }
        #expect(!(try fixture.run("b", ["clip", "ls"])).stdout.contains("older"))
    }

    /// A removal that failed ("nothing was changed") after its deletion was queued sends no deletion:
    /// the queued deletion of a clip still here goes as a save, and the clip stays on both devices.
    @Test(.needs(["strace"]))
    func aRemovalThatFailedSendsNoDeletion() throws {
        let fixture = try FaultFixture()
        let log = fixture.dataDir("a") + "/clips/log"
        let result = try fixture.run(
            "a", ["clip", "rm", fixture.id("older")],
            under: [
                "strace", "-f", "-qq", "-o", "/dev/null", "-P", log, "-e", "trace=pwrite64", "-e", "inject=pwrite64:error=ENOSPC:when=1",
            ])
        #expect(result.status == 1 && result.stderr.contains("nothing was changed"), "\(result.stderr)")
        for device in ["a", "b", "a"] { #expect(try fixture.run(device, ["sync"]).status == 0) }
        for device in ["a", "b"] { #expect(try fixture.run(device, ["clip", "ls"]).stdout.contains("older"), "\(device)") }
    }

    /// A tab with an edit not sent yet whose removal failed after its deletion was queued: the deletion
    /// goes as a save of the tab, edit included.
    @Test(.needs(["strace"]))
    func aTabRemovalThatFailedStillSendsItsEdit() throws {
        let fixture = try FaultFixture()
        #expect(try fixture.run("a", ["tab", "edit", "alpha", "alpha edited"]).status == 0)
        // The first rename of `tab rm` puts the record of the deletion in the tab's place.
        let result = try fixture.run(
            "a", ["tab", "rm", "alpha"],
            under: ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=renameat", "-e", "inject=renameat:error=ENOSPC:when=1"])
        #expect(result.status == 1 && result.stderr.contains("nothing was changed"), "\(result.stderr)")
        for device in ["a", "b", "a"] { #expect(try fixture.run(device, ["sync"]).status == 0) }
        for device in ["a", "b"] {
            #expect(try fixture.run(device, ["tab", "show", "alpha"]).stdout.contains("alpha edited"), "\(device)")
        }
    }

    /// A full disk when the directory is synced after settings.json was replaced: the setting is changed,
    /// and the message says so rather than "nothing was changed".
    @Test(.needs(["strace"]))
    func aFailureAfterAFileIsReplacedSaysTheChangeWasMade() throws {
        let fixture = try FaultFixture()
        // fsync #1 is the new file's, #2 its directory's (the queue's append is an fdatasync).
        let result = try fixture.run(
            "a", ["settings", "set", "clipboard.maxEntries", "500"],
            under: ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=fsync", "-e", "inject=fsync:error=ENOSPC:when=2"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("the change was made") && !result.stderr.contains("nothing was changed"), "\(result.stderr)")
        #expect(try fixture.run("a", ["settings", "get", "clipboard.maxEntries"]).stdout == "500\n")
        for device in ["a", "b"] { #expect(try fixture.run(device, ["sync"]).status == 0) }
        #expect(try fixture.run("b", ["settings", "get", "clipboard.maxEntries"]).stdout == "500\n")
    }

    /// The sample `swift test` runs: every command, and cases drawn by a seed from every system call
    /// and fault. `Tests/Soak/fault-sweep.sh` runs every case (ITSYPAD_FAULT_CASES=all) or another sample.
    @Test(.needs(["strace"]))
    func faultsAtSystemCallsOfEveryCommandThatChangesData() throws {
        let fixture = try FaultFixture()
        let wanted = Self.setting("ITSYPAD_FAULT_CASES") ?? "16"
        var generator = SeededGenerator(seed: UInt64(Self.setting("ITSYPAD_FAULT_SEED") ?? "") ?? 39)
        // Drawn by kind (command, system call, fault), then call: how many calls a command makes may
        // vary a little from run to run (a sync's compaction), the kinds do not, so a seed draws the same cases.
        var kinds: [(command: FaultCommand, syscall: String, calls: [Int])] = []
        for command in FaultCommand.all {
            for (syscall, calls) in try FaultCase.calls(of: command, in: fixture).sorted(by: { $0.key < $1.key }) {
                kinds.append((command, syscall, calls))
            }
        }
        let population = kinds.reduce(0) { $0 + $1.calls.count * InjectedFault.allCases.count }
        var cases: [FaultCase] = []
        if let count = Int(wanted) {
            for _ in 0..<count {
                let kind = kinds.randomElement(using: &generator)!
                let fault = InjectedFault.allCases.randomElement(using: &generator)!
                cases.append(
                    FaultCase(
                        command: kind.command, syscall: kind.syscall, call: kind.calls.randomElement(using: &generator)!, fault: fault))
            }
        } else {
            for kind in kinds {
                for call in kind.calls {
                    for fault in InjectedFault.allCases {
                        cases.append(FaultCase(command: kind.command, syscall: kind.syscall, call: call, fault: fault))
                    }
                }
            }
        }
        print("fault injection: \(cases.count) of \(population) cases")
        var snapshots: [String: (before: [String], after: [String])] = [:]
        for faultCase in cases {
            let command = faultCase.command
            let expected = try snapshots[command.name] ?? Self.snapshots(of: command, in: fixture)
            snapshots[command.name] = expected
            try faultCase.check(in: fixture, before: expected.before, after: expected.after)
        }
    }

    /// The data as a command finds it and as it leaves it without a fault.
    static func snapshots(of command: FaultCommand, in fixture: FaultFixture) throws -> (before: [String], after: [String]) {
        try fixture.restore()
        let before = try fixture.snapshot(command.device)
        let result = try fixture.run(command.device, command.arguments(fixture))
        #expect(result.status == 0, "\(command): \(result.stderr)")
        return (before, try fixture.snapshot(command.device))
    }

    static func setting(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}

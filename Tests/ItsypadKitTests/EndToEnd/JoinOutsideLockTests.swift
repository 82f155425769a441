import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A joining sync writes the tabs it takes from the backend with the data directory's lock let go,
/// and a command run meanwhile still has its change kept (through the binary, under `strace`).
@Suite("End to end: a joining sync writes its tabs with the lock let go", .needs(["strace"]))
struct JoinOutsideLockTests {
    /// The tab files a run of `arguments` created in `stage` while holding the data directory's
    /// lock (from its `flock` of `lock` to the `LOCK_UN`), and in all, from `strace -f -y`.
    static func stageWrites(_ device: Device, _ arguments: [String], stage: String) throws -> (locked: Int, all: Int) {
        let lock = device.dataDir + "/lock>"
        var held = false
        var counts = (locked: 0, all: 0)
        for line in try FirstPushTests.traced(device, arguments, strace: ["-y", "-s", "0", "-e", "trace=openat,flock"]) {
            if line.contains("flock("), line.contains(lock) {
                if line.contains("LOCK_UN") {
                    held = false
                } else if line.contains("LOCK_EX"), line.hasSuffix("= 0") {
                    held = true
                }
            } else if line.contains("openat("), line.contains(stage), line.contains("O_CREAT") {
                counts.all += 1
                if held { counts.locked += 1 }
            }
        }
        return counts
    }

    /// A device holding a tab of its own joins a backend of 2,500 tabs: it writes them into its
    /// stage with the lock let go (it wrote each of them holding it, and a command arriving then
    /// waited for a step's hundred writes).
    @Test("a joining first sync writes the fetched tabs into its stage without holding the lock")
    func tabFilesWrittenWithoutTheLock() throws {
        let sender = FirstPushTests.sender(tabs: 2500)
        #expect(sender.inProcess(["sync"]).0 == 0)
        let joiner = Device()
        #expect(joiner.inProcess(["tab", "new", "--name", "own", "a tab of its own"]).0 == 0)
        let (locked, all) = try Self.stageWrites(
            joiner, ["sync", "enable", FirstPushTests.backend(of: sender)], stage: "/\(FileSystem.temporaryPrefix)tabs>")
        #expect(all >= 2500, "\(all) tab files written through the stage: the trace missed them")
        // Its own tab, rewritten with its tag when the push after the pull is accepted.
        #expect(locked <= 10, "\(locked) of \(all) tab files written into the stage while holding the lock")
    }

    /// A `clip add` while a joining sync has hundreds of fetched tabs in its stage (stopped at the
    /// stage's first syncfs) looks at none of them: the privacy check does not enter the stage of
    /// `tabs/`, as it does not enter `tabs/`. Before, it looked at each staged file (500 here,
    /// 2.8 ms of CPU against 1 ms for the rest of a `clip add`): most of a `clip add`'s extra time
    /// during a join.
    @Test("a command run while a join has tabs staged does not look at each of them")
    func stagedTabsNotLookedAt() throws {
        let sender = FirstPushTests.sender(tabs: 1000)
        #expect(sender.inProcess(["sync"]).0 == 0)
        let joiner = Device()
        let stopped = try StoppedRun(joiner, ["sync", "enable", FirstPushTests.backend(of: sender)], at: "syncfs")
        let stage = joiner.dataDir + "/" + FileSystem.temporaryPrefix + "tabs"
        let staged = try FileSystem.list(stage).count
        let looks = try FirstPushTests.traced(
            joiner, ["clip", "add", "copied during the join"], strace: ["-y", "-e", "trace=newfstatat,statx,openat"]
        ).filter { $0.contains(stage + ">") || $0.contains(stage + "/") }.count
        let finished = try stopped.resume()
        #expect(finished.status == 0, "the join: \(finished.stderr)")
        #expect(staged >= 100, "\(staged) tabs in the stage when the join stopped: the test stopped it elsewhere")
        #expect(looks <= 5, "a clip add looked \(looks) times into the stage holding \(staged) tabs")
    }

    /// What a person does to a tab while the sync has its fetched version staged.
    enum Change: String, CaseIterable, Sendable {
        case edit, rename, delete

        var arguments: [String] {
            switch self {
            case .edit: return ["tab", "edit", "shared", JoinOutsideLockTests.lines(last: "seven here")]
            case .rename: return ["tab", "edit", "shared", "--name", "renamed"]
            case .delete: return ["tab", "rm", "shared"]
            }
        }
    }

    /// Seven lines; the first and the last given.
    static func lines(first: String = "one", last: String = "seven") -> String {
        ([first] + ["two", "three", "four", "five", "six"] + [last]).joined(separator: "\n")
    }

    /// Devices a and b share a tab; a edits its first line and adds 100 tabs, then syncs. b's sync
    /// is stopped (SIGSTOP, injected by strace) just after the first syncfs of its pull, which makes
    /// the fetched tabs durable in its stage, before they are put in place: `change` is made on b
    /// then, and b's sync goes on. The change is kept as the merge rules say, as if made before the
    /// sync: an edit of the last line merges with a's edit of the first, a rename keeps its name
    /// over a's content, and a's edit (unseen by the deletion) brings the deleted tab back. Before,
    /// the sync held the lock there and the command waited for it (and gave up).
    @Test("a change made while a joining sync has the fetched tabs staged is kept", arguments: Change.allCases)
    func changeWhileStagedIsKept(_ change: Change) throws {
        let a = Device(), b = Device()
        let backend = FirstPushTests.backend(of: a)
        #expect(a.inProcess(["tab", "new", "--name", "shared"], stdin: Self.lines()).0 == 0)
        #expect(a.inProcess(["sync", "enable", backend]).0 == 0)
        #expect(b.inProcess(["sync", "enable", backend]).0 == 0)
        #expect(a.inProcess(["tab", "edit", "shared"], stdin: Self.lines(first: "ONE here")).0 == 0)
        // More than a few fetched tabs: made durable by one syncfs, not one by one.
        FirstPushTests.importing("tabs", count: 100, into: a, fields: FirstPushTests.tab)
        #expect(a.inProcess(["sync"]).0 == 0)

        let stopped = try StoppedRun(b, ["sync"], at: "syncfs")
        let changed = try b.runArguments(change.arguments)
        let finished = try stopped.resume()
        #expect(changed.status == 0, "\(change) during the sync: \(changed.stderr)")
        #expect(finished.status == 0, "the sync: \(finished.stderr)")

        let expected: (name: String, content: String) =
            switch change {
            case .edit: ("shared", Self.lines(first: "ONE here", last: "seven here"))
            case .rename: ("renamed", Self.lines(first: "ONE here"))
            case .delete: ("shared", Self.lines(first: "ONE here"))
            }
        #expect(a.inProcess(["sync"]).0 == 0)
        for (device, label) in [(b, "b"), (a, "a")] {
            let tabs = try JSONValue.parse(Array(device.inProcess(["tab", "ls", "--json"]).1.utf8)).arrayValue ?? []
            let found = tabs.filter { $0["content"]?.stringValue?.contains("three") == true }
            #expect(found.count == 1, "\(label) holds \(found.count) versions of the shared tab after the \(change)")
            #expect(found.first?["name"]?.stringValue == expected.name, "\(label) after the \(change)")
            #expect(found.first?["content"]?.stringValue == expected.content, "\(label) after the \(change)")
            #expect(tabs.count == 101, "\(label) holds \(tabs.count) tabs after the \(change)")
        }
    }
}

/// A run of itsypad under `strace`, stopped by a SIGSTOP injected into the first call of `call`,
/// until `resume`.
struct StoppedRun {
    struct NeverStopped: Error, CustomStringConvertible { let description: String }

    let strace: pid_t
    let stopped: pid_t
    let scratch = TemporaryDirectory()

    init(_ device: Device, _ arguments: [String], at call: String) throws {
        var environment = Process.baseEnvironment
        environment["ITSYPAD_DATA_DIR"] = device.dataDir
        environment["TMPDIR"] = device.directory.path
        let trace = scratch.path + "/trace"
        strace = try Process.spawn(
            "/usr/bin/strace",
            ["-f", "-qq", "-e", "trace=" + call, "-e", "inject=\(call):signal=SIGSTOP:when=1", "-o", trace, Process.itsypad] + arguments,
            stdin: "/dev/null", stdout: scratch.path + "/out", stderr: scratch.path + "/err", environment: environment)
        // Until the trace says it stopped (a guard against a run that never does: it ends).
        var found: pid_t?
        while found == nil {
            let text = String(decoding: try FileSystem.read(trace) ?? [], as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.contains("stopped by SIGSTOP") }) {
                found = line.split(separator: " ").first.flatMap { pid_t($0) }
                break
            }
            var status: Int32 = 0
            if waitpid(strace, &status, WNOHANG) == strace {
                let err = String(decoding: try FileSystem.read(scratch.path + "/err") ?? [], as: UTF8.self)
                throw NeverStopped(description: "the run ended without stopping at \(call): \(err)")
            }
            usleep(10_000)
        }
        stopped = found!
    }

    /// Lets the run go on and waits for its end.
    func resume() throws -> RunResult {
        kill(stopped, SIGCONT)
        var status: Int32 = 0
        while waitpid(strace, &status, 0) < 0 && errno == EINTR {}
        let err = String(decoding: try FileSystem.read(scratch.path + "/err") ?? [], as: UTF8.self)
        let out = try FileSystem.read(scratch.path + "/out") ?? []
        return RunResult(
            status: (status >> 8) & 0xFF, stdout: String(decoding: out, as: UTF8.self), stderr: err, stdoutBytes: out, signal: nil,
            timedOut: false)
    }
}

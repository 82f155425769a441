import Testing

@testable import ItsypadCLI
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// `itsypad sync watch` run as a user runs it: the built binary as a child
/// process on two devices sharing a backend directory. Waits are bounds
/// against a hang (generous, for a loaded machine), never measurements.
@Suite struct SyncWatchTests {
    let laptop = Device()
    let desktop = Device()
    let shared = TemporaryDirectory()
    var backend: String { shared.path + "/backend" }

    init() throws {
        for device in [laptop, desktop] {
            let enabled = try device.run("sync", "enable", backend)
            #expect(enabled.status == 0, "\(enabled.stderr)")
        }
    }

    @Test func aClipAddedOnOneDeviceAppearsOnTheOtherAndBack() throws {
        // An interval far beyond the wait: only change notification can carry the clips across in time.
        let laptopWatch = try RunningWatcher(laptop, ["--interval", "600"])
        let desktopWatch = try RunningWatcher(desktop, ["--interval", "600"])
        #expect(
            eventually { laptopWatch.stderr.contains("synced:") && desktopWatch.stderr.contains("synced:") },
            "\(laptopWatch.stderr)\(desktopWatch.stderr)")

        try laptop.run("clip", "add", "copied on the laptop")
        #expect(eventually { try desktop.run("clip", "ls").stdout.contains("copied on the laptop") }, "\(desktopWatch.stderr)")
        try desktop.run("tab", "new", "--name", "todo", "written on the desktop")
        #expect(eventually { try laptop.run("tab", "show", "todo").stdout == "written on the desktop" }, "\(laptopWatch.stderr)")

        #expect(laptopWatch.stop(SIGTERM) == 0)
        #expect(desktopWatch.stop(SIGINT) == 0)
        #expect(laptopWatch.stderr.contains("synced: pulled 0, pushed 1"), "\(laptopWatch.stderr)")
        #expect(desktopWatch.stderr.contains("synced: pulled 1, pushed 0"), "\(desktopWatch.stderr)")
        #expect(!laptopWatch.stderr.contains("failed") && !desktopWatch.stderr.contains("failed"))
    }

    @Test(arguments: [SIGTERM, SIGINT, SIGHUP])
    func aStopSignalEndsItWithExitZero(_ signal: Int32) throws {
        let watch = try RunningWatcher(laptop, [])
        #expect(eventually { watch.stderr.contains("synced:") }, "\(watch.stderr)")
        #expect(watch.stop(signal) == 0, "\(watch.stderr)")
        // Nothing is left holding the data directory.
        #expect(try laptop.run("clip", "add", "after the watcher").status == 0)
    }

    /// Stopped while it works (a change just made, a sync under way, inotify events queued), the
    /// watcher exits 0 every time: no signal it had blocked is left to end it on its way out.
    @Test(arguments: [SIGTERM, SIGINT, SIGHUP])
    func aStopWhileItWorksExitsZeroEveryTime(_ signal: Int32) throws {
        for run in 0..<12 {
            let watch = try RunningWatcher(laptop, ["--interval", "600"])
            try #require(eventually { watch.stderr.contains("synced:") }, "\(watch.stderr)")
            try laptop.run("clip", "add", "copied in run \(run)")
            usleep(useconds_t(run % 4 * 5_000))
            let status = watch.stop(signal)
            #expect(status == 0, "run \(run): \(watch.stderr)")
            if status != 0 { return }
        }
    }

    @Test func quietPrintsNothingWhenEverySyncSucceeds() throws {
        let watch = try RunningWatcher(laptop, ["-q"])
        try laptop.run("clip", "add", "sent quietly")
        try #require(
            eventually {
                try desktop.run("sync").status == 0 && desktop.run("clip", "ls").stdout.contains("sent quietly")
            })
        #expect(watch.stop(SIGTERM) == 0)
        #expect(watch.stderr.isEmpty, "\(watch.stderr)")
    }

    @Test func aBackendThatDisappearsAndReturnsIsWaitedFor() throws {
        let watch = try RunningWatcher(laptop, ["--interval", "1"])
        #expect(eventually { watch.stderr.contains("synced:") }, "\(watch.stderr)")
        let away = shared.path + "/unmounted"
        #expect(rename(backend, away) == 0)
        try laptop.run("clip", "add", "copied while the disk was away")
        #expect(eventually { watch.stderr.contains("sync failed, retrying in") }, "\(watch.stderr)")
        #expect(watch.stderr.contains("missing or empty"), "\(watch.stderr)")
        #expect(!FileSystem.exists(backend), "the watcher must not re-create a missing backend")

        #expect(rename(away, backend) == 0)
        #expect(eventually { watch.stderr.contains("synced: pulled 0, pushed 1") }, "\(watch.stderr)")
        #expect(try desktop.run("sync").status == 0)
        #expect(try desktop.run("clip", "ls").stdout.contains("copied while the disk was away"))
        #expect(watch.stop(SIGTERM) == 0)
    }

    @Test func aHeldDataDirectoryLockIsRetriedNotFatal() throws {
        let watch = try RunningWatcher(laptop, ["--interval", "1"], environment: ["ITSYPAD_LOCK_TIMEOUT": "0.2"])
        #expect(eventually { watch.stderr.contains("synced:") }, "\(watch.stderr)")
        var held: FileLock? = try FileLock(path: laptop.dataDir + "/lock", mode: .exclusive, timeout: 5)
        try #require(held != nil)
        // A peer's change makes the watcher try, and find the lock held.
        try desktop.run("clip", "add", "sent while the laptop was busy")
        #expect(try desktop.run("sync").status == 0)
        #expect(eventually { watch.stderr.contains("locked by another itsypad process") }, "\(watch.stderr)")
        held = nil
        #expect(eventually { try laptop.run("clip", "ls").stdout.contains("sent while the laptop was busy") }, "\(watch.stderr)")
        #expect(watch.stop(SIGTERM) == 0)
    }

    @Test func aSecondWatcherForTheSameDataDirectoryIsRefused() throws {
        let watch = try RunningWatcher(laptop, [])
        #expect(eventually { watch.stderr.contains("synced:") }, "\(watch.stderr)")
        let second = try laptop.run("sync", "watch")
        #expect(second.status == 1)
        #expect(second.stderr.contains("another 'itsypad sync watch' is already running"), "\(second.stderr)")
        // Waiting, the watcher holds nothing other commands need: the data directory's lock is free at once.
        #expect(try FileLock(path: laptop.dataDir + "/lock", mode: .exclusive, timeout: 0) != nil)
        // The other device is not affected.
        let other = try RunningWatcher(desktop, [])
        #expect(eventually { other.stderr.contains("synced:") }, "\(other.stderr)")
        #expect(other.stop(SIGTERM) == 0)
        #expect(watch.stop(SIGTERM) == 0)
    }

    @Test func withoutSyncEnabledItRefusesToStart() throws {
        let stranger = Device()
        try stranger.run("clip", "add", "never synced")
        let result = try stranger.run("sync", "watch")
        #expect(result.status == 1)
        #expect(result.stderr.contains("sync is disabled"), "\(result.stderr)")
    }

    @Test func theIntervalMustBeAWholeNumberOfSeconds() throws {
        for value in ["0", "1.5", "-3", "86401"] {
            let result = try laptop.run("sync", "watch", "--interval", value)
            #expect(result.status == 64, "--interval \(value): \(result.stderr)")
        }
    }

    /// `install` puts the unit where `systemctl --user` finds it, running the binary it installed.
    @Test(arguments: [".local", "with space/100%"])
    func theInstalledSystemdUnitRunsTheInstalledWatcher(_ relativePrefix: String) throws {
        let home = TemporaryDirectory()
        let prefix = home.path + "/" + relativePrefix
        var environment = Process.baseEnvironment
        environment["HOME"] = home.path
        let installed = try Process.run(Process.itsypad, ["install", "-q", "--prefix", prefix], environment: environment)
        try #require(installed.status == 0, "\(installed.stderr)")
        let unit = prefix + "/share/systemd/user/itsypad-sync-watch.service"
        let text = String(decoding: try #require(try FileSystem.read(unit)), as: UTF8.self)
        let binary = SystemdUnit.quoted(prefix + "/bin/itsypad")
        #expect(text.contains("\nExecStart=\(binary) sync watch\n"), "\(text)")
        #expect(relativePrefix == ".local" ? binary == prefix + "/bin/itsypad" : binary.hasPrefix("\"") && binary.contains("100%%"))
        try ExternalTool.require(["systemd-analyze"])
        let verified = try Process.run("systemd-analyze", ["verify", "--man=no", unit], environment: environment, timeout: 60)
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        #expect(unlink(prefix + "/bin/itsypad") == 0)
        let missing = try Process.run("systemd-analyze", ["verify", "--man=no", unit], environment: environment, timeout: 60)
        #expect(missing.status != 0, "verify must notice the binary is not there")
    }

    @Test(
        arguments: [
            // (what happens, at which time; expected due time and retries after it)
            ([("start", 0.0)], 0.0, 0),
            ([("ok", 0.0)], 30.0, 0),
            ([("ok", 0.0), ("change", 5.0)], 5.1, 0),
            ([("ok", 0.0), ("change", 5.0), ("change", 5.05)], 5.1, 0),
            ([("busy", 0.0)], 1.0, 1),
            ([("busy", 0.0), ("busy", 1.0), ("busy", 3.0)], 7.0, 3),
            ([("busy", 0.0), ("busy", 1.0), ("busy", 3.0), ("busy", 7.0), ("busy", 15.0), ("busy", 31.0)], 61.0, 6),
            ([("busy", 0.0), ("busy", 1.0), ("change", 1.5)], 3.0, 2),
            ([("busy", 0.0), ("busy", 1.0), ("ok", 3.0), ("change", 3.5)], 3.6, 0),
            ([("failed", 0.0), ("change", 0.5)], 0.6, 0),
        ] as [([(String, Double)], Double, Int)])
    func theScheduleDebouncesPollsAndBacksOff(_ steps: [(String, Double)], due: Double, retries: Int) {
        var schedule = WatchSchedule(interval: 30, debounce: 0.1, now: 0)
        for (step, time) in steps {
            switch step {
            case "change": schedule.changed(now: time)
            case "busy": schedule.synced(retryable: true, now: time)
            case "ok", "failed": schedule.synced(retryable: false, now: time)
            default: break
            }
        }
        #expect(abs(schedule.due - due) < 1e-9, "\(steps): due \(schedule.due)")
        #expect(schedule.retries == retries)
    }
}

/// `itsypad sync watch` (or another watcher: `command`) as a child process; killed when the value goes away if not stopped.
final class RunningWatcher {
    let pid: pid_t
    private let errorPath: String
    private var exitStatus: Int32?

    init(_ device: Device, _ arguments: [String], environment: [String: String] = [:], command: [String] = ["sync", "watch"]) throws {
        var env = Process.baseEnvironment
        env["ITSYPAD_DATA_DIR"] = device.dataDir
        env["TMPDIR"] = device.directory.path
        for (key, value) in environment { env[key] = value }
        errorPath = device.directory.file("watch-\(UInt32.random(in: 0...UInt32.max)).err")
        pid = try Process.spawn(
            Process.itsypad, command + arguments, stdin: "/dev/null", stdout: "/dev/null",
            stderr: errorPath, environment: env)
    }

    var stderr: String {
        ((try? FileSystem.read(errorPath)) ?? nil).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// Sends `signal` and waits (at most 20 s) for the exit status; 128 + n when killed by signal n.
    func stop(_ signal: Int32) -> Int32 {
        kill(pid, signal)
        return exit() ?? -1
    }

    /// Waits (at most 20 s) for it to exit by itself; its status, or nil if it is still running.
    func exit() -> Int32? {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        for _ in 0..<2000 {
            if waitpid(pid, &status, WNOHANG) == pid {
                let signaled = status & 0x7F
                exitStatus = signaled == 0 ? (status >> 8) & 0xFF : 128 + signaled
                return exitStatus!
            }
            usleep(10_000)
        }
        return nil
    }

    deinit {
        guard exitStatus == nil else { return }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }
}

/// Checks `condition` every 50 ms until it holds (true) or `seconds` pass (false); a throw counts as not yet.
func eventually(within seconds: Double = 15, _ condition: () throws -> Bool) -> Bool {
    let deadline = Monotonic.seconds() + seconds
    while Monotonic.seconds() < deadline {
        if (try? condition()) == true { return true }
        usleep(50_000)
    }
    return (try? condition()) == true
}

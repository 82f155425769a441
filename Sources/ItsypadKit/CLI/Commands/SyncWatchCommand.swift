import ItsypadBackend
import ItsypadModel
import ItsypadStore
import ItsypadSupport
import ItsypadSync

/// `itsypad sync watch`: runs the one-shot sync at start, whenever this
/// device's data or the backend changes, and every interval, until SIGINT,
/// SIGTERM or SIGHUP (exit 0). Each sync is exactly `itsypad sync`, with its
/// own short-lived hold on the data directory; in between, the watcher holds
/// no lock and sleeps in the kernel.
enum SyncWatchCommand {
    /// A burst of changes (several clips, a peer's batch) waits this long to become one sync.
    static let debounce = 0.05
    static let defaultInterval = 30

    static func run(_ invocation: Invocation) throws -> Int32 {
        let interval = try invocation.integer(.interval, in: 1...86_400) ?? defaultInterval
        let directory = try invocation.dataDirectory()
        var backend = try enabledBackend(directory, invocation)
        // A second watcher would only double every sync: it is refused (exit 1), not told to retry.
        guard
            let exclusive = try FileLock(
                path: DataDirectoryLayout(root: directory).watchLock, in: FileTree(root: directory), mode: .exclusive, timeout: 0)
        else {
            throw ItsypadError.failure(
                "another 'itsypad sync watch' is already running for the data directory \(directory); this one stops")
        }
        defer { withExtendedLifetime(exclusive) {} }

        let events = FileEvents()
        let unwatched = events.watch(watchedDirectories(directory, backend: backend))
        if !invocation.quiet {
            var line = "watching \(directory) and \(backend.location); syncing on changes and every \(interval) s"
            if !unwatched.isEmpty { line += " (no change notification for " + unwatched.map(\.directory).joined(separator: ", ") + ")" }
            invocation.context.standardError.line(line)
            invocation.context.standardError.flush()
        }
        var schedule = WatchSchedule(interval: Double(interval), debounce: debounce, now: Monotonic.seconds())
        var previous: SyncOutcome?
        var warned: Set<String> = []
        while true {
            switch events.wait(timeout: schedule.due - Monotonic.seconds()) {
            case .stopRequested: return ExitCode.success
            case .changed: schedule.changed(now: Monotonic.seconds()); continue
            case .timedOut: break
            }
            guard Monotonic.seconds() >= schedule.due else { continue }
            // Watched again before each sync: the backend may have been replaced or come back, or be another one now.
            // The same one is kept, with the program its remote runs (rclone's daemon, stopped when the watch ends).
            if let current = try? enabledBackend(directory, invocation), current.location != backend.location { backend = current }
            events.watch(watchedDirectories(directory, backend: backend))
            let outcome = syncOnce(invocation, reusing: backend)
            schedule.synced(retryable: outcome.isRetryable, now: Monotonic.seconds())
            report(outcome, after: previous, retryIn: schedule.due - Monotonic.seconds(), warned: &warned, invocation)
            previous = outcome
        }
    }

    /// The backend of an enabled sync, read without waiting for the data directory's lock.
    static func enabledBackend(_ directory: String, _ invocation: Invocation) throws -> ConfiguredBackend {
        let settings = try DataStore(readingWithoutLock: directory).settings()
        guard settings.bool(.syncEnabled), let value = settings.string(.syncBackend), let location = BackendLocation(value) else {
            throw ItsypadError.failure("sync is disabled: run 'itsypad sync enable DIR' first")
        }
        return try ConfiguredBackend(
            location, mirrors: DataDirectoryLayout(root: directory).sync, environment: invocation.context.environment)
    }

    /// Every local change appends to the pending queue; a peer's shows in a backend directory
    /// (a git remote's only by polling: its clone changes only when this device syncs).
    static func watchedDirectories(_ directory: String, backend: ConfiguredBackend) -> [FileEvents.Watched] {
        let queue = DataDirectoryLayout(root: directory).pendingQueue
        let peerChanges = backend.remote == nil ? BackendOpener.peerChangeSignals(of: backend.path) : []
        return [FileEvents.Watched(FileSystem.directoryName(queue), names: [FileSystem.baseName(queue)])] + peerChanges
    }

    /// How one sync ended, as the watcher reports it.
    struct SyncOutcome {
        var status: Int32
        var report = SyncReport()
        /// Why it failed: the thrown error, or the errors the sync printed.
        var problem: String?
        /// Lines the user must see even with -q (a repaired queue).
        var warnings: [String] = []

        var isRetryable: Bool { status == ExitCode.temporary }
        var movedSomething: Bool { report.pulled + report.pushed + report.conflicts > 0 }
    }

    /// Runs `itsypad sync` in this process with its own invocation, so that it
    /// takes and releases the data directory's lock as the command does, on the
    /// watch's `backend` while it is the one configured; what it would print is
    /// collected into one outcome.
    static func syncOnce(_ invocation: Invocation, reusing backend: ConfiguredBackend) -> SyncOutcome {
        let context = Context.memory(environment: invocation.context.environment, now: invocation.context.now)
        let sync = Invocation(parsed: invocation.parsed, context: context)
        var outcome = SyncOutcome(status: ExitCode.success)
        var report = SyncReport()
        do {
            defer { sync.close() }
            outcome.status = try SyncCommands.withEngine(sync, direction: "sync", reusing: backend) { engine in
                defer { report = engine.report }
                try engine.sync()
            }
        } catch {
            let failure = ItsypadError.wrapping(error)
            outcome.status = failure.exitCode
            outcome.problem = failure.message
        }
        outcome.report = report
        let printed = context.standardError.text.split(separator: "\n").map(String.init)
        outcome.warnings = printed.filter { $0.hasPrefix("warning: ") }
        let errors = printed.filter { !$0.hasPrefix("warning: ") }.map { $0.hasPrefix("Error: ") ? String($0.dropFirst(7)) : $0 }
        if outcome.problem == nil, !errors.isEmpty { outcome.problem = errors.joined(separator: "; ") }
        return outcome
    }

    /// One line per sync that moved something or failed, and for the first and the
    /// one after a failure; with -q only failures.
    /// Each warning is shown once: a data directory others can read is worth one line, not one per sync.
    static func report(
        _ outcome: SyncOutcome, after previous: SyncOutcome?, retryIn delay: Double, warned: inout Set<String>,
        _ invocation: Invocation
    ) {
        let errors = invocation.context.standardError
        for warning in outcome.warnings where warned.insert(warning).inserted { errors.line(warning) }
        let time = Time.iso8601(invocation.context.now())
        let report = outcome.report
        let counts = "pulled \(report.pulled), pushed \(report.pushed), resolved \(report.conflicts) conflicts"
        if outcome.status == ExitCode.success {
            // The first sync, the first after a failure, and those that moved something.
            let worthALine = previous?.status != ExitCode.success || outcome.movedSomething
            if worthALine && !invocation.quiet { errors.line("\(time) synced: \(counts)") }
        } else if outcome.isRetryable {
            errors.line("\(time) sync failed, retrying in \(Int(delay.rounded(.up))) s: \(outcome.problem ?? "exit \(outcome.status)")")
        } else {
            errors.line("\(time) sync failed (\(counts)): \(outcome.problem ?? "exit \(outcome.status)")")
        }
        errors.flush()
    }
}

/// When the watcher syncs next: at once at start, shortly after a change, an
/// interval after the last sync (polling, for changes no notification reports),
/// and after a failure that retrying can fix, not before a growing back-off
/// (1, 2, 4 … seconds, at most the interval) however many changes arrive.
struct WatchSchedule: Equatable {
    let interval: Double
    let debounce: Double
    /// When the next sync starts, in monotonic seconds.
    private(set) var due: Double
    /// Consecutive failures that retrying can fix.
    private(set) var retries = 0
    private var notBefore: Double

    init(interval: Double, debounce: Double, now: Double) {
        self.interval = interval
        self.debounce = debounce
        due = now
        notBefore = now
    }

    mutating func changed(now: Double) {
        due = min(due, max(now + debounce, notBefore))
    }

    mutating func synced(retryable: Bool, now: Double) {
        if retryable {
            retries += 1
            notBefore = now + min(interval, Double(1 << min(retries - 1, 20)))
            due = notBefore
        } else {
            retries = 0
            notBefore = now
            due = now + interval
        }
    }
}

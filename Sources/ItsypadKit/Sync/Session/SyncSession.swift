import ItsypadBackend
import ItsypadModel
import ItsypadStore
import ItsypadSupport

/// One data directory's sync with its backend, as every sync command runs it: the backend the
/// `sync.backend` setting names opened with the device's key, the engine, a remote's fetch and
/// send around it, the state `sync status` shows and the activity log. The CLI parses, calls
/// and prints; nothing here prints (what the user must hear goes to `warn`).
public struct SyncSession {
    /// The data directory, locked by the command.
    public let store: DataStore
    /// For a remote's programs (PATH, credentials, their own settings).
    let environment: [String: String]
    /// Longest wait for the backend's lock, in seconds.
    public let lockTimeout: Double
    let now: () -> Milliseconds
    /// Told what the user must hear even with -q (a data directory found to be a copy, a repaired queue).
    let warn: (String) -> Void
    /// Told how far the engine got, as it goes.
    let progress: ((SyncReport) -> Void)?
    /// A backend made before, used again while it is the one configured: `sync watch` keeps one
    /// remote, and the program it runs (rclone's daemon), across its syncs.
    public var reused: ConfiguredBackend?

    public init(
        store: DataStore, environment: [String: String], lockTimeout: Double, now: @escaping () -> Milliseconds,
        warn: @escaping (String) -> Void, progress: ((SyncReport) -> Void)? = nil
    ) {
        self.store = store
        self.environment = environment
        self.lockTimeout = lockTimeout
        self.now = now
        self.warn = warn
        self.progress = progress
    }

    /// Pushes refused because the remote moved, each followed by a fetch and another engine run, before giving up with 75.
    static let publishRounds = 3

    // MARK: The backend

    /// The backend `location` names, ready for this data directory (a remote's mirror in it).
    public func configured(_ location: BackendLocation) throws -> ConfiguredBackend {
        if let reused, reused.location == location { return reused }
        return try ConfiguredBackend(location, mirrors: store.layout.sync, environment: environment)
    }

    /// The backend the sync.backend setting names.
    public func configured() throws -> ConfiguredBackend {
        guard let value = try store.settings().string(.syncBackend), let location = BackendLocation(value) else {
            throw ItsypadError.failure("no sync backend: run 'itsypad sync enable DIR' or 'itsypad sync enable git:URL'")
        }
        return try configured(location)
    }

    /// The configured backend as the engine uses it, and where it is.
    func opened() throws -> (backend: SyncBackend, configured: ConfiguredBackend) {
        let configured = try self.configured()
        configured.remote?.warmUp()
        // Each of the engine's attempts waits a fifth of the lock time-out.
        let backend = try SyncKeys.backend(
            at: configured.path, remote: configured.remote, store: store, lockTimeout: lockTimeout / Double(SyncEngine.attempts))
        return (backend, configured)
    }

    // MARK: Running the engine

    /// Runs the engine (`body`) on the configured backend, or on `given` (and the directory its
    /// errors name), through its remote's fetch and send when it has one; recovers a data
    /// directory copied from another device's; keeps the outcome for `sync status` and the
    /// activity log under `direction`. Throws the failure once it is kept (75 for a backend busy
    /// or unreachable); returns what the engine did otherwise, items that failed included.
    public func run(
        direction: String, backend given: (backend: SyncBackend, path: String)? = nil, _ body: (SyncEngine) throws -> Void
    ) throws -> SyncReport {
        guard try store.settings().bool(.syncEnabled) else {
            throw ItsypadError.failure("sync is disabled: run 'itsypad sync enable DIR' first")
        }
        func open() throws -> (SyncBackend, ConfiguredBackend) {
            try given.map { ($0.backend, try self.configured(.directory($0.path))) } ?? opened()
        }
        var (backend, configured): (SyncBackend, ConfiguredBackend)
        do {
            (backend, configured) = try open()
        } catch {
            // Refused before the engine runs (a backend in another format): `sync status` says why too.
            var state = try EngineState.load(from: store)
            state.lastError = (error as? ItsypadError)?.message ?? String(describing: error)
            if state.damage == nil { try state.save(to: store) }
            throw error
        }
        var engine = try makeEngine(backend)
        let running = try RunningSync.begin(in: store, now: now())
        defer { running.end(in: store) }
        var failure: ItsypadError?
        func run(_ engine: SyncEngine) throws {
            if let remote = configured.remote {
                try syncThrough(remote, engine: engine, body)
            } else {
                try body(engine)
            }
        }
        do {
            do {
                try run(engine)
            } catch ReplicationError.deviceIDInUse(let evidence) {
                // A copy of another device's data directory: it goes on as a new device, with all its data.
                let previous = store.deviceID
                engine.close()
                try store.takeNewDeviceID()
                warn(
                    "this data directory is a copy of another that syncs as device \(previous) (\(evidence)); "
                        + "it now syncs as the new device \(store.deviceID) and sends all its data again")
                (backend, configured) = try open()
                engine = try makeEngine(backend)
                try engine.startOver()
                try run(engine)
            }
        } catch let error as BackendError {
            failure = mapped(error, backend: configured.location)
        } catch let error as EncryptionError {
            failure = .failure(error.message(naming: configured.location.description))
        } catch let error as ItsypadError {
            failure = error
        }
        let report = engine.report
        // Repairs the user must hear about (a damaged queue), even with -q.
        for warning in report.warnings { warn(warning) }
        try keep(report, failure: failure, direction: direction)
        if let failure { throw failure }
        return report
    }

    private func makeEngine(_ backend: SyncBackend) throws -> SyncEngine {
        let engine = try SyncEngine(store: store, backend: backend, now: now)
        engine.progress = progress
        return engine
    }

    /// Keeps how a run ended: in the engine state (`sync status`) and the activity log.
    private func keep(_ report: SyncReport, failure: ItsypadError?, direction: String) throws {
        let quarantined = report.quarantined.map(\.summary)
        var state = try EngineState.load(from: store)
        if let failure {
            state.lastError = failure.message
        } else if !report.failed.isEmpty {
            state.lastError = report.failed.values.sorted().first
        } else {
            state.lastError = quarantined.first.map { "malformed, skipped: " + $0 }
        }
        // A state still damaged (the run stopped before starting over) is left for the next run to replace.
        if state.damage == nil { try state.save(to: store) }
        let result =
            failure.map { $0.exitCode == ExitCode.temporary ? "temporary failure" : "failed" }
            ?? (report.failed.isEmpty && quarantined.isEmpty ? "ok" : "failed")
        try ActivityLog(store: store).append(
            ActivityLog.Entry(
                time: now(), direction: direction, pulled: report.pulled, pushed: report.pushed, conflicts: report.conflicts,
                result: result, error: failure?.message ?? state.lastError, quarantined: quarantined))
    }

    /// A sync through a remote: bring the mirror up to date, run the engine on it, send; again
    /// while the remote moves meanwhile. The remote's network I/O runs without the data
    /// directory's lock, like every backend call.
    private func syncThrough(_ remote: any SyncRemote, engine: SyncEngine, _ body: (SyncEngine) throws -> Void) throws {
        for _ in 1...SyncSession.publishRounds {
            if try store.withLockReleased({ try remote.checkedFetch(as: store.deviceID) }) == .replaced {
                try engine.startOverOnReplacedBackend()
                remote.acknowledgeReplacement()
            }
            try body(engine)
            let report = engine.report
            let message =
                "itsypad sync on \(commitName(deviceName: engine.deviceName)): pulled \(report.pulled), pushed \(report.pushed), resolved \(report.conflicts) conflicts"
            if try store.withLockReleased({ try remote.send(message: message) }) { return }
        }
        throw ItsypadError.temporary(
            "the \(remote.location.scheme ?? "") remote \(remote.location) kept changing: \(SyncSession.publishRounds) pushes were refused; "
                + "what this sync did is committed in the clone and goes with the next sync; try again later")
    }

    /// The device as a remote's history names it (see `GitRemote.commitName`).
    func commitName(deviceName: String) -> String {
        GitRemote.commitName(encrypted: FileSystem.exists(store.layout.syncKey), deviceID: store.deviceID, deviceName: deviceName)
    }

    /// Exit 75 for what a later sync can get past (busy, unreachable, a backend that is not there now), 1 for the rest.
    public static func mapped(_ error: BackendError, backend location: BackendLocation) -> ItsypadError {
        if case .zoneNotFound = error {
            switch location {
            case .directory(let path):
                return .temporary(
                    "the sync backend \(path) is missing or empty (no zone.json): is a disk or share unmounted? "
                        + "Nothing was synced; local changes stay queued. To start a new backend there on purpose, run 'itsypad sync enable \(path)'"
                )
            case .remote(let scheme, _):
                let branch = scheme == "git" ? " on its branch '\(GitRemote.branch)'" : ""
                return .failure(
                    "the \(scheme) remote \(location) holds no itsypad backend (no zone.json\(branch)). "
                        + "Nothing was synced; local changes stay queued. To start one there, run 'itsypad sync enable \(location)'")
            }
        }
        return error.passesWithTime ? .temporary(error.description + "; try again later") : .failure(error.description)
    }

    func mapped(_ error: BackendError, backend location: BackendLocation) -> ItsypadError {
        SyncSession.mapped(error, backend: location)
    }
}

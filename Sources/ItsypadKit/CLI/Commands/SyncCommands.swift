import ItsypadBackend
import ItsypadModel
import ItsypadStore
import ItsypadSupport
import ItsypadSync

/// `itsypad sync …`
enum SyncCommands {
    static func run(_ invocation: Invocation) throws -> Int32 {
        try withEngine(invocation, direction: "sync") { try $0.sync() }
    }

    static func push(_ invocation: Invocation) throws -> Int32 {
        try withEngine(invocation, direction: "push") { try $0.push() }
    }

    static func pull(_ invocation: Invocation) throws -> Int32 {
        try withEngine(invocation, direction: "pull") { try $0.pull() }
    }

    /// The one command that creates a backend; a missing parent directory is taken for a typo.
    static func enable(_ invocation: Invocation) throws -> Int32 {
        let encryption = try SyncKeyCommands.EnableEncryption(invocation)
        // Read before the data directory is locked: nothing waits on a person typing.
        let joinKey = encryption == .join ? try SyncKeyCommands.recoveryKeyFromInput(invocation) : nil
        let store = try invocation.store()
        let now = invocation.context.now()
        guard let value = try invocation.arguments.first ?? store.settings().string(.syncBackend) else {
            throw invocation.usage("No backend: pass DIR or git:URL, or set sync.backend.")
        }
        guard let location = BackendLocation(value) else {
            throw invocation.usage("Invalid backend '\(value)': expected a directory path or git:URL.")
        }
        if let problem = RemoteKinds.problem(with: location) { throw invocation.usage(problem) }
        let timeout = lockTimeout(invocation)
        let configured = try configuredBackend(location, store: store, invocation)
        let path = configured.path
        if let remote = configured.remote {
            try remote.prepare()
            // A rewritten remote is remembered by the clone: the sync below then sends everything.
            _ = try store.withLockReleased { try remote.fetch() }
        } else {
            let parent = FileSystem.directoryName(path)
            guard FileSystem.isDirectory(parent) else {
                throw ItsypadError.failure(
                    "cannot create the sync backend \(location): \(parent) does not exist (a typo?); nothing was changed")
            }
            try refuseForeignFolder(path)
        }
        // Keys are checked before anything is written: a wrong one leaves the data directory as it was.
        do {
            try encryption.prepareZone(at: path, of: location, store: store, joinKey: joinKey, lockTimeout: timeout)
        } catch let error as BackendError {
            throw mapped(error, backend: location)
        } catch let error as EncryptionError {
            throw ItsypadError.failure(error.message(naming: location.description))
        }
        let device = GitRemote.commitName(
            encrypted: FileSystem.exists(store.layout.syncKey), deviceID: store.deviceID,
            deviceName: try store.settings().string(.deviceName) ?? store.deviceID)
        try configured.remote?.checkpoint(message: "itsypad sync enable on \(device)")
        if invocation.arguments.first != nil {
            try store.changeSetting(Settings.definition(.syncBackend), to: .string(location.description), now: now)
        }
        try store.changeSetting(Settings.definition(.syncEnabled), to: .bool(true), now: now)
        return try run(invocation)
    }

    /// Refuses a folder that holds files of something else (`sync enable ~` by a slip): a backend
    /// is made in a missing or empty folder, or one holding only a backend's entries (a backend,
    /// or one whose creation was cut short) and those Syncthing keeps in a folder it shares.
    static func refuseForeignFolder(_ path: String) throws {
        guard FileSystem.isDirectory(path), !FileSystem.exists(path + "/zone.json") else { return }
        let backendEntries: Set = ["zone.json", "lock", "records", "assets", "journal", "devices", ".stfolder", ".stignore", ".stversions"]
        let foreign = try FileSystem.list(path, includingHidden: true).filter {
            !backendEntries.contains($0) && !$0.hasPrefix(FileSystem.temporaryPrefix) && !$0.hasPrefix(".syncthing.")
        }.sorted()
        guard let first = foreign.first else { return }
        throw ItsypadError.failure(
            "\(path) is not empty and holds no sync backend (it has \(Text.quoted(first))"
                + (foreign.count > 1 ? " and \(foreign.count - 1) more" : "") + "); nothing was changed: "
                + "name an empty or new folder, for example \(path)/itsypad")
    }

    static func disable(_ invocation: Invocation) throws -> Int32 {
        let store = try invocation.store()
        // The queue and the sync metadata stay, so re-enabling sends what changed meanwhile, deletions included.
        try store.changeSetting(Settings.definition(.syncEnabled), to: .bool(false), now: invocation.context.now())
        invocation.note("sync disabled; local data kept, changes are still recorded for later")
        return ExitCode.success
    }

    static func compact(_ invocation: Invocation) throws -> Int32 {
        let (backend, configured) = try configuredBackend(invocation)
        let store = try invocation.store()
        let device = store.deviceID
        // A git remote's clone is worked on by one sync at a time: compaction is one.
        let syncLock = try configured.remote.map { _ in try SyncEngine.takeSyncLock(store) }
        defer { withExtendedLifetime(syncLock) {} }
        // Compaction works on the backend alone: the data directory is not kept locked meanwhile.
        invocation.close()
        do {
            _ = try configured.remote?.fetch()
            let tombstones = try SyncEngine.purgeTombstones(
                in: backend, olderThan: SyncEngine.tombstoneLifetime, now: invocation.context.now(),
                device: device)
            let report = try backend.compact()
            if let remote = configured.remote {
                // Always a commit, changed files or not (each device compacts as it syncs): it marks the compaction point.
                guard try remote.sendCompaction(message: GitRemote.compactionSubject + "\(device): through change \(report.compactedThrough)")
                else {
                    throw ItsypadError.temporary(
                        "the git remote \(configured.location) changed while compacting; what was compacted is committed in the clone and goes with the next sync; the old history is squashed by the next compaction"
                    )
                }
            }
            invocation.note(
                "compacted through change \(report.compactedThrough): removed \(report.segmentsRemoved) journal segments (\(report.journalBytesRemoved) bytes), \(report.assetsRemoved) assets, \(report.temporaryFilesRemoved) temporary files over a day old and \(tombstones) tombstones over 90 days old"
            )
        } catch let error as BackendError {
            throw mapped(error, backend: configured.location)
        } catch let error as EncryptionError {
            throw ItsypadError.failure(error.message(naming: configured.location.description))
        }
        return ExitCode.success
    }

    static func status(_ invocation: Invocation) throws -> Int32 {
        let (store, running) = try storeForStatus(invocation)
        let settings = try store.settings()
        let state = try EngineState.load(from: store)
        let pending = try store.pending().changes()
        let localOnly = try localOnlyCounts(store)
        let counts = SyncedTypes.nouns.map { type in (type, pending.filter { $0.key.type == type.type }.count) }
        let failed = state.failures.sorted { ($0.key.type.rawValue, $0.key.name) < ($1.key.type.rawValue, $1.key.name) }
        func time(_ value: Milliseconds?) -> JSONValue { value.map { .string(Time.iso8601($0)) } ?? .null }
        let quarantined = JSONValue.array(state.quarantine.map(\.json))
        let waiting = JSONValue.array(state.waiting.map(\.json))
        let remoteStatus = settings.string(.syncBackend).flatMap(BackendLocation.init).flatMap {
            try? configuredBackend($0, store: store, invocation).remote
        }.map { (scheme: $0.location.scheme ?? "", status: $0.status) }
        if invocation.flag(.json) {
            var remoteJSON = JSONValue.null
            if let remote = remoteStatus {
                let unpushed: JSONValue = remote.status.unsent.map { .integer(Int64($0)) } ?? .null
                let error: JSONValue = remote.status.lastError.map { .string($0) } ?? .null
                remoteJSON = .object([
                    ("lastFetch", time(remote.status.lastFetch)), ("lastPush", time(remote.status.lastSend)),
                    ("unpushedCommits", unpushed), ("lastError", error),
                ])
            }
            // Fields are only ever appended, so that scripts reading them by position keep working.
            invocation.printJSON(
                .object([
                    ("enabled", .bool(settings.bool(.syncEnabled))),
                    ("backend", settings.string(.syncBackend).map { .string($0) } ?? .null),
                    ("deviceID", .string(store.deviceID)),
                    ("deviceName", .string(settings.string(.deviceName) ?? "")),
                    ("lastPush", time(state.lastPush)),
                    ("lastPull", time(state.lastPull)),
                    ("pending", .object(counts.map { ($0.0.type.rawValue, .integer(Int64($0.1))) })),
                    (
                        "failed",
                        .array(
                            failed.map {
                                .object([
                                    ("type", .string($0.key.type.rawValue)), ("id", .string($0.key.name)),
                                    ("attempts", .integer(Int64($0.value.attempts))), ("error", .string($0.value.error)),
                                ])
                            })
                    ),
                    ("localOnly", localOnly.map { .integer(Int64($0.total)) } ?? .null),
                    ("lastError", state.lastError.map { .string($0) } ?? .null),
                    (
                        "localOnlyReasons",
                        localOnly.map { counts in .object(counts.reasons.map { ($0.key, .integer(Int64($0.count))) }) } ?? .null
                    ),
                    ("syncing", running?.json ?? .null),
                    ("quarantined", quarantined),
                    ("remote", remoteJSON),
                    ("waiting", waiting),
                ]))
            return ExitCode.success
        }
        let out = invocation.out
        out.line("enabled:    \(settings.bool(.syncEnabled) ? "yes" : "no")")
        out.line("backend:    \(settings.string(.syncBackend) ?? "(none)")")
        if let remote = remoteStatus {
            var line =
                "remote:     fetched \(remote.status.lastFetch.map(Time.iso8601) ?? "never"), pushed \(remote.status.lastSend.map(Time.iso8601) ?? "never")"
            if let unpushed = remote.status.unsent, unpushed > 0 { line += ", \(Text.counted(unpushed, "commit")) not pushed yet" }
            out.line(line)
            if let error = remote.status.lastError { out.line("\(remote.scheme) error:  " + error.replacing("\n", with: "\n            ")) }
        }
        out.line("device:     \(settings.string(.deviceName) ?? "") (\(store.deviceID))")
        out.line("activity:   \(running?.description ?? "idle")")
        out.line("last push:  \(state.lastPush.map(Time.iso8601) ?? "never")")
        out.line("last pull:  \(state.lastPull.map(Time.iso8601) ?? "never")")
        out.line("pending:    " + counts.map { Text.counted($0.1, $0.0.noun) }.joined(separator: ", "))
        out.line("failed:     \(failed.count)")
        for (key, failure) in failed {
            out.line(
                "  \(SyncedTypes.nouns.first { $0.type == key.type }?.noun ?? key.type.rawValue) \(key.name): \(failure.error) (\(Text.counted(failure.attempts, "attempt")))"
            )
        }
        if let localOnly {
            let reasons = localOnly.reasons.filter { $0.count > 0 }.map { Text.counted($0.count, $0.noun) + " " + $0.explanation }
            out.line("local-only: \(localOnly.total)" + (reasons.isEmpty ? "" : " (" + reasons.joined(separator: ", ") + ")"))
        } else {
            out.line("local-only: (counted once the sync is done)")
        }
        out.line("quarantined: \(state.quarantine.count)" + (state.quarantine.isEmpty ? "" : " (malformed on the backend, skipped)"))
        for item in state.quarantine {
            out.line("  \(item.summary) (since \(Time.iso8601(item.since)))")
        }
        if !state.waiting.isEmpty {
            out.line("waiting:    \(state.waiting.count) (not replicated completely yet; synced once they arrive)")
            for item in state.waiting { out.line("  \(item.summary) (since \(Time.iso8601(item.since)))") }
        }
        if let damage = state.damage {
            out.line("state:      damaged (\(damage)); the next sync starts over and sends everything again")
        }
        out.line("last error: \(state.lastError ?? "none")")
        return ExitCode.success
    }

    /// The data directory for `sync status`, and the sync under way if there is one: locked as
    /// usual, unless a sync holds the lock for a step, in which case status reads what is
    /// persisted without it rather than wait.
    static func storeForStatus(_ invocation: Invocation) throws -> (DataStore, RunningSync?) {
        do {
            let store = try invocation.store(lockTimeout: 0)
            return (store, RunningSync.current(in: store.layout))
        } catch let error as ItsypadError where error.exitCode == ExitCode.temporary {
            let directory = try invocation.dataDirectory()
            guard let running = RunningSync.current(in: DataDirectoryLayout(root: directory)) else { return (try invocation.store(), nil) }
            return (try DataStore(readingWithoutLock: directory), running)
        }
    }

    /// Why items stay on this device: counts by reason, every reason listed; nil
    /// when a running sync is rewriting the clipboard history's index.
    static func localOnlyCounts(
        _ store: DataStore
    ) throws -> (total: Int, reasons: [(key: String, noun: String, explanation: String, count: Int)])? {
        let entries =
            store.isReadOnly
            ? try ClipStore.localOnlyEntriesWithoutLock(directory: store.layout.clips, tree: store.tree)
            : try store.clips().localOnlyEntries()
        guard let entries else { return nil }
        var reasons = LocalOnlyReason.allCases.map { reason in
            (key: reason.rawValue, noun: "clip", explanation: reason.explanation, count: entries.filter { $0.localOnly == reason }.count)
        }
        // A running sync may remove a tab file between listing and reading it: one more look is enough.
        let tabs = try (try? store.tabs.all()) ?? store.tabs.all()
        reasons.append((key: "fileBacked", noun: "tab", explanation: "backed by a file", count: tabs.filter(\.isFileBacked).count))
        return (reasons.reduce(0) { $0 + $1.count }, reasons)
    }

    static func log(_ invocation: Invocation) throws -> Int32 {
        let store = try invocation.store()
        var entries = try ActivityLog(store: store).entries()
        if let limit = try invocation.integer(.limit, in: 0...Int.max) { entries = Array(entries.suffix(limit)) }
        if invocation.flag(.json) {
            invocation.printJSON(.array(entries.map(\.json)))
            return ExitCode.success
        }
        for entry in entries {
            var line =
                "\(Time.iso8601(entry.time))\t\(entry.direction)\tpulled \(entry.pulled)\tpushed \(entry.pushed)\tconflicts \(entry.conflicts)\t\(entry.result)"
            // One line per entry: a message quoting a program's several lines is folded onto it.
            if let error = entry.error { line += "\t" + error.split(separator: "\n").map { Text.trim(String($0)) }.joined(separator: " ") }
            if !entry.quarantined.isEmpty { line += "\tquarantined: " + entry.quarantined.joined(separator: "; ") }
            invocation.out.line(line)
        }
        return ExitCode.success
    }

    // MARK: Running the engine

    static func lockTimeout(_ invocation: Invocation) -> Double {
        invocation.context.variable("ITSYPAD_LOCK_TIMEOUT").flatMap(Double.init) ?? 10
    }

    /// The backend the sync.backend setting names, as the engine uses it, and where it is.
    static func configuredBackend(_ invocation: Invocation) throws -> (backend: SyncBackend, configured: ConfiguredBackend) {
        let store = try invocation.store()
        guard let value = try store.settings().string(.syncBackend), let location = BackendLocation(value) else {
            throw ItsypadError.failure("no sync backend: run 'itsypad sync enable DIR' or 'itsypad sync enable git:URL'")
        }
        let configured = try configuredBackend(location, store: store, invocation)
        // Each of the engine's attempts waits a fifth of the lock time-out.
        let backend = try SyncKeyCommands.backend(
            at: configured.path, remote: configured.remote, store: store, lockTimeout: lockTimeout(invocation) / Double(SyncEngine.attempts)
        )
        warnIfExposed(configured, invocation)
        return (backend, configured)
    }

    static func configuredBackend(_ location: BackendLocation, store: DataStore, _ invocation: Invocation) throws -> ConfiguredBackend {
        try ConfiguredBackend(location, mirrors: store.layout.sync, environment: invocation.context.environment)
    }

    /// Warns when other users may read or write the backend directory (a git remote's clone is in the data directory).
    static func warnIfExposed(_ configured: ConfiguredBackend, _ invocation: Invocation) {
        let path = configured.path
        guard configured.remote == nil, let status = (try? FileTree(root: path).status(path)) ?? nil, status.permissions & 0o077 != 0 else {
            return
        }
        invocation.warn(Invocation.exposureWarning("the sync backend", path, status.permissions))
    }

    /// Pushes refused because the remote moved, each followed by a fetch and another engine run, before giving up with 75.
    static let publishRounds = 3

    /// A sync through a git remote: bring the clone up to date, run the engine on it, commit and
    /// push; again while the remote moves meanwhile. Git's network I/O runs without the data
    /// directory's lock, like every backend call.
    static func syncThrough(
        _ remote: any SyncRemote, location: BackendLocation, store: DataStore, engine: SyncEngine,
        _ body: (SyncEngine) throws -> Void
    ) throws {
        for _ in 1...publishRounds {
            if try store.withLockReleased({ try remote.fetch() }) == .replaced {
                try engine.startOverOnReplacedBackend()
                remote.acknowledgeReplacement()
            }
            try body(engine)
            let report = engine.report
            let message =
                "itsypad sync on \(GitRemote.commitName(encrypted: FileSystem.exists(store.layout.syncKey), deviceID: store.deviceID, deviceName: engine.deviceName)): pulled \(report.pulled), pushed \(report.pushed), resolved \(report.conflicts) conflicts"
            if try store.withLockReleased({ try remote.send(message: message) }) { return }
        }
        throw ItsypadError.temporary(
            "the git remote \(location) kept changing: \(publishRounds) pushes were refused; "
                + "what this sync did is committed in the clone and goes with the next sync; try again later")
    }

    /// Runs the engine, logs the attempt, and maps the outcome to an exit status:
    /// 0 (conflicts resolved count as success), 1 (items failed), 75 (backend busy or unreachable).
    /// The engine syncs with the configured backend, or with `backend` (and the directory its
    /// errors name) when given.
    static func withEngine(
        _ invocation: Invocation, direction: String, backend given: (backend: SyncBackend, path: String)? = nil,
        _ body: (SyncEngine) throws -> Void
    ) throws -> Int32 {
        let store = try invocation.store()
        guard try store.settings().bool(.syncEnabled) else {
            throw ItsypadError.failure("sync is disabled: run 'itsypad sync enable DIR' first")
        }
        var (backend, configured): (SyncBackend, ConfiguredBackend)
        do {
            (backend, configured) =
                try given.map { ($0.backend, try configuredBackend(.directory($0.path), store: store, invocation)) }
                ?? configuredBackend(invocation)
        } catch {
            // Refused before the engine runs (a backend in another format): `sync status` says why too.
            var state = try EngineState.load(from: store)
            state.lastError = (error as? ItsypadError)?.message ?? String(describing: error)
            if state.damage == nil { try state.save(to: store) }
            throw error
        }
        var engine = try SyncEngine(store: store, backend: backend, now: invocation.context.now)
        engine.progress = { report in invocation.progress("syncing: pulled \(report.pulled), pushed \(report.pushed)") }
        defer { invocation.endProgress() }
        let running = try RunningSync.begin(in: store, now: invocation.context.now())
        defer { running.end(in: store) }
        var failure: ItsypadError?
        func run(_ engine: SyncEngine) throws {
            if let remote = configured.remote {
                try syncThrough(remote, location: configured.location, store: store, engine: engine, body)
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
                invocation.warn(
                    "this data directory is a copy of another that syncs as device \(previous) (\(evidence)); "
                        + "it now syncs as the new device \(store.deviceID) and sends all its data again")
                (backend, configured) =
                    try given.map { ($0.backend, try configuredBackend(.directory($0.path), store: store, invocation)) }
                    ?? configuredBackend(invocation)
                engine = try SyncEngine(store: store, backend: backend, now: invocation.context.now)
                engine.progress = { report in invocation.progress("syncing: pulled \(report.pulled), pushed \(report.pushed)") }
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
        invocation.endProgress()
        let report = engine.report
        // Repairs the user must hear about (a damaged queue), even with -q.
        for warning in report.warnings { invocation.warn(warning) }
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
                time: invocation.context.now(), direction: direction, pulled: report.pulled,
                pushed: report.pushed, conflicts: report.conflicts, result: result,
                error: failure?.message ?? state.lastError, quarantined: quarantined))
        if let failure { throw failure }
        if invocation.context.stdoutIsTerminal && !invocation.quiet {
            invocation.out.line("pulled \(report.pulled), pushed \(report.pushed), resolved \(report.conflicts) conflicts")
        }
        let errors = invocation.context.standardError
        if !report.failed.isEmpty {
            errors.line("Error: \(report.failed.count) item(s) failed to sync; see 'itsypad sync status'")
        }
        for line in quarantined.prefix(5) { errors.line("Error: malformed on the backend, skipped: \(line)") }
        if quarantined.count > 5 { errors.line("Error: … and \(quarantined.count - 5) more malformed item(s); see 'itsypad sync status'") }
        return report.failed.isEmpty && quarantined.isEmpty ? ExitCode.success : ExitCode.failure
    }

    /// Exit 75 for what retrying can fix (busy, unreachable, a backend that is not there now), 1 for the rest.
    static func mapped(_ error: BackendError, backend location: BackendLocation) -> ItsypadError {
        if case .zoneNotFound = error {
            switch location {
            case .directory(let path):
                return .temporary(
                    "the sync backend \(path) is missing or empty (no zone.json): is a disk or share unmounted? "
                        + "Nothing was synced; local changes stay queued. To start a new backend there on purpose, run 'itsypad sync enable \(path)'"
                )
            case .remote:
                return .failure(
                    "the git remote \(location) holds no itsypad backend (no zone.json on its branch '\(GitRemote.branch)'). "
                        + "Nothing was synced; local changes stay queued. To start one there, run 'itsypad sync enable \(location)'")
            }
        }
        return error.isTransient ? .temporary(error.description + "; try again later") : .failure(error.description)
    }
}

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
        let encryption = try EnableEncryption(invocation)
        // Read before the data directory is locked: nothing waits on a person typing.
        let joinKey = encryption == .join ? try SyncKeyCommands.recoveryKeyFromInput(invocation) : nil
        let store = try invocation.store()
        let now = invocation.context.now()
        guard let value = try invocation.arguments.first ?? store.settings().string(.syncBackend) else {
            throw invocation.usage("No backend: pass DIR, git:URL or rclone:REMOTE:PATH, or set sync.backend.")
        }
        guard let location = BackendLocation(value) else {
            throw invocation.usage("Invalid backend '\(value)': expected a directory path, git:URL or rclone:REMOTE:PATH.")
        }
        if let problem = RemoteKinds.problem(with: location, as: value) { throw invocation.usage(problem) }
        try invocation.syncSession().enable(location, encryption: encryption, joinKey: joinKey)
        if invocation.arguments.first != nil {
            try store.changeSetting(Settings.definition(.syncBackend), to: .string(location.value), now: now)
        }
        try store.changeSetting(Settings.definition(.syncEnabled), to: .bool(true), now: now)
        return try run(invocation)
    }

    static func disable(_ invocation: Invocation) throws -> Int32 {
        let store = try invocation.store()
        // The queue and the sync metadata stay, so re-enabling sends what changed meanwhile, deletions included.
        try store.changeSetting(Settings.definition(.syncEnabled), to: .bool(false), now: invocation.context.now())
        invocation.note("sync disabled; local data kept, changes are still recorded for later")
        return ExitCode.success
    }

    static func compact(_ invocation: Invocation) throws -> Int32 {
        let session = try invocation.syncSession()
        warnIfExposed(try session.configured(), invocation)
        let (report, tombstones) = try session.compact()
        invocation.note(
            "compacted through change \(report.compactedThrough): removed \(report.segmentsRemoved) journal segments (\(report.journalBytesRemoved) bytes), \(report.assetsRemoved) assets, \(report.temporaryFilesRemoved) temporary files over a day old and \(tombstones) tombstones over 90 days old"
        )
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
        let remoteStatus = try invocation.syncSession(store).remoteStatus()
        // The backend as shown: without the secrets a remote's address may hold.
        let backend = settings.string(.syncBackend).map { BackendLocation($0)?.description ?? $0 }
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
                    ("backend", backend.map { .string($0) } ?? .null),
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
        // Lines that hold text from elsewhere (a peer's, a tool's) go through the listings' escaping.
        let terminalSafe = invocation.context.stdoutIsTerminal
        /// A message of several lines, the lines after the first indented under it.
        func message(_ label: String, _ text: String) {
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                out.line((index == 0 ? label : "            ") + line, terminalSafe: terminalSafe)
            }
        }
        out.line("enabled:    \(settings.bool(.syncEnabled) ? "yes" : "no")")
        out.line("backend:    \(backend ?? "(none)")", terminalSafe: terminalSafe)
        if let remote = remoteStatus {
            var line =
                "remote:     fetched \(remote.status.lastFetch.map(Time.iso8601) ?? "never"), pushed \(remote.status.lastSend.map(Time.iso8601) ?? "never")"
            if let unpushed = remote.status.unsent, unpushed > 0 { line += ", \(Text.counted(unpushed, "commit")) not pushed yet" }
            out.line(line)
            if let error = remote.status.lastError { message("\(remote.scheme) error:  ", error) }
        }
        out.line("device:     \(settings.string(.deviceName) ?? "") (\(store.deviceID))")
        out.line("activity:   \(running?.description ?? "idle")")
        out.line("last push:  \(state.lastPush.map(Time.iso8601) ?? "never")")
        out.line("last pull:  \(state.lastPull.map(Time.iso8601) ?? "never")")
        out.line("pending:    " + counts.map { Text.counted($0.1, $0.0.noun) }.joined(separator: ", "))
        out.line("failed:     \(failed.count)")
        for (key, failure) in failed {
            out.line(
                "  \(SyncedTypes.nouns.first { $0.type == key.type }?.noun ?? key.type.rawValue) \(key.name): \(failure.error) (\(Text.counted(failure.attempts, "attempt")))",
                terminalSafe: terminalSafe)
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
        message("last error: ", state.lastError ?? "none")
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

    /// Warns when other users may read or write the backend directory (a remote's mirror is in the data directory).
    static func warnIfExposed(_ configured: ConfiguredBackend, _ invocation: Invocation) {
        let path = configured.path
        guard configured.remote == nil, let status = (try? FileTree(root: path).status(path)) ?? nil, status.permissions & 0o077 != 0 else {
            return
        }
        invocation.warn(Invocation.exposureWarning("the sync backend", path, status.permissions))
    }

    /// Runs a sync (see `SyncSession.run`) and maps the outcome to an exit status: 0 (conflicts
    /// resolved count as success), 1 (items failed), 75 (backend busy or unreachable), printing
    /// the counts on a terminal and what failed. The engine syncs with the configured backend,
    /// or with `backend` (and the directory its errors name) when given.
    static func withEngine(
        _ invocation: Invocation, direction: String, backend given: (backend: SyncBackend, path: String)? = nil,
        reusing reused: ConfiguredBackend? = nil, _ body: (SyncEngine) throws -> Void
    ) throws -> Int32 {
        var session = try invocation.syncSession()
        session.reused = reused
        defer { invocation.endProgress() }
        if given == nil, (try? session.store.settings().bool(.syncEnabled)) == true, let configured = try? session.configured() {
            warnIfExposed(configured, invocation)
        }
        let report = try session.run(direction: direction, backend: given, body)
        invocation.endProgress()
        let quarantined = report.quarantined.map(\.summary)
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
}

extension Invocation {
    /// The data directory's sync session, as this command runs it: its environment, the lock
    /// time-out (`lockTimeout`), warnings and progress on standard error.
    func syncSession(_ store: DataStore? = nil) throws -> SyncSession {
        SyncSession(
            store: try store ?? self.store(), environment: context.environment,
            lockTimeout: lockTimeout, now: context.now,
            warn: { [self] in
                endProgress()
                warn($0)
            },
            progress: { [self] report in
                // The records sent of those read from the queue, or else the records received.
                if report.toPush > 0 {
                    progress("sending", done: report.pushed, of: report.toPush)
                } else if report.pulled > 0 {
                    progress("receiving", done: report.pulled, of: nil)
                }
            })
    }
}

import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A sync backend kept in a git remote: a clone of it in the data directory (`sync/git/`) whose
/// working tree is a backend directory, on which the engine runs exactly as on a shared folder.
///
/// A sync brings the clone to the remote's tip (`update`), lets the engine work on the working
/// tree, then commits and pushes (`publish`). Only this device's sync writes the clone (the
/// engine's sync lock is held throughout), so a git lock file found in it was left by a killed
/// sync and is removed. A local commit is never dropped: one that cannot be put on top of the
/// remote's history is kept under `refs/itsypad/kept/` and the engine sends everything again.
///
/// Uses the system `git`, without a shell, never prompting; authentication is git's own.
public struct GitRemote {
    /// The URL as git takes it.
    public let url: String
    /// The clone, in the data directory.
    public let directory: String
    let environment: [String: String]
    /// Seconds one git command may take before it is killed.
    let timeout: Double

    /// The one branch itsypad uses, so that a repository can hold other branches.
    package static let branch = "itsypad"
    static let remoteBranch = "refs/remotes/origin/" + branch
    /// The remote tip the clone was last brought to: a tip that no longer descends from it was rewritten.
    static let syncedRef = "refs/itsypad/synced"

    public init(url: String, clone: String, environment: [String: String], timeout: Double = 120) {
        self.url = url
        self.directory = clone
        self.environment = environment
        self.timeout = timeout
    }

    var gitDirectory: String { directory + "/repository" }
    /// The backend directory the engine works on.
    public var workingTree: String { directory + "/backend" }
    var statusFile: String { directory + "/status.json" }
    /// The commit that holds every file of the working tree: written after a commit, removed
    /// before the working tree is handed to the engine. While it names HEAD, nothing is left to
    /// commit, and a sync need not have git read every file of the backend to find out.
    var committedFile: String { directory + "/committed" }

    /// What `update` found.
    public enum Update: Equatable {
        /// The clone is on the remote's tip, local commits (if any) on top of it.
        case current
        /// The remote's history was rewritten, or the local commits could not be put on top of it:
        /// the clone is now the remote's tip and this device must send everything again.
        case replaced
    }

    // MARK: Sync steps

    /// Creates the clone if needed (its configuration is rewritten every time: the URL may have changed).
    public func prepare() throws {
        try FileSystem.makeDirectory(directory)
        try FileSystem.makeDirectory(workingTree)
        if !FileSystem.isDirectory(gitDirectory) {
            try git(["init", "-q", "-b", GitRemote.branch])
        }
        let configuration = [
            ("remote.origin.url", url),
            ("remote.origin.fetch", "+refs/heads/\(GitRemote.branch):\(GitRemote.remoteBranch)"),
            ("user.name", "itsypad"),
            ("user.email", "itsypad@localhost"),
            // A hostile remote must not place a link in the backend, a user's settings not sign or reformat.
            ("core.symlinks", "false"),
            ("core.autocrlf", "false"),
            ("commit.gpgsign", "false"),
            ("gc.autoDetach", "false"),
        ]
        for (key, value) in configuration { try git(["config", key, value]) }
        // The backend's lock and temporary files belong to this copy only.
        try FileSystem.makeDirectory(gitDirectory + "/info")
        try FileSystem.writeAtomically(gitDirectory + "/info/exclude", Array("/lock\n\(FileSystem.temporaryPrefix)*\n".utf8))
        try neutraliseAttributes()
    }

    /// What `info/attributes` holds: above any `.gitattributes` a remote brings (and the user's own
    /// attributes file), so that no file of the backend has git run a filter, a diff or merge driver
    /// of the user's configuration, or convert its bytes. The bytes are the backend's, as written.
    /// Record files are packed without a search for deltas: a sealed record resembles no other (a
    /// first push of thousands spent most of git's time searching), and a plain one is small and
    /// stored whole by a remote that unpacks small pushes anyway. The journal, which grows by
    /// appending, keeps its deltas.
    static let neutralAttributes = "* -filter -text -eol -working-tree-encoding -ident -diff -merge\n/records/** -delta\n"

    /// Writes `info/attributes` unless it already holds `neutralAttributes` (a clone made by an
    /// earlier version gets it at its next sync): before anything is checked out or added.
    private func neutraliseAttributes() throws {
        let path = gitDirectory + "/info/attributes"
        let wanted = Array(GitRemote.neutralAttributes.utf8)
        if (try? FileTree.containing(path).read(path, limit: 4096)) == wanted { return }
        try FileSystem.makeDirectory(gitDirectory + "/info")
        try FileSystem.writeAtomically(path, wanted)
    }

    /// Recovers from a killed sync, commits what it left, fetches, and puts local commits on top of
    /// the remote's tip. Network I/O: call it without holding the data directory's lock.
    ///
    /// `.replaced` is remembered until `acknowledgeReplacement` (a sync killed right after must
    /// still send everything again).
    public func update() throws -> Update {
        let unacknowledged = RemoteStatusFile.read(statusFile).mustSendEverything == true
        let update = try integrate()
        // The engine writes next: until the next commit, the working tree may hold changes.
        try FileSystem.remove(committedFile)
        try FileSystem.syncDirectory(directory)
        return unacknowledged ? .replaced : update
    }

    private func integrate() throws -> Update {
        // `settings set sync.backend` may have named another URL since the clone was made.
        let configured = FileSystem.isDirectory(gitDirectory) ? try runGit(["config", "--get", "remote.origin.url"]) : nil
        if configured.map({ Text.trim($0.outputText) }) != url { try prepare() }
        try neutraliseAttributes()
        try recover()
        if try !isCommitted() { try commitChanges(message: "itsypad: changes left by an interrupted sync") }
        try fetchBranch()
        guard let remote = try revision(GitRemote.remoteBranch) else { return .current }
        defer { try? git(["update-ref", GitRemote.syncedRef, remote]) }
        guard var local = try revision("HEAD") else {
            try git(["reset", "-q", "--hard", remote])
            return .current
        }
        if try isAncestor(remote, of: local) { return .current }
        if let synced = try revision(GitRemote.syncedRef), try !isAncestor(synced, of: remote) {
            // A squashed history still holds, as one of its commits, the state this clone last
            // synced: local commits move onto that commit. Any other rewrite replaced the backend.
            guard let equivalent = try commit(withTreeOf: synced, in: remote),
                try runGit(["rebase", "-q", "--onto", equivalent, synced]).status == 0, let moved = try revision("HEAD")
            else {
                _ = try? runGit(["rebase", "--abort"])
                return try replaceLocal(local, with: remote)
            }
            local = moved
            if try isAncestor(remote, of: local) { return .current }
        }
        if try isAncestor(local, of: remote) {
            // No local commits: a fast-forward does it, cheaper than a rebase over many files.
            if try runGit(["merge", "-q", "--ff-only", remote]).status == 0 { return .current }
        } else if try zoneFileChanged(from: local, to: remote) {
            // A new zone on the remote (a rotated key): commits made for the old one do not belong on top of it.
            return try replaceLocal(local, with: remote)
        }
        if try runGit(["rebase", "-q", remote]).status != 0 {
            _ = try? runGit(["rebase", "--abort"])
            return try replaceLocal(local, with: remote)
        }
        return .current
    }

    /// Commits the engine's work and pushes it. False when the remote moved meanwhile (update and
    /// try again); throws for other failures, the commit staying for the next sync.
    public func publish(message: String, evenIfUnchanged: Bool = false) throws -> Bool {
        try commitChanges(message: message, evenIfUnchanged: evenIfUnchanged)
        guard let local = try revision("HEAD") else { return true }
        if try revision(GitRemote.remoteBranch) == local { return true }
        return try push(local)
    }

    /// Pushes `commit` as the branch's tip: false when the remote moved meanwhile (nothing was
    /// pushed); throws for other failures, after which it may or may not have reached the remote.
    private func push(_ commit: String) throws -> Bool {
        let pushed = try runGit(
            ["push", "-q"] + receivePackOption + ["origin", "\(commit):refs/heads/\(GitRemote.branch)"], network: true)
        if pushed.status != 0 {
            let text = String(decoding: pushed.standardError, as: UTF8.self)
            // "[remote rejected]" (a hook, a protected branch) is a refusal that retrying cannot change,
            // unless another push moved the branch while this one was being received ("cannot lock
            // ref …: is at X but expected Y"): the remote moved, as for a non-fast-forward.
            let movedMeanwhile = text.contains("cannot lock ref") && text.contains("but expected")
            if ["[rejected]", "fetch first", "non-fast-forward"].contains(where: text.contains) || movedMeanwhile, !pushed.timedOut {
                return false
            }
            throw record(failure: failure("push to", pushed))
        }
        try? git(["update-ref", GitRemote.syncedRef, commit])
        try? git(["update-ref", GitRemote.remoteBranch, commit])
        RemoteStatusFile.update(statusFile) {
            $0.lastSend = Time.now()
            $0.lastError = nil
        }
        return true
    }

    // MARK: Replacing the backend

    /// Commits the backend directory `replacement` (built outside the working tree) as the whole
    /// of the branch's next state, on top of HEAD, and pushes that commit, leaving the working
    /// tree as it was: the remote holds either the old backend or the new one, never a mix.
    /// Nil when the remote moved meanwhile (nothing was pushed); throws when the push failed
    /// otherwise, after which it may or may not have reached the remote (see `fetchedZone`).
    public func pushReplacement(from replacement: String, message: String) throws -> String? {
        guard let head = try revision("HEAD") else {
            throw ItsypadError.failure("the clone of \(BackendLocation.git(url: url)) has no commit to replace")
        }
        // A separate index, so that the working tree's stays as it is until the push succeeded.
        let index = directory + "/replacement-index"
        unlink(index)
        defer { unlink(index) }
        try addAll(workTree: replacement, indexFile: index)
        let tree = try gitOutput(["write-tree"], indexFile: index)
        let commit = try gitOutput(["commit-tree", tree, "-p", head, "-m", message])
        return try push(commit) ? commit : nil
    }

    // MARK: Squashing history

    /// How a compaction's commit message starts: it marks the compaction points in the history.
    public static let compactionSubject = "itsypad sync compact on "

    /// Squashes the remote branch's history older than the previous compaction point (the newest
    /// commit before the tip whose subject starts with `compactionSubject`) into one commit, and
    /// re-creates the commits since then on top of it with the same files, so that a clone that
    /// synced any of them moves its own commits onto the new history (see `update`); a clone
    /// that last synced before that point takes the rewrite for a replaced backend, keeping its
    /// commits aside and sending everything again. Only when the clone has pushed everything and
    /// the remote's tip is still the clone's (a lease): false when a push came in meanwhile.
    public func squashHistoryBeforePreviousCompaction() throws -> Bool {
        guard let head = try revision("HEAD"), try revision(GitRemote.remoteBranch) == head else { return false }
        guard try revision(head + "^") != nil else { return true }
        let older = try gitOutput(["log", "--first-parent", "--format=%H %s", head + "^"]).split(separator: "\n")
        guard
            let base = older.first(where: { $0.split(separator: " ", maxSplits: 1).last?.hasPrefix(GitRemote.compactionSubject) == true })
                .map({ String($0.split(separator: " ")[0]) }), try revision(base + "^") != nil
        else { return true }
        var tip = try gitOutput([
            "commit-tree", base + "^{tree}", "-m", "itsypad: the history through the compaction point \(base), squashed",
        ])
        let since = try gitOutput(["log", "--reverse", "--first-parent", "--format=%T %s", base + ".." + head]).split(separator: "\n")
        for line in since {
            let parts = line.split(separator: " ", maxSplits: 1)
            tip = try gitOutput(["commit-tree", String(parts[0]), "-p", tip, "-m", parts.count > 1 ? String(parts[1]) : "itsypad"])
        }
        let lease = "--force-with-lease=refs/heads/\(GitRemote.branch):\(head)"
        let pushed = try runGit(
            ["push", "-q", lease] + receivePackOption + ["origin", "\(tip):refs/heads/\(GitRemote.branch)"], network: true)
        if pushed.status != 0 {
            if pushed.errorText.contains("stale info") || pushed.errorText.contains("[rejected]") { return false }
            throw record(failure: failure("push to", pushed))
        }
        try git(["reset", "-q", "--soft", tip])
        try git(["update-ref", GitRemote.syncedRef, tip])
        try git(["update-ref", GitRemote.remoteBranch, tip])
        return true
    }

    /// Puts the working tree on `commit`, once the replacement it holds is what the device uses.
    public func checkOut(_ commit: String) throws {
        try git(["reset", "-q", "--hard", commit])
    }

    /// The remote tip's zone.json, fetched now: whether a replacement reached the remote.
    /// Nil when the remote holds none (or no clone was made yet).
    public func fetchedZone() throws -> [UInt8]? {
        guard FileSystem.isDirectory(gitDirectory) else { return nil }
        try fetchBranch()
        let object = GitRemote.remoteBranch + ":zone.json"
        // The remote is untrusted: its zone.json is read only when its size is one a zone can have.
        let size = try runGit(["cat-file", "-s", object])
        guard size.status == 0, let bytes = Int(Text.trim(size.outputText)), bytes <= 64 * 1024 else { return nil }
        let shown = try runGit(["cat-file", "blob", object])
        return shown.status == 0 ? shown.standardOutput : nil
    }

    /// Commits unpublished, for `sync status`: the user waits for it, so git runs at their priority.
    public func unpushedCommits() -> Int? {
        let range = (try? revision(GitRemote.remoteBranch, priority: .normal)) ?? nil
        let counted = try? runGit(["rev-list", "--count", "HEAD"] + (range.map { ["^" + $0] } ?? []), priority: .normal)
        guard let output = counted, output.status == 0 else {
            return nil
        }
        return Int(Text.trim(output.outputText))
    }

    // MARK: Steps

    /// Removes what a killed git left behind: lock files and a rebase under way.
    private func recover() throws {
        for name in ["index.lock", "HEAD.lock", "ORIG_HEAD.lock", "packed-refs.lock", "config.lock", "shallow.lock"] {
            unlink(gitDirectory + "/" + name)
        }
        removeLocks(in: gitDirectory + "/refs")
        if FileSystem.isDirectory(gitDirectory + "/rebase-merge") || FileSystem.isDirectory(gitDirectory + "/rebase-apply") {
            _ = try runGit(["rebase", "--abort"])
        }
    }

    private func removeLocks(in directory: String) {
        for name in (try? FileSystem.list(directory, includingHidden: true)) ?? [] {
            let path = directory + "/" + name
            if name.hasSuffix(".lock") { unlink(path) } else if FileSystem.isDirectory(path) { removeLocks(in: path) }
        }
    }

    /// Commits whatever the working tree holds (nothing when it is unchanged).
    public func commitChanges(message: String, evenIfUnchanged: Bool = false) throws {
        try addAll()
        if try evenIfUnchanged || runGit(["diff", "--cached", "--quiet", "--no-ext-diff", "--no-textconv"]).status != 0 {
            // Plumbing rather than `git commit`, which checks every file of the working tree again.
            let tree = try gitOutput(["write-tree"])
            let parent = try revision("HEAD").map { ["-p", $0] } ?? []
            let commit = try gitOutput(["commit-tree", tree] + parent + ["-m", message])
            try git(["update-ref", "-m", "itsypad: commit", "HEAD", commit])
        }
        // Not made durable: a marker lost in a crash only costs the next sync a look at every file.
        if let head = try revision("HEAD") { try FileSystem.writeAtomically(committedFile, Array(head.utf8), syncingDirectory: false) }
    }

    /// Stages every file of the working tree (`workTree` unless nil) in the index (`indexFile`
    /// unless nil). The new files' contents go straight into one pack (git's bulk check-in, for
    /// files over `core.bigFileThreshold`), not one loose object file each: a first push of 10,000
    /// records wrote and then packed 10,000 files, and the push deflated each again, where it now
    /// sends the pack's data as it is. The pack is made durable (git's `core.fsync` default), as
    /// loose objects are not.
    private func addAll(workTree: String? = nil, indexFile: String? = nil) throws {
        try git(["add", "-A"], workTree: workTree, indexFile: indexFile, configuration: [("core.bigFileThreshold", "1")])
    }

    /// Whether the working tree holds nothing that HEAD does not (see `committedFile`).
    private func isCommitted() throws -> Bool {
        guard let marker = try? FileTree.containing(committedFile).read(committedFile, limit: 64), let head = try revision("HEAD") else {
            return false
        }
        return String(decoding: marker, as: UTF8.self) == head
    }

    private func fetchBranch() throws {
        let fetched = try runGit(["fetch", "-q", "--no-tags", "origin"], network: true)
        if fetched.status != 0 {
            // A remote without itsypad's branch yet (a new, empty repository) is not a failure.
            guard fetched.errorText.contains("couldn't find remote ref") else {
                throw record(failure: failure("fetch from", fetched))
            }
            _ = try runGit(["update-ref", "-d", GitRemote.remoteBranch])
        }
        RemoteStatusFile.update(statusFile) {
            $0.lastFetch = Time.now()
            $0.lastError = nil
        }
    }

    /// Called once the engine has started over after `.replaced`.
    public func acknowledgeReplacement() {
        RemoteStatusFile.update(statusFile) { $0.mustSendEverything = nil }
    }

    private func replaceLocal(_ local: String, with remote: String) throws -> Update {
        var status = RemoteStatusFile.read(statusFile)
        status.mustSendEverything = true
        try status.write(statusFile)
        try git(["update-ref", "refs/itsypad/kept/\(Time.now())", local])
        try git(["reset", "-q", "--hard", remote])
        return .replaced
    }

    private func record(failure: ItsypadError) -> ItsypadError {
        RemoteStatusFile.record(failure: failure, at: statusFile)
    }

    // MARK: Running git

    private func revision(_ name: String, priority: Subprocess.Priority = .background) throws -> String? {
        let output = try runGit(["rev-parse", "--verify", "-q", name + "^{commit}"], priority: priority)
        return output.status == 0 ? Text.trim(output.outputText) : nil
    }

    /// The newest commit of `history` whose tree is `commit`'s (the same backend files), if any.
    private func commit(withTreeOf commit: String, in history: String) throws -> String? {
        let tree = try gitOutput(["rev-parse", commit + "^{tree}"])
        let log = try gitOutput(["log", "--format=%T %H", history])
        return log.split(separator: "\n").first { $0.hasPrefix(tree + " ") }.map { String($0.dropFirst(tree.count + 1)) }
    }

    /// Whether zone.json, which a zone never rewrites, differs between where `local` left the
    /// remote's history and `remote`.
    private func zoneFileChanged(from local: String, to remote: String) throws -> Bool {
        let base = try runGit(["merge-base", local, remote])
        guard base.status == 0 else { return false }
        let diff = ["diff", "--quiet", "--no-ext-diff", "--no-textconv", Text.trim(base.outputText), remote, "--", "zone.json"]
        return try runGit(diff).status != 0
    }

    private func isAncestor(_ ancestor: String, of descendant: String) throws -> Bool {
        try runGit(["merge-base", "--is-ancestor", ancestor, descendant]).status == 0
    }

    private func git(
        _ arguments: [String], workTree: String? = nil, indexFile: String? = nil, configuration: [(String, String)] = []
    ) throws {
        let output = try runGit(arguments, workTree: workTree, indexFile: indexFile, configuration: configuration)
        guard output.status == 0 else { throw failure("run git \(arguments[0]) in", output) }
    }

    /// Standard output, trimmed, of a git command that must succeed.
    private func gitOutput(_ arguments: [String], workTree: String? = nil, indexFile: String? = nil) throws -> String {
        let output = try runGit(arguments, workTree: workTree, indexFile: indexFile)
        guard output.status == 0 else { throw failure("run git \(arguments[0]) in", output) }
        return Text.trim(output.outputText)
    }

    /// Runs git on the clone: its working tree unless `workTree` names another, its index unless
    /// `indexFile` does, with `configuration` above the clone's. A sync is background work: git runs
    /// at background priority (`Subprocess.Priority`), so that a command the user runs meanwhile
    /// (a clipboard watcher's `clip add`) gets a processor first. Git never runs holding the data
    /// directory's lock, so no command waits for a git slowed by it; only the sync does.
    func runGit(
        _ arguments: [String], network: Bool = false, workTree: String? = nil, indexFile: String? = nil,
        configuration extra: [(String, String)] = [], priority: Subprocess.Priority = .background
    ) throws -> Subprocess.Output {
        guard let executable = Subprocess.find("git", searchPath: environment["PATH"]) else {
            throw ItsypadError.failure(
                "git is not installed (no 'git' in PATH): the sync backend \(BackendLocation.git(url: url)) needs it; local changes stay queued"
            )
        }
        var environment = self.environment
        environment["GIT_TERMINAL_PROMPT"] = "0"
        // Only transports that move data: `ext::` runs a command, and other remote helpers are programs too.
        environment["GIT_ALLOW_PROTOCOL"] = GitRemote.allowedProtocols.joined(separator: ":")
        environment["LC_ALL"] = "C"
        if let indexFile { environment["GIT_INDEX_FILE"] = indexFile }
        var configuration = GitRemote.neutralConfiguration + extra
        if network, try !hasOwnSSHCommand(executable, environment) { configuration.append(("core.sshCommand", "ssh -o BatchMode=yes")) }
        // As `-c key=value` would, after any configuration the environment already passes.
        for (key, value) in configuration {
            let count = environment["GIT_CONFIG_COUNT"].flatMap(Int.init) ?? 0
            environment["GIT_CONFIG_KEY_\(count)"] = key
            environment["GIT_CONFIG_VALUE_\(count)"] = value
            environment["GIT_CONFIG_COUNT"] = String(count + 1)
        }
        let process = Subprocess(
            executable: executable, arguments: ["--git-dir=" + gitDirectory, "--work-tree=" + (workTree ?? workingTree)] + arguments,
            environment: environment, priority: priority)
        return try process.run(timeout: network ? timeout : max(timeout, 600))
    }

    /// The transports a remote may use.
    static let allowedProtocols = ["file", "ssh", "git", "http", "https"]

    /// Above every configuration file: the clone is itsypad's, so no hook the user keeps for their
    /// own repositories (`core.hooksPath`) and no file system monitor runs in it.
    static let neutralConfiguration = [("core.hooksPath", "/dev/null"), ("core.fsmonitor", "false")]

    /// A push to a repository on a local path runs its receive-pack here, as this user, and that
    /// would run the repository's hooks: the remote's owner's programs. It runs with them off. (git
    /// itself runs this command through sh; a server reached over ssh runs its own.)
    private var receivePackOption: [String] {
        BackendLocation.isLocalPath(url) || url.hasPrefix("file://") ? ["--receive-pack=git -c core.hooksPath=/dev/null receive-pack"] : []
    }

    /// Whether the user chose how git runs ssh (GIT_SSH_COMMAND, GIT_SSH, core.sshCommand): that
    /// choice is kept as it is; otherwise itsypad's ssh never prompts (BatchMode).
    private func hasOwnSSHCommand(_ executable: String, _ environment: [String: String]) throws -> Bool {
        if environment["GIT_SSH_COMMAND"] != nil || environment["GIT_SSH"] != nil { return true }
        let configured = try Subprocess(
            executable: executable, arguments: ["--git-dir=" + gitDirectory, "config", "--get", "core.sshCommand"],
            environment: environment, priority: .background
        ).run(timeout: timeout)
        return configured.status == 0
    }

    /// Exit 75 for what retrying can fix (no network, an unreachable host, a time-out, a lock
    /// held on the remote), 1 for the rest (a repository that is not there, a refused key, a
    /// transport not allowed), git's own message in both, quoted line by line as git wrote it.
    func failure(_ what: String, _ output: Subprocess.Output) -> ItsypadError {
        let place = "\(what) \(BackendLocation.git(url: url))"
        let retry = "local changes stay queued; try again later"
        if output.timedOut {
            return .temporary("git could not \(place) within \(Int(timeout)) s; \(retry)")
        }
        let text = output.errorText.isEmpty ? "git exited with status \(output.status)" : output.errorText
        let quoted =
            "git could not \(place):\n"
            + text.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }.joined(separator: "\n")
        switch GitFailure(text) {
        case .transient: return .temporary(quoted + "\n" + retry)
        case .missingRepository:
            let creation =
                BackendLocation.isLocalPath(url) || url.hasPrefix("file://")
                ? "create it with 'git init --bare \(url.hasPrefix("file://") ? String(url.dropFirst("file://".count)) : url)'"
                : "create it on its server (git init --bare) or correct the URL"
            return .failure(quoted + "\nno repository is there: " + creation)
        case .protocolNotAllowed:
            return .failure(quoted + "\nitsypad reaches git remotes only over " + GitRemote.allowedProtocols.joined(separator: ", "))
        case .permanent: return .failure(quoted)
        }
    }
}

/// What kind of failure git's message describes.
enum GitFailure: Equatable {
    /// Retrying can fix it: the network, the host or a lock held on the remote.
    case transient
    case missingRepository
    case protocolNotAllowed
    /// Anything else: a refused key, a bad URL, a certificate, a rejected push.
    case permanent

    init(_ message: String) {
        let lowered = message.lowercased()
        let missing =
            ["does not appear to be a git repository", "repository not found"].contains(where: lowered.contains)
            || lowered.contains("repository '") && lowered.contains("' not found")
        let refused = [
            "permission denied", "authentication failed", "host key verification failed", "could not read username",
            "terminal prompts disabled", "access denied", "returned error: 401", "returned error: 403",
        ]
        let unreachable = [
            "could not resolve", "connection refused", "connection timed out", "network is unreachable",
            "no route to host", "connection reset", "connection closed", "operation timed out",
            "failed to connect", "could not connect", "temporary failure in name resolution",
            "returned error: 429", "returned error: 500", "returned error: 502", "returned error: 503", "returned error: 504",
            "the remote end hung up unexpectedly", "early eof",
        ]
        let lockHeld = lowered.contains(".lock") && lowered.contains("file exists")
        if lowered.contains("transport '"), lowered.contains("not allowed") {
            self = .protocolNotAllowed
        } else if refused.contains(where: lowered.contains) {
            self = .permanent
        } else if missing {
            self = .missingRepository
        } else if lockHeld || unreachable.contains(where: lowered.contains) {
            self = .transient
        } else {
            self = .permanent
        }
    }
}

extension GitRemote {
    /// The device as a commit message names it: by name and id, or by id alone when it syncs
    /// encrypted (its name is a setting value, which encryption hides from the remote).
    package static func commitName(encrypted: Bool, deviceID: String, deviceName: String) -> String {
        encrypted ? deviceID : "\(deviceName) (\(deviceID))"
    }
}

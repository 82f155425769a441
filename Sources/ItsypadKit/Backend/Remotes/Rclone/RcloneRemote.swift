import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A sync backend kept on any storage rclone reaches (`rclone:REMOTE:PATH`): a mirror of it in
/// the data directory (`sync/rclone/backend/`), on which the engine runs exactly as on a shared
/// folder.
///
/// Every file of the backend but zone.json has one writer, the device its path names, so no
/// locking and no two-way merge is needed: a fetch lists the remote and downloads the other
/// devices' files that changed since the manifest last saw them (and removes from the mirror
/// those they removed); a send uploads this device's files that changed and removes from the
/// remote those it removed. A transfer cut short is found by the next listing and done again.
///
/// Uses the system `rclone` with the user's own configuration (`RCLONE_CONFIG` is honoured) or
/// a connection string, without a shell, never prompting, every call bounded in time.
public struct RcloneRemote: SyncRemote {
    /// The remote as rclone takes it: `REMOTE:PATH`, or a connection string `:BACKEND,OPTION=…:PATH`.
    public let remote: String
    /// This remote's files in the data directory.
    public let directory: String
    let environment: [String: String]
    /// Seconds an rclone call may go without progress (a file transferred, a line listed) before
    /// it is killed.
    let timeout: Double
    /// Files one rclone call transfers at most: each chunk is recorded in the manifest once it has
    /// landed, so that a sync cut short resumes with the files not transferred yet.
    let chunkSize: Int

    /// `rclone:REMOTE:PATH`; `ITSYPAD_RCLONE_TIMEOUT` sets the seconds an rclone call may go
    /// without progress (300), `ITSYPAD_RCLONE_CHUNK` the files one call transfers (1000).
    static let kind = RemoteKind(scheme: "rclone", syntax: "rclone:REMOTE:PATH") { remote, directory, environment in
        func positive(_ name: String) -> Double? { environment[name].flatMap(Double.init).flatMap { $0 >= 1 ? $0 : nil } }
        return RcloneRemote(
            remote: remote, directory: directory, environment: environment, timeout: positive("ITSYPAD_RCLONE_TIMEOUT") ?? 300,
            chunkSize: positive("ITSYPAD_RCLONE_CHUNK").map { Int($0) } ?? 1000)
    }

    public init(remote: String, directory: String, environment: [String: String], timeout: Double = 300, chunkSize: Int = 1000) {
        self.remote = remote
        self.directory = directory
        self.environment = environment
        self.timeout = timeout
        self.chunkSize = chunkSize
    }

    /// The backend directory the engine works on.
    public var mirror: String { directory + "/backend" }
    var manifestFile: String { directory + "/manifest" }
    var statusFile: String { directory + "/status.json" }
    /// Where a fetch downloads to before each file is moved into the mirror whole.
    var incoming: String { directory + "/incoming" }
    /// The names an rclone call transfers, one a line.
    var transferList: String { directory + "/transfer-list" }

    public var location: BackendLocation { .remote(scheme: "rclone", address: remote) }
    private var files: FileTree { FileTree(root: directory) }

    /// Creates the mirror if needed.
    public func prepare() throws {
        try FileSystem.makeDirectory(directory)
        try FileSystem.makeDirectory(mirror)
    }

    // MARK: Fetching

    /// Brings the other devices' changes into the mirror. Network I/O: call it without holding the
    /// data directory's lock.
    public func fetch() throws -> RemoteFetch {
        try prepare()
        let started = Time.now()
        let listed = try list()
        let mirrorStatus = try mirrorStatus()
        let recorded = RcloneManifest.read(manifestFile, mirror: mirrorStatus)
        var manifest = recorded
        var downloads: [(path: String, stamp: String)] = []
        for (path, stamp) in listed {
            if let entry = manifest[path], entry.sent, path != "zone.json" {
                // This device's copy there is not the size it sent (an upload cut short, a file
                // replaced by someone else): it is sent again.
                if RcloneManifest.size(of: entry.local) != RcloneManifest.size(of: stamp) { manifest[path]?.local = "" }
            } else if manifest[path]?.remote != stamp, try !isChangedHere(path, manifest) {
                downloads.append((path, RcloneRemote.isSettled(stamp, listedAt: started) ? stamp : ""))
            }
        }
        var removed = false
        for (path, entry) in manifest.entries where listed[path] == nil {
            if entry.sent {
                manifest[path]?.local = ""
            } else if try !isChangedHere(path, manifest) {
                // Removed by its writer (a version superseded, a journal compacted): as a folder would see it.
                _ = try files.remove(mirror + "/" + path)
                manifest[path] = nil
                removed = true
            }
        }
        // Each chunk downloaded writes the manifest with every change above; without a download it is
        // written only when it changed (it holds a line per file of the backend).
        try download(downloads, into: &manifest, mirror: mirrorStatus)
        if downloads.isEmpty, manifest != recorded { try manifest.write(manifestFile, mirror: mirrorStatus) }
        recordSuccess { $0.lastFetch = Time.now() }
        return downloads.isEmpty && !removed ? .unchanged : .changed
    }

    /// Whether the mirror's file at `path` was written here since it was last in step with the
    /// remote (this device's change, not sent yet): it is never replaced by a download.
    private func isChangedHere(_ path: String, _ manifest: RcloneManifest) throws -> Bool {
        guard let status = try files.status(mirror + "/" + path) else { return false }
        return RcloneManifest.localStamp(status) != manifest[path]?.local
    }

    /// A listed time this close to now may be followed by a change of the same size within the
    /// same second, which the next listing could not tell apart: such a file is fetched again.
    static func isSettled(_ stamp: String, listedAt now: Milliseconds) -> Bool {
        guard let space = stamp.firstIndex(of: " "),
            let listed = Time.parseISO8601(stamp[stamp.index(after: space)...].replacing(" ", with: "T") + "Z")
        else { return false }
        return listed < now - 2000
    }

    /// The backend's files on the remote, each with its stamp (`size YYYY-MM-DD HH:MM:SS`); none
    /// when the remote path does not exist yet.
    private func list() throws -> [String: String] {
        let output = try rclone(
            ["lsf", "-R", "--files-only", "--fast-list", "--format", "pst", "--separator", "\t", remote],
            outputLimit: RcloneRemote.listingLimit)
        // 3: the directory is not there (a new remote), which holds nothing yet.
        if output.status == 3 { return [:] }
        guard output.status == 0 else { throw record(failure: failure("list", output)) }
        // A listing cut short would take the files left out for removed.
        guard output.standardOutput.count < RcloneRemote.listingLimit else {
            throw record(
                failure: .failure(
                    "the listing of \(location) is larger than \(RcloneRemote.listingLimit >> 20) MiB: more files than a backend holds"))
        }
        var listed: [String: String] = [:]
        for line in output.outputText.split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 3, RcloneManifest.isTransferred(String(fields[0])) else { continue }
            listed[String(fields[0])] = fields[1] + " " + fields[2]
        }
        return listed
    }

    /// Downloads `downloads` chunk by chunk into `incoming`, then moves each file into the mirror
    /// (so that the mirror never holds a file cut short), made durable before the manifest
    /// records the chunk.
    private func download(
        _ downloads: [(path: String, stamp: String)], into manifest: inout RcloneManifest, mirror mirrorStatus: FileStatus
    ) throws {
        let stamps = Dictionary(downloads, uniquingKeysWith: { first, _ in first })
        try transfer(.download, downloads.map(\.path)) { chunk in
            var moved: [String] = []
            for path in chunk {
                let source = incoming + "/" + path
                // Gone meanwhile (its writer removed it): the next listing says what became of it.
                guard let status = try files.status(source), status.isRegular else { continue }
                guard chmod(source, 0o600) == 0 else { throw FileSystem.fail("chmod", source) }
                try files.rename(source, to: mirror + "/" + path)
                moved.append(path)
            }
            try files.syncFileSystem(of: mirror)
            for path in moved {
                guard let status = try files.status(mirror + "/" + path) else { continue }
                manifest[path] = .init(remote: stamps[path] ?? "", local: RcloneManifest.localStamp(status))
            }
            try manifest.write(manifestFile, mirror: mirrorStatus)
        }
        if !downloads.isEmpty { try files.removeTree(incoming) }
    }

    // MARK: Sending

    /// Uploads the mirror's files written here since they were last in step (this device's, and
    /// zone.json when this device wrote it), and removes from the remote the files this device
    /// sent and the mirror no longer holds; no other device's file is touched. Network I/O: call
    /// it without holding the data directory's lock.
    public func send(message: String) throws -> Bool {
        try prepare()
        let mirrorStatus = try mirrorStatus()
        var manifest = RcloneManifest.read(manifestFile, mirror: mirrorStatus)
        var uploads: [(path: String, stamp: String)] = []
        var present = Set<String>()
        for (path, status) in try RcloneRemote.transferredFiles(in: mirror) {
            present.insert(path)
            let stamp = RcloneManifest.localStamp(status)
            if manifest[path]?.local != stamp { uploads.append((path, stamp)) }
        }
        let stamps = Dictionary(uploads, uniquingKeysWith: { first, _ in first })
        try transfer(.upload, uploads.map(\.path)) { chunk in
            for path in chunk {
                // zone.json is listed again by the next fetch: another device's may replace this one.
                manifest[path] = .init(
                    remote: path == "zone.json" ? "" : manifest[path]?.remote ?? "", local: stamps[path] ?? "", sent: true)
            }
            try manifest.write(manifestFile, mirror: mirrorStatus)
        }
        let removals = manifest.entries.filter { $0.value.sent && !present.contains($0.key) }.map(\.key).sorted()
        try transfer(.removal, removals) { chunk in
            for path in chunk { manifest[path] = nil }
            try manifest.write(manifestFile, mirror: mirrorStatus)
        }
        recordSuccess { $0.lastSend = Time.now() }
        return true
    }

    /// Compaction removed this device's old files from the mirror: a send removes them there too.
    public func sendCompaction(message: String) throws -> Bool {
        try send(message: message)
    }

    /// What `transfer` does with the files it is given.
    enum Transfer {
        /// Copies them from a backend directory here (the mirror unless given) to the remote.
        case upload
        /// Copies them from the remote into `incoming`.
        case download
        /// Removes them from the remote.
        case removal
    }

    /// Runs `transfer` on `paths` in chunks of `chunkSize` files, one rclone call each, calling
    /// `landed` with each chunk once rclone has done it; nothing when `paths` is empty.
    private func transfer(
        _ transfer: Transfer, _ paths: [String], from source: String? = nil, landed: ([String]) throws -> Void = { _ in }
    ) throws {
        if transfer == .download, !paths.isEmpty {
            try files.removeTree(incoming)
            try FileSystem.makeDirectory(incoming)
        }
        for start in stride(from: 0, to: paths.count, by: chunkSize) {
            let chunk = Array(paths[start..<min(start + chunkSize, paths.count)])
            try writeTransferList(chunk)
            let list = ["--files-from-raw", transferList]
            let (arguments, what) =
                switch transfer {
                case .upload: (["copy"] + list + ["--no-traverse", "--no-check-dest", source ?? mirror, remote], "upload to")
                case .download: (["copy"] + list + ["--no-traverse", remote, incoming], "download from")
                case .removal: (["delete"] + list + [remote], "remove old files from")
                }
            let output = try rclone(arguments)
            guard output.status == 0 else { throw record(failure: failure(what, output)) }
            try landed(chunk)
        }
    }

    /// The files that devices exchange (see `RcloneManifest.isTransferred`) in the backend
    /// directory `root`, by path relative to it, regular files only.
    static func transferredFiles(in root: String) throws -> [(path: String, status: FileStatus)] {
        let tree = FileTree(root: root)
        var found: [(path: String, status: FileStatus)] = []
        func walk(_ relative: String, depth: Int) throws {
            for name in try tree.list(relative.isEmpty ? root : root + "/" + relative) ?? [] {
                let path = relative.isEmpty ? name : relative + "/" + name
                guard let status = try tree.status(root + "/" + path) else { continue }
                if status.isDirectory, depth < 3 {
                    try walk(path, depth: depth + 1)
                } else if status.isRegular, RcloneManifest.isTransferred(path) {
                    found.append((path, status))
                }
            }
        }
        try walk("", depth: 0)
        return found
    }

    private func mirrorStatus() throws -> FileStatus {
        guard let status = try files.status(mirror) else { throw FileSystemError(path: mirror, code: ENOENT, operation: "stat") }
        return status
    }

    private func writeTransferList(_ paths: [String]) throws {
        try FileSystem.writeAtomically(transferList, Array(paths.joined(separator: "\n").utf8) + [0x0A], syncingDirectory: false)
    }

    // MARK: Replacing the backend

    /// Uploads the backend directory `replacement` (a new zone built beside the mirror), its
    /// zone.json last, then removes from the remote the files this device sent that it does not
    /// hold. False, sending nothing, when the remote's zone.json is no longer the mirror's.
    public func sendReplacement(from replacement: String, message: String) throws -> Bool {
        let mirrorZone = try FileTree(root: mirror).read(mirror + "/zone.json", limit: RcloneRemote.zoneLimit)
        guard try fetchedZone() == mirrorZone else { return false }
        let replacementFiles = try RcloneRemote.transferredFiles(in: replacement).map(\.path)
        let others = replacementFiles.filter { $0 != "zone.json" }
        try transfer(.upload, others, from: replacement)
        try transfer(.upload, ["zone.json"], from: replacement)
        let kept = Set(replacementFiles)
        let manifest = RcloneManifest.read(manifestFile, mirror: try mirrorStatus())
        let removals = manifest.entries.filter { $0.value.sent && !kept.contains($0.key) }.map(\.key).sorted()
        try transfer(.removal, removals)
        recordSuccess { $0.lastSend = Time.now() }
        return true
    }

    /// Puts `replacement` in the mirror's place, every file of it recorded as sent.
    public func adoptReplacement(from replacement: String) throws {
        let retired = directory + "/retired"
        try files.removeTree(retired)
        try files.rename(mirror, to: retired)
        try files.rename(replacement, to: mirror)
        try files.syncDirectory(directory)
        try files.removeTree(retired)
        let mirrorStatus = try mirrorStatus()
        var manifest = RcloneManifest()
        for (path, status) in try RcloneRemote.transferredFiles(in: mirror) {
            manifest[path] = .init(local: RcloneManifest.localStamp(status), sent: true)
        }
        try manifest.write(manifestFile, mirror: mirrorStatus)
    }

    /// The remote's zone.json, read now; nil when it holds none.
    public func fetchedZone() throws -> [UInt8]? {
        let output = try rclone(["cat", "--count", String(RcloneRemote.zoneLimit + 1), remotePath("zone.json")])
        if output.status == 3 || output.status == 4 || output.errorText.contains("not found") { return nil }
        guard output.status == 0 else { throw record(failure: failure("read zone.json from", output)) }
        // The remote is untrusted: a zone.json larger than a zone can be is none.
        return output.standardOutput.count <= RcloneRemote.zoneLimit ? output.standardOutput : nil
    }

    /// The largest listing read: about 500,000 files (a line is a path, a size and a time).
    static let listingLimit = 64 << 20

    /// The largest zone.json read (see the backend's limits).
    static let zoneLimit = 64 * 1024

    /// A file or folder of the remote by its path relative to the backend.
    private func remotePath(_ relative: String) -> String {
        remote.hasSuffix(":") || remote.hasSuffix("/") ? remote + relative : remote + "/" + relative
    }

    // MARK: What the protocol asks of a remote with no history

    /// Nothing to mark: every send compares the mirror's files with what was sent.
    public func checkpoint(message: String) throws {}

    /// Never reported: a replaced zone.json reaches the mirror like any file, and the engine sees the new zone.
    public func acknowledgeReplacement() {}

    // MARK: Status

    /// When the mirror last fetched and sent, and rclone's last error, for `sync status`.
    public var status: RemoteStatus { RemoteStatusFile.read(statusFile).status }

    private func recordSuccess(_ change: (inout RemoteStatusFile) -> Void) {
        RemoteStatusFile.update(statusFile) {
            change(&$0)
            $0.lastError = nil
        }
    }

    private func record(failure: ItsypadError) -> ItsypadError {
        RemoteStatusFile.record(failure: failure, at: statusFile)
    }

    // MARK: Running rclone

    /// Runs rclone without a shell: never asking for a password or a configuration, its
    /// connections bounded in time and the whole run killed once it goes `timeout` seconds without
    /// progress (each file it transfers is a line of its log), in UTC (listed times are compared).
    func rclone(_ arguments: [String], outputLimit: Int = 1 << 20) throws -> Subprocess.Output {
        guard let executable = Subprocess.find("rclone", searchPath: environment["PATH"]) else {
            throw ItsypadError.failure(
                "rclone is not installed (no 'rclone' in PATH): the sync backend \(location) needs it; local changes stay queued")
        }
        var environment = self.environment
        environment["TZ"] = "UTC"
        let seconds = { (limit: Double) in "\(Int(min(timeout, limit).rounded(.up)))s" }
        let options = [
            "--ask-password=false", "--contimeout", seconds(15), "--timeout", seconds(30), "--retries", "1",
            "--low-level-retries", "3", "--log-level", "INFO", "--stats", "0", "--stats-log-level", "DEBUG",
            "--transfers", "8", "--checkers", "16",
        ]
        let process = Subprocess(
            executable: executable, arguments: [arguments[0]] + options + arguments.dropFirst(), environment: environment)
        return try process.run(timeout: timeout, restartedByOutput: true, outputLimit: outputLimit)
    }

    /// Exit 75 for what retrying can fix (no network, an unreachable host, a time-out, a server
    /// busy), 1 for the rest (refused credentials, a remote missing from the configuration),
    /// rclone's last lines in both, quoted as it wrote them but for the secrets of a connection
    /// string (rclone echoes it), which are left out.
    func failure(_ what: String, _ output: Subprocess.Output) -> ItsypadError {
        let place = "\(what) \(location)"
        let retry = "local changes stay queued; try again later"
        if output.timedOut {
            return .temporary("rclone could not \(place): no progress for \(Int(timeout)) s; \(retry)")
        }
        // Neither the files it did transfer nor its notice that no configuration file exists say
        // anything about the failure.
        let lines = output.errorText.split(separator: "\n").filter { !$0.contains(" INFO  : ") && !$0.contains("NOTICE: Config file") }
            .suffix(8)
        let text = lines.isEmpty ? "rclone exited with status \(output.status)" : lines.map { "  " + $0 }.joined(separator: "\n")
        let quoted = "rclone could not \(place):\n" + location.redacting(text)
        return RcloneRemote.isTransient(lines.joined(separator: "\n")) ? .temporary(quoted + "\n" + retry) : .failure(quoted)
    }

    /// Whether rclone's message describes a failure that retrying can fix: the network, the host,
    /// a time-out or a busy server; never refused credentials or a configuration at fault.
    static func isTransient(_ message: String) -> Bool {
        let lowered = message.lowercased()
        let refused = [
            "401", "403", "unauthorized", "forbidden", "unable to authenticate", "permission denied", "didn't find section",
            "couldn't decrypt", "unknown backend", "config file", "password", "certificate",
        ]
        let unreachable = [
            "connection refused", "i/o timeout", "no such host", "network is unreachable", "no route to host", "connection reset",
            "context deadline exceeded", "timeout", "temporary failure in name resolution", "broken pipe", "eof",
            "429", "500 internal", "502", "503", "504", "too many requests", "service unavailable",
        ]
        if refused.contains(where: lowered.contains) { return false }
        return unreachable.contains(where: lowered.contains)
    }
}

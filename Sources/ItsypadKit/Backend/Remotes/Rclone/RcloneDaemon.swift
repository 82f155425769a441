import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// `rclone rcd`, the one rclone process of a sync: every listing and transfer goes through its
/// HTTP API (rclone's remote control). Started by `start` or the first call, bound to 127.0.0.1 with
/// credentials drawn at random and passed in its environment, started again if it died, stopped
/// with this object. The remote, whose connection string may hold secrets, travels in the
/// requests' bodies, never in an argument vector.
final class RcloneDaemon {
    /// The sync backend it serves, as messages name it.
    let location: BackendLocation
    /// Its environment, without the credentials (`PATH` finds rclone, `RCLONE_*` configure it).
    let environment: [String: String]
    /// rclone's options for every operation (time-outs, never prompting, parallel transfers).
    let options: [String]
    /// Seconds an operation may go without progress, and a request without an answer.
    let timeout: Double
    /// Names the running daemon and the process it serves, so that a daemon left behind by a
    /// process that could not stop it (killed with SIGKILL) is stopped by the next one.
    let ownerFile: String
    private let files: FileTree
    private var running: Subprocess.Running?
    /// Its client, once it said where it serves.
    private var client: LoopbackHTTP?
    /// The credentials it was started with, and until when it may take to say where it serves.
    private var credentials: (user: String, password: String, deadline: Double)?
    /// What `ownerFile` says while this daemon runs.
    private var owner: Owner?

    init(location: BackendLocation, environment: [String: String], options: [String], timeout: Double, ownerFile: String) {
        self.location = location
        self.environment = environment
        self.options = options
        self.timeout = timeout
        self.ownerFile = ownerFile
        files = FileTree(root: FileSystem.directoryName(ownerFile))
    }

    deinit {
        running?.stop()
        if let owner, Owner.read(ownerFile, in: files) == owner { _ = try? files.remove(ownerFile) }
    }

    /// The daemon and the process it serves, each a pid with its start time (a pid alone may be reused).
    struct Owner: Equatable {
        let daemon: ProcessIdentity
        let owner: ProcessIdentity

        var line: [UInt8] { Array("\(daemon) \(owner)\n".utf8) }

        static func read(_ path: String, in files: FileTree) -> Owner? {
            guard let bytes = (try? files.read(path, limit: 256)) ?? nil else { return nil }
            let fields = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isWhitespace)
            guard fields.count == 2, let daemon = ProcessIdentity(fields[0]), let owner = ProcessIdentity(fields[1]) else { return nil }
            return Owner(daemon: daemon, owner: owner)
        }
    }

    private func nameInOwnerFile() {
        if let owner { try? files.writeAtomically(ownerFile, owner.line, syncingDirectory: false) }
    }

    /// Stops the daemon `ownerFile` names when the process it served is gone; one still served is left alone.
    func stopAbandonedDaemon() {
        guard let named = Owner.read(ownerFile, in: files), !named.owner.isRunning else { return }
        if named.daemon.isRunning { kill(named.daemon.pid, SIGTERM) }
        _ = try? files.remove(ownerFile)
    }

    /// What an operation came to.
    enum Outcome {
        /// Done: the response's body (empty for a job).
        case succeeded([UInt8])
        /// rclone's message, with the HTTP status it came with (404 for a path not there).
        case failed(status: Int, message: String)
        /// It went `timeout` seconds without progress and was stopped.
        case stalled
    }

    /// Runs the remote control's `method`: in one request bounded by the time-out, or `asJob`,
    /// polled, its time-out restarted by each progress it makes (bytes, files checked,
    /// transferred or deleted). A response body larger than `limit` bytes is refused.
    func call(_ method: String, _ parameters: [(String, JSONValue)], asJob: Bool = false, limit: Int = 1 << 20) throws -> Outcome {
        let client = try started()
        guard asJob else { return outcome(try request(client, method, parameters, limit: limit)) }
        let submitted = try request(client, method, parameters + [("_async", .bool(true))])
        guard submitted.status == 200, let job = (try? JSONValue.parse(submitted.body))?["jobid"]?.int64Value else {
            return outcome(submitted)
        }
        let started = Monotonic.seconds()
        var deadline = started + timeout
        var progress: [Int64] = []
        var progressDue = started + RcloneDaemon.progressInterval
        var pause: useconds_t = 500
        while true {
            let reply = try request(client, "job/status", [("jobid", .integer(job))])
            guard reply.status == 200, let status = try? JSONValue.parse(reply.body) else { return outcome(reply) }
            if status["finished"]?.boolValue == true {
                guard status["success"]?.boolValue == true else {
                    return .failed(status: 500, message: status["error"]?.stringValue ?? "the job failed")
                }
                return .succeeded([])
            }
            if Monotonic.seconds() >= progressDue {
                let stats = try? JSONValue.parse(try request(client, "core/stats", [("group", .string("job/\(job)"))]).body)
                let made = ["bytes", "checks", "transfers", "deletes"].map { stats?[$0]?.int64Value ?? 0 }
                let now = Monotonic.seconds()
                progressDue = now + RcloneDaemon.progressInterval
                if made != progress {
                    progress = made
                    deadline = now + timeout
                } else if now > deadline {
                    _ = try? request(client, "job/stop", [("jobid", .integer(job))])
                    return .stalled
                }
            }
            usleep(pause)
            let longest = Monotonic.seconds() - started < RcloneDaemon.briskPeriod ? RcloneDaemon.briskPause : RcloneDaemon.longestPause
            pause = min(pause * 2, longest)
        }
    }

    /// Microseconds between two looks at a job at most: a job that ends is seen within this
    /// (rclone answers `job/status` in well under a millisecond).
    static let longestPause: useconds_t = 10_000

    /// The same while a job is younger than `briskPeriod` seconds: the jobs of a sync that changed
    /// little take 10–60 ms each, and each is seen ending within 2 ms rather than 10.
    static let briskPause: useconds_t = 2_000
    static let briskPeriod = 0.25

    /// Seconds between two readings of a job's progress: a stall is found within the time-out and this.
    static let progressInterval = 0.5

    /// One request; rclone's log is read after it, so that it never blocks on a full pipe.
    private func request(
        _ client: LoopbackHTTP, _ method: String, _ parameters: [(String, JSONValue)], limit: Int = 1 << 20
    ) throws -> LoopbackHTTP.Response {
        defer { _ = running?.readAvailable() }
        return try client.post("/" + method, json: JSONValue.object(parameters).serializedBytes(), timeout: timeout, limit: limit)
    }

    /// A response as an outcome: only the error of a failure's body is read, never the request it
    /// echoes (which names the remote, secrets and all).
    private func outcome(_ response: LoopbackHTTP.Response) -> Outcome {
        if response.status == 200 { return .succeeded(response.body) }
        let message = (try? JSONValue.parse(response.body))?["error"]?.stringValue
        return .failed(status: response.status, message: message ?? "rclone answered with HTTP status \(response.status)")
    }

    /// Starts the daemon if it is not running, without waiting for it to serve: its start-up
    /// (most of a whole `rclone copy`) then overlaps the sync's local work until the first call.
    func start() throws {
        if let running, running.exitStatus(within: 0) == nil { return }
        running?.stop()
        (running, client, credentials) = (nil, nil, nil)
        guard let executable = Subprocess.find("rclone", searchPath: environment["PATH"]) else {
            throw ItsypadError.failure(
                "rclone is not installed (no 'rclone' in PATH): the sync backend \(location) needs it; local changes stay queued")
        }
        let user = Hex.encode(try SecureRandom.bytes(16)), password = Hex.encode(try SecureRandom.bytes(16))
        var environment = self.environment
        environment["RCLONE_RC_USER"] = user
        environment["RCLONE_RC_PASS"] = password
        stopAbandonedDaemon()
        let process = try Subprocess(
            executable: executable, arguments: ["rcd", "--rc-addr", "127.0.0.1:0"] + options, environment: environment
        ).start()
        if let daemon = ProcessIdentity(pid: process.pid), let served = ProcessIdentity(pid: getpid()) {
            owner = Owner(daemon: daemon, owner: served)
            nameInOwnerFile()
        }
        (running, credentials) = (process, (user, password, Monotonic.seconds() + min(timeout, 30)))
    }

    /// The running daemon's client, starting it first if it is not running and waiting until it serves.
    private func started() throws -> LoopbackHTTP {
        if let client, let running, running.exitStatus(within: 0) == nil {
            // A sync run meanwhile beside this long-lived one (a watch's) named its own daemon, then removed the file.
            if let owner, Owner.read(ownerFile, in: files) != owner { nameInOwnerFile() }
            return client
        }
        try start()
        guard let process = running, let (user, password, deadline) = credentials else {
            throw ItsypadError.failure("rclone rcd did not start for \(location)")
        }
        while true {
            let ended = process.readAvailable() == nil
            if let port = RcloneDaemon.port(announcedIn: process.errorTail) {
                let client = LoopbackHTTP(port: port, user: user, password: password)
                self.client = client
                return client
            }
            if ended || process.exitStatus(within: 0) != nil || Monotonic.seconds() > deadline {
                process.stop()
                running = nil
                let log = location.redacting(process.errorText)
                let reason = log.isEmpty ? "" : ":\n" + log
                throw ItsypadError.failure("rclone rcd did not start for \(location)\(reason)")
            }
            usleep(1_000)
        }
    }

    /// The port rclone's log announces it serves on (`Serving remote control on http://127.0.0.1:PORT/`).
    static func port(announcedIn log: [UInt8]) -> UInt16? {
        let text = String(decoding: log, as: UTF8.self)
        guard let announced = text.firstRange(of: "Serving remote control on http://127.0.0.1:") else { return nil }
        let rest = text[announced.upperBound...]
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        return rest.dropFirst(digits.count).first == "/" ? UInt16(digits) : nil
    }
}

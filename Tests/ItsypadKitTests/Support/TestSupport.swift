@testable import ItsypadCLI
@testable import ItsypadSupport
@testable import ItsypadSync

#if canImport(Glibc)
import Glibc
#endif

/// A temporary directory removed when the value goes away.
final class TemporaryDirectory {
    let path: String

    init() {
        var template = Array("/tmp/itsypad-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(cString: template)
    }

    deinit { _ = try? Process.run("/bin/rm", ["-rf", path]) }

    func file(_ name: String) -> String { path + "/" + name }

    func write(_ name: String, _ text: String, mode: mode_t = 0o644) {
        let fd = open(file(name), O_WRONLY | O_CREAT | O_TRUNC, mode)
        precondition(fd >= 0)
        _ = Array(text.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    func read(_ name: String) -> String? {
        (try? FileSystem.read(file(name)))?.flatMap { String(decoding: $0, as: UTF8.self) }
    }
}

/// The result of running the built binary.
struct RunResult {
    let status: Int32
    let stdout: String
    let stderr: String
    let stdoutBytes: [UInt8]
    /// Set when the process was killed by a signal.
    let signal: Int32?
    /// Set when it ran past its time-out and was killed (a hang).
    var timedOut = false
}

/// Runs programs with files for standard streams (no pipe deadlocks).
enum Process {
    /// The `itsypad` binary SwiftPM built next to the test bundle.
    static let itsypad: String = {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let exe = count > 0 ? String(cString: buffer) : CommandLine.arguments[0]
        var directory = FileSystem.directoryName(exe)
        // The bundle may be a directory (…/itsypadPackageTests.xctest/…); walk up to the build products.
        while !directory.isEmpty, directory != "/" {
            if FileSystem.exists(directory + "/itsypad") && !FileSystem.isDirectory(directory + "/itsypad") {
                return directory + "/itsypad"
            }
            directory = FileSystem.directoryName(directory)
        }
        return ".build/debug/itsypad"
    }()

    /// Runs `program` to its end; with `timeout` (seconds), a process still running then is killed
    /// and reported as `timedOut`: a guard against hangs, not a measurement.
    @discardableResult
    static func run(
        _ program: String, _ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String]? = nil,
        timeout: Double? = nil
    ) throws -> RunResult {
        let scratch = TemporaryScratch()
        let inPath = scratch.path + "/in", outPath = scratch.path + "/out", errPath = scratch.path + "/err"
        try FileSystem.writeAtomically(inPath, stdin ?? [])
        let pid = try spawn(
            program, arguments, stdin: stdin == nil ? "/dev/null" : inPath, stdout: outPath, stderr: errPath, environment: environment)
        var status: Int32 = 0
        var timedOut = false
        if let timeout {
            var waited = 0.0
            while waitpid(pid, &status, WNOHANG) == 0 {
                if waited >= timeout {
                    kill(pid, SIGKILL)
                    timedOut = true
                    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                    break
                }
                usleep(10_000)
                waited += 0.01
            }
        } else {
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        let out = try FileSystem.read(outPath) ?? []
        let err = try FileSystem.read(errPath) ?? []
        let signaled = status & 0x7F
        return RunResult(
            status: signaled == 0 ? (status >> 8) & 0xFF : 128 + signaled,
            stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self),
            stdoutBytes: out, signal: signaled == 0 ? nil : signaled, timedOut: timedOut)
    }

    /// Starts a program with files for its standard streams and returns its process id; the caller waits for it.
    static func spawn(
        _ program: String, _ arguments: [String], stdin: String, stdout: String, stderr: String, environment: [String: String]?
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var env = environment ?? baseEnvironment
        if env["PATH"] == nil { env["PATH"] = "/usr/local/bin:/usr/bin:/bin" }
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        // The child starts with no signal blocked and every signal at its default: a test runs on a
        // dispatch thread that blocks them all, and a server that inherits that mask (Apache) never
        // sees the SIGTERM that stops it.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid = pid_t()
        let spawned =
            program.hasPrefix("/") || program.hasPrefix(".")
            ? posix_spawn(&pid, program, &actions, &attributes, argv, envp)
            : posix_spawnp(&pid, program, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw FileSystemError(path: program, code: spawned, operation: "run") }
        return pid
    }

    /// A clean environment: tests never touch the user's data or terminal settings.
    static var baseEnvironment: [String: String] {
        ["PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/nonexistent-home", "LANG": "C.UTF-8"]
    }

    static func shell(_ script: String, environment: [String: String]? = nil) throws -> RunResult {
        try run("/bin/sh", ["-c", script], environment: environment)
    }
}

/// A private scratch directory for one process run.
final class TemporaryScratch {
    let path: String
    init() {
        var template = Array("/tmp/itsypad-run-XXXXXX".utf8CString)
        _ = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        path = String(cString: template)
    }
    deinit {
        for name in ["in", "out", "err"] { unlink(path + "/" + name) }
        rmdir(path)
    }
}

/// Runs `itsypad` against one data directory.
struct Device {
    let directory = TemporaryDirectory()
    var dataDir: String { directory.path + "/data" }

    @discardableResult
    func run(_ arguments: String..., stdin: String? = nil, environment: [String: String] = [:]) throws -> RunResult {
        try runArguments(arguments, stdin: stdin.map { Array($0.utf8) }, environment: environment)
    }

    /// `program` (itsypad unless another is given, e.g. a tracer that runs it) in this device's environment.
    @discardableResult
    func runArguments(
        _ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String] = [:], program: String = Process.itsypad
    ) throws -> RunResult {
        var env = Process.baseEnvironment
        env["ITSYPAD_DATA_DIR"] = dataDir
        env["TMPDIR"] = directory.path
        for (key, value) in environment { env[key] = value }
        return try Process.run(program, arguments, stdin: stdin, environment: env)
    }

    /// Runs in-process (fast), returning status, stdout and stderr.
    func inProcess(_ arguments: [String], stdin: String? = nil, now: Milliseconds? = nil) -> (Int32, String, String) {
        let context = Context.memory(
            environment: ["ITSYPAD_DATA_DIR": dataDir, "TMPDIR": directory.path],
            stdin: stdin.map { Array($0.utf8) }, now: now.map { value in { value } } ?? Time.now)
        let status = Itsypad.run(arguments, context: context)
        return (status, context.standardOutput.text, context.standardError.text)
    }
}

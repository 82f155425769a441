#if canImport(Glibc)
import Glibc
#endif

/// A program run without a shell: an argument vector and an explicit environment.
package struct Subprocess {
    /// Absolute path of the program (see `find`).
    let executable: String
    /// Arguments after the program's name.
    let arguments: [String]
    let environment: [String: String]

    package init(executable: String, arguments: [String], environment: [String: String]) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
    }

    /// What a captured run produced.
    package struct Output {
        /// The exit status, or 128 + the signal that ended it.
        package let status: Int32
        package let standardOutput: [UInt8]
        package let standardError: [UInt8]
        /// The time-out ran out and the process group was killed.
        package let timedOut: Bool

        package var outputText: String { String(decoding: standardOutput, as: UTF8.self) }
        /// Standard error as the program wrote it, for quoting in a message: its lines kept, blank
        /// lines at either end dropped, other control characters escaped, at most 40 lines.
        package var errorText: String {
            var lines = String(decoding: standardError, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map {
                var line = Substring($0)
                while let last = line.last, last.isWhitespace { line.removeLast() }
                return Text.escapingControls(String(line), limit: 500)
            }
            while lines.first?.isEmpty == true { lines.removeFirst() }
            while lines.last?.isEmpty == true { lines.removeLast() }
            return (lines.count > 40 ? lines.prefix(40) + ["…"] : lines[...]).joined(separator: "\n")
        }
    }

    /// The program `name` in the directories of `searchPath` (a `PATH` value), as a shell finds it.
    package static func find(_ name: String, searchPath: String?) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        for directory in (searchPath ?? "/usr/bin:/bin").split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + name
            if access(candidate, X_OK) == 0, !FileSystem.isDirectory(candidate) { return candidate }
        }
        return nil
    }

    /// Runs the program with no input and its output captured (at most `outputLimit` bytes of
    /// each stream are kept; the rest is read and dropped, so the program never blocks on a full
    /// pipe). It runs in a process group of its own, so that when `timeout` seconds pass the
    /// whole group is killed: its helpers too (git's ssh), which would otherwise keep the pipes open.
    package func run(timeout: Double, outputLimit: Int = 1 << 20) throws -> Output {
        let outputPipe = try makePipe()
        let errorPipe: [Int32]
        do { errorPipe = try makePipe() } catch {
            outputPipe.forEach { close($0) }
            throw error
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outputPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errorPipe[1], 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))

        let spawned = spawn(&actions, &attributes)
        close(outputPipe[1])
        close(errorPipe[1])
        defer {
            close(outputPipe[0])
            close(errorPipe[0])
        }
        let pid = try spawned.get()

        var collected: [[UInt8]] = [[], []]
        var open = [true, true]
        var timedOut = false
        let deadline = Monotonic.seconds() + timeout
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while open.contains(true) {
            let remaining = deadline - Monotonic.seconds()
            if remaining <= 0 {
                timedOut = true
                kill(-pid, SIGKILL)
                break
            }
            var fds = [outputPipe[0], errorPipe[0]].enumerated().map { index, fd in
                pollfd(fd: open[index] ? fd : -1, events: Int16(POLLIN), revents: 0)
            }
            let ready = poll(&fds, 2, Int32(min(remaining * 1000, 60_000).rounded(.up)))
            if ready < 0 {
                if errno == EINTR { continue }
                kill(-pid, SIGKILL)
                throw FileSystem.fail("wait for the output of", executable)
            }
            for index in 0..<2 where open[index] && fds[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(fds[index].fd, $0.baseAddress, $0.count) }
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                guard count > 0 else {
                    open[index] = false
                    continue
                }
                let room = max(0, outputLimit - collected[index].count)
                collected[index] += buffer[0..<min(count, room)]
            }
        }
        let status = try Subprocess.waitForExit(pid)
        return Output(status: status, standardOutput: collected[0], standardError: collected[1], timedOut: timedOut)
    }

    /// A pipe whose ends the program does not inherit (only the copies made for it).
    private func makePipe() throws -> [Int32] {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw FileSystem.fail("create a pipe for", executable) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return ends
    }

    /// Runs the program attached to this terminal, with SIGINT and SIGQUIT restored to their
    /// defaults in it and ignored here meanwhile (the program handles Ctrl-C, as an editor does).
    package func runAttached() throws -> Int32 {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGQUIT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))

        let previousInt = signal(SIGINT, SIG_IGN)
        let previousQuit = signal(SIGQUIT, SIG_IGN)
        defer {
            signal(SIGINT, previousInt)
            signal(SIGQUIT, previousQuit)
        }
        return try Subprocess.waitForExit(try spawn(nil, &attributes).get())
    }

    private func spawn(
        _ actions: UnsafePointer<posix_spawn_file_actions_t>?, _ attributes: UnsafePointer<posix_spawnattr_t>
    ) -> Result<pid_t, ItsypadError> {
        var argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var environ = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { environ.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, actions, attributes, &argv, &environ)
        guard spawned == 0 else { return .failure(.failure("cannot start \(executable): \(String(cString: strerror(spawned)))")) }
        return .success(pid)
    }

    /// The exit status (WIFEXITED / WEXITSTATUS by hand: Glibc's macros are not imported into Swift).
    private static func waitForExit(_ pid: pid_t) throws -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { throw ItsypadError.failure("lost track of process \(pid)") }
        }
        let exited = status & 0x7F == 0
        return exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}

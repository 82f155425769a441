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
    let priority: Priority

    package init(executable: String, arguments: [String], environment: [String: String], priority: Priority = .normal) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.priority = priority
    }

    /// How the program competes for the processors with what else the user runs.
    package enum Priority: Sendable {
        /// As the thread that starts it.
        case normal
        /// Background work, at nice 10 or more (what nice(1) gives): a command the user runs
        /// meanwhile at 0 weighs about ten times as much and preempts it at once. Nothing changes
        /// where nothing else asks for a processor.
        case background
    }

    /// The nice value of `.background`.
    package static let backgroundNice: Int32 = 10

    /// What a captured run produced.
    package struct Output {
        /// The exit status, or 128 + the signal that ended it.
        package let status: Int32
        package let standardOutput: [UInt8]
        package let standardError: [UInt8]
        /// The time-out ran out and the process group was killed.
        package let timedOut: Bool
        /// Its output ended but it did not exit within `exitGrace` seconds: the process group was killed.
        package let outlivedOutput: Bool

        package var outputText: String { String(decoding: standardOutput, as: UTF8.self) }
        /// The end of standard error as the program wrote it, for quoting in a message: its lines
        /// kept, blank lines at either end dropped, other control characters escaped, the last 40
        /// lines at most (after "…" when there were more).
        package var errorText: String { Subprocess.quoted(standardError) }
    }

    /// A program's standard error as a message quotes it (see `Output.errorText`).
    static func quoted(_ standardError: [UInt8]) -> String {
        let lines = String(decoding: standardError, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        func isBlank(_ line: Substring) -> Bool { line.allSatisfy(\.isWhitespace) }
        guard let last = lines.lastIndex(where: { !isBlank($0) }), let first = lines.firstIndex(where: { !isBlank($0) }) else {
            return ""
        }
        let start = max(first, last - 39)
        let shown = lines[start...last].map { line in
            var line = line
            while let end = line.last, end.isWhitespace { line.removeLast() }
            return Text.escapingControls(String(line), limit: 500)
        }
        return ((start > first ? ["…"] : []) + shown).joined(separator: "\n")
    }

    /// How much of a program's standard error is kept: its end, which says what went wrong.
    package static let errorTail = 1 << 16

    /// Appends `bytes` to a standard error's `tail`, cut back to `errorTail` bytes once it has
    /// doubled (each byte is moved at most once); its last `errorTail` bytes are the ones kept.
    private static func keepTail(_ tail: inout [UInt8], adding bytes: ArraySlice<UInt8>) {
        tail += bytes
        if tail.count >= 2 * errorTail { tail.removeFirst(tail.count - errorTail) }
    }

    /// How long a program whose output has ended may take to exit before it is killed.
    package static let exitGrace = 5.0

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
    /// standard output and the last `errorTail` bytes of standard error are kept; the rest is read
    /// and dropped, so the program never blocks on a full pipe). It runs in a process group of its
    /// own, so that when `timeout` seconds pass the whole group is killed: its helpers too (git's
    /// ssh), which would otherwise keep the pipes open. So is one still running `exitGrace`
    /// seconds after its output ended. With `restartedByOutput` the time-out counts from the
    /// program's last output instead, so that one reporting its progress (rclone -v) runs as long
    /// as it makes some.
    package func run(timeout: Double, restartedByOutput: Bool = false, outputLimit: Int = 1 << 20) throws -> Output {
        let (pid, outputEnd, errorEnd) = try spawnWithPipes()
        defer {
            close(outputEnd)
            close(errorEnd)
        }

        var output: [UInt8] = []
        var errors: [UInt8] = []
        var open = [true, true]
        var timedOut = false
        var deadline = Monotonic.seconds() + timeout
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while open.contains(true) {
            let remaining = deadline - Monotonic.seconds()
            if remaining <= 0 {
                timedOut = true
                break
            }
            var fds = [outputEnd, errorEnd].enumerated().map { index, fd in
                pollfd(fd: open[index] ? fd : -1, events: Int16(POLLIN), revents: 0)
            }
            let ready = poll(&fds, 2, Int32(min(remaining * 1000, 60_000).rounded(.up)))
            if ready < 0 {
                if errno == EINTR { continue }
                let failure = FileSystem.fail("wait for the output of", executable)
                _ = try Subprocess.killGroup(pid)
                throw failure
            }
            for index in 0..<2 where open[index] && fds[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(fds[index].fd, $0.baseAddress, $0.count) }
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                guard count > 0 else {
                    open[index] = false
                    continue
                }
                if restartedByOutput { deadline = Monotonic.seconds() + timeout }
                if index == 0 {
                    output += buffer[0..<min(count, max(0, outputLimit - output.count))]
                } else {
                    Subprocess.keepTail(&errors, adding: buffer[0..<count])
                }
            }
        }
        let exited = timedOut ? nil : try Subprocess.exitStatus(pid, by: min(deadline, Monotonic.seconds() + Subprocess.exitGrace))
        return Output(
            status: try exited ?? Subprocess.killGroup(pid), standardOutput: output,
            standardError: Array(errors.suffix(Subprocess.errorTail)), timedOut: timedOut, outlivedOutput: !timedOut && exited == nil)
    }

    /// Runs a program that may leave a child of its own serving in the background, as wl-copy and
    /// xclip do: `input` is its standard input, and only the program itself is waited for (the
    /// child keeps the output files, so waiting for their end would wait for the child). Its
    /// output goes through unlinked files in `scratchDirectory`; after `timeout` seconds its
    /// process group is killed.
    package func runLeavingChildren(input: [UInt8], scratchDirectory: String, timeout: Double) throws -> Output {
        var files: [Int32] = []
        defer { files.forEach { close($0) } }
        for _ in 0..<3 {
            var template = Array((scratchDirectory + "/.subprocess-XXXXXX").utf8CString)
            let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            guard fd >= 0 else { throw FileSystem.fail("create a temporary file in", scratchDirectory) }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            unlink(template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
            files.append(fd)
        }
        try input.withUnsafeBytes { try FileSystem.writeAll(fd: files[0], $0, path: scratchDirectory) }
        lseek(files[0], 0, SEEK_SET)
        let pid = try spawnInOwnGroup(files.enumerated().map { ($0.element, Int32($0.offset)) }).get()

        let exited = try Subprocess.exitStatus(pid, by: Monotonic.seconds() + timeout)
        let status = try exited ?? Subprocess.killGroup(pid)
        // What it wrote to `fd` from `offset`: its output's start, or its standard error's end.
        func written(_ fd: Int32, from offset: off_t) throws -> [UInt8] {
            lseek(fd, offset, offset < 0 ? SEEK_END : SEEK_SET)
            return try FileSystem.readAll(fd: fd, path: scratchDirectory, limit: 1 << 20)
        }
        let errorStart = -min(off_t(Subprocess.errorTail), lseek(files[2], 0, SEEK_END))
        return Output(
            status: status, standardOutput: try written(files[1], from: 0), standardError: try written(files[2], from: errorStart),
            timedOut: exited == nil, outlivedOutput: false)
    }

    /// A program left running with its standard output on a pipe (a watcher whose lines report
    /// events): started in a process group of its own, stopped with the whole group. Its standard
    /// error goes to a pipe too, never to the terminal: its end is kept for a message to quote.
    package final class Running {
        package let pid: pid_t
        /// The read end of its standard output, non-blocking.
        package let output: Int32
        /// The read end of its standard error, non-blocking.
        private let errors: Int32
        /// The end of its standard error read so far (see `readAvailable`).
        package private(set) var errorTail: [UInt8] = []
        private var status: Int32?

        fileprivate init(pid: pid_t, output: Int32, errors: Int32) {
            self.pid = pid
            self.output = output
            self.errors = errors
        }

        /// Reads what it wrote so far (and keeps the end of its standard error); nil once its output has ended (it exited).
        package func readAvailable() -> [UInt8]? {
            _ = Running.drain(errors) { Subprocess.keepTail(&errorTail, adding: $0) }
            var collected: [UInt8] = []
            return Running.drain(output) { collected += $0 } ? nil : collected
        }

        /// The end of its standard error as a message quotes it (see `Output.errorText`), once it has
        /// exited (waiting a second at most).
        package var errorText: String {
            _ = exitStatus(within: 1)
            _ = readAvailable()
            return Subprocess.quoted(Array(errorTail.suffix(Subprocess.errorTail)))
        }

        /// Hands `body` what the non-blocking `fd` holds; true once it has ended.
        private static func drain(_ fd: Int32, _ body: (ArraySlice<UInt8>) -> Void) -> Bool {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count > 0 {
                    body(buffer[0..<count])
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    return count == 0
                }
            }
        }

        /// Its exit status, waiting for it at most `timeout` seconds (nil while it runs).
        package func exitStatus(within timeout: Double) -> Int32? {
            if status == nil { status = try? Subprocess.exitStatus(pid, by: Monotonic.seconds() + timeout) }
            return status
        }

        /// SIGTERM to the group, then SIGKILL if it is still there after a second; reaps it.
        package func stop() {
            guard exitStatus(within: 0) == nil else { return }
            kill(-pid, SIGTERM)
            if exitStatus(within: 1) == nil { status = try? Subprocess.killGroup(pid) }
        }

        deinit {
            stop()
            close(output)
            close(errors)
        }
    }

    /// Starts the program with no input, its standard output and standard error on pipes.
    package func start() throws -> Running {
        let (pid, output, errors) = try spawnWithPipes()
        for end in [output, errors] { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
        return Running(pid: pid, output: output, errors: errors)
    }

    /// Starts the program in a process group of its own with no input, its standard output and
    /// standard error on pipes; returns it and the pipes' read ends, which the caller closes.
    private func spawnWithPipes() throws -> (pid: pid_t, output: Int32, errors: Int32) {
        let outputPipe = try makePipe()
        let errorPipe: [Int32]
        do { errorPipe = try makePipe() } catch {
            outputPipe.forEach { close($0) }
            throw error
        }
        let spawned = spawnInOwnGroup([(outputPipe[1], 1), (errorPipe[1], 2)])
        close(outputPipe[1])
        close(errorPipe[1])
        do { return (try spawned.get(), outputPipe[0], errorPipe[0]) } catch {
            close(outputPipe[0])
            close(errorPipe[0])
            throw error
        }
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

    /// Starts the program in a process group of its own, each (descriptor, stream) pair put in place;
    /// standard input is /dev/null unless a pair names stream 0.
    private func spawnInOwnGroup(_ streams: [(fd: Int32, stream: Int32)]) -> Result<pid_t, ItsypadError> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if !streams.contains(where: { $0.stream == 0 }) { posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0) }
        for (fd, stream) in streams { posix_spawn_file_actions_adddup2(&actions, fd, stream) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        return spawn(&actions, &attributes)
    }

    private func spawn(
        _ actions: UnsafePointer<posix_spawn_file_actions_t>?, _ attributes: UnsafeMutablePointer<posix_spawnattr_t>
    ) -> Result<pid_t, ItsypadError> {
        var argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var environ = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { environ.forEach { free($0) } }
        var pid = pid_t()
        // Every signal unblocked in the program, whatever this process holds back (a watcher blocks its stop signals).
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigmask(attributes, &unblocked)
        var flags: Int16 = 0
        posix_spawnattr_getflags(attributes, &flags)
        posix_spawnattr_setflags(attributes, flags | Int16(POSIX_SPAWN_SETSIGMASK))
        let spawned = withUnsafeMutablePointer(to: &pid) { pid in
            Subprocess.started(at: priority) { posix_spawn(pid, executable, actions, attributes, &argv, &environ) }
        }
        guard spawned == 0 else { return .failure(.failure("cannot start \(executable): \(String(cString: strerror(spawned)))")) }
        return .success(pid)
    }

    /// `start`'s result: called on this thread, or for `.background` on a thread of its own whose
    /// nice value is raised to `backgroundNice` first (never lowered). On Linux a nice value is a
    /// thread's: the program started there inherits it, with every thread and program it starts,
    /// while this process's threads keep theirs (a process cannot take a lowered priority back).
    private static func started(at priority: Priority, _ start: () -> Int32) -> Int32 {
        guard priority == .background else { return start() }
        return withoutActuallyEscaping(start) { start in
            let job = BackgroundStart(start)
            var thread = pthread_t()
            let context = Unmanaged<BackgroundStart>.passRetained(job).toOpaque()
            let created = pthread_create(
                &thread, nil,
                { context in
                    Unmanaged<BackgroundStart>.fromOpaque(context!).takeRetainedValue().run()
                    return nil
                }, context)
            guard created == 0 else {
                // No thread to be had: the program starts here, at this thread's priority.
                Unmanaged<BackgroundStart>.fromOpaque(context).release()
                return start()
            }
            pthread_join(thread, nil)
            return job.result
        }
    }

    /// A program's start on a thread of background priority (see `started(at:_:)`), which waits for it.
    private final class BackgroundStart: @unchecked Sendable {
        let start: () -> Int32
        var result: Int32 = 0

        init(_ start: @escaping () -> Int32) { self.start = start }

        func run() {
            let process = __priority_which_t(PRIO_PROCESS.rawValue)
            errno = 0
            let current = getpriority(process, 0)
            if errno == 0, current < Subprocess.backgroundNice { _ = setpriority(process, 0, Subprocess.backgroundNice) }
            result = start()
        }
    }

    /// The exit status of a program the user runs (an editor), however long it takes.
    private static func waitForExit(_ pid: pid_t) throws -> Int32 {
        try exitStatus(pid, waiting: true)!
    }

    /// The exit status of a child, waiting for it until `deadline` at most; nil while it still runs.
    fileprivate static func exitStatus(_ pid: pid_t, by deadline: Double) throws -> Int32? {
        while true {
            if let status = try exitStatus(pid, waiting: false) { return status }
            if Monotonic.seconds() >= deadline { return nil }
            usleep(2_000)
        }
    }

    /// Kills the child's process group and reaps the child: its status (128 + SIGKILL), or a
    /// failure when it is still there seconds later (a process stuck in the kernel, never waited for).
    fileprivate static func killGroup(_ pid: pid_t) throws -> Int32 {
        kill(-pid, SIGKILL)
        guard let status = try exitStatus(pid, by: Monotonic.seconds() + exitGrace) else {
            throw ItsypadError.failure("process \(pid) did not end after SIGKILL")
        }
        return status
    }

    /// The exit status of a child; nil when `waiting` is false and it still runs
    /// (WIFEXITED / WEXITSTATUS by hand: Glibc's macros are not imported into Swift).
    private static func exitStatus(_ pid: pid_t, waiting: Bool) throws -> Int32? {
        var status: Int32 = 0
        while true {
            let reaped = waitpid(pid, &status, waiting ? 0 : WNOHANG)
            if reaped == pid { break }
            if reaped == 0 { return nil }
            if errno != EINTR { throw ItsypadError.failure("lost track of process \(pid)") }
        }
        let exited = status & 0x7F == 0
        return exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}

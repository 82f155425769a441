import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// `sync enable DIR --key -` with standard input on a terminal (a pseudo-terminal run by python3's
/// pty support): a prompt, nothing echoed, and the terminal as it was afterwards, Ctrl-C included.
@Suite(.needs(["python3"]))
struct RecoveryKeyPromptTests {
    let owner = Device()
    let joiner = Device()
    let backend = TemporaryDirectory()

    /// Runs the binary on a new pseudo-terminal (its controlling terminal), waits for the prompt,
    /// types `keys`, and reports the exit status (negative: the signal), everything the terminal
    /// showed, and whether echo is on once the binary has exited.
    static let driver = #"""
        import fcntl, json, os, select, signal, subprocess, sys, termios, time
        exe, data, backend, typed = sys.argv[1:5]
        master, slave = os.openpty()
        env = {"ITSYPAD_DATA_DIR": data, "PATH": "/usr/bin:/bin", "HOME": "/nonexistent-home", "LANG": "C.UTF-8", "TERM": "dumb"}
        def interactive():
            # As an interactive shell starts a command: Ctrl-C neither ignored nor blocked, the terminal its own.
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        child = subprocess.Popen([exe, "sync", "enable", backend, "--key", "-"], stdin=slave, stdout=slave, stderr=slave, env=env,
            start_new_session=True, preexec_fn=interactive)
        shown = b""
        def read(until, seconds):
            global shown
            end = time.time() + seconds
            while not until() and time.time() < end:
                if select.select([master], [], [], 0.1)[0]:
                    try: shown += os.read(master, 4096)
                    except OSError: return
        read(lambda: b"Recovery key: " in shown, 60)
        os.write(master, typed.encode().decode("unicode_escape").encode())
        read(lambda: child.poll() is not None, 60)
        read(lambda: False, 0.3)
        print(json.dumps({"status": child.wait(), "shown": shown.decode("utf-8", "replace"),
            "echo": bool(termios.tcgetattr(slave)[3] & termios.ECHO)}))
        """#

    func typeAtThePrompt(_ typed: String) throws -> (status: Int64, shown: String, echo: Bool) {
        let result = try Process.run(
            "python3", ["-c", RecoveryKeyPromptTests.driver, Process.itsypad, joiner.dataDir, backend.path, typed], timeout: 120)
        try #require(result.status == 0, "\(result.stderr)")
        let report = try JSONValue.parse(Array(result.stdout.utf8))
        guard case .string(let shown)? = report["shown"], case .bool(let echo)? = report["echo"] else {
            throw ItsypadError.failure("unexpected report \(result.stdout)")
        }
        return (try #require(report["status"]?.int64Value), shown, echo)
    }

    func recoveryKey() throws -> String {
        let enabled = try owner.run("sync", "enable", backend.path, "--encrypt")
        try #require(enabled.status == 0, "\(enabled.stderr)")
        let shown = try owner.run("sync", "key", "show")
        try #require(shown.status == 0, "\(shown.stderr)")
        return shown.stdout.trimmingNewline
    }

    @Test func theKeyIsAskedForAndNotEchoed() throws {
        let key = try recoveryKey()
        let run = try typeAtThePrompt(key + "\\n")
        #expect(run.status == 0, "\(run.shown)")
        #expect(run.shown.contains("Recovery key: "), "\(run.shown)")
        #expect(!run.shown.contains(String(key.prefix(5))), "the key was echoed: \(run.shown)")
        #expect(run.echo, "echo is back on")
        #expect(try joiner.run("sync", "key", "show").stdout.trimmingNewline == key)
    }

    @Test func ctrlCAtThePromptRestoresTheTerminal() throws {
        _ = try recoveryKey()
        let run = try typeAtThePrompt("ABCDE\\u0003")
        #expect(run.status == -Int64(SIGINT), "\(run.shown)")
        #expect(run.echo, "Ctrl-C left the terminal without echo")
        #expect(!run.shown.contains("ABCDE"), "\(run.shown)")
        #expect(!FileSystem.exists(joiner.dataDir + "/sync-key"))
    }

    /// A pipe is read as before, without a prompt.
    @Test func aPipedKeyIsReadWithoutAPrompt() throws {
        let key = try recoveryKey()
        let joined = try joiner.runArguments(["sync", "enable", backend.path, "--key", "-"], stdin: Array((key + "\n").utf8))
        #expect(joined.status == 0, "\(joined.stderr)")
        #expect(!joined.stderr.contains("Recovery key"), "\(joined.stderr)")
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Asking the person at the terminal for a secret.
public enum Terminal {
    /// Prints `prompt` on standard error and reads one line from the terminal on standard input
    /// with echo off, as ssh asks for a passphrase. The terminal is restored on every way out:
    /// Ctrl-C (and SIGTERM, SIGHUP, SIGQUIT, Ctrl-Z) is held back while echo is off and
    /// delivered once it is on again, ending the process as usual. At most `limit` bytes are kept; the line break is not.
    public static func readSecretLine(prompt: String, limit: Int = 4096) throws -> [UInt8] {
        var blocked = sigset_t()
        var previousMask = sigset_t()
        sigemptyset(&blocked)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP] { sigaddset(&blocked, signal) }
        sigprocmask(SIG_BLOCK, &blocked, &previousMask)
        defer { sigprocmask(SIG_SETMASK, &previousMask, nil) }

        var saved = termios()
        guard tcgetattr(0, &saved) == 0 else { throw FileSystem.fail("read the settings of", "the terminal") }
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        guard tcsetattr(0, TCSAFLUSH, &silent) == 0 else { throw FileSystem.fail("turn off echo on", "the terminal") }
        defer {
            tcsetattr(0, TCSAFLUSH, &saved)
            // The line break typed was not echoed.
            try? show("\n")
        }
        try show(prompt)

        var line: [UInt8] = []
        var byte: UInt8 = 0
        while !interrupted() {
            var input = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
            // A short wait, to see a held-back signal soon.
            let ready = poll(&input, 1, 200)
            if ready < 0 && errno != EINTR { throw FileSystem.fail("read from", "the terminal") }
            guard ready > 0 else { continue }
            let count = read(0, &byte, 1)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw FileSystem.fail("read from", "the terminal")
            }
            if count == 0 || byte == UInt8(ascii: "\n") { return line }
            if line.count < limit { line.append(byte) }
        }
        // Delivered on return unless the signal is ignored or blocked (a background job): then stop here.
        throw ItsypadError.failure("interrupted at the prompt; nothing was changed")
    }

    /// Whether a held-back signal that ends the read arrived: it is delivered on return.
    private static func interrupted() -> Bool {
        var pending = sigset_t()
        sigpending(&pending)
        return [SIGINT, SIGTERM, SIGHUP, SIGQUIT].contains { sigismember(&pending, $0) == 1 }
    }

    private static func show(_ text: String) throws {
        try Array(text.utf8).withUnsafeBytes { try FileSystem.writeAll(fd: 2, $0, path: "the terminal") }
    }
}

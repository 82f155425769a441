#if canImport(Glibc)
import Glibc
#endif

/// An advisory `flock` on a dedicated lock file, taken with a bounded wait.
/// (Locking a data file is useless once it is replaced by rename.)
public final class FileLock {
    private let fd: Int32

    public enum Mode { case shared, exclusive }

    /// The longest pause between two attempts to take a busy lock, in seconds: a sync hands the
    /// lock over for `DataStore.turnForOthers` (6 ms) after steps of a millisecond or two, and a
    /// `clip add` waiting for one waits at most this long past its end (4 ms made that wait, not
    /// the step, most of a waiting `clip add`'s extra time).
    static let longestPause = 0.001

    /// Waits up to `timeout` seconds; returns nil when the lock stayed busy. The lock file is
    /// opened like any file of `tree` (by default, its own directory): a symlink is refused, so
    /// a planted `lock` link can never create or truncate its target.
    public init?(path: String, in tree: FileTree? = nil, mode: Mode, timeout: Double) throws {
        guard let fd = try (tree ?? .containing(path)).openFile(path, flags: O_RDWR | O_CREAT) else {
            throw FileSystemError(path: path, code: ENOENT, operation: "open")
        }
        let operation = (mode == .shared ? LOCK_SH : LOCK_EX) | LOCK_NB
        var waited = 0.0
        var pause = 0.00025
        while flock(fd, operation) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, waited < timeout else {
                close(fd)
                if errno == EWOULDBLOCK || errno == EINTR { return nil }
                throw FileSystem.fail("lock", path)
            }
            usleep(useconds_t(pause * 1_000_000))
            waited += pause
            // Short pauses: a sync hands the lock over for a few milliseconds between its steps.
            pause = min(pause * 2, FileLock.longestPause)
        }
        self.fd = fd
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}

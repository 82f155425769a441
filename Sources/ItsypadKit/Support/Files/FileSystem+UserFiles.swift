#if canImport(Glibc)
import Glibc
#endif

/// Files that belong to the user rather than to itsypad (a file-backed tab's
/// file): written where they are, as an editor saving in place would, so that
/// their inode, mode, owner and hard links survive and a symlink keeps
/// pointing at the file it names.
extension FileSystem {
    /// Whether `path`, symlinks followed, is a regular file.
    public static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// Creates an empty file that must not exist yet, with the usual 0666 less the umask.
    public static func createFile(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        if fd < 0 { throw fail("create", path) }
        close(fd)
    }

    /// Replaces the content of the existing regular file at `path` (through a
    /// symlink, its target) in place, then fsyncs it. Not atomic: a crash
    /// mid-write can leave the file torn, so a caller that must not lose the
    /// text keeps a durable copy until this returns.
    public static func overwriteInPlace(_ path: String, _ bytes: [UInt8]) throws {
        // O_NONBLOCK: a FIFO put in the file's place must not hang the command.
        let fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 { throw fail("write", path) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw fail("write", path) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw ItsypadError.failure("\(path) is not a regular file") }
        try writeAll(fd: fd, bytes, at: 0, path: path)
        if ftruncate(fd, off_t(bytes.count)) != 0 { throw fail("truncate", path) }
        if fsync(fd) != 0 { throw fail("sync", path) }
    }
}

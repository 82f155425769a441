#if canImport(Glibc)
import Glibc
#endif

/// What `stat` says about a path.
struct FileStatus: Equatable {
    let size: Int
    /// Permission bits only (e.g. 0o600).
    let permissions: UInt32
    let isDirectory: Bool
    let modifiedMilliseconds: Int64
}

/// The backend's file operations: `FileSystem`'s, with failures classified as
/// the `BackendError`s the engine acts on (full → quota, unreachable → retry later).
enum FileIO {
    /// Prefix of every temporary file; readers skip names starting with "." and compaction sweeps old ones.
    static let temporaryPrefix = FileSystem.temporaryPrefix

    /// Maps an errno to the error the engine can act on.
    static func error(_ operation: String, _ path: String, code: Int32 = errno) -> BackendError {
        let message = "\(operation) \(path): \(String(cString: strerror(code)))"
        switch code {
        case ENOSPC, EDQUOT, EFBIG:
            return .quotaExceeded(message)
        case EACCES, EPERM, EROFS, ENOTCONN, ESTALE, ENODEV, ENXIO, EHOSTDOWN, EHOSTUNREACH, ETIMEDOUT, ENOMEDIUM:
            return .unavailable(message)
        default:
            return .io(message)
        }
    }

    /// Runs a `FileSystem` operation, translating its error.
    private static func classified<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let failure as FileSystemError {
            throw error(failure.operation, failure.path, code: failure.code)
        }
    }

    // MARK: Status

    /// `stat` of `path`, or nil if it does not exist.
    static func status(_ path: String) throws -> FileStatus? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw error("stat", path)
        }
        return FileStatus(
            size: Int(info.st_size),
            permissions: UInt32(info.st_mode) & 0o7777,
            isDirectory: (info.st_mode & S_IFMT) == S_IFDIR,
            modifiedMilliseconds: Int64(info.st_mtim.tv_sec) * 1000 + Int64(info.st_mtim.tv_nsec) / 1_000_000
        )
    }

    /// Sets the modification time to now (keeps a re-uploaded asset from looking abandoned).
    static func touch(_ path: String) throws {
        guard utimensat(AT_FDCWD, path, nil, 0) == 0 else { throw error("utimensat", path) }
    }

    // MARK: Reading and writing

    /// The file's bytes from `offset` to its end, or nil if the file does not exist.
    static func readFileIfExists(_ path: String, from offset: Int = 0) throws -> [UInt8]? {
        try classified { try FileSystem.read(path, from: offset) }
    }

    /// Reads up to `count` bytes at `offset` (fewer if the file is shorter).
    static func read(_ descriptor: Int32, path: String, offset: Int, count: Int) throws -> [UInt8] {
        try classified { try FileSystem.read(fd: descriptor, offset: offset, count: count, path: path) }
    }

    /// Writes every byte, retrying short writes.
    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8], path: String) throws {
        try classified { try bytes.withUnsafeBytes { try FileSystem.writeAll(fd: descriptor, $0, path: path) } }
    }

    static func sync(_ descriptor: Int32, path: String) throws {
        guard fsync(descriptor) == 0 else { throw error("fsync", path) }
    }

    /// Readers see either the old or the new file, never a partial one (temp, fsync, rename,
    /// and optionally an fsync of the directory; the caller may sync a batch's directories once).
    static func writeAtomically(_ bytes: [UInt8], to path: String, syncingDirectory: Bool = true) throws {
        try classified { try FileSystem.writeAtomically(path, bytes, syncingDirectory: syncingDirectory) }
    }

    static func syncDirectory(_ directory: String) throws {
        try classified { try FileSystem.syncDirectory(directory) }
    }

    /// Truncates the file to `length` bytes and makes that durable.
    static func truncate(_ path: String, to length: Int) throws {
        let descriptor = open(path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw error("open", path) }
        defer { close(descriptor) }
        guard ftruncate(descriptor, off_t(length)) == 0 else { throw error("ftruncate", path) }
        try sync(descriptor, path: path)
    }

    // MARK: Directories

    /// Creates `path` (not its parents: a missing parent means an unmounted share) with mode 0700.
    /// Returns false if it already existed.
    @discardableResult
    static func makeDirectory(_ path: String) throws -> Bool {
        if mkdir(path, mode_t(0o700)) == 0 { return true }
        if errno == EEXIST { return false }
        throw error("mkdir", path)
    }

    /// Names in `directory`, temporary files included, or nil if it does not exist.
    static func listDirectory(_ directory: String) throws -> [String]? {
        guard FileSystem.exists(directory) else { return nil }
        return try classified { try FileSystem.list(directory, includingHidden: true) }
    }

    /// Removes a file. Returns false if it did not exist.
    @discardableResult
    static func removeFile(_ path: String) throws -> Bool {
        if unlink(path) == 0 { return true }
        if errno == ENOENT { return false }
        throw error("unlink", path)
    }

    static func parentDirectory(of path: String) -> String { FileSystem.directoryName(path) }
}

/// An exclusive lock on the backend's lock file, held while the value lives.
struct BackendLock {
    private let lock: FileLock

    /// Waits at most `timeout` seconds, then throws `.locked`.
    static func acquire(path: String, timeout: Double) throws -> BackendLock {
        let lock: FileLock?
        do { lock = try FileLock(path: path, mode: .exclusive, timeout: timeout) } catch let failure as FileSystemError {
            throw FileIO.error(failure.operation, failure.path, code: failure.code)
        }
        guard let lock else { throw BackendError.locked }
        return BackendLock(lock: lock)
    }
}

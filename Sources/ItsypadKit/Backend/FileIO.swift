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

/// Thin POSIX wrappers. FoundationEssentials has no FileHandle, and the backend needs
/// explicit fsync, flock, O_EXCL and pread, so everything goes through Glibc directly.
enum FileIO {
    /// Prefix of every temporary file; readers skip names starting with "." and compaction sweeps old ones.
    static let temporaryPrefix = ".tmp-"

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

    // MARK: Reading

    /// The file's bytes from `offset` to its end, or nil if the file does not exist.
    static func readFileIfExists(_ path: String, from offset: Int = 0) throws -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw error("open", path)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw error("fstat", path) }
        let size = Int(info.st_size)
        guard size > offset else { return [] }
        return try read(descriptor, path: path, offset: offset, count: size - offset)
    }

    /// Reads up to `count` bytes at `offset` (fewer if the file is shorter).
    static func read(_ descriptor: Int32, path: String, offset: Int, count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let result = bytes.withUnsafeMutableBytes { buffer in
                pread(descriptor, buffer.baseAddress! + filled, count - filled, off_t(offset + filled))
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw error("pread", path)
            }
            if result == 0 { break }
            filled += result
        }
        bytes.removeLast(count - filled)
        return bytes
    }

    // MARK: Writing

    /// Writes every byte, retrying short writes.
    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8], path: String) throws {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { buffer in
                write(descriptor, buffer.baseAddress! + written, bytes.count - written)
            }
            if result < 0 {
                if errno == EINTR { continue }
                throw error("write", path)
            }
            written += result
        }
    }

    static func sync(_ descriptor: Int32, path: String) throws {
        guard fsync(descriptor) == 0 else { throw error("fsync", path) }
    }

    /// Writes `bytes` to `path` so readers see either the old or the new file, never a partial one:
    /// temporary file in the same directory, fsync, rename into place, then (optionally) fsync the directory.
    static func writeAtomically(_ bytes: [UInt8], to path: String, syncingDirectory: Bool = true) throws {
        let directory = parentDirectory(of: path)
        let temporaryPath = directory + "/" + temporaryPrefix + Identifier.make()
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(0o600))
        guard descriptor >= 0 else { throw error("create", temporaryPath) }
        do {
            defer { close(descriptor) }
            try writeAll(descriptor, bytes, path: temporaryPath)
            try sync(descriptor, path: temporaryPath)
        } catch {
            unlink(temporaryPath)
            throw error
        }
        guard rename(temporaryPath, path) == 0 else {
            let failure = error("rename", path)
            unlink(temporaryPath)
            throw failure
        }
        if syncingDirectory {
            try syncDirectory(directory)
        }
    }

    /// Makes a rename or unlink in `directory` durable. Some network file systems refuse
    /// fsync on directories; there is nothing better to do there, so that is not an error.
    static func syncDirectory(_ directory: String) throws {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw error("open", directory) }
        defer { close(descriptor) }
        if fsync(descriptor) != 0 && errno != EINVAL && errno != ENOTSUP {
            throw error("fsync", directory)
        }
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

    /// Creates `path` with mode 0700. Returns false if it already existed.
    @discardableResult
    static func makeDirectory(_ path: String) throws -> Bool {
        if mkdir(path, mode_t(0o700)) == 0 { return true }
        if errno == EEXIST { return false }
        throw error("mkdir", path)
    }

    /// Names in `directory` (without "." and ".."), or nil if it does not exist or is not a directory.
    static func listDirectory(_ directory: String) throws -> [String]? {
        guard let stream = opendir(directory) else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw error("opendir", directory)
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) {
                    String(cString: $0)
                }
            }
            if name != "." && name != ".." {
                names.append(name)
            }
        }
        return names
    }

    /// Removes a file. Returns false if it did not exist.
    @discardableResult
    static func removeFile(_ path: String) throws -> Bool {
        if unlink(path) == 0 { return true }
        if errno == ENOENT { return false }
        throw error("unlink", path)
    }

    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    // MARK: Time

    /// Monotonic seconds, for time-outs that must not jump with the wall clock.
    static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1_000_000_000
    }
}

/// An exclusive `flock` on the backend's lock file, held until `release()`.
/// flock locks belong to the open file description, so two opens in one process also exclude each other.
struct BackendLock {
    private let descriptor: Int32

    /// Polls with LOCK_NB so the wait is bounded; throws `.locked` after `timeout` seconds.
    static func acquire(path: String, timeout: Double) throws -> BackendLock {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, mode_t(0o600))
        guard descriptor >= 0 else { throw FileIO.error("open", path) }
        let deadline = FileIO.monotonicSeconds() + timeout
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else {
                close(descriptor)
                throw FileIO.error("flock", path, code: code)
            }
            guard FileIO.monotonicSeconds() < deadline else {
                close(descriptor)
                throw BackendError.locked
            }
            usleep(15_000)
        }
        return BackendLock(descriptor: descriptor)
    }

    func release() {
        close(descriptor)
    }
}

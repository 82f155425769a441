import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The backend's file operations: those of its `FileTree` (no symlink followed, no FIFO opened,
/// nothing reached outside the backend directory), with failures classified as the `BackendError`s
/// the engine acts on (full → quota, unreachable → retry later, malformed → corrupt, the rest
/// (EIO, EACCES, EROFS) → an I/O error that needs someone to act).
struct FileIO: Sendable {
    let tree: FileTree

    init(root: String) {
        tree = FileTree(root: root)
    }

    /// Prefix of every temporary file; readers skip names starting with "." and compaction sweeps old ones.
    static let temporaryPrefix = FileSystem.temporaryPrefix

    /// Maps a file system failure to the error the engine can act on.
    static func error(_ failure: FileSystemError) -> BackendError {
        if failure.isMalformed {
            return .corrupt(path: failure.path, reason: failure.description)
        }
        let message = failure.description
        switch failure.code {
        case ENOSPC, EDQUOT, EFBIG:
            return .quotaExceeded(message)
        // A backend that vanished meanwhile (ENOENT of what was there) or a share that is gone or unreachable.
        case ENOENT, ENOTCONN, ESTALE, ENODEV, ENXIO, EHOSTDOWN, EHOSTUNREACH, ETIMEDOUT, ENOMEDIUM:
            return .unavailable(message)
        default:
            return .io(message)
        }
    }

    /// Runs a `FileSystem` operation, translating its error.
    private func classified<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let failure as FileSystemError {
            throw Self.error(failure)
        }
    }

    // MARK: Status

    /// `lstat` of `path`, or nil if it does not exist.
    func status(_ path: String) throws -> FileStatus? {
        try classified { try tree.status(path) }
    }

    /// Sets the modification time to now (keeps a re-uploaded asset from looking abandoned).
    func touch(_ path: String) throws {
        try classified { try tree.touch(path) }
    }

    // MARK: Reading and writing

    /// The regular file's bytes from `offset` to its end, or nil if it does not exist.
    /// A file over `limit` bytes is refused as corrupt before it is read.
    func readFileIfExists(_ path: String, from offset: Int = 0, limit: Int? = nil) throws -> [UInt8]? {
        try classified { try tree.read(path, from: offset, limit: limit) }
    }

    /// The regular file `path` as `readFileIfExists` reads it, its directory taken from `directories`.
    func readFileIfExists(_ path: String, of directories: FileTree.OpenDirectories, limit: Int? = nil) throws -> [UInt8]? {
        try classified {
            var bytes: [UInt8] = []
            let directory = try directories.directory(FileSystem.directoryName(path))
            return try directory.read(FileSystem.baseName(path), into: &bytes, limit: limit) ? bytes : nil
        }
    }

    /// Directories opened once each for a piece of work (see `FileTree.OpenDirectories`).
    func directories(creating: Bool = false) -> FileTree.OpenDirectories { tree.directories(creating: creating) }

    /// Reads many files of one directory of `directories`; each file's failure reaches `body`
    /// classified as `readFileIfExists` would throw it.
    func readFiles(
        _ names: [String], in directory: String, of directories: FileTree.OpenDirectories, limit: Int? = nil,
        _ body: (String, Result<[UInt8]?, any Error>) throws -> Void
    ) throws {
        let opened = try classified { try directories.directory(directory) }
        for name in names {
            let result = Result<[UInt8]?, any Error> {
                var bytes: [UInt8] = []
                return try classified { try opened.read(name, into: &bytes, limit: limit) } ? bytes : nil
            }
            try body(name, result)
        }
    }

    /// Opens a regular file (never a symlink or FIFO); nil if it does not exist and `flags` lacks O_CREAT.
    func open(_ path: String, flags: Int32) throws -> Int32? {
        try classified { try tree.openFile(path, flags: flags) }
    }

    /// Reads up to `count` bytes at `offset` (fewer if the file is shorter).
    func read(_ descriptor: Int32, path: String, offset: Int, count: Int) throws -> [UInt8] {
        try classified { try FileSystem.read(fd: descriptor, offset: offset, count: count, path: path) }
    }

    /// Writes every byte, retrying short writes.
    func writeAll(_ descriptor: Int32, _ bytes: [UInt8], path: String) throws {
        try classified { try bytes.withUnsafeBytes { try FileSystem.writeAll(fd: descriptor, $0, path: path) } }
    }

    func sync(_ descriptor: Int32, path: String) throws {
        guard fsync(descriptor) == 0 else { throw Self.error(FileSystem.fail("fsync", path)) }
    }

    /// Readers see either the old or the new file, never a partial one (temp, fsync, rename,
    /// and optionally an fsync of the directory; the caller may sync a batch's directories once).
    func writeAtomically(_ bytes: [UInt8], to path: String, syncingDirectory: Bool = true) throws {
        try classified { try tree.writeAtomically(path, bytes, syncingDirectory: syncingDirectory) }
    }

    /// Replaces many files, each atomically, all made durable together (see `FileTree.replaceFiles`).
    func replaceFiles(_ files: [(path: String, bytes: [UInt8])], in directories: FileTree.OpenDirectories) throws {
        try classified { try tree.replaceFiles(files, in: directories) }
    }

    func syncDirectory(_ directory: String) throws {
        try classified { try tree.syncDirectory(directory) }
    }

    /// Truncates the file to `length` bytes and makes that durable.
    func truncate(_ path: String, to length: Int) throws {
        guard let descriptor = try open(path, flags: O_WRONLY) else {
            throw Self.error(FileSystemError(path: path, code: ENOENT, operation: "truncate"))
        }
        defer { close(descriptor) }
        guard ftruncate(descriptor, off_t(length)) == 0 else { throw Self.error(FileSystem.fail("truncate", path)) }
        try sync(descriptor, path: path)
    }

    // MARK: Directories

    /// Creates `path` (mode 0700) inside the backend. Returns false if it already existed.
    @discardableResult
    func makeDirectory(_ path: String) throws -> Bool {
        try classified { try tree.makeDirectory(path) }
    }

    /// Names in `directory`, temporary files included, or nil if it does not exist.
    func listDirectory(_ directory: String) throws -> [String]? {
        try classified { try tree.list(directory, includingHidden: true) }
    }

    /// The same, `directory` taken from `directories`.
    func listDirectory(_ directory: String, of directories: FileTree.OpenDirectories) throws -> [String]? {
        try classified { try directories.directory(directory).names(includingHidden: true) }
    }

    /// Removes a file. Returns false if it did not exist.
    @discardableResult
    func removeFile(_ path: String) throws -> Bool {
        try classified { try tree.remove(path) }
    }

    /// Removes the temporary files a crash left in `directory` (see `FileTree.removeAbandonedTemporaryFiles`); returns how many.
    func removeAbandonedTemporaryFiles(in directory: String) throws -> Int {
        try classified { try tree.removeAbandonedTemporaryFiles(in: directory) }
    }

    /// Removes an empty directory. Returns false if it did not exist.
    @discardableResult
    func removeDirectory(_ path: String) throws -> Bool {
        try classified { try tree.removeDirectory(path) }
    }

    /// Removes a directory and everything in it, without following symbolic links (see `FileTree.removeTree`).
    func removeTree(_ directory: String) throws {
        try classified { try tree.removeTree(directory) }
    }

    /// Renames `source` to `target` atomically (see `FileTree.rename`).
    func rename(_ source: String, to target: String) throws {
        try classified { try tree.rename(source, to: target) }
    }

    /// Links `source` as `target` (see `FileTree.link`); false when `target` exists.
    func link(_ source: String, to target: String) throws -> Bool {
        try classified { try tree.link(source, to: target) }
    }

    static func parentDirectory(of path: String) -> String { FileSystem.directoryName(path) }
}

/// An exclusive lock on the backend's lock file, held while the value lives.
struct BackendLock {
    private let lock: FileLock

    /// Waits at most `timeout` seconds, then throws `.locked`.
    static func acquire(path: String, in tree: FileTree, timeout: Double) throws -> BackendLock {
        let lock: FileLock?
        do { lock = try FileLock(path: path, in: tree, mode: .exclusive, timeout: timeout) } catch let failure as FileSystemError {
            throw FileIO.error(failure)
        }
        guard let lock else { throw BackendError.locked }
        return BackendLock(lock: lock)
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// syncfs(2): Glibc declares it only under _GNU_SOURCE, which the Swift module map does not set.
@_silgen_name("syncfs")
private func linuxSyncfs(_ fd: Int32) -> Int32

/// A failure of the file system, with the path and the system's reason.
public struct FileSystemError: Error, CustomStringConvertible, Equatable {
    public let path: String
    /// An errno value, or one of the negative codes below for what itsypad itself refuses.
    public let code: Int32
    public let operation: String
    /// Extra detail for the refusals (e.g. the sizes of a file that is too large).
    public var detail: String?

    public init(path: String, code: Int32, operation: String, detail: String? = nil) {
        self.path = path
        self.code = code
        self.operation = operation
        self.detail = detail
    }

    /// Something other than a regular file (a FIFO, a device, a directory) where a file belongs.
    public static let notRegularFile: Int32 = -1
    /// A file larger than its format allows; refused before reading.
    public static let tooLarge: Int32 = -2
    /// A path component that is not a plain name ("", ".", "..", a NUL byte, over 255 bytes).
    public static let unsafeName: Int32 = -3

    public var description: String {
        let reason: String
        switch code {
        case FileSystemError.notRegularFile: reason = "not a regular file"
        case FileSystemError.tooLarge: reason = "too large"
        case FileSystemError.unsafeName: reason = "not a plain file name"
        case ELOOP: reason = "a symbolic link (itsypad does not follow links inside its data directory or a sync backend)"
        default: reason = String(cString: strerror(code))
        }
        return "cannot \(operation) \(path): \(reason)" + (detail.map { " (\($0))" } ?? "")
    }

    /// A full disk or quota: reported as such, never as corruption.
    public var isDiskFull: Bool { code == ENOSPC || code == EDQUOT || code == EFBIG }

    /// The file is not what the format says belongs there: a symlink, a FIFO, a directory in place
    /// of a file, a name or size out of bounds. Retrying cannot help; the file must be fixed.
    public var isMalformed: Bool {
        [FileSystemError.notRegularFile, FileSystemError.tooLarge, FileSystemError.unsafeName,
         ELOOP, EISDIR, ENOTDIR, ENAMETOOLONG].contains(code)
    }
}

/// What `lstat` says about a path (a symlink is reported as itself, never followed).
public struct FileStatus: Equatable, Sendable {
    public enum Kind: Sendable { case regular, directory, other }

    public let size: Int
    /// Permission bits only (e.g. 0o600).
    public let permissions: UInt32
    public let kind: Kind
    /// Saturated into Int64 (a file system may report any time).
    public let modifiedMilliseconds: Int64
    /// The inode and exact modification time: together they change whenever a directory's entries do.
    public let inode: UInt64
    public let modifiedSeconds: Int64
    public let modifiedNanoseconds: Int64

    public var isDirectory: Bool { kind == .directory }
    public var isRegular: Bool { kind == .regular }

    init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        default: kind = .other
        }
        size = Int(info.st_size)
        permissions = UInt32(info.st_mode) & 0o7777
        let seconds = Int64(info.st_mtim.tv_sec)
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        let (milliseconds, carry) = scaled.addingReportingOverflow(Int64(info.st_mtim.tv_nsec) / 1_000_000)
        modifiedMilliseconds = overflow || carry ? (seconds < 0 ? .min : .max) : milliseconds
        inode = UInt64(info.st_ino)
        modifiedSeconds = seconds
        modifiedNanoseconds = Int64(info.st_mtim.tv_nsec)
    }
}

/// Thin, synchronous POSIX file helpers. Every write that must survive a crash
/// goes through `writeAtomically` (temp + fsync + rename + directory fsync) or
/// `append` (write + fdatasync); nothing here buffers behind the caller's back.
/// Paths given here are the user's own (a file-backed tab, a file to import, which
/// may be a symlink or a pipe); everything inside the data directory or a sync
/// backend goes through a `FileTree` instead.
public enum FileSystem {
    package static func fail(_ operation: String, _ path: String) -> FileSystemError {
        FileSystemError(path: path, code: errno, operation: operation)
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Creates `path` and its missing parents with `mode` (0700 by default).
    public static func makeDirectory(_ path: String, mode: mode_t = 0o700) throws {
        if isDirectory(path) { return }
        let parent = directoryName(path)
        if parent != path, !parent.isEmpty, !isDirectory(parent) { try makeDirectory(parent, mode: mode) }
        if mkdir(path, mode) != 0 && errno != EEXIST { throw fail("create directory", path) }
    }

    /// Reads a file the user named from `offset` to its end; nil when it does not exist.
    public static func read(_ path: String, from offset: Int = 0) throws -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw fail("read", path)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw fail("read", path) }
        let size = Int(info.st_size)
        return size > offset ? try read(fd: fd, offset: offset, count: size - offset, path: path) : []
    }

    /// Reads to the end, or until `limit` bytes (a file's size, when known, sizes the buffer once).
    public static func readAll(fd: Int32, path: String = "standard input", limit: Int = .max) throws -> [UInt8] {
        var result: [UInt8] = []
        var info = stat()
        if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG { result.reserveCapacity(min(limit, Int(info.st_size) + 1)) }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while result.count < limit {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, min($0.count, limit - result.count)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw fail("read", path)
            }
            if count == 0 { break }
            result.append(contentsOf: chunk[0..<count])
        }
        return result
    }

    /// Reads `count` bytes at `offset` (fewer at end of file).
    public static func read(fd: Int32, offset: Int, count: Int, path: String) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let done = try buffer.withUnsafeMutableBytes { try read(fd: fd, offset: offset, into: $0, path: path) }
        if done < count { buffer.removeSubrange(done...) }
        return buffer
    }

    /// Fills `buffer` from `offset` (pread, retried); returns the bytes read, fewer only at end of file.
    public static func read(fd: Int32, offset: Int, into buffer: UnsafeMutableRawBufferPointer, path: String) throws -> Int {
        var done = 0
        while done < buffer.count {
            let got = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if got < 0 {
                if errno == EINTR { continue }
                throw fail("read", path)
            }
            if got == 0 { break }
            done += got
        }
        return done
    }

    public static func writeAll(fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        var done = 0
        while done < bytes.count {
            let wrote = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if wrote < 0 {
                if errno == EINTR { continue }
                throw fail("write", path)
            }
            done += wrote
        }
    }

    /// Streams the complete lines of an open file with their offsets, in bounded
    /// memory (1 MiB chunks); a last line without its newline is left out (a torn tail).
    /// With `origin`, the lines from that offset on (a line boundary).
    public static func forEachLine(fd: Int32, from origin: Int = 0, size: Int, path: String,
                                   _ body: (Int, ArraySlice<UInt8>) throws -> Void) throws {
        var offset = origin
        var carry: [UInt8] = []
        var carryOffset = origin
        while offset < size {
            let chunk = try read(fd: fd, offset: offset, count: min(1 << 20, size - offset), path: path)
            if chunk.isEmpty { break }
            offset += chunk.count
            var buffer = carry + chunk
            var start = 0
            while let newline = buffer[start...].firstIndex(of: 0x0A) {
                try body(carryOffset + start, buffer[start..<newline])
                start = newline + 1
            }
            carryOffset += start
            buffer.removeSubrange(0..<start)
            carry = buffer
        }
    }

    /// Like `forEachLine`, for a file whose lines may be huge (the clip log): each complete line comes
    /// with its offset and length, whole when it has at most `headLimit` bytes and otherwise as its
    /// first `headLimit` bytes only (the caller reads more itself if it must), so that memory stays
    /// bounded whatever the lines hold.
    public static func forEachLineHead(fd: Int32, size: Int, path: String, headLimit: Int,
                                       _ body: (_ offset: Int, _ length: Int, _ head: ArraySlice<UInt8>) throws -> Void) throws {
        var offset = 0
        var lineStart = 0
        // The first bytes of a line that began in an earlier chunk.
        var head: [UInt8] = []
        while offset < size {
            let chunk = try read(fd: fd, offset: offset, count: min(1 << 20, size - offset), path: path)
            if chunk.isEmpty { break }
            var start = 0
            while let newline = chunk[start...].firstIndex(of: 0x0A) {
                let length = offset + newline - lineStart
                if lineStart >= offset {
                    try body(lineStart, length, chunk[start..<min(newline, start + headLimit)])
                } else {
                    head += chunk[start..<min(newline, start + max(0, headLimit - head.count))]
                    try body(lineStart, length, head[...])
                    head.removeAll(keepingCapacity: true)
                }
                start = newline + 1
                lineStart = offset + start
            }
            head += chunk[start..<min(chunk.count, start + max(0, headLimit - head.count))]
            offset += chunk.count
        }
    }

    /// Writes all of `bytes` at `offset` (pwrite, retried on EINTR and short writes).
    public static func writeAll(fd: Int32, _ bytes: [UInt8], at offset: Int, path: String) throws {
        try bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let wrote = pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(offset + done))
                if wrote < 0 {
                    if errno == EINTR { continue }
                    throw fail("write", path)
                }
                done += wrote
            }
        }
    }

    /// Names of temporary files start with this: hidden from listings, and
    /// recognisable to the backend's sweep of files abandoned by a crash.
    public static let temporaryPrefix = ".tmp-"

    /// A fresh temporary file name: the prefix and 128 random bits, so writers never collide.
    package static func temporaryName() -> String {
        var generator = SystemRandomNumberGenerator()
        return temporaryPrefix + Hex.encode((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// Replaces `path` with `bytes` so that a crash leaves either the old or the
    /// new file, never a torn one (temp + fsync + rename + directory fsync). The
    /// file is the user's (a file-backed tab): whatever stands at `path` is replaced.
    public static func writeAtomically(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o600, syncingDirectory: Bool = true) throws {
        try FileTree.containing(path).writeAtomically(path, bytes, mode: mode, syncingDirectory: syncingDirectory)
    }

    /// Makes renames and unlinks in a directory durable. Some network file systems
    /// refuse fsync on directories; nothing better can be done there, so that is no error.
    public static func syncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 { throw fail("open", path) }
        defer { close(fd) }
        try sync(directory: fd, path: path)
    }

    static func sync(directory fd: Int32, path: String) throws {
        if fsync(fd) != 0 && errno != EINVAL && errno != ENOTSUP { throw fail("sync", path) }
    }

    public static func remove(_ path: String) throws {
        if unlink(path) != 0 && errno != ENOENT { throw fail("remove", path) }
    }

    /// Names in a directory, sorted (readdir order is arbitrary on Linux);
    /// hidden names (temp files) are skipped unless asked for. A missing directory has none.
    public static func list(_ path: String, includingHidden: Bool = false) throws -> [String] {
        guard let dir = opendir(path) else {
            if errno == ENOENT { return [] }
            throw fail("list", path)
        }
        defer { closedir(dir) }
        return names(in: dir, includingHidden: includingHidden)
    }

    static func names(in dir: OpaquePointer, includingHidden: Bool) -> [String] {
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if includingHidden ? name != "." && name != ".." : !name.hasPrefix(".") { names.append(name) }
        }
        return names.sorted()
    }

    public static func directoryName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    public static func baseName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// Makes a relative path absolute against the working directory.
    public static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return path }
        let cwd = String(cString: buffer)
        return path == "." ? cwd : cwd + "/" + path
    }
}

/// An append-only file: each `append` is one `write` followed by `fdatasync`, so
/// a record is committed once `append` returns. A crash mid-write leaves a torn
/// last line, which `openForAppend` cuts off (it was never committed).
public final class AppendFile {
    public let path: String
    public let fd: Int32

    /// Opens (creating with 0600) and truncates a torn tail that lacks its final newline.
    /// `tree` is the store the file belongs to (by default, its own directory): see `FileTree`.
    public init(path: String, in tree: FileTree? = nil, repairTail: Bool = true) throws {
        self.path = path
        guard let fd = try (tree ?? .containing(path)).openFile(path, flags: O_RDWR | O_CREAT) else {
            throw FileSystemError(path: path, code: ENOENT, operation: "open")
        }
        self.fd = fd
        if repairTail { try cutTornTail() }
    }

    deinit { close(fd) }

    public var size: Int {
        var info = stat()
        return fstat(fd, &info) == 0 ? Int(info.st_size) : 0
    }

    private func cutTornTail() throws {
        let length = size
        guard length > 0 else { return }
        let last = try FileSystem.read(fd: fd, offset: length - 1, count: 1, path: path)
        if last == [0x0A] { return }
        // Walk back to the last newline: everything after it was never committed.
        var end = length
        while end > 0 {
            let start = max(0, end - 4096)
            let chunk = try FileSystem.read(fd: fd, offset: start, count: end - start, path: path)
            if let newline = chunk.lastIndex(of: 0x0A) {
                end = start + newline + 1
                break
            }
            end = start
        }
        if ftruncate(fd, off_t(end)) != 0 { throw FileSystem.fail("repair", path) }
    }

    /// Appends bytes (one or more complete lines) and makes them durable.
    /// Returns the offset they were written at.
    @discardableResult
    public func append(_ bytes: [UInt8]) throws -> Int {
        let offset = size
        do {
            try FileSystem.writeAll(fd: fd, bytes, at: offset, path: path)
            if fdatasync(fd) != 0 { throw FileSystem.fail("sync", path) }
        } catch {
            // A partial write (disk full) must not stay as a torn record.
            _ = ftruncate(fd, off_t(offset))
            throw error
        }
        return offset
    }
}

/// An advisory `flock` on a dedicated lock file, taken with a bounded wait.
/// (Locking a data file is useless once it is replaced by rename.)
public final class FileLock {
    private let fd: Int32

    public enum Mode { case shared, exclusive }

    /// The longest pause between two attempts to take a busy lock, in seconds.
    static let longestPause = 0.004

    /// Waits up to `timeout` seconds; returns nil when the lock stayed busy. The lock file is
    /// opened like any file of `tree` (by default, its own directory): a symlink is refused, so
    /// a planted `lock` link can never create or truncate its target.
    public init?(path: String, in tree: FileTree? = nil, mode: Mode, timeout: Double) throws {
        guard let fd = try (tree ?? .containing(path)).openFile(path, flags: O_RDWR | O_CREAT) else {
            throw FileSystemError(path: path, code: ENOENT, operation: "open")
        }
        let operation = (mode == .shared ? LOCK_SH : LOCK_EX) | LOCK_NB
        var waited = 0.0
        var pause = 0.001
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

/// A directory tree that itsypad owns but others can write to: the data directory, a sync backend.
///
/// Everything below `root` is reached one component at a time from a descriptor of its parent
/// (`openat` with `O_NOFOLLOW`), so no symlink inside the tree is ever followed, whether it stands
/// for a file or for a directory on the way; only regular files are opened as files, and without
/// blocking (a FIFO planted in place of a file would otherwise hang the command while it holds its
/// lock). `root` itself is trusted as the user named it: it may be a symlink to another disk.
/// Paths are given whole (`root` + "/" + relative), as the stores build them and messages show them.
public struct FileTree: Sendable {
    public let root: String

    public init(root: String) {
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
    }

    /// The tree rooted at `path`'s directory: a file on its own, outside any store.
    public static func containing(_ path: String) -> FileTree { FileTree(root: FileSystem.directoryName(path)) }

    /// Longest name a file system stores (NAME_MAX).
    static let maxNameBytes = 255

    // MARK: Resolving

    /// The components of `path` below the root, each a plain name; throws for anything else.
    func components(of path: String) throws -> [String] {
        let prefix = root == "/" ? "/" : root + "/"
        guard path.hasPrefix(prefix) else { throw FileSystemError(path: path, code: FileSystemError.unsafeName, operation: "open", detail: "outside \(root)") }
        let names = path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        for name in names where !FileTree.isPlainName(name) {
            throw FileSystemError(path: path, code: FileSystemError.unsafeName, operation: "open")
        }
        return names
    }

    /// A name that stays in its directory: not empty, ".", "..", no "/" or NUL, at most 255 bytes.
    public static func isPlainName(_ name: String) -> Bool {
        let bytes = name.utf8
        return (1...maxNameBytes).contains(bytes.count) && name != "." && name != ".."
            && !bytes.contains(0) && !bytes.contains(UInt8(ascii: "/"))
    }

    private func path(of names: ArraySlice<String>) -> String {
        names.isEmpty ? root : (root == "/" ? "" : root) + "/" + names.joined(separator: "/")
    }

    /// Opens the directory `names` below the root without following symlinks; with `creating`,
    /// missing directories are made (mode 0700). Returns nil when one is missing and not created.
    private func openDirectory(_ names: ArraySlice<String>, creating: Bool) throws -> Int32? {
        var fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 && errno == ENOENT && creating {
            // The root is where the user said the tree lives; it is made as named.
            try FileSystem.makeDirectory(root)
            fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        }
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw FileSystem.fail("open", root)
        }
        for (index, name) in zip(names.indices, names) {
            var next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if next < 0 && errno == ENOENT && creating {
                if mkdirat(fd, name, 0o700) != 0 && errno != EEXIST {
                    let failure = FileSystem.fail("create directory", path(of: names[...index]))
                    close(fd)
                    throw failure
                }
                next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
            let code = errno
            close(fd)
            if next < 0 {
                if code == ENOENT && !creating { return nil }
                // A symlink gives ELOOP, a file where a directory belongs ENOTDIR.
                throw FileSystemError(path: path(of: names[...index]), code: code == ENOTDIR ? FileSystemError.notRegularFile : code,
                                      operation: "open", detail: code == ENOTDIR ? "a directory was expected" : nil)
            }
            fd = next
        }
        return fd
    }

    /// Runs `body` with a descriptor of `path`'s directory and its last component.
    /// `body` gets nil for the descriptor when the directory does not exist (and is not created).
    private func inParent<T>(of path: String, creating: Bool = false, _ body: (Int32?, String) throws -> T) throws -> T {
        let names = try components(of: path)
        guard let name = names.last else { throw FileSystemError(path: path, code: FileSystemError.unsafeName, operation: "open") }
        let directory = try openDirectory(names.dropLast(), creating: creating)
        defer { if let directory { close(directory) } }
        return try body(directory, name)
    }

    /// Runs `body` with a descriptor of the directory `path` (nil when it does not exist and is not created).
    private func inDirectory<T>(_ path: String, creating: Bool = false, _ body: (Int32?) throws -> T) throws -> T {
        let directory = try openDirectory(path == root ? [] : try components(of: path)[...], creating: creating)
        defer { if let directory { close(directory) } }
        return try body(directory)
    }

    /// Opens a regular file in `directory`: never a symlink, never blocking on a FIFO or device.
    /// Returns nil when it does not exist (and `flags` has no O_CREAT).
    private static func openRegular(_ directory: Int32, _ name: String, flags: Int32, mode: mode_t, path: String) throws -> Int32? {
        let fd = openat(directory, name, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode)
        if fd < 0 {
            if errno == ENOENT { return nil }
            // A FIFO without a reader refuses a non-blocking writer with ENXIO.
            if errno == ENXIO { throw FileSystemError(path: path, code: FileSystemError.notRegularFile, operation: "open") }
            throw FileSystem.fail("open", path)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let failure = FileSystem.fail("open", path)
            close(fd)
            throw failure
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw FileSystemError(path: path, code: FileSystemError.notRegularFile, operation: "open",
                                  detail: info.st_mode & S_IFMT == S_IFDIR ? "a directory" : "a FIFO, socket or device")
        }
        // O_NONBLOCK has no effect on a regular file, so the descriptor is used as it is.
        return fd
    }

    // MARK: Files

    /// Opens the regular file at `path` with `flags` (O_CREAT creates it, and its missing directories).
    /// Returns nil when it does not exist and is not created. The caller closes the descriptor.
    public func openFile(_ path: String, flags: Int32, mode: mode_t = 0o600) throws -> Int32? {
        try inParent(of: path, creating: flags & O_CREAT != 0) { directory, name in
            guard let directory else { return nil }
            return try FileTree.openRegular(directory, name, flags: flags, mode: mode, path: path)
        }
    }

    /// `lstat` of `path`, or nil if it (or a directory on the way) does not exist.
    public func status(_ path: String) throws -> FileStatus? {
        if path == root {
            var info = stat()
            guard stat(root, &info) == 0 else {
                if errno == ENOENT || errno == ENOTDIR { return nil }
                throw FileSystem.fail("stat", root)
            }
            return FileStatus(info)
        }
        return try inParent(of: path) { directory, name in
            guard let directory else { return nil }
            var info = stat()
            guard fstatat(directory, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                if errno == ENOENT { return nil }
                throw FileSystem.fail("stat", path)
            }
            return FileStatus(info)
        }
    }

    /// Whether anything (a symlink included) exists at `path`.
    public func exists(_ path: String) -> Bool { ((try? status(path)) ?? nil) != nil }

    /// Size of the regular file at `path`, nil when missing or not a regular file.
    public func fileSize(_ path: String) -> Int? {
        guard let status = (try? status(path)) ?? nil, status.isRegular else { return nil }
        return status.size
    }

    /// Reads a regular file from `offset` to its end; nil when it does not exist. With `limit`, a file
    /// larger than that is refused before anything is read (a record, an asset, a journal segment).
    public func read(_ path: String, from offset: Int = 0, limit: Int? = nil) throws -> [UInt8]? {
        guard let fd = try openFile(path, flags: O_RDONLY) else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileSystem.fail("read", path) }
        let size = Int(info.st_size)
        if let limit, size > limit {
            throw FileSystemError(path: path, code: FileSystemError.tooLarge, operation: "read", detail: "\(size) bytes; the limit is \(limit)")
        }
        return size > offset ? try FileSystem.read(fd: fd, offset: offset, count: size - offset, path: path) : []
    }

    /// Streams the complete lines of a regular file (see `FileSystem.forEachLine`); a missing file has none.
    public func forEachLine(_ path: String, _ body: (Int, ArraySlice<UInt8>) throws -> Void) throws {
        guard let fd = try openFile(path, flags: O_RDONLY) else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileSystem.fail("read", path) }
        try FileSystem.forEachLine(fd: fd, size: Int(info.st_size), path: path, body)
    }

    /// Replaces `path` with `bytes` atomically (see `FileSystem.writeAtomically`).
    public func writeAtomically(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o600, syncingDirectory: Bool = true) throws {
        try writeAtomically(path, mode: mode, syncingDirectory: syncingDirectory) { write in try write(bytes) }
    }

    /// Like `writeAtomically(_:_:)`, with the content produced in pieces.
    public func writeAtomically(_ path: String, mode: mode_t = 0o600, syncingDirectory: Bool = true,
                                _ produce: ((_ bytes: [UInt8]) throws -> Void) throws -> Void) throws {
        try inParent(of: path, creating: true) { directory, name in
            guard let directory else { throw FileSystemError(path: path, code: ENOENT, operation: "write") }
            let temp = FileSystem.temporaryName()
            let tempPath = FileSystem.directoryName(path) + "/" + temp
            let fd = openat(directory, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            if fd < 0 { throw FileSystem.fail("write", tempPath) }
            do {
                try produce { bytes in try bytes.withUnsafeBytes { try FileSystem.writeAll(fd: fd, $0, path: tempPath) } }
                if fsync(fd) != 0 { throw FileSystem.fail("sync", tempPath) }
                close(fd)
            } catch {
                close(fd)
                unlinkat(directory, temp, 0)
                throw error
            }
            // rename replaces whatever is there (a symlink included) without following it.
            if renameat(directory, temp, directory, name) != 0 {
                let failure = FileSystem.fail("rename", path)
                unlinkat(directory, temp, 0)
                throw failure
            }
            if syncingDirectory { try FileSystem.sync(directory: directory, path: FileSystem.directoryName(path)) }
        }
    }

    /// Replaces many files in `directory` at once (see `FileSystem.writeAtomically(_:in:)`): every temp
    /// file is written, one `syncfs` makes them durable, then each is renamed into place.
    public func writeAtomically(_ files: [(name: String, bytes: [UInt8])], in directory: String, mode: mode_t = 0o600) throws {
        guard !files.isEmpty else { return }
        for file in files where !FileTree.isPlainName(file.name) {
            throw FileSystemError(path: directory + "/" + file.name, code: FileSystemError.unsafeName, operation: "write")
        }
        try inDirectory(directory, creating: true) { fd in
            guard let fd else { throw FileSystemError(path: directory, code: ENOENT, operation: "write") }
            var temps: [String] = []
            defer { for temp in temps { unlinkat(fd, temp, 0) } }
            for file in files {
                let temp = FileSystem.temporaryName()
                let tempFD = openat(fd, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
                if tempFD < 0 { throw FileSystem.fail("write", directory + "/" + temp) }
                temps.append(temp)
                defer { close(tempFD) }
                try file.bytes.withUnsafeBytes { try FileSystem.writeAll(fd: tempFD, $0, path: directory + "/" + temp) }
            }
            if linuxSyncfs(fd) != 0 { throw FileSystem.fail("sync", directory) }
            for (temp, file) in zip(temps, files) where renameat(fd, temp, fd, file.name) != 0 {
                throw FileSystem.fail("rename", directory + "/" + file.name)
            }
            temps.removeAll()
            try FileSystem.sync(directory: fd, path: directory)
        }
    }

    /// Removes the file (or symlink) at `path`; returns false when there was none. A directory is refused.
    @discardableResult
    public func remove(_ path: String) throws -> Bool {
        try inParent(of: path) { directory, name in
            guard let directory else { return false }
            if unlinkat(directory, name, 0) == 0 { return true }
            if errno == ENOENT { return false }
            throw FileSystem.fail("remove", path)
        }
    }

    /// Removes the empty directory at `path` (never a link's target); returns false when there was none.
    @discardableResult
    public func removeDirectory(_ path: String) throws -> Bool {
        try inParent(of: path) { directory, name in
            guard let directory else { return false }
            if unlinkat(directory, name, AT_REMOVEDIR) == 0 { return true }
            if errno == ENOENT { return false }
            throw FileSystem.fail("remove directory", path)
        }
    }

    /// Makes `target` a second name of the file `source` (a symlink at `source` is linked as itself,
    /// never followed): atomic and exclusive. Returns false when `target` already exists; throws when
    /// the file system cannot link (EXDEV, EPERM on file systems without hard links).
    public func link(_ source: String, to target: String) throws -> Bool {
        try inParent(of: source) { sourceDirectory, sourceName in
            guard let sourceDirectory else { throw FileSystemError(path: source, code: ENOENT, operation: "link") }
            return try inParent(of: target, creating: true) { targetDirectory, targetName in
                guard let targetDirectory else { throw FileSystemError(path: target, code: ENOENT, operation: "link") }
                if linkat(sourceDirectory, sourceName, targetDirectory, targetName, 0) == 0 { return true }
                if errno == EEXIST { return false }
                throw FileSystem.fail("link", target)
            }
        }
    }

    /// Sets the modification time of the file at `path` to now (the file itself, never a link's target).
    public func touch(_ path: String) throws {
        try inParent(of: path) { directory, name in
            guard let directory, utimensat(directory, name, nil, AT_SYMLINK_NOFOLLOW) == 0 else { throw FileSystem.fail("touch", path) }
        }
    }

    // MARK: Directories

    /// Creates the directory `path` and missing ones on the way below the root (mode 0700).
    /// Returns false when it already existed.
    @discardableResult
    public func makeDirectory(_ path: String) throws -> Bool {
        let existed = try status(path)?.isDirectory == true
        if !existed { try inDirectory(path, creating: true) { _ in } }
        return !existed
    }

    /// Names in the directory `path`, sorted; hidden names (temp files) only when asked for.
    /// nil when the directory does not exist.
    public func list(_ path: String, includingHidden: Bool = false) throws -> [String]? {
        try inDirectory(path) { fd in
            guard let fd else { return nil }
            let copy = dup(fd)
            guard copy >= 0, let dir = fdopendir(copy) else {
                if copy >= 0 { close(copy) }
                throw FileSystem.fail("list", path)
            }
            defer { closedir(dir) }
            return FileSystem.names(in: dir, includingHidden: includingHidden)
        }
    }

    /// Makes renames and unlinks in the directory `path` durable (see `FileSystem.syncDirectory`).
    public func syncDirectory(_ path: String) throws {
        try inDirectory(path) { fd in
            guard let fd else { throw FileSystemError(path: path, code: ENOENT, operation: "sync") }
            try FileSystem.sync(directory: fd, path: path)
        }
    }

    /// Makes the data of the regular file at `path` durable.
    public func syncFile(_ path: String) throws {
        guard let fd = try openFile(path, flags: O_RDONLY) else { throw FileSystemError(path: path, code: ENOENT, operation: "sync") }
        defer { close(fd) }
        if fsync(fd) != 0 { throw FileSystem.fail("sync", path) }
    }

    /// Makes everything written on the file system holding the directory `path` durable (one syncfs for many files).
    public func syncFileSystem(of path: String) throws {
        try inDirectory(path) { fd in
            guard let fd else { throw FileSystemError(path: path, code: ENOENT, operation: "sync") }
            if linuxSyncfs(fd) != 0 { throw FileSystem.fail("sync", path) }
        }
    }

    /// Moves the file at `source` to `target` (replacing what is there), both inside the tree;
    /// missing directories on the way to `target` are made. Neither is followed if a symlink.
    public func rename(_ source: String, to target: String) throws {
        try inParent(of: source) { sourceDirectory, sourceName in
            guard let sourceDirectory else { throw FileSystemError(path: source, code: ENOENT, operation: "rename") }
            try inParent(of: target, creating: true) { targetDirectory, targetName in
                guard let targetDirectory, renameat(sourceDirectory, sourceName, targetDirectory, targetName) == 0 else {
                    throw FileSystem.fail("rename", target)
                }
            }
        }
    }

    /// Removes the directory `path` and everything in it, never following a symlink (a link is removed as itself).
    public func removeTree(_ path: String) throws {
        try inParent(of: path) { directory, name in
            guard let directory else { return }
            try FileTree.removeTree(name, in: directory, path: path)
        }
    }

    private static func removeTree(_ name: String, in directory: Int32, path: String) throws {
        if unlinkat(directory, name, 0) == 0 || errno == ENOENT { return }
        guard errno == EISDIR || errno == EPERM else { throw FileSystem.fail("remove", path) }
        let fd = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 { throw FileSystem.fail("remove", path) }
        let copy = dup(fd)
        guard copy >= 0, let dir = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            close(fd)
            throw FileSystem.fail("list", path)
        }
        let names = FileSystem.names(in: dir, includingHidden: true)
        closedir(dir)
        defer { close(fd) }
        for child in names { try removeTree(child, in: fd, path: path + "/" + child) }
        if unlinkat(directory, name, AT_REMOVEDIR) != 0 && errno != ENOENT { throw FileSystem.fail("remove", path) }
    }
}

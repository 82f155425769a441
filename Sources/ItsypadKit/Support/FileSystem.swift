#if canImport(Glibc)
import Glibc
#endif

/// syncfs(2): Glibc declares it only under _GNU_SOURCE, which the Swift module map does not set.
@_silgen_name("syncfs")
private func linuxSyncfs(_ fd: Int32) -> Int32

/// A failure of the file system, with the path and the system's reason.
public struct FileSystemError: Error, CustomStringConvertible, Equatable {
    public let path: String
    public let code: Int32
    public let operation: String

    public var description: String { "cannot \(operation) \(path): \(String(cString: strerror(code)))" }
    /// A full disk or quota: reported as such, never as corruption.
    public var isDiskFull: Bool { code == ENOSPC || code == EDQUOT }
}

/// Thin, synchronous POSIX file helpers. Every write that must survive a crash
/// goes through `writeAtomically` (temp + fsync + rename + directory fsync) or
/// `append` (write + fdatasync); nothing here buffers behind the caller's back.
public enum FileSystem {
    static func fail(_ operation: String, _ path: String) -> FileSystemError {
        FileSystemError(path: path, code: errno, operation: operation)
    }

    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    public static func fileSize(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }

    /// Creates `path` and its missing parents with `mode` (0700 by default).
    public static func makeDirectory(_ path: String, mode: mode_t = 0o700) throws {
        if isDirectory(path) { return }
        let parent = directoryName(path)
        if parent != path, !parent.isEmpty, !isDirectory(parent) { try makeDirectory(parent, mode: mode) }
        if mkdir(path, mode) != 0 && errno != EEXIST { throw fail("create directory", path) }
    }

    /// Reads a file from `offset` to its end; nil when it does not exist.
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
    public static func forEachLine(fd: Int32, size: Int, path: String, _ body: (Int, ArraySlice<UInt8>) throws -> Void) throws {
        var offset = 0
        var carry: [UInt8] = []
        var carryOffset = 0
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

    /// `forEachLine` over a file by path; a missing file has no lines.
    public static func forEachLine(path: String, _ body: (Int, ArraySlice<UInt8>) throws -> Void) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return }
            throw fail("read", path)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw fail("read", path) }
        try forEachLine(fd: fd, size: Int(info.st_size), path: path, body)
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

    /// A fresh temporary name in `directory`, unique across processes and hosts
    /// (a shared backend directory has writers on several machines).
    static func temporaryPath(in directory: String) -> String {
        directory + "/" + temporaryPrefix + Identifier.make()
    }

    /// Replaces `path` with `bytes` so that a crash leaves either the old or the
    /// new file, never a torn one.
    public static func writeAtomically(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o600, syncingDirectory: Bool = true) throws {
        try writeAtomically(path, mode: mode, syncingDirectory: syncingDirectory) { write in try write(bytes) }
    }

    /// Like `writeAtomically(_:_:)`, with the content produced in pieces by
    /// `produce` (a large file never has to be held in memory whole).
    public static func writeAtomically(_ path: String, mode: mode_t = 0o600, syncingDirectory: Bool = true,
                                       _ produce: ((_ bytes: [UInt8]) throws -> Void) throws -> Void) throws {
        let temp = temporaryPath(in: directoryName(path))
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        if fd < 0 { throw fail("write", temp) }
        do {
            try produce { bytes in try bytes.withUnsafeBytes { try writeAll(fd: fd, $0, path: temp) } }
            if fsync(fd) != 0 { throw fail("sync", temp) }
            close(fd)
        } catch {
            close(fd)
            unlink(temp)
            throw error
        }
        if rename(temp, path) != 0 {
            let failure = fail("rename", path)
            unlink(temp)
            throw failure
        }
        if syncingDirectory { try syncDirectory(directoryName(path)) }
    }

    /// Replaces many files in one directory at once: every temp file is written,
    /// one `syncfs` makes them all durable, then each is renamed into place and
    /// the directory synced once. A crash leaves each file old or new, never torn,
    /// at a fraction of the cost of one fsync per file (a large first sync writes thousands).
    public static func writeAtomically(_ files: [(path: String, bytes: [UInt8])], in directory: String, mode: mode_t = 0o600) throws {
        guard !files.isEmpty else { return }
        var temps: [String] = []
        defer { for temp in temps { unlink(temp) } }
        for file in files {
            let temp = temporaryPath(in: directory)
            let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
            if fd < 0 { throw fail("write", temp) }
            temps.append(temp)
            defer { close(fd) }
            try file.bytes.withUnsafeBytes { try writeAll(fd: fd, $0, path: temp) }
        }
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 { throw fail("open", directory) }
        defer { close(fd) }
        if linuxSyncfs(fd) != 0 { throw fail("sync", directory) }
        for (temp, file) in zip(temps, files) where rename(temp, file.path) != 0 { throw fail("rename", file.path) }
        temps.removeAll()
        if fsync(fd) != 0 && errno != EINVAL { throw fail("sync", directory) }
    }

    /// Makes a file's data durable.
    public static func syncFile(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 { throw fail("open", path) }
        defer { close(fd) }
        if fsync(fd) != 0 { throw fail("sync", path) }
    }

    /// Makes everything written on the file system holding `directory` durable (one syncfs for many files).
    public static func syncFileSystem(of directory: String) throws {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 { throw fail("open", directory) }
        defer { close(fd) }
        if linuxSyncfs(fd) != 0 { throw fail("sync", directory) }
    }

    /// Makes renames and unlinks in a directory durable. Some network file systems
    /// refuse fsync on directories; nothing better can be done there, so that is no error.
    public static func syncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 { throw fail("open", path) }
        defer { close(fd) }
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
    public init(path: String, repairTail: Bool = true) throws {
        self.path = path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if fd < 0 { throw FileSystem.fail("open", path) }
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

    /// Waits up to `timeout` seconds; returns nil when the lock stayed busy.
    public init?(path: String, mode: Mode, timeout: Double) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if fd < 0 { throw FileSystem.fail("open", path) }
        let operation = (mode == .shared ? LOCK_SH : LOCK_EX) | LOCK_NB
        var waited = 0.0
        var pause = 0.002
        while flock(fd, operation) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, waited < timeout else {
                close(fd)
                if errno == EWOULDBLOCK || errno == EINTR { return nil }
                throw FileSystem.fail("lock", path)
            }
            usleep(useconds_t(pause * 1_000_000))
            waited += pause
            pause = min(pause * 2, 0.05)
        }
        self.fd = fd
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}

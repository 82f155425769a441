#if canImport(Glibc)
import Glibc
#endif

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

    /// Reads a file the user named from `offset` to its end; nil when it does not exist. Only a
    /// regular file is read (a symlink followed to one): a FIFO put there must not hang the command.
    public static func read(_ path: String, from offset: Int = 0) throws -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw fail("read", path)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw fail("read", path) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw FileSystemError(path: path, code: FileSystemError.notRegularFile, operation: "read")
        }
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
    public static func read(fd: Int32, offset: Int, count: Int, path: @autoclosure () -> String) throws -> [UInt8] {
        // Not zeroed first: the bytes are overwritten by the read (an index of a few MiB is read whole).
        try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = try read(fd: fd, offset: offset, into: UnsafeMutableRawBufferPointer(buffer), path: path())
        }
    }

    /// Fills `buffer` from `offset` (pread, retried); returns the bytes read, fewer only at end of file.
    public static func read(
        fd: Int32, offset: Int, into buffer: UnsafeMutableRawBufferPointer, path: @autoclosure () -> String
    ) throws -> Int {
        var done = 0
        while done < buffer.count {
            let got = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if got < 0 {
                if errno == EINTR { continue }
                throw fail("read", path())
            }
            if got == 0 { break }
            done += got
        }
        return done
    }

    public static func writeAll(fd: Int32, _ bytes: UnsafeRawBufferPointer, path: @autoclosure () -> String) throws {
        var done = 0
        while done < bytes.count {
            let wrote = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if wrote < 0 {
                if errno == EINTR { continue }
                throw fail("write", path())
            }
            done += wrote
        }
    }

    /// Streams the complete lines of an open file with their offsets, in bounded
    /// memory (1 MiB chunks); a last line without its newline is left out (a torn tail).
    /// With `origin`, the lines from that offset on (a line boundary).
    public static func forEachLine(
        fd: Int32, from origin: Int = 0, size: Int, path: String,
        _ body: (Int, ArraySlice<UInt8>) throws -> Void
    ) throws {
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
    public static func forEachLineHead(
        fd: Int32, size: Int, path: String, headLimit: Int,
        _ body: (_ offset: Int, _ length: Int, _ head: ArraySlice<UInt8>) throws -> Void
    ) throws {
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
        // Two 64-bit draws, two system calls (a byte at a time would be sixteen: every temporary file has a name).
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for _ in 0..<2 { withUnsafeBytes(of: generator.next() as UInt64) { bytes += $0 } }
        return temporaryPrefix + Hex.encode(bytes)
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

    // Paths are split at the byte "/", as the kernel does (a search by Character would also be far slower).

    public static func directoryName(_ path: String) -> String {
        guard let slash = lastSlash(in: path) else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    public static func baseName(_ path: String) -> String {
        guard let slash = lastSlash(in: path) else { return path }
        return String(path[path.utf8.index(after: slash)...])
    }

    /// Searched over the contiguous bytes, far cheaper than `UTF8View.lastIndex(of:)`.
    private static func lastSlash(in path: String) -> String.Index? {
        var bytes = path
        guard let offset = bytes.withUTF8({ $0.lastIndex(of: UInt8(ascii: "/")) }) else { return nil }
        return path.utf8.index(path.utf8.startIndex, offsetBy: offset)
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

#if canImport(Glibc)
import Glibc
#endif

/// An append-only file: each `append` is one `write` followed by `fdatasync`, so
/// a record is committed once `append` returns. A crash mid-write leaves a torn
/// last line, which opening it cuts off (`repairTail`: it was never committed).
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

    /// The file's inode number (0 if it cannot be read).
    public var inode: UInt64 {
        var info = stat()
        return fstat(fd, &info) == 0 ? UInt64(info.st_ino) : 0
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

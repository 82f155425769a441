#if canImport(Glibc)
import Glibc
#endif

/// A regular file mapped read-only, to be read without a copy of it in memory (a document to
/// import, the clipboard log for a listing): the pages read so far are given back as the reading
/// moves on (`release`), so that a 50 MB file costs a few MiB of memory, not 50. A file cut short
/// while it is mapped ends the process (SIGBUS) when the reading reaches the lost part: use it
/// only where that commits nothing (an import, which is staged; a listing, under the lock that
/// every writer of the log takes).
public final class MappedFile {
    public let bytes: UnsafeBufferPointer<UInt8>
    /// The pages before this offset have been given back.
    private var released = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// The file at `path` mapped; nil when it is missing, empty, not a regular file (a pipe) or on a
    /// file system that cannot map it: the caller reads it instead.
    public static func map(_ path: String) throws -> MappedFile? {
        // Not blocking on a FIFO without a writer (which is then read instead).
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw FileSystem.fail("read", path)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileSystem.fail("read", path) }
        guard info.st_mode & S_IFMT == S_IFREG, info.st_size > 0 else { return nil }
        guard let mapped = map(fd: fd, count: Int(info.st_size)) else { return nil }
        // Read once from start to end: read ahead, and the pages need not be kept.
        _ = madvise(UnsafeMutableRawPointer(mutating: mapped.bytes.baseAddress!), mapped.bytes.count, MADV_SEQUENTIAL)
        return mapped
    }

    /// The first `count` bytes of the open file `fd` mapped (the descriptor may be closed after); nil
    /// when that cannot be mapped.
    public static func map(fd: Int32, count: Int) -> MappedFile? {
        guard count > 0, let base = mmap(nil, count, PROT_READ, MAP_PRIVATE, fd, 0), base != UnsafeMutableRawPointer(bitPattern: -1)
        else { return nil }
        return MappedFile(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: count))
    }

    /// Gives back the memory of the pages wholly before `offset` (a MiB or more at a time: each is
    /// a system call); read again, they come from the file again. Reading may start over.
    public func release(before offset: Int) {
        let end = min(offset, bytes.count)
        if end < released { released = 0 }
        guard end - released >= 1 << 20 else { return }
        release(released..<end)
        released = end / MappedFile.pageSize * MappedFile.pageSize
    }

    /// Gives back the memory of the pages wholly inside `range`; read again, they come from the file again.
    public func release(_ range: Range<Int>) {
        let page = MappedFile.pageSize
        let start = (range.lowerBound + page - 1) / page * page, end = min(range.upperBound, bytes.count) / page * page
        guard start < end else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: bytes.baseAddress! + start), end - start, MADV_DONTNEED)
    }

    private static var pageSize: Int { Int(sysconf(Int32(_SC_PAGESIZE))) }

    deinit { munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress!), bytes.count) }
}

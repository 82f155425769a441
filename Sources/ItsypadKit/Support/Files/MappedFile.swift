#if canImport(Glibc)
import Glibc
#endif

/// A regular file mapped read-only, to be read without a copy of it in memory (a document to
/// import, the clipboard log for a listing): the pages read so far are given back as the reading
/// moves on (`release`), so that a 50 MB file costs a few MiB of memory, not 50. A file cut short
/// while it is mapped does not end the process: the lost pages read as zeros (see
/// `readingLostPagesAsZeros`), which no JSON document holds, and `isCutShort` then says why its
/// reading failed. Use it only where a failed reading commits nothing (an import, which is
/// staged; a listing, under the lock that every writer of the log takes).
public final class MappedFile {
    public let bytes: UnsafeBufferPointer<UInt8>
    /// The mapped file, kept open to tell whether it was cut short (`isCutShort`); nil when not kept.
    private let fd: Int32?
    /// The pages before this offset have been given back.
    private var released = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>, keeping fd: Int32?) {
        self.bytes = bytes
        self.fd = fd
    }

    /// A document a user names for an import, mapped; nil when `path` does not exist. A regular
    /// file is mapped as it is; a pipe, a FIFO or a device (`import <(…)`) is read as a stream
    /// into an unlinked file in `spool` first (`spooled`), so that both are read the same way, in
    /// bounded memory. An empty document has no bytes; one over `limit` bytes is refused
    /// (`FileSystemError.tooLarge`).
    public static func document(_ path: String, spoolingIn spool: FileTree, limit: Int = .max) throws -> MappedFile? {
        // Not blocking on a FIFO without a writer, nor on a device, before its kind is known.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw FileSystem.fail("read", path)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let failure = FileSystem.fail("read", path)
            close(fd)
            throw failure
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            guard info.st_size <= limit else {
                close(fd)
                throw FileSystemError(path: path, code: FileSystemError.tooLarge, operation: "read")
            }
            return try mapped(fd, count: Int(info.st_size), path: path)
        case S_IFDIR:
            close(fd)
            throw FileSystemError(path: path, code: EISDIR, operation: "read")
        default:
            // A FIFO is read as a reader of it would: an import started before its writer waits for
            // it. The descriptor stays non-blocking, as a blocking open would wait for a writer that
            // may have come and gone already: its end is the hang-up poll reports, not a read of 0
            // (a FIFO's read before any writer came gives 0 too).
            defer { close(fd) }
            var hungUp = false
            return try spooled(in: spool, path: path, limit: limit) { buffer in
                while true {
                    let count = read(fd, buffer.baseAddress, buffer.count)
                    if count > 0 || (count == 0 && hungUp) { return count }
                    if count < 0 && errno != EAGAIN && errno != EINTR { throw FileSystem.fail("read", path) }
                    var waiting = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    if poll(&waiting, 1, -1) < 0 && errno != EINTR { throw FileSystem.fail("read", path) }
                    if waiting.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { hungUp = true }
                }
            }
        }
    }

    /// `spooled` of what the stream `fd` holds (standard input, a pipe) to its end.
    public static func spooled(in spool: FileTree, path: String, limit: Int = .max, from fd: Int32) throws -> MappedFile {
        try spooled(in: spool, path: path, limit: limit) { buffer in
            while true {
                let count = read(fd, buffer.baseAddress, buffer.count)
                if count >= 0 { return count }
                if errno != EINTR { throw FileSystem.fail("read", path) }
            }
        }
    }

    /// The bytes `next` gives (it fills a buffer and returns how many it put there, 0 at the end),
    /// written to a file in `spool` that is unlinked at once, then mapped. More than `limit` bytes
    /// are refused (`FileSystemError.tooLarge`) without reading the rest.
    public static func spooled(
        in spool: FileTree, path: String, limit: Int = .max, _ next: (UnsafeMutableRawBufferPointer) throws -> Int
    ) throws -> MappedFile {
        let spoolPath = spool.root + "/" + FileSystem.temporaryName()
        guard let fd = try spool.openFile(spoolPath, flags: O_RDWR | O_CREAT | O_EXCL) else {
            throw FileSystemError(path: spoolPath, code: ENOENT, operation: "create")
        }
        do {
            _ = try spool.remove(spoolPath)
            var size = 0
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = try chunk.withUnsafeMutableBytes { try next($0) }
                if count == 0 { break }
                size += count
                guard size <= limit else { throw FileSystemError(path: path, code: FileSystemError.tooLarge, operation: "read") }
                try chunk.withUnsafeBytes {
                    try FileSystem.writeAll(fd: fd, UnsafeRawBufferPointer(rebasing: $0[..<count]), path: spoolPath)
                }
            }
            return try mapped(fd, count: size, path: spoolPath)
        } catch {
            close(fd)
            throw error
        }
    }

    /// The open regular file `fd` (taken over) mapped whole, to be read once from start to end.
    private static func mapped(_ fd: Int32, count: Int, path: String) throws -> MappedFile {
        guard count > 0 else { return MappedFile(UnsafeBufferPointer(start: nil, count: 0), keeping: fd) }
        guard let mapped = map(fd: fd, count: count, keeping: true) else {
            let failure = FileSystem.fail("map", path)
            close(fd)
            throw failure
        }
        // Read once from start to end: read ahead, and the pages need not be kept.
        _ = madvise(UnsafeMutableRawPointer(mutating: mapped.bytes.baseAddress!), mapped.bytes.count, MADV_SEQUENTIAL)
        return mapped
    }

    /// The first `count` bytes of the open file `fd` mapped (the descriptor may be closed after); nil
    /// when that cannot be mapped.
    public static func map(fd: Int32, count: Int) -> MappedFile? { map(fd: fd, count: count, keeping: false) }

    private static func map(fd: Int32, count: Int, keeping: Bool) -> MappedFile? {
        readingLostPagesAsZeros()
        guard count > 0, let base = mmap(nil, count, PROT_READ, MAP_PRIVATE, fd, 0), base != UnsafeMutableRawPointer(bitPattern: -1)
        else { return nil }
        return MappedFile(UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: count), keeping: keeping ? fd : nil)
    }

    /// Whether the file is now shorter than when it was mapped: its reading may have met zeros
    /// where the lost part was. False for a mapping whose file was not kept open.
    public var isCutShort: Bool {
        guard let fd else { return false }
        var info = stat()
        return fstat(fd, &info) == 0 && Int(info.st_size) < bytes.count
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

    deinit {
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
        if let fd { close(fd) }
    }
}

/// A page of a mapping whose file was cut short faults with SIGBUS (BUS_ADRERR), which would end
/// the process; the handler maps a page of zeros in its place and the reading goes on. Installed
/// once, before the first mapping; any other SIGBUS (a hardware error) still ends the process.
private func readingLostPagesAsZeros() { _ = lostPageHandler }

private let lostPageHandler: Void = {
    var action = sigaction()
    action.__sigaction_handler.sa_sigaction = { _, info, _ in
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        if let info, info.pointee.si_code == 2 /* BUS_ADRERR */, let address = info.pointee._sifields._sigfault.si_addr,
            mmap(
                UnsafeMutableRawPointer(bitPattern: Int(bitPattern: address) / page * page), page, PROT_READ,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED
        {
            return
        }
        // Not a lost page: the default action, when the faulting access runs again.
        signal(SIGBUS, SIG_DFL)
    }
    action.sa_flags = SA_SIGINFO
    sigemptyset(&action.sa_mask)
    sigaction(SIGBUS, &action, nil)
}()

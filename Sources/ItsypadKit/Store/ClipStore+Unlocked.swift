#if canImport(Glibc)
import Glibc
#endif

extension ClipStore {
    /// The live local-only entries, read without the data directory's lock and
    /// without writing anything (`sync status` while a sync runs): opening a
    /// `ClipStore` may repair the log and the index, which only the lock holder may do.
    /// nil when the index does not describe the log as it is (it is being rebuilt or compacted).
    static func localOnlyEntriesWithoutLock(directory: String) throws -> [ClipEntry]? {
        let logPath = directory + "/log"
        let fd = open(logPath, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return [] }
            throw FileSystem.fail("read", logPath)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileSystem.fail("read", logPath) }
        guard let index = try ClipIndexFile.open(path: directory + "/index"),
              index.header.logInode == UInt64(info.st_ino), index.header.logSize <= UInt64(info.st_size) else { return nil }
        return try index.allSlots().filter { $0.isLive && $0.flags & ClipSlot.localOnly != 0 }.map {
            try entry($0, logFD: fd, logPath: logPath)
        }
    }
}

import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

extension ClipStore {
    /// The live local-only entries, read without the data directory's lock and
    /// without writing anything (`sync status` while a sync runs): opening a
    /// `ClipStore` may repair the log and the index, which only the lock holder may do.
    /// nil when the index does not describe the log as it is (it is being rebuilt or compacted, or is damaged).
    package static func localOnlyEntriesWithoutLock(directory: String, tree: FileTree) throws -> [ClipEntry]? {
        let logPath = DataDirectoryLayout.clipLog(in: directory)
        guard let fd = try tree.openFile(logPath, flags: O_RDONLY) else { return [] }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileSystem.fail("read", logPath) }
        guard let index = try ClipIndexFile.open(path: DataDirectoryLayout.clipIndex(in: directory), in: tree),
            index.header.logInode == UInt64(info.st_ino), index.header.logSize <= UInt64(info.st_size)
        else { return nil }
        do {
            return try index.allSlots().filter { $0.isLive && $0.flags & ClipSlot.localOnly != 0 }.map {
                try entry($0, logFD: fd, logPath: logPath)
            }
        } catch is ClipIndexFile.Damaged {
            return nil
        }
    }
}

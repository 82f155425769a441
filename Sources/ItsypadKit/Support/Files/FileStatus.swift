#if canImport(Glibc)
import Glibc
#endif

/// What `lstat` says about a path (a symlink is reported as itself, never followed).
public struct FileStatus: Equatable, Sendable {
    public enum Kind: Sendable { case regular, directory, other }

    public let size: Int
    /// Permission bits only (e.g. 0o600).
    public let permissions: UInt32
    public let kind: Kind
    /// The owner's user id.
    public let owner: UInt32
    /// Saturated into Int64 (a file system may report any time).
    public let modifiedMilliseconds: Int64
    /// The inode and exact modification time: together they change whenever a directory's entries do.
    public let inode: UInt64
    public let modifiedSeconds: Int64
    public let modifiedNanoseconds: Int64

    public var isDirectory: Bool { kind == .directory }
    public var isRegular: Bool { kind == .regular }

    /// Whether a user other than this process's (and root) could change it: they own it, or group or
    /// others may write it. What ssh refuses in ~/.ssh.
    public var othersCanChange: Bool {
        (owner != geteuid() && owner != 0) || permissions & 0o022 != 0
    }

    init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        default: kind = .other
        }
        size = Int(info.st_size)
        permissions = UInt32(info.st_mode) & 0o7777
        owner = UInt32(info.st_uid)
        let seconds = Int64(info.st_mtim.tv_sec)
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        let (milliseconds, carry) = scaled.addingReportingOverflow(Int64(info.st_mtim.tv_nsec) / 1_000_000)
        modifiedMilliseconds = overflow || carry ? (seconds < 0 ? .min : .max) : milliseconds
        inode = UInt64(info.st_ino)
        modifiedSeconds = seconds
        modifiedNanoseconds = Int64(info.st_mtim.tv_nsec)
    }
}

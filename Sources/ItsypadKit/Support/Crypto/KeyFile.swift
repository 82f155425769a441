#if canImport(Glibc)
import Glibc
#endif

/// A sync key in a file (where the data directory keeps them is `DataDirectoryLayout`'s): 0600,
/// a header line and the key in its recovery form (so the file carries its own typo checks).
/// Written atomically; read strictly — a symlink, a file others may read, another owner or any
/// deviation from the exact format is refused rather than guessed at.
public enum KeyFile {
    static let header = "itsypad sync key v1"
    /// Far more than the format needs; nothing larger is read.
    private static let maxBytes = 256

    /// Replaces (or creates) `path` with `key`; a crash leaves the old or the new file.
    public static func write(_ key: SecretBytes, to path: String) throws {
        var bytes = Array((header + "\n" + RecoveryKey.format(key) + "\n").utf8)
        defer { SecureMemory.zero(&bytes) }
        try FileSystem.writeAtomically(path, bytes, mode: 0o600)
    }

    /// Makes the key in `next` the one in `path` (in the same directory), in one atomic rename.
    public static func promote(_ next: String, to path: String) throws {
        let directory = FileSystem.directoryName(path)
        let tree = FileTree(root: directory)
        try tree.rename(next, to: path)
        try tree.syncDirectory(directory)
    }

    /// Removes the key file at `path`, if there is one.
    public static func remove(_ path: String) throws {
        try FileTree(root: FileSystem.directoryName(path)).remove(path)
    }

    /// The key in `path`, or nil if there is no such file.
    public static func read(_ path: String) throws -> SecretBytes? {
        // O_NOFOLLOW: a symlink is refused, never followed; O_NONBLOCK: a FIFO cannot hang the open.
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw KeyFileError.notARegularFile(path) }
            throw FileSystem.fail("read", path)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileSystem.fail("read", path) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw KeyFileError.notARegularFile(path) }
        guard info.st_uid == geteuid() else { throw KeyFileError.wrongOwner(path) }
        guard info.st_mode & 0o077 == 0 else { throw KeyFileError.insecurePermissions(path, mode: UInt32(info.st_mode) & 0o777) }
        guard Int(info.st_size) <= maxBytes else { throw KeyFileError.malformed(path, "larger than a key file") }

        var bytes = try FileSystem.read(fd: fd, offset: 0, count: Int(info.st_size), path: path)
        defer { SecureMemory.zero(&bytes) }
        let prefix = Array((header + "\n").utf8)
        guard bytes.starts(with: prefix), bytes.last == UInt8(ascii: "\n") else {
            throw KeyFileError.malformed(path, "not an itsypad key file")
        }
        let key: SecretBytes
        do {
            key = try RecoveryKey.parse(String(decoding: bytes[prefix.count..<(bytes.count - 1)], as: UTF8.self))
        } catch {
            throw KeyFileError.malformed(path, error.description)
        }
        // Only the exact form this program writes: nothing extra hides in the file.
        var canonical = Array((header + "\n" + RecoveryKey.format(key) + "\n").utf8)
        defer { SecureMemory.zero(&canonical) }
        guard ConstantTime.equal(canonical, bytes) else { throw KeyFileError.malformed(path, "not in the form itsypad writes") }
        return key
    }
}

/// Why a key file was refused.
public enum KeyFileError: Error, Equatable, CustomStringConvertible {
    case notARegularFile(String)
    case wrongOwner(String)
    case insecurePermissions(String, mode: UInt32)
    case malformed(String, String)

    public var description: String {
        switch self {
        case .notARegularFile(let path): "\(path) is not a regular file (a symlink or special file is never read as a key)"
        case .wrongOwner(let path): "\(path) belongs to another user; a key file must be yours"
        case .insecurePermissions(let path, let mode):
            "\(path) is readable by others (mode \(String(mode, radix: 8))); run chmod 600 on it, and consider the key exposed"
        case .malformed(let path, let reason): "\(path) is not a valid key file: \(reason)"
        }
    }
}

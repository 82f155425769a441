#if canImport(Glibc)
import Glibc
#endif

/// A failure of the file system, with the path and the system's reason.
public struct FileSystemError: Error, CustomStringConvertible, Equatable {
    public let path: String
    /// An errno value, or one of the negative codes below for what itsypad itself refuses.
    public let code: Int32
    public let operation: String
    /// Extra detail for the refusals (e.g. the sizes of a file that is too large).
    public var detail: String?
    /// Set on a failure to make durable a change made already (a directory's fsync after a rename or
    /// an unlink): whoever reports it must not say that nothing was changed.
    public var changeMade = false

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

    /// Runs `body`, the step that makes durable a change made already, marking its failure `changeMade`
    /// (unless `marking` is false: the step followed a preparation, not the change).
    public static func afterChange<T>(if marking: Bool = true, _ body: () throws -> T) throws -> T {
        do { return try body() } catch var error as FileSystemError {
            error.changeMade = marking
            throw error
        }
    }

    /// A full disk or quota: reported as such, never as corruption.
    public var isDiskFull: Bool { code == ENOSPC || code == EDQUOT || code == EFBIG }

    /// The file is not what the format says belongs there: a symlink, a FIFO, a directory in place
    /// of a file, a name or size out of bounds. Retrying cannot help; the file must be fixed.
    public var isMalformed: Bool {
        [
            FileSystemError.notRegularFile, FileSystemError.tooLarge, FileSystemError.unsafeName,
            ELOOP, EISDIR, ENOTDIR, ENAMETOOLONG,
        ].contains(code)
    }
}

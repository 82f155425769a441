/// The failures a command reports, each with its exit status.
public enum ItsypadError: Error, Equatable {
    /// Wrong arguments: exit 64, with usage for `command` (its path, e.g. ["clip", "add"]).
    case usage(String, command: [String])
    /// The command failed: exit 1.
    case failure(String)
    /// Try again later (lock busy, backend unreachable): exit 75.
    case temporary(String)

    public var exitCode: Int32 {
        switch self {
        case .usage: return ExitCode.usage
        case .failure: return ExitCode.failure
        case .temporary: return ExitCode.temporary
        }
    }

    public var message: String {
        switch self {
        case .usage(let message, _), .failure(let message), .temporary(let message): return message
        }
    }

    /// Any error a command throws, as the user should see it.
    package static func wrapping(_ error: any Error) -> ItsypadError {
        switch error {
        case let error as ItsypadError: return error
        case let error as FileSystemError: return .from(error)
        default: return .failure("\(error)")
        }
    }

    /// Wraps a file system error as the user should see it.
    package static func from(_ error: FileSystemError) -> ItsypadError {
        if error.changeMade { return .failure("\(error) (the change was made, but may not survive a power failure)") }
        if error.isDiskFull { return .failure("\(error) (nothing was changed; free some space and retry)") }
        return .failure(error.description)
    }

    package static func corrupt(_ path: String, _ reason: String) -> ItsypadError {
        .failure("\(path) is corrupt (\(reason)); itsypad left it untouched: move it aside or restore it from a backup")
    }
}

/// sysexits-style exit statuses.
public enum ExitCode {
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 64
    public static let temporary: Int32 = 75
    public static let interrupted: Int32 = 130
}

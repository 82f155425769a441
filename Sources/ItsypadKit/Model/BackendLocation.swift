import ItsypadSupport

/// Where a device's sync backend is, as the `sync.backend` setting names it: a directory path,
/// or `git:` and a URL git accepts (a clone in the data directory is then the directory the
/// engine works on; see `GitRemote`).
public enum BackendLocation: Equatable, Sendable, CustomStringConvertible {
    case directory(String)
    case git(url: String)

    static let gitPrefix = "git:"

    /// Parses a setting value; nil for one that names nothing (empty, or `git:` alone).
    /// Relative paths are made absolute, in a local git URL too, so that the value means the
    /// same from any working directory.
    public init?(_ value: String) {
        if value.hasPrefix(BackendLocation.gitPrefix) {
            let url = String(value.dropFirst(BackendLocation.gitPrefix.count))
            guard !url.isEmpty else { return nil }
            self = .git(url: BackendLocation.isLocalPath(url) ? FileSystem.absolute(url) : url)
        } else {
            guard !value.isEmpty else { return nil }
            self = .directory(FileSystem.absolute(value))
        }
    }

    /// Whether the backend is kept in a git remote.
    public var isGit: Bool {
        if case .git = self { true } else { false }
    }

    /// The setting's value.
    public var description: String {
        switch self {
        case .directory(let path): path
        case .git(let url): BackendLocation.gitPrefix + url
        }
    }

    /// How git itself tells a local path from a URL: `scheme://…` is a URL, and `host:path` is
    /// ssh unless a slash comes before the colon.
    package static func isLocalPath(_ url: String) -> Bool {
        if url.contains("://") { return false }
        guard let colon = url.firstIndex(of: ":") else { return true }
        return url[..<colon].contains("/")
    }
}

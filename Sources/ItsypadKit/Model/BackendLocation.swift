import ItsypadSupport

/// Where a device's sync backend is, as the `sync.backend` setting names it: a directory path,
/// or a remote written `KIND:ADDRESS` (`git:URL`), whose mirror in the data directory is then the
/// directory the engine works on. Which kinds exist is the Backend layer's registration
/// (`RemoteKinds`): here a value is only told apart by its form. A directory whose relative path
/// holds ':' is written with a slash before the colon (`./a:b`).
public enum BackendLocation: Equatable, Sendable, CustomStringConvertible {
    case directory(String)
    /// `scheme:address`, as a remote kind of that scheme takes it.
    case remote(scheme: String, address: String)

    /// A git remote at `url` (a URL git accepts).
    public static func git(url: String) -> BackendLocation { .remote(scheme: "git", address: url) }

    /// Parses a setting value; nil for one that names nothing (empty, or a scheme alone).
    /// Relative paths are made absolute, in a remote's address too (by git's rule, see
    /// `isLocalPath`), so that the value means the same from any working directory.
    public init?(_ value: String) {
        if let colon = BackendLocation.schemeEnd(value) {
            let address = String(value[value.index(after: colon)...])
            guard !address.isEmpty else { return nil }
            self = .remote(
                scheme: String(value[..<colon]), address: BackendLocation.isLocalPath(address) ? FileSystem.absolute(address) : address)
        } else {
            guard !value.isEmpty else { return nil }
            self = .directory(FileSystem.absolute(value))
        }
    }

    /// The colon ending a scheme that `value` starts with: a lowercase letter, then lowercase
    /// letters, digits, '+', '-' or '.' (as in a URL). A path's first component that looks so is
    /// a scheme: such a directory is written `./name:…`.
    private static func schemeEnd(_ value: String) -> String.Index? {
        guard let colon = value.firstIndex(of: ":"), let first = value.unicodeScalars.first, ("a"..."z").contains(first) else { return nil }
        let allowed = value[..<colon].unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0)
        }
        return allowed ? colon : nil
    }

    /// The remote kind's scheme; nil for a directory.
    public var scheme: String? {
        if case .remote(let scheme, _) = self { scheme } else { nil }
    }

    /// The setting's value.
    public var description: String {
        switch self {
        case .directory(let path): path
        case .remote(let scheme, let address): scheme + ":" + address
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

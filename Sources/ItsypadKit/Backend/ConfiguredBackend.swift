import ItsypadModel

/// The backend a `sync.backend` value names, made ready for one command: the one place that
/// turns the setting into a backend. The engine always works on a backend directory: the
/// backend itself, or the working tree of the git remote's clone.
public struct ConfiguredBackend {
    public let location: BackendLocation
    /// The backend directory the engine reads and writes.
    public let path: String
    /// The git remote behind `path`, when the location is one.
    public let remote: GitRemote?

    /// - Parameters:
    ///   - gitClone: Where a git remote's clone is kept (in the data directory).
    ///   - environment: For git (its PATH, ssh agent, credentials); `ITSYPAD_GIT_TIMEOUT` sets its time-out in seconds.
    public init(_ location: BackendLocation, gitClone: String, environment: [String: String]) {
        self.location = location
        switch location {
        case .directory(let path):
            self.path = path
            remote = nil
        case .git(let url):
            let timeout = environment["ITSYPAD_GIT_TIMEOUT"].flatMap(Double.init).flatMap { $0 > 0 ? $0 : nil } ?? 120
            let remote = GitRemote(url: url, clone: gitClone, environment: environment, timeout: timeout)
            path = remote.workingTree
            self.remote = remote
        }
    }
}

import ItsypadModel
import ItsypadSupport

/// The backend a `sync.backend` value names, made ready for one command: the one place that
/// turns the setting into a backend. The engine always works on a backend directory: the
/// backend itself, or the mirror of a remote.
public struct ConfiguredBackend {
    public let location: BackendLocation
    /// The backend directory the engine reads and writes.
    public let path: String
    /// The remote behind `path`, when the location is one.
    public let remote: (any SyncRemote)?

    /// Fails (exit 1) for a remote of a kind this version does not know (a newer one's setting, say).
    /// - Parameters:
    ///   - mirrors: Where remotes keep their mirrors (in the data directory), each kind in a folder named by its scheme.
    ///   - environment: For the remote's programs (PATH, ssh agent, credentials, their time-outs).
    public init(_ location: BackendLocation, mirrors: String, environment: [String: String]) throws {
        self.location = location
        switch location {
        case .directory(let path):
            self.path = path
            remote = nil
        case .remote(let scheme, let address):
            guard let kind = RemoteKinds.kind(scheme) else {
                throw ItsypadError.failure(RemoteKinds.problem(with: location) ?? "")
            }
            let remote = kind.make(address, mirrors + "/" + scheme, environment)
            path = remote.mirror
            self.remote = remote
        }
    }
}

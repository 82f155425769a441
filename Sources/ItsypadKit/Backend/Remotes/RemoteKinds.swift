import ItsypadModel
import ItsypadSupport

/// A kind of remote: the scheme that names it in a backend location, and how to make one.
public struct RemoteKind: Sendable {
    /// What a location of this kind starts with, before the colon: `git`.
    public let scheme: String
    /// How a location of this kind is written, for help and errors: `git:URL`.
    public let syntax: String
    /// The remote at `address` (the location after `scheme:`, a relative local path made
    /// absolute), keeping its mirror and anything else under `directory`, using `environment`
    /// (PATH, credentials, the kind's own settings).
    let make: @Sendable (_ address: String, _ directory: String, _ environment: [String: String]) -> any SyncRemote

    public init(
        scheme: String, syntax: String,
        make: @escaping @Sendable (_ address: String, _ directory: String, _ environment: [String: String]) -> any SyncRemote
    ) {
        self.scheme = scheme
        self.syntax = syntax
        self.make = make
    }
}

/// The one registration of remote kinds: a new remote is its folder under `Remotes/` and one line here.
public enum RemoteKinds {
    public static let all: [RemoteKind] = [
        GitRemote.kind,
        RcloneRemote.kind,
    ]

    public static func kind(_ scheme: String) -> RemoteKind? {
        all.first { $0.scheme == scheme }
    }

    /// The number a remote's setting `name` holds in `environment` when `accepted` takes it; nil
    /// when it is unset or holds anything else, so that the remote's default applies.
    static func number(_ name: String, in environment: [String: String], accepted: (Double) -> Bool) -> Double? {
        environment[name].flatMap(Double.init).flatMap { accepted($0) ? $0 : nil }
    }

    /// Why `location` names no backend this version can sync with (its scheme is no known
    /// kind's), naming the kinds known and how a directory with ':' in its path is written; nil
    /// when it names one. `written` is the value as given, before relative paths were made absolute.
    public static func problem(with location: BackendLocation, as written: String? = nil) -> String? {
        guard let scheme = location.scheme, kind(scheme) == nil else { return nil }
        let value = written ?? location.description
        let known = ["a directory path"] + all.map(\.syntax)
        return "'\(scheme):' in '\(value)' is no kind of backend itsypad knows: it syncs with "
            + known.dropLast().joined(separator: ", ") + " or " + known.last!
            + ". A directory whose path holds ':' is written with a slash before it, as ./\(value)"
    }
}

import ItsypadModel
import ItsypadSupport

/// Git as a `SyncRemote`: the clone's working tree is the mirror, a commit and a push send, and
/// compaction and key rotation rewrite the branch's history (see `GitRemote`).
extension GitRemote: SyncRemote {
    /// `git:URL`; `ITSYPAD_GIT_TIMEOUT` sets the seconds one git command may take (120).
    static let kind = RemoteKind(scheme: "git", syntax: "git:URL") { url, directory, environment in
        let timeout = RemoteKinds.number("ITSYPAD_GIT_TIMEOUT", in: environment) { $0 > 0 } ?? 120
        return GitRemote(url: url, clone: directory, environment: environment, timeout: timeout)
    }

    public var location: BackendLocation { .git(url: url) }

    public var mirror: String { workingTree }

    /// Git does not tell whether the fetch brought anything: `.changed` unless replaced.
    public func fetch(as device: String) throws -> RemoteFetch {
        try update() == .replaced ? .replaced : .changed
    }

    public func checkpoint(message: String) throws {
        try commitChanges(message: message)
    }

    public func send(message: String) throws -> Bool {
        try publish(message: message)
    }

    public func sendCompaction(message: String) throws -> Bool {
        try publish(message: message, evenIfUnchanged: true) && squashHistoryBeforePreviousCompaction()
    }

    public func sendReplacement(from replacement: String, message: String) throws -> Bool {
        try pushReplacement(from: replacement, message: message) != nil
    }

    /// The pushed replacement is the remote branch's tip as the push left it.
    public func adoptReplacement(from replacement: String) throws {
        try checkOut(GitRemote.remoteBranch)
    }

    public var status: RemoteStatus {
        var status = RemoteStatusFile.read(statusFile).status
        status.unsent = unpushedCommits()
        return status
    }
}

import ItsypadModel
import ItsypadSupport

/// A sync backend kept somewhere else (a git repository, an rclone remote), reached through a
/// mirror of it in the data directory: a backend directory on which the engine runs exactly as
/// on a shared folder, kept in step with the remote by the sync session.
///
/// A sync runs `fetch`, the engine on `mirror`, then `send`; when `send` is refused because the
/// remote moved meanwhile, the session fetches, runs the engine and sends again, a bounded number
/// of rounds. The session holds the engine's sync lock throughout (only this device's sync writes
/// the mirror, so anything half-done found there was left by a killed sync) and releases the data
/// directory's lock around every call that may use the network.
///
/// Failures are thrown as `ItsypadError`: `.temporary` (exit 75) for what retrying can fix (the
/// network, the host, a time-out, a lock held on the remote), `.failure` (exit 1) for the rest
/// (refused credentials, no such remote, a refused transport), with a message that names the
/// location and says that local changes stay queued. Each is also kept for `status`.
///
/// Everything a remote writes in the mirror and beside it lives under the directory it was made
/// with; nothing it reads from the remote is trusted (no link is followed, sizes are bounded).
public protocol SyncRemote {
    /// Where the remote is, as the `sync.backend` setting names it (for messages).
    var location: BackendLocation { get }

    /// The mirror: the backend directory the engine reads and writes.
    var mirror: String { get }

    /// Creates the mirror and whatever the remote keeps beside it, if missing, and brings their
    /// configuration up to date. Local only: no network.
    func prepare() throws

    /// Starts, without waiting for it, what the remote's network calls need (rclone's daemon), so
    /// that it gets ready while the sync does its local work. Never fails: a failure here is met
    /// again, and reported, by the first call that needs it.
    func warmUp()

    /// Brings in what other devices wrote: afterwards the mirror holds the remote's files plus
    /// what this device wrote and has not sent yet. Recovers from a killed sync first. Network.
    ///
    /// `device` is the device id this data directory syncs as. The session calls it through
    /// `checkedFetch`, which first tells a mirror copied with its data directory (every remote's
    /// rule, see `MirrorIdentity`). A remote that can tell more (rclone: the remote's copy of
    /// `device`'s journal is not what this mirror sent) throws `ReplicationError.deviceIDInUse`
    /// too, before changing anything, as a folder backend does.
    ///
    /// `.replaced` means the remote's backend is not the one the mirror followed (its history was
    /// rewritten, another device replaced it): the mirror now holds the remote's, and this device
    /// must send everything again. It is reported again by every fetch until
    /// `acknowledgeReplacement`, so a sync killed right after still sends everything.
    func fetch(as device: String) throws -> RemoteFetch

    /// Called once the engine has started over after `fetch` reported `.replaced`.
    func acknowledgeReplacement()

    /// Marks what the mirror holds now as a step of its own (`sync enable`), sent with the next
    /// `send`. Local only. A remote without history has nothing to do here.
    func checkpoint(message: String) throws

    /// Sends what this device wrote in the mirror since the last send: a remote without history
    /// uploads this device's new and changed files and removes from the remote this device's files
    /// the mirror no longer holds (every file has one writer, so no other device's file is touched).
    /// False when the remote refused because it moved meanwhile (nothing was lost: the session
    /// fetches and sends again); throws for other failures, what was not sent staying for the next
    /// sync. `message` describes the sync (git's commit message). Network.
    func send(message: String) throws -> Bool

    /// Sends a compaction the engine made in the mirror and lets the remote drop what it made
    /// obsolete. Git commits (even when no file changed: the commit marks the compaction point) and
    /// squashes the history older than the previous compaction point; a remote without history
    /// sends as `send` does, which removes this device's compacted files there. False when the
    /// remote moved meanwhile (the next sync sends it). Network.
    func sendCompaction(message: String) throws -> Bool

    /// Makes the backend directory `replacement` (a new zone, built outside the mirror) the whole
    /// of the remote's backend, for a key rotation, leaving the mirror as it is: the remote holds
    /// either the old backend or the new one as `fetchedZone` tells, never a zone.json of one with
    /// the other's files. A remote without history uploads the replacement's files, its zone.json
    /// last, and removes this device's files of the old zone. False when the remote moved meanwhile
    /// (nothing was sent); throws when it failed otherwise, after which it may or may not have
    /// reached the remote (`fetchedZone` decides). Network.
    func sendReplacement(from replacement: String, message: String) throws -> Bool

    /// Makes the mirror hold what `sendReplacement` sent, once this device uses the new key.
    func adoptReplacement(from replacement: String) throws

    /// The zone.json the remote holds now, fetched now, without touching the mirror; nil when the
    /// remote holds none (or nothing was ever prepared). Untrusted bytes, bounded in size. Network.
    func fetchedZone() throws -> [UInt8]?

    /// When the mirror last fetched and sent, and the last failure, for `sync status`.
    var status: RemoteStatus { get }
}

extension SyncRemote {
    /// Nothing to start: the remote's calls need nothing running beforehand.
    public func warmUp() {}
}

/// What `SyncRemote.fetch` found.
public enum RemoteFetch: Equatable, Sendable {
    /// Nothing new from other devices.
    case unchanged
    /// Other devices' changes are in the mirror now.
    case changed
    /// The remote's backend replaced the one the mirror followed: send everything again.
    case replaced
}

/// What `sync status` shows of a remote.
public struct RemoteStatus: Equatable, Sendable {
    public var lastFetch: Milliseconds?
    public var lastSend: Milliseconds?
    /// The last failure's message, cleared by the next fetch or send that succeeds.
    public var lastError: String?
    /// Steps made and not sent yet (git: commits not pushed); nil when the remote does not count them.
    public var unsent: Int?

    public init(lastFetch: Milliseconds? = nil, lastSend: Milliseconds? = nil, lastError: String? = nil, unsent: Int? = nil) {
        self.lastFetch = lastFetch
        self.lastSend = lastSend
        self.lastError = lastError
        self.unsent = unsent
    }
}

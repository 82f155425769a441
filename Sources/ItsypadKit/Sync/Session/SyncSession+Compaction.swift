import ItsypadBackend
import ItsypadModel
import ItsypadStore
import ItsypadSupport

extension SyncSession {
    /// `sync compact`: tombstones over their lifetime purged and the journal compacted, on the
    /// backend alone (the data directory is closed first, so nothing else waits meanwhile), then
    /// sent through the remote, if any, which drops what the compaction made obsolete.
    /// Returns the compaction and the number of tombstones purged.
    public func compact() throws -> (report: CompactionReport, tombstones: Int) {
        let (backend, configured) = try opened()
        let device = store.deviceID
        // A remote's mirror is worked on by one sync at a time: compaction is one.
        let syncLock = try configured.remote.map { _ in try SyncEngine.takeSyncLock(store) }
        defer { withExtendedLifetime(syncLock) {} }
        store.close()
        do {
            _ = try configured.remote?.checkedFetch(as: device)
            let tombstones = try SyncEngine.purgeTombstones(
                in: backend, olderThan: SyncEngine.tombstoneLifetime, now: now(), device: device)
            let report = try backend.compact()
            if let remote = configured.remote {
                guard
                    try remote.sendCompaction(message: GitRemote.compactionSubject + "\(device): through change \(report.compactedThrough)")
                else {
                    throw ItsypadError.temporary(
                        "the \(configured.location.scheme ?? "") remote \(configured.location) changed while compacting; what was compacted is committed in the clone and goes with the next sync; the old history is squashed by the next compaction"
                    )
                }
            }
            return (report, tombstones)
        } catch ReplicationError.deviceIDInUse(let evidence) {
            throw ItsypadError.failure(
                "this data directory is a copy of another that syncs as device \(device) (\(evidence)); nothing was compacted: "
                    + "run 'itsypad sync' first, which gives it a new device id")
        } catch let error as BackendError {
            throw mapped(error, backend: configured.location)
        } catch let error as EncryptionError {
            throw ItsypadError.failure(error.message(naming: configured.location.description))
        }
    }

    /// The configured remote's scheme and status, for `sync status`; nil for a directory. Closes
    /// the data directory first when a remote is configured: git runs to count the commits not
    /// pushed, never holding its lock, and status reads nothing more from it.
    public func remoteStatus() -> (scheme: String, status: RemoteStatus)? {
        guard let remote = (try? configured())?.remote else { return nil }
        store.close()
        return (remote.location.scheme ?? "", remote.status)
    }
}

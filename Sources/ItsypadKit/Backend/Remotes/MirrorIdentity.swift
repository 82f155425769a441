import ItsypadModel
import ItsypadSupport

/// Which directory a remote's mirror is: its inode, recorded in `mirror-identity` beside it (in
/// the remote's folder of the data directory). A data directory copied elsewhere (`cp -a`, a
/// restored backup) brings its mirror as another directory, and with it the record of the
/// original's. Such a mirror that holds this device's folder is a copy of another data
/// directory's, which writes as the same device: it must not write as it too. Every remote gets
/// this check from the session, before each fetch (`SyncRemote.checkedFetch`).
struct MirrorIdentity {
    /// The remote's mirror: the backend directory the engine works on.
    let mirror: String

    var file: String { FileSystem.directoryName(mirror) + "/mirror-identity" }
    private var files: FileTree { FileTree.containing(mirror) }

    /// Throws `ReplicationError.deviceIDInUse` when the mirror holds `device`'s folder and the
    /// record names another directory; otherwise records this mirror (a new one, or one made by a
    /// version before the record, is this data directory's own). Changes nothing in the mirror.
    func check(as device: String) throws {
        guard let status = try files.status(mirror), status.kind == .directory else { return }
        let recorded = try recordedInode()
        if recorded == status.inode { return }
        let deviceFile = "devices/" + device + "/device.json"
        if let recorded, try files.status(mirror + "/" + deviceFile) != nil {
            throw ReplicationError.deviceIDInUse(
                "its mirror of the remote holds \(deviceFile) but is another directory than the one it synced with (inode \(status.inode), not \(recorded))"
            )
        }
        try files.writeAtomically(file, Array("\(status.inode)\n".utf8))
    }

    /// The inode recorded; nil when there is no record (or one that is not a number: as none).
    private func recordedInode() throws -> UInt64? {
        guard let bytes = try files.read(file, limit: 64) else { return nil }
        return UInt64(Text.trim(String(decoding: bytes, as: UTF8.self)))
    }
}

extension SyncRemote {
    /// `fetch`, after checking that the mirror is this data directory's own (`MirrorIdentity`):
    /// how the session brings in what other devices wrote, whatever the remote.
    public func checkedFetch(as device: String) throws -> RemoteFetch {
        try MirrorIdentity(mirror: mirror).check(as: device)
        return try fetch(as: device)
    }
}

import ItsypadBackend
import ItsypadModel
import ItsypadStore
import ItsypadSupport

/// Opens the sync backend in a directory as the engine uses it, for a data directory. A directory
/// without a backend gets one (encrypted when given a cipher); a backend of any other format is
/// refused before anything is written (`BackendError.unsupportedFormat`). Anything that runs the
/// engine on a directory (`sync`, `sync enable`, `sync compact`, `sync watch`, a git working copy)
/// opens it here.
public enum BackendOpener {
    /// The backend in `path` as `store`'s device sees it, encrypted with `cipher` when given (a
    /// zone it creates is then encrypted; one that is not, or is another key's, is refused before
    /// anything is written, as is an encrypted zone without a cipher). It writes as this data
    /// directory's device id, with its instance id (`sync/instance`, to tell a clone) and name.
    public static func open(
        _ path: String, for store: DataStore, cipher: RecordCipher? = nil, lockTimeout: Double,
        now: @escaping @Sendable () -> Milliseconds = { Time.now() }
    ) throws -> SyncBackend {
        try checkFormat(at: path)
        let name = try store.settings().string(.deviceName) ?? store.deviceID
        let replicated = FolderBackend(
            path: path, deviceID: store.deviceID, instance: try instance(of: store), deviceName: name,
            cipher: cipher, lockTimeout: lockTimeout, now: now)
        return ReplicatedSyncBackend(cipher.map { EncryptedReplicatedBackend(inner: replicated, cipher: $0) } ?? replicated)
    }

    /// Throws `.unsupportedFormat` when `path` holds a backend of another format: checked before
    /// this data directory writes anything for it (its instance id).
    static func checkFormat(at path: String) throws {
        let zoneFile = FolderLayout(root: path).zoneFile
        guard let bytes = try? FileTree.containing(zoneFile).read(zoneFile, limit: BackendLimits.maxSmallFileBytes) else { return }
        do {
            _ = try ZoneDocument.read(bytes, path: zoneFile)
        } catch let error as BackendError {
            if case .unsupportedFormat = error { throw error }
        }
    }

    /// The directories whose changes mean another device wrote to the backend in `path` (for
    /// `sync watch`): `zone.json`, the device folders, and every device's journal.
    package static func peerChangeSignals(of path: String) -> [FileEvents.Watched] {
        let layout = FolderLayout(root: path)
        return [
            FileEvents.Watched(layout.root, names: ["zone.json", "devices"], followsSymlink: true),
            FileEvents.Watched(layout.devicesDirectory),
        ]
            + ((try? layout.devices()) ?? []).map { FileEvents.Watched(layout.journalDirectory($0)) }
    }

    /// This data directory's random instance id, made on first use. A copy of the data directory
    /// keeps it, so a clone is told by its journal instead (see `FolderBackend.checkOwnership`).
    static func instance(of store: DataStore) throws -> String {
        let path = store.layout.instance
        if let bytes = try storeOperation({ try store.tree.read(path, limit: 128) }),
            case let id = String(decoding: bytes.trimmingASCIIWhitespace(), as: UTF8.self), VersionVector.isDeviceID(id)
        {
            return id
        }
        let id = Identifier.make()
        try storeOperation {
            _ = try store.tree.makeDirectory(store.layout.sync)
            try store.tree.writeAtomically(path, Array((id + "\n").utf8))
        }
        return id
    }
}

/// Opens the sync backend in a directory as the engine uses it, for a data directory: the format
/// the directory's `zone.json` names, and `newFormat` for a directory without one (what `sync
/// enable` then creates). Anything that runs the engine on a directory (`sync`, `sync enable`, a
/// git working copy) opens it here.
public enum BackendOpener {
    /// The format of new backends: format 2 works in a coherent shared folder and in a folder
    /// a replicating service keeps in step alike. Encrypted ones are format 3 in its layout.
    public static let newFormat = ReplicatedLayout.format

    /// The backend in `path` as `store`'s device sees it, encrypted with `cipher` when given (a
    /// zone it creates is then encrypted; one that is not, or is another key's, is refused before
    /// anything is written, as is an encrypted zone without a cipher). A format 2 backend (and an
    /// encrypted one in its layout) writes as this data directory's device id, with its instance
    /// id (`sync/instance`, to tell a clone) and name.
    public static func open(_ path: String, for store: DataStore, cipher: RecordCipher? = nil, lockTimeout: Double,
                            now: @escaping @Sendable () -> Milliseconds = { Time.now() }) throws -> SyncBackend {
        if try layout(at: path) == 1 {
            guard let cipher else { return DirectoryBackend(path: path, lockTimeout: lockTimeout, now: now) }
            return EncryptedBackend(inner: DirectoryBackend(path: path, lockTimeout: lockTimeout, now: now, newZoneKeyCheckValue: cipher.keyCheckValue),
                                    cipher: cipher)
        }
        let name = try store.settings().string(.deviceName) ?? store.deviceID
        let replicated = ReplicatedDirectoryBackend(path: path, deviceID: store.deviceID, instance: try instance(of: store), deviceName: name,
                                                    cipher: cipher, lockTimeout: lockTimeout, now: now)
        return ReplicatedSyncBackend(cipher.map { EncryptedReplicatedBackend(inner: replicated, cipher: $0) } ?? replicated)
    }

    /// The directories whose changes mean another device wrote to the backend in `path`
    /// (for `sync watch`): format 1's shared journal, or every device's journal in format 2.
    static func peerChangeSignals(of path: String) -> [FileEvents.Watched] {
        guard (try? layout(at: path)) == ReplicatedLayout.format else { return DirectoryBackend(path: path).peerChangeSignals }
        let layout = ReplicatedLayout(root: DirectoryBackend(path: path).path)
        return [FileEvents.Watched(layout.root, names: ["zone.json", "devices"], followsSymlink: true), FileEvents.Watched(layout.devicesDirectory)]
            + ((try? layout.devices()) ?? []).map { FileEvents.Watched(layout.journalDirectory($0)) }
    }

    /// The format whose files the backend in `path` uses (`zone.json`'s format, or an encrypted
    /// zone's layout); `newFormat` without a readable `zone.json` (a backend not created yet, or
    /// one whose `zone.json` the backend itself reports as unreadable).
    static func layout(at path: String) throws -> Int {
        let zoneFile = (path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path) + "/zone.json"
        guard let bytes = try? FileTree.containing(zoneFile).read(zoneFile, limit: BackendLimits.maxSmallFileBytes),
              let zone = try? ZoneDocument.read(bytes, path: zoneFile) else { return newFormat }
        return zone.layout
    }

    /// This data directory's random instance id, made on first use. A copy of the data directory
    /// keeps it, so a clone is told by its journal instead (see `ReplicatedDirectoryBackend.checkOwnership`).
    static func instance(of store: DataStore) throws -> String {
        let path = store.path + "/sync/instance"
        if let bytes = try storeOperation({ try store.tree.read(path, limit: 128) }),
           case let id = String(decoding: bytes.trimmingASCIIWhitespace(), as: UTF8.self), VersionVector.isDeviceID(id) {
            return id
        }
        let id = Identifier.make()
        try storeOperation {
            _ = try store.tree.makeDirectory(store.path + "/sync")
            try store.tree.writeAtomically(path, Array((id + "\n").utf8))
        }
        return id
    }
}

/// Opens the unencrypted sync backend in a directory as the engine uses it, for a data directory:
/// always format 2. A directory without a backend gets one in format 2 (what `sync enable` then
/// creates); a format 1 backend is converted to format 2 by the first device that opens it (see
/// `ReplicatedDirectoryBackend.convertFromFormat1`), so that devices still on format 1 then
/// refuse it as newer. Anything that runs the engine on a directory (`sync`, `sync enable`,
/// `sync compact`, `sync watch`, a git working copy) opens it here.
public enum BackendOpener {
    /// The format of new backends: format 2 works in a coherent shared folder and in a folder
    /// a replicating service keeps in step alike.
    public static let newFormat = ReplicatedLayout.format

    /// The backend in `path` as `store`'s device sees it. A format 2 backend writes as this data
    /// directory's device id, with its instance id (`sync/instance`, to tell a clone) and name.
    public static func open(_ path: String, for store: DataStore, lockTimeout: Double,
                            now: @escaping @Sendable () -> Milliseconds = { Time.now() }) throws -> SyncBackend {
        if opensOnlyFormat1(store) { return DirectoryBackend(path: path, lockTimeout: lockTimeout, now: now) }
        let name = try store.settings().string(.deviceName) ?? store.deviceID
        let replicated = ReplicatedDirectoryBackend(path: path, deviceID: store.deviceID, instance: try instance(of: store), deviceName: name,
                                                    lockTimeout: lockTimeout, now: now)
        return ReplicatedSyncBackend(replicated)
    }

    /// The directories whose changes mean another device wrote to the backend in `path`
    /// (for `sync watch`): format 1's shared journal, or every device's journal in format 2.
    static func peerChangeSignals(of path: String) -> [FileEvents.Watched] {
        guard (try? format(at: path)) == ReplicatedLayout.format else { return DirectoryBackend(path: path).peerChangeSignals }
        let layout = ReplicatedLayout(root: DirectoryBackend(path: path).path)
        return [FileEvents.Watched(layout.root, names: ["zone.json", "devices"], followsSymlink: true), FileEvents.Watched(layout.devicesDirectory)]
            + ((try? layout.devices()) ?? []).map { FileEvents.Watched(layout.journalDirectory($0)) }
    }

    /// In a data directory holding this file, a debug build opens every backend as the versions
    /// before format 2 did (format 1, refusing a newer format), instead of converting it: how the
    /// tests keep a format 1 backend for what they check of format 1's files, and play a device that
    /// has not been upgraded yet. Release builds never look for it.
    static let format1OnlyMarker = "sync/test-format-1-only"

    static func opensOnlyFormat1(_ store: DataStore) -> Bool {
        #if DEBUG
        return (try? store.tree.status(store.path + "/" + format1OnlyMarker)) != nil
        #else
        return false
        #endif
    }

    /// The format `zone.json` names; `newFormat` without a readable one (a backend not created
    /// yet, or one whose `zone.json` the backend itself reports as unreadable).
    static func format(at path: String) throws -> Int {
        let zoneFile = (path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path) + "/zone.json"
        guard let bytes = try? FileTree.containing(zoneFile).read(zoneFile, limit: BackendLimits.maxSmallFileBytes),
              let zone = try? ZoneDocument.parse(bytes, path: zoneFile, newestFormat: ReplicatedLayout.format) else { return newFormat }
        return zone.format
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

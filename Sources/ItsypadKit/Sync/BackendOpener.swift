import ItsypadBackend
import ItsypadModel
import ItsypadStore
import ItsypadSupport

/// Opens the sync backend in a directory as the engine uses it, for a data directory: in format
/// 2's rules. A directory without a backend gets one in format 4 (format 2 with its record files
/// fanned out: what `sync enable` then creates; format 3 in format 4's layout when encrypted);
/// one of format 2 (or 3 in its layout) keeps its files where they are; an unencrypted format 1
/// backend is converted to format 4 by the first device that opens it (see
/// `ReplicatedDirectoryBackend.convertFromFormat1`), so that devices still on format 1 then
/// refuse it as newer; an encrypted zone in format 1's layout is opened as it is. Anything that runs the engine on a directory (`sync`, `sync enable`,
/// `sync compact`, `sync watch`, a git working copy) opens it here.
public enum BackendOpener {
    /// The format of new backends: format 2's rules work in a coherent shared folder and in a
    /// folder a replicating service keeps in step alike; format 4 fans its record files out.
    /// Encrypted ones are format 3 in its layout.
    public static let newFormat = ReplicatedLayout.format

    /// The backend in `path` as `store`'s device sees it, encrypted with `cipher` when given (a
    /// zone it creates is then encrypted; one that is not, or is another key's, is refused before
    /// anything is written, as is an encrypted zone without a cipher). A format 2 or 4 backend (and
    /// an encrypted one in their layout) writes as this data directory's device id, with its instance
    /// id (`sync/instance`, to tell a clone) and name.
    public static func open(
        _ path: String, for store: DataStore, cipher: RecordCipher? = nil, lockTimeout: Double,
        now: @escaping @Sendable () -> Milliseconds = { Time.now() }
    ) throws -> SyncBackend {
        // An encrypted zone in format 1's layout stays as it is (a key rotation moves it to format 4's);
        // an unencrypted format 1 backend is converted by the replicated backend below.
        if isEncryptedInFormat1Layout(path) || opensOnlyFormat1(store) {
            let files = DirectoryBackend(path: path, lockTimeout: lockTimeout, now: now, newZoneKeyCheckValue: cipher?.keyCheckValue)
            return cipher.map { EncryptedBackend(inner: files, cipher: $0) } ?? files
        }
        let name = try store.settings().string(.deviceName) ?? store.deviceID
        let replicated = ReplicatedDirectoryBackend(
            path: path, deviceID: store.deviceID, instance: try instance(of: store), deviceName: name,
            cipher: cipher, lockTimeout: lockTimeout, now: now)
        return ReplicatedSyncBackend(cipher.map { EncryptedReplicatedBackend(inner: replicated, cipher: $0) } ?? replicated)
    }

    /// The directories whose changes mean another device wrote to the backend in `path`
    /// (for `sync watch`): format 1's shared journal, or every device's journal in formats 2 and 4.
    package static func peerChangeSignals(of path: String) -> [FileEvents.Watched] {
        guard let format = try? layout(at: path), ReplicatedLayout.formats.contains(format) else {
            return DirectoryBackend(path: path).peerChangeSignals
        }
        let layout = ReplicatedLayout(root: DirectoryBackend(path: path).path)
        return [
            FileEvents.Watched(layout.root, names: ["zone.json", "devices"], followsSymlink: true),
            FileEvents.Watched(layout.devicesDirectory),
        ]
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

    private static func isEncryptedInFormat1Layout(_ path: String) -> Bool {
        guard let zone = zone(at: path) else { return false }
        return zone.layout == 1 && zone.zone.isEncrypted
    }

    /// The format whose files the backend in `path` uses (`zone.json`'s format, or an encrypted
    /// zone's layout); `newFormat` without a readable `zone.json` (a backend not created yet, or
    /// one whose `zone.json` the backend itself reports as unreadable).
    static func layout(at path: String) throws -> Int {
        zone(at: path)?.layout ?? newFormat
    }

    private static func zone(at path: String) -> (zone: ZoneInfo, layout: Int)? {
        let zoneFile = (path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path) + "/zone.json"
        guard let bytes = try? FileTree.containing(zoneFile).read(zoneFile, limit: BackendLimits.maxSmallFileBytes),
            let zone = try? ZoneDocument.read(bytes, path: zoneFile)
        else { return nil }
        return zone
    }

    /// This data directory's random instance id, made on first use. A copy of the data directory
    /// keeps it, so a clone is told by its journal instead (see `ReplicatedDirectoryBackend.checkOwnership`).
    static func instance(of store: DataStore) throws -> String {
        let path = store.path + "/sync/instance"
        if let bytes = try storeOperation({ try store.tree.read(path, limit: 128) }),
            case let id = String(decoding: bytes.trimmingASCIIWhitespace(), as: UTF8.self), VersionVector.isDeviceID(id)
        {
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

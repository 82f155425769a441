import ItsypadBackend
import ItsypadModel
import ItsypadStore
import ItsypadSupport

/// What `sync enable` is asked about encryption.
public enum EnableEncryption: Equatable, Sendable {
    /// `--encrypt`: a new encrypted backend with a new key.
    case encrypt
    /// `--key -`: the existing encrypted backend, with the recovery key from standard input.
    case join
    /// `--no-encrypt`: a new backend is created unencrypted.
    case plain
    /// None of them: a remote's new backend is encrypted, a directory's is not
    /// (unless the device has a key), and an existing backend is joined as it is.
    case byDefault

    /// Creates or joins the backend in `path` (the directory `location` is, or its remote's
    /// mirror) as asked, `.join` with `joinKey`. Keys are checked before anything is
    /// written: a wrong or missing one leaves the data directory and the backend as they were.
    func prepareZone(
        at path: String, of location: BackendLocation, store: DataStore, joinKey: SecretBytes?, lockTimeout: Double
    ) throws {
        switch self {
        case .encrypt:
            try SyncKeys.createEncryptedZone(at: path, of: location, store: store, lockTimeout: lockTimeout)
        case .join:
            guard let joinKey else { throw ItsypadError.failure("no recovery key was given; nothing was changed") }
            try SyncKeys.joinEncryptedZone(at: path, of: location, key: joinKey, store: store, lockTimeout: lockTimeout)
        case .plain, .byDefault:
            if self == .byDefault { try SyncKeys.takeKeptKey(forZoneAt: path, store: store) }
            let hasKey = try SyncKeys.deviceKey(store) != nil
            if self == .plain && hasKey {
                throw ItsypadError.failure(
                    "this device has a sync key, so the backends it creates are encrypted; nothing was changed: run it without --no-encrypt"
                )
            }
            let zone = try SyncKeys.existingZone(at: path)
            if !hasKey && zone?.isEncrypted == true {
                throw ItsypadError.failure(
                    "\(location) holds an encrypted backend and this device has no sync key; nothing was changed: "
                        + "run 'itsypad sync key show' on a device that syncs, then 'itsypad sync enable \(location) --key -' here and type that recovery key"
                )
            }
            // A remote keeps what it was sent (git: every byte ever pushed), on a host the user may not control.
            if location.scheme != nil, self == .byDefault, !hasKey, zone == nil {
                try SyncKeys.createEncryptedZone(at: path, of: location, store: store, lockTimeout: lockTimeout)
            } else {
                _ = try SyncKeys.backend(at: path, store: store, lockTimeout: lockTimeout).createZoneIfNeeded()
            }
        }
    }
}

extension SyncSession {
    /// `sync enable`'s part before the setting changes: the remote's mirror made and brought up
    /// to date, or the directory checked (a missing parent is taken for a typo), then the zone
    /// created or joined as `encryption` asks (`.join` with `joinKey`). Keys are checked before
    /// anything is written: a wrong one leaves the data directory as it was. A copy of another
    /// device's data directory is recovered by `run`, which `sync enable` runs next: one way for
    /// every command.
    public func enable(_ location: BackendLocation, encryption: EnableEncryption, joinKey: SecretBytes?) throws {
        let configured = try self.configured(location)
        let path = configured.path
        guard let remote = configured.remote else {
            let parent = FileSystem.directoryName(path)
            guard FileSystem.isDirectory(parent) else {
                throw ItsypadError.failure(
                    "cannot create the sync backend \(location): \(parent) does not exist (a typo?); nothing was changed")
            }
            try SyncSession.refuseForeignFolder(path)
            return try prepareZone(at: path, of: location, encryption: encryption, joinKey: joinKey)
        }
        // The mirror is written by one sync at a time (the sync lock), and the remote's programs
        // (git) run with the data directory's lock released, as in every sync: a `clip add` never
        // waits for them. Only the keys and the zone are written holding it.
        let syncLock = try SyncEngine.takeSyncLock(store)
        defer { withExtendedLifetime(syncLock) {} }
        let device = store.deviceID
        try store.withLockReleased {
            try remote.prepare()
            do {
                // A rewritten remote is remembered by the mirror: the sync that follows then sends everything.
                _ = try remote.checkedFetch(as: device)
            } catch ReplicationError.deviceIDInUse {
                // Its mirror holds the zone; the sync that follows meets the same fetch, which
                // changed nothing, and gives it a new device id.
            }
        }
        try prepareZone(at: path, of: location, encryption: encryption, joinKey: joinKey)
        let message = "itsypad sync enable on " + commitName(deviceName: try store.settings().string(.deviceName) ?? device)
        try store.withLockReleased { try remote.checkpoint(message: message) }
    }

    /// Creates or joins the zone in `path` as `encryption` asks, its errors named by `location`.
    private func prepareZone(at path: String, of location: BackendLocation, encryption: EnableEncryption, joinKey: SecretBytes?) throws {
        do {
            try encryption.prepareZone(at: path, of: location, store: store, joinKey: joinKey, lockTimeout: lockTimeout)
        } catch let error as BackendError {
            throw mapped(error, backend: location)
        } catch let error as EncryptionError {
            throw ItsypadError.failure(error.message(naming: location.description))
        }
    }

    /// Refuses a folder that holds files of something else (`sync enable ~` by a slip): a backend
    /// is made in a missing or empty folder, or one holding only a backend's entries (a backend,
    /// or one whose creation was cut short) and those Syncthing keeps in a folder it shares.
    static func refuseForeignFolder(_ path: String) throws {
        guard FileSystem.isDirectory(path), !FileSystem.exists(path + "/zone.json") else { return }
        let backendEntries: Set = ["zone.json", "lock", "records", "assets", "journal", "devices", ".stfolder", ".stignore", ".stversions"]
        let foreign = try FileSystem.list(path, includingHidden: true).filter {
            !backendEntries.contains($0) && !$0.hasPrefix(FileSystem.temporaryPrefix) && !$0.hasPrefix(".syncthing.")
        }.sorted()
        guard let first = foreign.first else { return }
        throw ItsypadError.failure(
            "\(path) is not empty and holds no sync backend (it has \(Text.quoted(first))"
                + (foreign.count > 1 ? " and \(foreign.count - 1) more" : "") + "); nothing was changed: "
                + "name an empty or new folder, for example \(path)/itsypad")
    }
}

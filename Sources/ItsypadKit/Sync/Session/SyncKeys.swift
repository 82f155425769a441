import ItsypadBackend
import ItsypadModel
import ItsypadStore
import ItsypadSupport

/// The sync key of an end-to-end encrypted backend, kept in the data directory (see `KeyFile`),
/// never in the backend: which key opens the backend, keys kept for other backends, and a key
/// rotation that stopped midway.
package enum SyncKeys {
    /// Removes what a rotation that did not reach the backend left: the new key and the zone
    /// made for it. This device's next sync finds the old zone and sends everything again.
    static func discardRotation(of backend: BackendReplacement, store: DataStore) {
        try? KeyFile.remove(store.layout.nextSyncKey)
        try? backend.removeReplacementLeftovers()
    }

    /// Held for a whole rotation; nil when one is under way.
    static func rotationLock(_ store: DataStore) throws -> FileLock? {
        try storeOperation { try FileLock(path: store.layout.rotationLock, in: store.tree, mode: .exclusive, timeout: 0) }
    }

    /// Finishes or undoes a rotation that stopped before its end (the new key is still beside the
    /// current one), once no rotation is under way: if the backend's zone, moved into place if a
    /// crash stopped it midway, opens with the new key, that key becomes the device's; if it opens
    /// with the current one, the rotation never reached the backend and its leftovers go. When the
    /// backend cannot be read now, a later run decides. With a git remote, the zone that decides
    /// is the one on the remote's tip (fetched now): the rotation's push either reached it or not.
    static func resumeRotation(backendPath: String, remote: (any SyncRemote)?, store: DataStore, lockTimeout: Double) throws {
        guard FileSystem.exists(store.layout.nextSyncKey), let rotation = try rotationLock(store) else { return }
        try withExtendedLifetime(rotation) {
            guard let next = try KeyFile.read(store.layout.nextSyncKey) else { return }
            let directory = BackendReplacement(path: backendPath, lockTimeout: lockTimeout)
            let check: String?
            if let remote {
                let fetched = try? store.withLockReleased { try remote.fetchedZone() }
                check = fetched.flatMap { $0 }.flatMap { try? ZoneDocument.read($0, path: "zone.json") }?.keyCheckValue
            } else {
                _ = try? directory.finishInterruptedReplacement()
                check = (try? existingZone(at: backendPath))??.keyCheckValue
            }
            guard let check else { return }
            if try RecordCipher(masterKey: next).matches(keyCheckValue: check) {
                try KeyFile.promote(store.layout.nextSyncKey, to: store.layout.syncKey)
                try? directory.removeReplacementLeftovers()
            } else if let current = try deviceKey(store), try RecordCipher(masterKey: current).matches(keyCheckValue: check) {
                discardRotation(of: directory, store: store)
            }
        }
    }

    /// A new encrypted zone in `path`, with a fresh key kept in the data directory.
    static func createEncryptedZone(at path: String, of location: BackendLocation, store: DataStore, lockTimeout: Double) throws {
        if let zone = try existingZone(at: path) {
            throw ItsypadError.failure(
                "\(location) already holds "
                    + (zone.isEncrypted
                        ? "an encrypted backend: to join it, run 'itsypad sync key show' on a device that syncs, then 'itsypad sync enable \(location) --key -' here"
                        : "an unencrypted backend; nothing was changed: choose an empty "
                            + (location.scheme == "git" ? "repository" : "directory")
                            + " for an encrypted one"))
        }
        let key = try SecretBytes.random(count: RecordCipher.masterKeyByteCount)
        let cipher = try RecordCipher(masterKey: key)
        // The key first: a zone without its key on any device could never be opened.
        try useKey(key, store: store)
        _ = try BackendOpener.open(path, for: store, cipher: cipher, lockTimeout: lockTimeout).createZoneIfNeeded()
    }

    /// Keeps `key` for the existing encrypted zone in `path` once its key check value matches.
    static func joinEncryptedZone(
        at path: String, of location: BackendLocation, key: SecretBytes, store: DataStore, lockTimeout: Double
    ) throws {
        guard let zone = try existingZone(at: path) else {
            throw ItsypadError.failure(
                "\(location) holds no backend yet; nothing was changed: create one with 'itsypad sync enable \(location) --encrypt'")
        }
        guard zone.isEncrypted else {
            throw ItsypadError.failure(
                "\(location) holds an unencrypted backend, which needs no key; nothing was changed: run 'itsypad sync enable \(location)'")
        }
        let cipher = try RecordCipher(masterKey: key)
        do {
            _ = try BackendOpener.open(path, for: store, cipher: cipher, lockTimeout: lockTimeout).zone()
        } catch let error as EncryptionError {
            throw ItsypadError.failure(
                error == .wrongKey
                    ? "that recovery key does not open \(location) (nothing was changed): check it against 'itsypad sync key show' on a device that syncs"
                    : error.description)
        }
        try useKey(key, store: store)
    }

    /// Makes `key` this device's sync key, first keeping the key it replaces under `sync-keys/`,
    /// by its key check value: enabling another encrypted backend never discards a key, and
    /// enabling a backend again takes its key back.
    static func useKey(_ key: SecretBytes, store: DataStore) throws {
        let check = try RecordCipher(masterKey: key).keyCheckValue
        if let current = try deviceKey(store) {
            let currentCheck = try RecordCipher(masterKey: current).keyCheckValue
            if currentCheck == check { return }
            try FileSystem.makeDirectory(store.layout.keptSyncKeys)
            try KeyFile.write(current, to: store.layout.keptSyncKey(checkValue: currentCheck))
        }
        try KeyFile.write(key, to: store.layout.syncKey)
        _ = try? FileTree(root: store.path).remove(store.layout.keptSyncKey(checkValue: check))
    }

    /// Makes the key kept here for the encrypted zone in `path` this device's key, if one is: the key
    /// follows the backend however it was chosen (`sync enable`, or `settings set sync.backend`).
    static func takeKeptKey(forZoneAt path: String, store: DataStore) throws {
        guard let check = (try? existingZone(at: path))??.keyCheckValue, let kept = try keptKey(for: check, store) else { return }
        try useKey(kept, store: store)
    }

    /// The key kept for the zone whose key check value (32 hex digits, as `ZoneDocument` checked) is `check`.
    static func keptKey(for check: String, _ store: DataStore) throws -> SecretBytes? {
        do {
            return try KeyFile.read(store.layout.keptSyncKey(checkValue: check))
        } catch let error as KeyFileError {
            throw ItsypadError.failure(error.description)
        }
    }

    /// The zone the backend directory `path` holds, read without joining it; nil when it holds none.
    static func existingZone(at path: String) throws -> ZoneInfo? {
        let zoneFile = FolderLayout(root: path).zoneFile
        guard let bytes = try FileTree.containing(zoneFile).read(zoneFile, limit: BackendLimits.maxSmallFileBytes) else { return nil }
        return try ZoneDocument.read(bytes, path: zoneFile)
    }

    /// The backend in `path`: encrypted with this device's key when it has one (a zone it
    /// creates is then encrypted too); a device without a key is refused an encrypted zone.
    static func backend(at path: String, remote: (any SyncRemote)? = nil, store: DataStore, lockTimeout: Double) throws -> SyncBackend {
        try resumeRotation(backendPath: path, remote: remote, store: store, lockTimeout: lockTimeout)
        try takeKeptKey(forZoneAt: path, store: store)
        let cipher = try deviceKey(store).map { try RecordCipher(masterKey: $0) }
        if cipher == nil, (try? existingZone(at: path))??.isEncrypted == true {
            throw ItsypadError.failure(EncryptionError.missingKey.description)
        }
        return try BackendOpener.open(path, for: store, cipher: cipher, lockTimeout: lockTimeout)
    }

    package static func deviceKey(_ store: DataStore) throws -> SecretBytes? {
        do {
            return try KeyFile.read(store.layout.syncKey)
        } catch let error as KeyFileError {
            throw ItsypadError.failure(error.description)
        }
    }
}

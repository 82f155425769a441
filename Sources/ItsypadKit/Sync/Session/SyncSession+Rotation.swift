import ItsypadBackend
import ItsypadModel
import ItsypadStore
import ItsypadSupport

extension SyncSession {
    /// `itsypad sync key rotate`: a new key, and everything this device has re-encrypted with it
    /// into a new zone that then takes the backend's place. Other devices' syncs stop (exit 1,
    /// nothing written) until they enter the new key; they then send their data again, so
    /// nothing a device held is lost. The new key stays beside the old one (`sync-key.next`)
    /// until the new zone is in place: a crash at any point leaves a rotation that the next
    /// sync finishes or undoes (`SyncKeys.resumeRotation`).
    ///
    /// A remote's new zone is built beside its mirror and sent as a whole (`sendReplacement`), so
    /// the remote holds the old zone or the new one; a remote that moved meanwhile refuses it and
    /// nothing is rotated. The rotation is one sync from start to end (the sync lock: a sync
    /// started meanwhile is refused with 75, and the syncs it runs share it), and runs the remote's
    /// programs with the data directory's lock released: only the keys and the zone are written
    /// holding it.
    ///
    /// `sync` runs one sync as `itsypad sync` does, printing what it prints, and returns its exit
    /// status: of the configured backend (nil), or of the new zone. Returns the rotated backend.
    public func rotateKey(sync: (_ replacement: (backend: SyncBackend, path: String)?) throws -> Int32) throws -> BackendLocation {
        let settings = try store.settings()
        guard settings.bool(.syncEnabled), let value = settings.string(.syncBackend), let location = BackendLocation(value) else {
            throw ItsypadError.failure("sync is disabled: a key is rotated on a device that syncs with the backend")
        }
        guard try SyncKeys.deviceKey(store) != nil else {
            throw ItsypadError.failure(
                "this device has no sync key: its backend is not encrypted (to encrypt, move it aside and run 'itsypad sync enable \(location) --encrypt')"
            )
        }
        guard let rotation = try SyncKeys.rotationLock(store) else {
            throw ItsypadError.temporary("a key rotation of \(store.path) is under way; try again once it has finished")
        }
        let syncLock = try SyncEngine.takeSyncLock(store)
        return try withExtendedLifetime((rotation, syncLock)) {
            let timeout = lockTimeout
            let configured = try self.configured(location)
            let path = configured.path
            let old = BackendReplacement(path: path, lockTimeout: timeout)
            let notRotated = "; nothing was rotated"
            // What the backend holds comes here first: the new zone starts from all of it.
            guard try rotationStep(location, notRotated, { try sync(nil) }) == ExitCode.success else {
                throw ItsypadError.failure(
                    "the sync before rotating did not finish (see above)" + notRotated + ": fix that, then rotate again")
            }
            let oldZone = try rotationStep(location, notRotated) {
                guard let zone = try SyncKeys.existingZone(at: path) else { throw BackendError.zoneNotFound }
                return zone
            }
            let key = try SecretBytes.random(count: RecordCipher.masterKeyByteCount)
            let cipher = try RecordCipher(masterKey: key)
            do {
                try rotationStep(location, notRotated) {
                    try old.removeReplacementLeftovers()
                    try KeyFile.write(key, to: store.layout.nextSyncKey)
                    let replacement = try BackendOpener.open(old.replacementPath, for: store, cipher: cipher, lockTimeout: timeout)
                    _ = try replacement.createZoneIfNeeded()
                    let sent = try sync((replacement, path))
                    guard sent == ExitCode.success else {
                        throw ItsypadError.failure("not everything could be re-encrypted (see above)" + notRotated)
                    }
                }
                // The commit: the new zone takes the backend's place, unless another device replaced it meanwhile.
                if configured.remote == nil { try old.replace(expecting: oldZone) }
            } catch BackendError.zoneChanged {
                SyncKeys.discardRotation(of: old, store: store)
                throw ItsypadError.failure("another device replaced the backend or rotated its key meanwhile" + notRotated)
            } catch let error as BackendError {
                throw appending("; the next sync finishes the rotation or undoes it", to: mapped(error, backend: location))
            } catch {
                SyncKeys.discardRotation(of: old, store: store)
                throw error
            }
            if let remote = configured.remote {
                let message = "itsypad sync key rotate on \(store.deviceID): a new zone, encrypted with a new key"
                let pushed: Bool
                do {
                    pushed = try store.withLockReleased { try remote.sendReplacement(from: old.replacementPath, message: message) }
                } catch let error as ItsypadError {
                    // A push that failed midway may still have reached the remote: what it holds decides.
                    throw appending("; the next sync finishes the rotation or undoes it", to: error)
                }
                guard pushed else {
                    SyncKeys.discardRotation(of: old, store: store)
                    throw ItsypadError.failure("another device synced through \(location) meanwhile" + notRotated + "; try again")
                }
                try KeyFile.promote(store.layout.nextSyncKey, to: store.layout.syncKey)
                try store.withLockReleased {
                    try remote.adoptReplacement(from: old.replacementPath)
                    try? old.removeReplacementLeftovers()
                }
            } else {
                try KeyFile.promote(store.layout.nextSyncKey, to: store.layout.syncKey)
            }
            return location
        }
    }

    /// Runs one step of a rotation of the backend at `location`; an error says what became of the rotation.
    @discardableResult
    private func rotationStep<T>(_ location: BackendLocation, _ outcome: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ItsypadError {
            throw appending(outcome, to: error)
        } catch let error as BackendError {
            throw appending(outcome, to: mapped(error, backend: location))
        }
    }

    private func appending(_ outcome: String, to error: ItsypadError) -> ItsypadError {
        switch error {
        case .temporary(let message): .temporary(message + outcome)
        case .failure(let message): .failure(message + outcome)
        case .usage: error
        }
    }
}

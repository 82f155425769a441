/// `itsypad sync key …` and the sync key's part in `sync enable`: the key of an end-to-end
/// encrypted backend, kept in the data directory (see `KeyFile`), never in the backend.
enum SyncKeyCommands {
    /// `itsypad sync key show`: the recovery key, to type on another device.
    static func show(_ invocation: Invocation) throws -> Int32 {
        guard let key = try deviceKey(invocation.store()) else {
            throw ItsypadError.failure("this device has no sync key (its backend is not encrypted; 'itsypad sync enable DIR --encrypt' creates an encrypted one)")
        }
        invocation.out.line(RecoveryKey.format(key))
        return ExitCode.success
    }

    /// `itsypad sync key rotate`: a new key, and everything this device has re-encrypted with it
    /// into a new zone that then takes the backend's place. Other devices' syncs stop (exit 1,
    /// nothing written) until they enter the new key; they then send their data again, so
    /// nothing a device held is lost. The new key stays beside the old one (`sync-key.next`)
    /// until the new zone is in place: a crash at any point leaves a rotation that the next
    /// sync finishes or undoes (`resumeRotation`).
    static func rotate(_ invocation: Invocation) throws -> Int32 {
        let store = try invocation.store()
        let settings = try store.settings()
        guard try settings.bool(.syncEnabled), let path = settings.string(.syncBackend) else {
            throw ItsypadError.failure("sync is disabled: a key is rotated on a device that syncs with the backend")
        }
        guard case .directory = BackendLocation(path) else {
            throw ItsypadError.failure("rotating the key of a git remote's backend is not supported yet; nothing was rotated")
        }
        guard try deviceKey(store) != nil else {
            throw ItsypadError.failure("this device has no sync key: its backend is not encrypted (to encrypt, move it aside and run 'itsypad sync enable \(path) --encrypt')")
        }
        guard let rotation = try rotationLock(store) else {
            throw ItsypadError.temporary("a key rotation of \(store.path) is under way; try again once it has finished")
        }
        return try withExtendedLifetime(rotation) {
            let timeout = SyncCommands.lockTimeout(invocation)
            let old = DirectoryBackend(path: path, lockTimeout: timeout)
            let notRotated = "; nothing was rotated"
            // What the backend holds comes here first: the new zone starts from all of it.
            guard try rotationStep(path, notRotated, { try SyncCommands.run(invocation) }) == ExitCode.success else {
                throw ItsypadError.failure("the sync before rotating did not finish (see above)" + notRotated + ": fix that, then rotate again")
            }
            let oldZone = try rotationStep(path, notRotated) { try old.zone() }
            let key = try SecretBytes.random(count: RecordCipher.masterKeyByteCount)
            let cipher = try RecordCipher(masterKey: key)
            do {
                try rotationStep(path, notRotated) {
                    try old.removeReplacementLeftovers()
                    try KeyFile.write(key, inDirectory: store.path, named: KeyFile.nextFileName)
                    let replacement = encrypted(path: old.replacementPath, cipher: cipher, lockTimeout: timeout)
                    _ = try replacement.createZoneIfNeeded()
                    let sent = try SyncCommands.withEngine(invocation, direction: "rotate", backend: (replacement, path)) { try $0.sync() }
                    guard sent == ExitCode.success else {
                        throw ItsypadError.failure("not everything could be re-encrypted (see above)" + notRotated)
                    }
                }
                // The commit: the new zone takes the backend's place, unless another device replaced it meanwhile.
                try old.replace(expecting: oldZone)
            } catch BackendError.zoneChanged {
                discardRotation(of: old, store: store)
                throw ItsypadError.failure("another device replaced the backend or rotated its key meanwhile" + notRotated)
            } catch let error as BackendError {
                throw appending("; the next sync finishes the rotation or undoes it", to: SyncCommands.mapped(error, backend: .directory(path)))
            } catch {
                discardRotation(of: old, store: store)
                throw error
            }
            try KeyFile.promoteNext(inDirectory: store.path)
            // Always said, terminal or not: the other devices stop syncing until someone acts.
            invocation.out.line("the sync key was rotated and everything re-encrypted with the new one. Other devices stop syncing (exit 1, nothing lost) "
                + "until you run 'itsypad sync enable \(path) --key -' on each and type the new recovery key ('itsypad sync key show' here).")
            return ExitCode.success
        }
    }

    /// Runs one step of a rotation of the backend in `path`; an error says what became of the rotation.
    @discardableResult
    private static func rotationStep<T>(_ path: String, _ outcome: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ItsypadError {
            throw appending(outcome, to: error)
        } catch let error as BackendError {
            throw appending(outcome, to: SyncCommands.mapped(error, backend: .directory(path)))
        }
    }

    private static func appending(_ outcome: String, to error: ItsypadError) -> ItsypadError {
        switch error {
        case .temporary(let message): .temporary(message + outcome)
        case .failure(let message): .failure(message + outcome)
        case .usage: error
        }
    }

    /// Removes what a rotation that did not reach the backend left: the new key and the zone
    /// made for it. This device's next sync finds the old zone and sends everything again.
    private static func discardRotation(of backend: DirectoryBackend, store: DataStore) {
        try? KeyFile.removeNext(inDirectory: store.path)
        try? backend.removeReplacementLeftovers()
    }

    /// Held for a whole rotation; nil when one is under way.
    private static func rotationLock(_ store: DataStore) throws -> FileLock? {
        try storeOperation { try FileLock(path: store.path + "/sync/rotation.lock", in: store.tree, mode: .exclusive, timeout: 0) }
    }

    /// Finishes or undoes a rotation that stopped before its end (the new key is still beside the
    /// current one), once no rotation is under way: if the backend's zone, moved into place if a
    /// crash stopped it midway, opens with the new key, that key becomes the device's; if it opens
    /// with the current one, the rotation never reached the backend and its leftovers go. When the
    /// backend cannot be read now, a later run decides.
    private static func resumeRotation(backendPath: String, store: DataStore, lockTimeout: Double) throws {
        guard FileSystem.exists(store.path + "/" + KeyFile.nextFileName), let rotation = try rotationLock(store) else { return }
        try withExtendedLifetime(rotation) {
            guard let next = try KeyFile.read(inDirectory: store.path, named: KeyFile.nextFileName) else { return }
            let directory = DirectoryBackend(path: backendPath, lockTimeout: lockTimeout)
            _ = try? directory.finishInterruptedReplacement()
            guard let check = (try? directory.zone())?.keyCheckValue else { return }
            if try RecordCipher(masterKey: next).matches(keyCheckValue: check) {
                try KeyFile.promoteNext(inDirectory: store.path)
                try? directory.removeReplacementLeftovers()
            } else if let current = try deviceKey(store), try RecordCipher(masterKey: current).matches(keyCheckValue: check) {
                discardRotation(of: directory, store: store)
            }
        }
    }

    /// A new encrypted zone in `path`, with a fresh key kept in the data directory.
    static func createEncryptedZone(at path: String, store: DataStore, lockTimeout: Double) throws {
        let plain = DirectoryBackend(path: path, lockTimeout: lockTimeout)
        if let zone = try existingZone(plain) {
            throw ItsypadError.failure("\(path) already holds " + (zone.isEncrypted
                ? "an encrypted backend: to join it, run 'itsypad sync key show' on a device that syncs, then 'itsypad sync enable \(path) --key -' here"
                : "an unencrypted backend; nothing was changed: choose an empty directory for an encrypted one"))
        }
        let key = try SecretBytes.random(count: RecordCipher.masterKeyByteCount)
        let cipher = try RecordCipher(masterKey: key)
        // The key first: a zone without its key on any device could never be opened.
        try KeyFile.write(key, inDirectory: store.path)
        _ = try encrypted(path: path, cipher: cipher, lockTimeout: lockTimeout).createZoneIfNeeded()
    }

    /// Keeps `key` for the existing encrypted zone in `path` once its key check value matches.
    static func joinEncryptedZone(at path: String, key: SecretBytes, store: DataStore, lockTimeout: Double) throws {
        guard let zone = try existingZone(DirectoryBackend(path: path, lockTimeout: lockTimeout)) else {
            throw ItsypadError.failure("\(path) holds no backend yet; nothing was changed: create one with 'itsypad sync enable \(path) --encrypt'")
        }
        guard zone.isEncrypted else {
            throw ItsypadError.failure("\(path) holds an unencrypted backend, which needs no key; nothing was changed: run 'itsypad sync enable \(path)'")
        }
        let cipher = try RecordCipher(masterKey: key)
        do {
            _ = try encrypted(path: path, cipher: cipher, lockTimeout: lockTimeout).zone()
        } catch let error as EncryptionError {
            throw ItsypadError.failure(error == .wrongKey
                ? "that recovery key does not open \(path) (nothing was changed): check it against 'itsypad sync key show' on a device that syncs"
                : error.description)
        }
        try KeyFile.write(key, inDirectory: store.path)
    }

    private static func existingZone(_ backend: DirectoryBackend) throws -> ZoneInfo? {
        do { return try backend.zone() } catch BackendError.zoneNotFound { return nil }
    }

    /// The recovery key typed or piped on standard input; a typo is caught by its checksums.
    static func recoveryKeyFromInput(_ invocation: Invocation) throws -> SecretBytes {
        var bytes = try invocation.context.standardInput()
        defer { SecureMemory.zero(&bytes) }
        do {
            return try RecoveryKey.parse(String(decoding: bytes, as: UTF8.self))
        } catch {
            throw ItsypadError.failure("\(error); nothing was changed")
        }
    }

    /// The backend in `path`: encrypted with this device's key when it has one (a zone it
    /// creates is then encrypted too); a device without a key is refused an encrypted zone.
    static func backend(at path: String, store: DataStore, lockTimeout: Double) throws -> SyncBackend {
        try resumeRotation(backendPath: path, store: store, lockTimeout: lockTimeout)
        if let key = try deviceKey(store) {
            return encrypted(path: path, cipher: try RecordCipher(masterKey: key), lockTimeout: lockTimeout)
        }
        let plain = DirectoryBackend(path: path, lockTimeout: lockTimeout)
        if (try? plain.zone())?.isEncrypted == true { throw ItsypadError.failure(EncryptionError.missingKey.description) }
        // Unencrypted: format 2 for a new backend, or the format the directory holds.
        return try BackendOpener.open(path, for: store, lockTimeout: lockTimeout)
    }

    private static func encrypted(path: String, cipher: RecordCipher, lockTimeout: Double) -> EncryptedBackend {
        EncryptedBackend(inner: DirectoryBackend(path: path, lockTimeout: lockTimeout, newZoneKeyCheckValue: cipher.keyCheckValue), cipher: cipher)
    }


    static func deviceKey(_ store: DataStore) throws -> SecretBytes? {
        do {
            return try KeyFile.read(inDirectory: store.path)
        } catch let error as KeyFileError {
            throw ItsypadError.failure(error.description)
        }
    }
}

import ItsypadBackend
import ItsypadModel
import ItsypadStore
import ItsypadSupport
import ItsypadSync

/// `itsypad sync key …` and the sync key's part in `sync enable`: the key of an end-to-end
/// encrypted backend, kept in the data directory (see `KeyFile`), never in the backend.
enum SyncKeyCommands {
    /// `itsypad sync key show`: the recovery key, to type on another device.
    static func show(_ invocation: Invocation) throws -> Int32 {
        guard let key = try deviceKey(invocation.store()) else {
            throw ItsypadError.failure(
                "this device has no sync key (its backend is not encrypted; 'itsypad sync enable DIR --encrypt' creates an encrypted one)")
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
    ///
    /// A git remote's new zone is built beside the clone's working tree and pushed as one commit
    /// on top of the remote's tip, so the remote holds the old zone or the new one; a remote that
    /// moved meanwhile refuses the push and nothing is rotated.
    static func rotate(_ invocation: Invocation) throws -> Int32 {
        let store = try invocation.store()
        let settings = try store.settings()
        guard settings.bool(.syncEnabled), let value = settings.string(.syncBackend), let location = BackendLocation(value) else {
            throw ItsypadError.failure("sync is disabled: a key is rotated on a device that syncs with the backend")
        }
        guard try deviceKey(store) != nil else {
            throw ItsypadError.failure(
                "this device has no sync key: its backend is not encrypted (to encrypt, move it aside and run 'itsypad sync enable \(location) --encrypt')"
            )
        }
        guard let rotation = try rotationLock(store) else {
            throw ItsypadError.temporary("a key rotation of \(store.path) is under way; try again once it has finished")
        }
        return try withExtendedLifetime(rotation) {
            let timeout = SyncCommands.lockTimeout(invocation)
            let configured = try SyncCommands.configuredBackend(location, store: store, invocation)
            let path = configured.path
            let old = BackendReplacement(path: path, lockTimeout: timeout)
            let notRotated = "; nothing was rotated"
            // What the backend holds comes here first: the new zone starts from all of it.
            guard try rotationStep(location, notRotated, { try SyncCommands.run(invocation) }) == ExitCode.success else {
                throw ItsypadError.failure(
                    "the sync before rotating did not finish (see above)" + notRotated + ": fix that, then rotate again")
            }
            let oldZone = try rotationStep(location, notRotated) {
                guard let zone = try existingZone(at: path) else { throw BackendError.zoneNotFound }
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
                    let sent = try SyncCommands.withEngine(invocation, direction: "rotate", backend: (replacement, path)) { try $0.sync() }
                    guard sent == ExitCode.success else {
                        throw ItsypadError.failure("not everything could be re-encrypted (see above)" + notRotated)
                    }
                }
                // The commit: the new zone takes the backend's place, unless another device replaced it meanwhile.
                if configured.remote == nil { try old.replace(expecting: oldZone) }
            } catch BackendError.zoneChanged {
                discardRotation(of: old, store: store)
                throw ItsypadError.failure("another device replaced the backend or rotated its key meanwhile" + notRotated)
            } catch let error as BackendError {
                throw appending("; the next sync finishes the rotation or undoes it", to: SyncCommands.mapped(error, backend: location))
            } catch {
                discardRotation(of: old, store: store)
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
                    discardRotation(of: old, store: store)
                    throw ItsypadError.failure("another device synced through \(location) meanwhile" + notRotated + "; try again")
                }
                try KeyFile.promote(store.layout.nextSyncKey, to: store.layout.syncKey)
                try remote.adoptReplacement(from: old.replacementPath)
                try? old.removeReplacementLeftovers()
            } else {
                try KeyFile.promote(store.layout.nextSyncKey, to: store.layout.syncKey)
            }
            // Always said, terminal or not: the other devices stop syncing until someone acts.
            invocation.out.line(
                "the sync key was rotated and everything re-encrypted with the new one. Other devices stop syncing (exit 1, nothing lost) "
                    + "until you run 'itsypad sync enable \(location) --key -' on each and type the new recovery key ('itsypad sync key show' here)."
            )
            return ExitCode.success
        }
    }

    /// Runs one step of a rotation of the backend at `location`; an error says what became of the rotation.
    @discardableResult
    private static func rotationStep<T>(_ location: BackendLocation, _ outcome: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ItsypadError {
            throw appending(outcome, to: error)
        } catch let error as BackendError {
            throw appending(outcome, to: SyncCommands.mapped(error, backend: location))
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
    private static func discardRotation(of backend: BackendReplacement, store: DataStore) {
        try? KeyFile.remove(store.layout.nextSyncKey)
        try? backend.removeReplacementLeftovers()
    }

    /// Held for a whole rotation; nil when one is under way.
    private static func rotationLock(_ store: DataStore) throws -> FileLock? {
        try storeOperation { try FileLock(path: store.layout.rotationLock, in: store.tree, mode: .exclusive, timeout: 0) }
    }

    /// Finishes or undoes a rotation that stopped before its end (the new key is still beside the
    /// current one), once no rotation is under way: if the backend's zone, moved into place if a
    /// crash stopped it midway, opens with the new key, that key becomes the device's; if it opens
    /// with the current one, the rotation never reached the backend and its leftovers go. When the
    /// backend cannot be read now, a later run decides. With a git remote, the zone that decides
    /// is the one on the remote's tip (fetched now): the rotation's push either reached it or not.
    private static func resumeRotation(backendPath: String, remote: (any SyncRemote)?, store: DataStore, lockTimeout: Double) throws {
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

    /// What `sync enable` is asked about encryption.
    enum EnableEncryption: Equatable {
        /// `--encrypt`: a new encrypted backend with a new key.
        case encrypt
        /// `--key -`: the existing encrypted backend, with the recovery key from standard input.
        case join
        /// `--no-encrypt`: a new backend is created unencrypted.
        case plain
        /// None of them: a git remote's new backend is encrypted, a directory's is not
        /// (unless the device has a key), and an existing backend is joined as it is.
        case byDefault

        init(_ invocation: Invocation) throws {
            let key = invocation.value(.key)
            let chosen: [EnableEncryption] = [
                invocation.flag(.encrypt) ? .encrypt : nil, key.map { _ in .join },
                invocation.flag(.noEncrypt) ? .plain : nil,
            ].compactMap { $0 }
            guard chosen.count <= 1 else { throw invocation.usage("Pass one of --encrypt, --key and --no-encrypt, not several.") }
            if let key, key != "-" {
                throw invocation.usage("--key takes '-': the recovery key is read from standard input, never from the command line.")
            }
            self = chosen.first ?? .byDefault
        }

        /// Creates or joins the backend in `path` (the directory `location` is, or its clone's
        /// working tree) as asked, `.join` with `joinKey`. Keys are checked before anything is
        /// written: a wrong or missing one leaves the data directory and the backend as they were.
        func prepareZone(
            at path: String, of location: BackendLocation, store: DataStore, joinKey: SecretBytes?, lockTimeout: Double
        ) throws {
            switch self {
            case .encrypt:
                try createEncryptedZone(at: path, of: location, store: store, lockTimeout: lockTimeout)
            case .join:
                guard let joinKey else { throw ItsypadError.failure("no recovery key was given; nothing was changed") }
                try joinEncryptedZone(at: path, of: location, key: joinKey, store: store, lockTimeout: lockTimeout)
            case .plain, .byDefault:
                if self == .byDefault { try takeKeptKey(forZoneAt: path, store: store) }
                let hasKey = try deviceKey(store) != nil
                if self == .plain && hasKey {
                    throw ItsypadError.failure(
                        "this device has a sync key, so the backends it creates are encrypted; nothing was changed: run it without --no-encrypt"
                    )
                }
                let zone = try existingZone(at: path)
                if !hasKey && zone?.isEncrypted == true {
                    throw ItsypadError.failure(
                        "\(location) holds an encrypted backend and this device has no sync key; nothing was changed: "
                            + "run 'itsypad sync key show' on a device that syncs, then 'itsypad sync enable \(location) --key -' here and type that recovery key"
                    )
                }
                // A git remote's history keeps every byte ever pushed, on a host the user may not control.
                if location.scheme != nil, self == .byDefault, !hasKey, zone == nil {
                    try createEncryptedZone(at: path, of: location, store: store, lockTimeout: lockTimeout)
                } else {
                    _ = try backend(at: path, store: store, lockTimeout: lockTimeout).createZoneIfNeeded()
                }
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
                        : "an unencrypted backend; nothing was changed: choose an empty " + (location.scheme == "git" ? "repository" : "directory")
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

    /// The recovery key piped on standard input, or typed at the prompt, unseen, when standard
    /// input is a terminal; a typo is caught by its checksums.
    static func recoveryKeyFromInput(_ invocation: Invocation) throws -> SecretBytes {
        let context = invocation.context
        var bytes = try context.stdinIsTerminal ? context.secretLine(prompt: "Recovery key: ") : context.standardInput()
        defer { SecureMemory.zero(&bytes) }
        do {
            return try RecoveryKey.parse(String(decoding: bytes, as: UTF8.self))
        } catch {
            throw ItsypadError.failure("\(error); nothing was changed")
        }
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

    static func deviceKey(_ store: DataStore) throws -> SecretBytes? {
        do {
            return try KeyFile.read(store.layout.syncKey)
        } catch let error as KeyFileError {
            throw ItsypadError.failure(error.description)
        }
    }
}

import ItsypadBackend
import ItsypadModel
import ItsypadStore
import ItsypadSupport
import ItsypadSync

/// `itsypad sync key …` and the sync key's part in `sync enable` (see `SyncKeys`).
enum SyncKeyCommands {
    /// `itsypad sync key show`: the recovery key, to type on another device.
    static func show(_ invocation: Invocation) throws -> Int32 {
        guard let key = try SyncKeys.deviceKey(invocation.store()) else {
            throw ItsypadError.failure(
                "this device has no sync key (its backend is not encrypted; 'itsypad sync enable DIR --encrypt' creates an encrypted one)")
        }
        invocation.out.line(RecoveryKey.format(key))
        return ExitCode.success
    }

    /// `itsypad sync key rotate`: see `SyncSession.rotateKey`.
    static func rotate(_ invocation: Invocation) throws -> Int32 {
        let location = try invocation.syncSession().rotateKey { replacement in
            guard let replacement else { return try SyncCommands.run(invocation) }
            return try SyncCommands.withEngine(invocation, direction: "rotate", backend: replacement) { try $0.sync() }
        }
        // Always said, terminal or not: the other devices stop syncing until someone acts.
        invocation.out.line(
            "the sync key was rotated and everything re-encrypted with the new one. Other devices stop syncing (exit 1, nothing lost) "
                + "until you run 'itsypad sync enable \(location) --key -' on each and type the new recovery key ('itsypad sync key show' here)."
        )
        return ExitCode.success
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
}

extension EnableEncryption {
    /// What `--encrypt`, `--key -` and `--no-encrypt` ask.
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
}

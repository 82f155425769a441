/// Why an encrypted backend cannot be used with this device's key.
public enum EncryptionError: Error, Equatable, CustomStringConvertible {
    /// The zone's key check value is not this key's.
    case wrongKey
    /// This device has a sync key but the zone is not encrypted.
    case notEncrypted
    /// The zone is encrypted but this device has no key.
    case missingKey

    public var description: String { message(naming: "DIR") }

    /// The description, its commands naming the backend as `backend` (the sync.backend setting).
    public func message(naming backend: String) -> String {
        switch self {
        case .wrongKey:
            "the sync key on this device does not open this backend (it was rotated on another device, or this is another backend); "
                + "run 'itsypad sync key show' on a device that syncs, then 'itsypad sync enable \(backend) --key -' here and type that recovery key"
        case .notEncrypted:
            "this device has a sync key but the backend is not encrypted (it was replaced by an unencrypted one?); "
                + "nothing was sent: move the backend aside and run 'itsypad sync' to recreate it encrypted"
        case .missingKey:
            "the backend is encrypted and this device has no sync key; "
                + "run 'itsypad sync key show' on a device that syncs, then 'itsypad sync enable \(backend) --key -' here and type that recovery key"
        }
    }
}

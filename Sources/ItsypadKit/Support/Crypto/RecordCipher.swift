/// End-to-end encryption of backend records and assets under one 256-bit master key.
///
/// A sealed record keeps what the backend needs to work — record type, record name,
/// change tag, stamps — and has a single field, `sealed`: base64 of
/// `format byte ‖ 24-byte random nonce ‖ XChaCha20-Poly1305 ciphertext ‖ 16-byte tag`
/// over the canonical JSON (sorted keys) of all of the record's fields, asset references
/// included. The associated data binds the ciphertext to its zone, record type and record
/// name, so a sealed field copied to another record, type or zone does not open.
///
/// Each purpose has its own key, derived with HKDF-SHA256 from the master key and a
/// distinct info string, so no key ever serves two algorithms: records, assets, the keyed
/// hash that replaces record names that are not random (setting keys), and the key check
/// value that tells a wrong key before anything is written.
///
/// The plaintext JSON bytes are wiped once sealed or parsed; the `String`s and `JSONValue`s
/// the JSON coder builds on the way, like the decrypted fields handed back, are ordinary
/// values that Swift frees without clearing (see `SecretBytes`).
public final class RecordCipher: Sendable {
    public static let masterKeyByteCount = 32
    /// The one field of a sealed record.
    public static let sealedFieldName = "sealed"
    /// The first byte of every sealed field and asset; also part of the associated data.
    package static let formatVersion: UInt8 = 1

    /// What each derived key is for: its HKDF info string.
    enum Purpose: String {
        case recordEncryption = "itsypad/v1 record encryption"
        case assetEncryption = "itsypad/v1 asset encryption"
        case nameHashing = "itsypad/v1 record name hashing"
        case keyCheck = "itsypad/v1 key check value"
        case zoneAuthentication = "itsypad/v1 zone authentication"
    }

    private static let salt = Array("itsypad end-to-end encryption".utf8)
    private static let keyCheckMessage = Array("itsypad key check value".utf8)
    private static let overhead = 1 + XChaCha20Poly1305.nonceByteCount + XChaCha20Poly1305.tagByteCount

    private let recordKey: SecretBytes
    private let assetKey: SecretBytes
    private let nameKey: SecretBytes
    private let zoneKey: SecretBytes

    /// Stored with an encrypted backend (it reveals nothing about the key): a device whose
    /// key gives a different value has the wrong key and must not write.
    public let keyCheckValue: String

    public init(masterKey: SecretBytes) throws(RecordCipherError) {
        guard masterKey.count == Self.masterKeyByteCount else { throw .invalidKey }
        let pseudorandomKey = HKDF.extract(salt: Self.salt, inputKeyMaterial: masterKey)
        func derive(_ purpose: Purpose) -> SecretBytes {
            HKDF.expand(pseudorandomKey: pseudorandomKey, info: Array(purpose.rawValue.utf8), byteCount: 32)
        }
        recordKey = derive(.recordEncryption)
        assetKey = derive(.assetEncryption)
        nameKey = derive(.nameHashing)
        zoneKey = derive(.zoneAuthentication)
        let checkCode = HMACSHA256.authenticationCode(for: Self.keyCheckMessage, key: derive(.keyCheck))
        keyCheckValue = Hex.encode(checkCode.prefix(16))
    }

    /// Compares a stored key check value with this key's, in constant time.
    public func matches(keyCheckValue stored: String) -> Bool {
        ConstantTime.equal(Array(stored.utf8), Array(keyCheckValue.utf8))
    }

    // MARK: Records

    /// The text of a `sealed` field for `plaintext` (base64 of format byte, nonce, ciphertext and
    /// tag), bound to `context`, the associated data that says which record it belongs to.
    package func sealRecordContent(_ plaintext: [UInt8], context: [UInt8]) throws -> String {
        let nonce = try SecureRandom.bytes(XChaCha20Poly1305.nonceByteCount)
        var padded = Self.padded(plaintext)
        defer { SecureMemory.zero(&padded) }
        let ciphertext = try XChaCha20Poly1305.seal(padded, key: recordKey, nonce: nonce, authenticating: context)
        return Base64.encode([Self.formatVersion] + nonce + ciphertext)
    }

    /// The plaintext of a `sealed` field, verified against `context`; the caller wipes it when done.
    package func openRecordContent(_ text: String, context: [UInt8]) throws(RecordCipherError) -> [UInt8] {
        guard let bytes = Base64.decode(text) else { throw .malformed("the sealed field is not base64") }
        return try Self.opened(bytes, key: recordKey, context: context)
    }

    /// A record name to store instead of `name` when the name itself says something (a
    /// setting's key): 64 hex digits of HMAC-SHA256, the same on every device with the key.
    /// The original name must travel inside the sealed fields.
    public func hashedName(_ name: String, recordType: String) -> String {
        Hex.encode(HMACSHA256.authenticationCode(for: Self.lengthPrefixed([recordType, name]), key: nameKey))
    }

    // MARK: Zone

    /// The authentication code of a zone's description (`parts`: its id, format, creation time,
    /// layout, cipher and key check value), 64 hex digits: only a device with the key can write
    /// a `zone.json` that verifies.
    public func zoneAuthenticationCode(of parts: [String]) -> String {
        Hex.encode(HMACSHA256.authenticationCode(for: Self.lengthPrefixed(["itsypad zone"] + parts), key: zoneKey))
    }

    /// Compares a stored zone authentication code with this key's for `parts`, in constant time.
    public func verifiesZone(_ code: String, of parts: [String]) -> Bool {
        ConstantTime.equal(Array(code.utf8), Array(zoneAuthenticationCode(of: parts).utf8))
    }

    // MARK: Assets

    /// The sealed form of an asset's bytes (format byte, nonce, ciphertext, tag). The backend
    /// then names it by the SHA-256 of these sealed bytes, and that reference travels inside
    /// the sealed record, so the record authenticates which asset belongs to it.
    public func sealAsset(_ bytes: [UInt8], zoneID: String) throws -> [UInt8] {
        let nonce = try SecureRandom.bytes(XChaCha20Poly1305.nonceByteCount)
        var padded = Self.padded(bytes)
        defer { SecureMemory.zero(&padded) }
        return [Self.formatVersion] + nonce
            + (try XChaCha20Poly1305.seal(padded, key: assetKey, nonce: nonce, authenticating: Self.assetContext(zoneID: zoneID)))
    }

    public func openAsset(_ sealed: [UInt8], zoneID: String) throws(RecordCipherError) -> [UInt8] {
        try Self.opened(sealed, key: assetKey, context: Self.assetContext(zoneID: zoneID))
    }

    /// Sealed bytes of `plaintextCount` bytes (for size limits: a sealed record field is the base64 of this).
    public static func sealedByteCount(plaintextCount: Int) -> Int { paddedCount(plaintextCount) + overhead }

    // MARK: Padding

    /// The size a plaintext of `count` bytes is padded to before sealing, so that a sealed size
    /// tells only a size class: the next multiple of 32 bytes up to 1 KiB, and above that Padmé
    /// (the low bits of the length rounded up, at most 12% more), leaving O(log log n) bits.
    /// Padding is one 0x80 byte then zeros (ISO/IEC 7816-4), so at least one byte is added.
    static func paddedCount(_ count: Int) -> Int {
        let length = count + 1
        if length <= 1024 { return (length + 31) & ~31 }
        let exponent = Int.bitWidth - 1 - length.leadingZeroBitCount
        let significantBits = Int.bitWidth - exponent.leadingZeroBitCount
        let mask = (1 << (exponent - significantBits)) - 1
        return (length + mask) & ~mask
    }

    static func padded(_ plaintext: [UInt8]) -> [UInt8] {
        var padded = plaintext
        padded.reserveCapacity(paddedCount(plaintext.count))
        padded.append(0x80)
        padded.append(contentsOf: repeatElement(0, count: paddedCount(plaintext.count) - plaintext.count - 1))
        return padded
    }

    /// The plaintext inside padded bytes; nil unless the padding is exactly what `padded` adds.
    static func unpadded(_ bytes: [UInt8]) -> [UInt8]? {
        guard let marker = bytes.lastIndex(where: { $0 != 0 }), bytes[marker] == 0x80, paddedCount(marker) == bytes.count else {
            return nil
        }
        return Array(bytes[..<marker])
    }

    // MARK: Format

    private static func opened(_ bytes: [UInt8], key: SecretBytes, context: [UInt8]) throws(RecordCipherError) -> [UInt8] {
        guard bytes.count >= overhead else { throw .malformed("\(bytes.count) bytes is too short to be sealed") }
        guard bytes[0] == formatVersion else { throw .malformed("unknown format \(bytes[0])") }
        let nonceEnd = 1 + XChaCha20Poly1305.nonceByteCount
        var padded: [UInt8]
        do {
            padded = try XChaCha20Poly1305.open(
                Array(bytes[nonceEnd...]), key: key, nonce: Array(bytes[1..<nonceEnd]), authenticating: context)
        } catch {
            throw .authenticationFailed
        }
        defer { SecureMemory.zero(&padded) }
        guard let plaintext = unpadded(padded) else { throw .malformed("the padding is not the format's") }
        return plaintext
    }

    static func assetContext(zoneID: String) -> [UInt8] {
        lengthPrefixed(["itsypad asset", String(formatVersion), zoneID])
    }

    /// Each string's UTF-8 preceded by its length as four big-endian bytes.
    package static func lengthPrefixed(_ parts: [String]) -> [UInt8] {
        var bytes: [UInt8] = []
        for part in parts {
            let utf8 = Array(part.utf8)
            let count = UInt32(utf8.count)
            bytes += [
                UInt8(truncatingIfNeeded: count >> 24), UInt8(truncatingIfNeeded: count >> 16),
                UInt8(truncatingIfNeeded: count >> 8), UInt8(truncatingIfNeeded: count),
            ]
            bytes += utf8
        }
        return bytes
    }
}

/// Why a sealed record or asset was refused. All but `invalidKey` mean the input did not
/// come, unchanged, from a device with this key for this zone, type and name: it is to be
/// treated as malformed (skipped and reported), never applied.
public enum RecordCipherError: Error, Equatable, CustomStringConvertible {
    /// The master key is not 32 bytes.
    case invalidKey
    /// The record does not consist of exactly one `sealed` string field.
    case notSealed
    /// The sealed bytes are not in the format (base64, length, format byte).
    case malformed(String)
    /// The tag did not verify: a wrong key, changed bytes, or a field moved between records or zones.
    case authenticationFailed
    /// It verified, but the decrypted fields are not valid.
    case invalidContent(String)

    public var description: String {
        switch self {
        case .invalidKey: "the encryption key must be 32 bytes"
        case .notSealed: "the record is not encrypted (it must have exactly one field, 'sealed')"
        case .malformed(let reason): "the encrypted record is malformed: \(reason)"
        case .authenticationFailed: "the encrypted record does not verify (wrong key, or it was changed or moved)"
        case .invalidContent(let reason): "the decrypted record is invalid: \(reason)"
        }
    }
}

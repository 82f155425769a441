/// AEAD_CHACHA20_POLY1305 (RFC 8439 §2.8): a 32-byte key, a 12-byte nonce that must
/// never repeat under one key, and a 16-byte tag appended to the ciphertext.
public enum ChaCha20Poly1305 {
    public static let keyByteCount = 32
    public static let nonceByteCount = 12
    public static let tagByteCount = 16
    /// The block counter starts at 1 (block 0 keys Poly1305), so 2^32 − 1 blocks remain.
    static let maxMessageBytes = (ChaCha20.maxBlocks - 1) * ChaCha20.blockByteCount

    /// Ciphertext followed by the tag.
    public static func seal(
        _ plaintext: [UInt8], key: SecretBytes, nonce: [UInt8], authenticating associatedData: [UInt8] = []
    ) throws -> [UInt8] {
        try withBuffers(key: key, nonce: nonce, associatedData: associatedData) {
            try sealed(plaintext, key: $0, nonce: $1, associatedData: $2)
        }
    }

    /// The plaintext, if the tag at the end of `sealed` authenticates it and `associatedData`;
    /// otherwise `CryptoError.authenticationFailed` and nothing is decrypted.
    public static func open(
        _ sealed: [UInt8], key: SecretBytes, nonce: [UInt8], authenticating associatedData: [UInt8] = []
    ) throws -> [UInt8] {
        try withBuffers(key: key, nonce: nonce, associatedData: associatedData) {
            try opened(sealed, key: $0, nonce: $1, associatedData: $2)
        }
    }

    /// Checks the sizes, then runs `body` with the key, nonce and associated data as raw buffers.
    private static func withBuffers<Result>(
        key: SecretBytes, nonce: [UInt8], associatedData: [UInt8],
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result {
        guard key.count == keyByteCount else { throw CryptoError.invalidKeySize(expected: keyByteCount) }
        guard nonce.count == nonceByteCount else { throw CryptoError.invalidNonceSize(expected: nonceByteCount) }
        return try key.withUnsafeBytes { key in
            try nonce.withUnsafeBytes { nonce in
                try associatedData.withUnsafeBytes { try body(key, nonce, $0) }
            }
        }
    }

    // MARK: On raw buffers (shared with XChaCha20-Poly1305)

    static func sealed(
        _ plaintext: [UInt8], key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        associatedData: UnsafeRawBufferPointer
    ) throws -> [UInt8] {
        guard plaintext.count <= maxMessageBytes else { throw CryptoError.messageTooLong }
        var output = plaintext
        output.append(contentsOf: repeatElement(0, count: tagByteCount))
        output.withUnsafeMutableBytes { output in
            let body = UnsafeMutableRawBufferPointer(rebasing: output[0..<plaintext.count])
            ChaCha20.xorKeystream(into: body, key: key, nonce: nonce, counter: 1)
            let tag = authenticationTag(ciphertext: UnsafeRawBufferPointer(body), key: key, nonce: nonce, associatedData: associatedData)
            output.baseAddress!.advanced(by: plaintext.count).copyMemory(from: tag, byteCount: tagByteCount)
        }
        return output
    }

    static func opened(
        _ sealed: [UInt8], key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
        associatedData: UnsafeRawBufferPointer
    ) throws -> [UInt8] {
        guard sealed.count >= tagByteCount else { throw CryptoError.authenticationFailed }
        let length = sealed.count - tagByteCount
        guard length <= maxMessageBytes else { throw CryptoError.messageTooLong }
        let authentic = sealed.withUnsafeBytes { sealed in
            let expected = authenticationTag(
                ciphertext: UnsafeRawBufferPointer(rebasing: sealed[0..<length]),
                key: key, nonce: nonce, associatedData: associatedData)
            return expected.withUnsafeBytes { ConstantTime.equal($0, UnsafeRawBufferPointer(rebasing: sealed[length...])) }
        }
        guard authentic else { throw CryptoError.authenticationFailed }
        var plaintext = Array(sealed[0..<length])
        plaintext.withUnsafeMutableBytes { ChaCha20.xorKeystream(into: $0, key: key, nonce: nonce, counter: 1) }
        return plaintext
    }

    /// Poly1305, keyed by keystream block 0, over AD ‖ pad16 ‖ ciphertext ‖ pad16 ‖ both lengths.
    private static func authenticationTag(
        ciphertext: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer,
        nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer
    ) -> [UInt8] {
        SecureMemory.withScratch(byteCount: ChaCha20.blockByteCount) { oneTimeKey in
            ChaCha20.xorKeystream(into: oneTimeKey, key: key, nonce: nonce, counter: 0)
            var mac = Poly1305(key: UnsafeRawBufferPointer(rebasing: oneTimeKey[0..<Poly1305.keyByteCount]))
            mac.absorbPadded(associatedData)
            mac.absorbPadded(ciphertext)
            withUnsafeTemporaryAllocation(byteCount: 16, alignment: 8) { lengths in
                lengths.storeBytes(of: UInt64(associatedData.count).littleEndian, toByteOffset: 0, as: UInt64.self)
                lengths.storeBytes(of: UInt64(ciphertext.count).littleEndian, toByteOffset: 8, as: UInt64.self)
                mac.absorbPadded(UnsafeRawBufferPointer(lengths))
            }
            return mac.finalize()
        }
    }
}

/// AEAD_XChaCha20_Poly1305 (draft-irtf-cfrg-xchacha-03): ChaCha20-Poly1305 under a subkey
/// that HChaCha20 derives from the key and the first 16 bytes of a 24-byte nonce. Nonces
/// that long can be drawn at random for every message: a collision is not expected
/// before about 2^80 messages under one key.
public enum XChaCha20Poly1305 {
    public static let keyByteCount = 32
    public static let nonceByteCount = 24
    public static let tagByteCount = 16

    /// Ciphertext followed by the tag.
    public static func seal(
        _ plaintext: [UInt8], key: SecretBytes, nonce: [UInt8], authenticating associatedData: [UInt8] = []
    ) throws -> [UInt8] {
        try withSubkey(key: key, nonce: nonce) { subkey, chachaNonce in
            try associatedData.withUnsafeBytes {
                try ChaCha20Poly1305.sealed(plaintext, key: subkey, nonce: chachaNonce, associatedData: $0)
            }
        }
    }

    /// The plaintext, or `CryptoError.authenticationFailed` with nothing decrypted.
    public static func open(
        _ sealed: [UInt8], key: SecretBytes, nonce: [UInt8], authenticating associatedData: [UInt8] = []
    ) throws -> [UInt8] {
        try withSubkey(key: key, nonce: nonce) { subkey, chachaNonce in
            try associatedData.withUnsafeBytes {
                try ChaCha20Poly1305.opened(sealed, key: subkey, nonce: chachaNonce, associatedData: $0)
            }
        }
    }

    /// XChaCha20 alone (§2.3): the keystream from block `counter` on, XORed into `bytes`.
    static func xorKeystream(_ bytes: [UInt8], key: SecretBytes, nonce: [UInt8], counter: UInt32) throws -> [UInt8] {
        try withSubkey(key: key, nonce: nonce) { subkey, chachaNonce in
            var output = bytes
            output.withUnsafeMutableBytes { ChaCha20.xorKeystream(into: $0, key: subkey, nonce: chachaNonce, counter: counter) }
            return output
        }
    }

    /// Runs `body` with the HChaCha20 subkey and the 12-byte ChaCha20 nonce (four zero bytes,
    /// then the nonce's last eight), both in scratch memory wiped afterwards.
    private static func withSubkey<Result>(
        key: SecretBytes, nonce: [UInt8],
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result {
        guard key.count == keyByteCount else { throw CryptoError.invalidKeySize(expected: keyByteCount) }
        guard nonce.count == nonceByteCount else { throw CryptoError.invalidNonceSize(expected: nonceByteCount) }
        return try SecureMemory.withScratch(byteCount: 32 + ChaCha20.nonceByteCount) { scratch in
            let subkey = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<32])
            let chachaNonce = UnsafeMutableRawBufferPointer(rebasing: scratch[32...])
            nonce.withUnsafeBytes { nonce in
                key.withUnsafeBytes { ChaCha20.hChaCha20(key: $0, nonce: UnsafeRawBufferPointer(rebasing: nonce[0..<16]), into: subkey) }
                UnsafeMutableRawBufferPointer(rebasing: chachaNonce[4...]).copyMemory(from: UnsafeRawBufferPointer(rebasing: nonce[16...]))
            }
            return try body(UnsafeRawBufferPointer(subkey), UnsafeRawBufferPointer(chachaNonce))
        }
    }
}

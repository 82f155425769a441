/// HKDF with HMAC-SHA256 (RFC 5869): keys for separate purposes from one master key.
enum HKDF {
    /// At most 255 blocks of output (RFC 5869 §2.3).
    static let maxOutputByteCount = 255 * HMACSHA256.byteCount

    /// HKDF-Extract: a pseudorandom key from input keying material (an empty salt means 32 zero bytes).
    static func extract(salt: [UInt8], inputKeyMaterial: SecretBytes) -> SecretBytes {
        let salt = salt.isEmpty ? [UInt8](repeating: 0, count: HMACSHA256.byteCount) : salt
        var prk = inputKeyMaterial.withUnsafeBytes { ikm in
            salt.withUnsafeBytes { salt in
                var mac = HMACSHA256(key: salt)
                mac.update(ikm)
                return mac.finalize()
            }
        }
        defer { SecureMemory.zero(&prk) }
        return SecretBytes(copying: prk)
    }

    /// HKDF-Expand: `byteCount` bytes of output keying material bound to `info`.
    static func expand(pseudorandomKey: SecretBytes, info: [UInt8], byteCount: Int) -> SecretBytes {
        precondition((0...maxOutputByteCount).contains(byteCount), "HKDF output is limited to \(maxOutputByteCount) bytes")
        return SecretBytes(count: byteCount) { output in
            var previous: [UInt8] = []
            defer { SecureMemory.zero(&previous) }
            var written = 0
            var counter: UInt8 = 1
            while written < byteCount {
                var mac = pseudorandomKey.withUnsafeBytes { HMACSHA256(key: $0) }
                mac.update(previous)
                mac.update(info)
                mac.update([counter])
                SecureMemory.zero(&previous)
                previous = mac.finalize()
                let take = min(previous.count, byteCount - written)
                previous.withUnsafeBytes { block in
                    UnsafeMutableRawBufferPointer(rebasing: output[written..<(written + take)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: block[0..<take]))
                }
                written += take
                counter &+= 1
            }
        }
    }

    /// Extract then expand.
    static func deriveKey(from inputKeyMaterial: SecretBytes, salt: [UInt8], info: [UInt8], byteCount: Int) -> SecretBytes {
        expand(pseudorandomKey: extract(salt: salt, inputKeyMaterial: inputKeyMaterial), info: info, byteCount: byteCount)
    }
}

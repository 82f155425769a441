/// HMAC-SHA256 (RFC 2104, FIPS 198-1).
struct HMACSHA256 {
    static let byteCount = 32
    private static let blockByteCount = 64

    private var inner = SHA256()
    private var outer = SHA256()

    /// Keys longer than a block are hashed first, as the standard says.
    init(key: UnsafeRawBufferPointer) {
        var block = [UInt8](repeating: 0, count: Self.blockByteCount)
        defer { SecureMemory.zero(&block) }
        if key.count > Self.blockByteCount {
            var hasher = SHA256()
            hasher.update(key)
            var digest = hasher.finalize()
            block.replaceSubrange(0..<digest.count, with: digest)
            SecureMemory.zero(&digest)
        } else {
            block.withUnsafeMutableBytes { $0.copyMemory(from: key) }
        }
        for index in block.indices { block[index] ^= 0x36 }
        inner.update(block)
        for index in block.indices { block[index] ^= 0x36 ^ 0x5c }
        outer.update(block)
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) { inner.update(bytes) }
    mutating func update(_ bytes: [UInt8]) { inner.update(bytes) }

    mutating func finalize() -> [UInt8] {
        var innerDigest = inner.finalize()
        defer { SecureMemory.zero(&innerDigest) }
        outer.update(innerDigest)
        return outer.finalize()
    }

    /// The 32-byte code of `message` under `key`.
    static func authenticationCode(for message: [UInt8], key: UnsafeRawBufferPointer) -> [UInt8] {
        var mac = HMACSHA256(key: key)
        mac.update(message)
        return mac.finalize()
    }

    static func authenticationCode(for message: [UInt8], key: SecretBytes) -> [UInt8] {
        key.withUnsafeBytes { authenticationCode(for: message, key: $0) }
    }
}

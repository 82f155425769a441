#if canImport(Glibc)
import Glibc
#endif

/// getrandom(2): glibc declares it in <sys/random.h>, which the Swift Glibc module does not include.
@_silgen_name("getrandom")
private func linuxGetrandom(_ buffer: UnsafeMutableRawPointer, _ count: Int, _ flags: UInt32) -> Int

/// Random bytes from the kernel's CSPRNG (getrandom(2) without flags: it blocks until
/// the pool is seeded at boot, then never). There is deliberately no fallback: a key
/// or nonce from a weaker source would be worse than an error.
public enum SecureRandom {
    /// Fills `buffer` completely, retrying interrupted and short reads.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) throws {
        guard let base = buffer.baseAddress else { return }
        var filled = 0
        while filled < buffer.count {
            let got = linuxGetrandom(base + filled, buffer.count - filled, 0)
            if got < 0 {
                if errno == EINTR { continue }
                throw CryptoError.randomUnavailable(errno)
            }
            filled += got
        }
    }

    /// `count` random bytes (for public values such as nonces; keys belong in `SecretBytes.random`).
    public static func bytes(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        try bytes.withUnsafeMutableBytes { try fill($0) }
        return bytes
    }
}

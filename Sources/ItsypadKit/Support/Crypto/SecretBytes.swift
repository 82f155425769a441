#if canImport(Glibc)
import Glibc
#endif

/// Key material in memory this process allocated itself, zeroed when the value is released.
///
/// What wiping can and cannot do in Swift: this buffer is allocated once and never
/// moved or copied by the runtime, so zeroing it on release erases the key from it.
/// Copies made elsewhere are beyond reach: words the compiler keeps in registers or
/// spills to the stack while a cipher runs, the storage of `[UInt8]` and `String`
/// values (freed without being cleared, and possibly reallocated while growing),
/// and pages the kernel swaps out. So keys live in `SecretBytes`, buffers the project
/// fills with plaintext or key material are cleared with `SecureMemory.zero` as soon
/// as they have served, and a decrypted `String` handed to the rest of the program is
/// as exposed as any other text it holds.
public final class SecretBytes: @unchecked Sendable {
    // Immutable after `init`, so sharing between threads is safe.
    private let storage: UnsafeMutableRawBufferPointer

    /// Allocates `count` bytes and lets `fill` write them; a throwing `fill` leaves nothing behind.
    init(count: Int, fill: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        do {
            try fill(storage)
        } catch {
            SecureMemory.zero(storage)
            storage.deallocate()
            throw error
        }
        self.storage = storage
    }

    /// A copy of `bytes` (the caller remains responsible for wiping its own copy).
    public convenience init(copying bytes: some Collection<UInt8>) {
        self.init(count: bytes.count) { storage in _ = storage.initializeMemory(as: UInt8.self, from: bytes) }
    }

    /// `count` random bytes from the kernel.
    public static func random(count: Int) throws -> SecretBytes {
        try SecretBytes(count: count) { try SecureRandom.fill($0) }
    }

    deinit {
        SecureMemory.zero(storage)
        storage.deallocate()
    }

    public var count: Int { storage.count }

    /// Reads the bytes; `body` must not let the buffer escape.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(storage))
    }

    /// Constant-time equality (for tests and key checks; never ordering).
    public func isEqual(to other: SecretBytes) -> Bool {
        withUnsafeBytes { mine in other.withUnsafeBytes { ConstantTime.equal(mine, $0) } }
    }
}

/// Zeroing that the optimiser may not remove as a dead store (`explicit_bzero`).
public enum SecureMemory {
    public static func zero(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        explicit_bzero(base, buffer.count)
    }

    /// Clears an array's storage in place (its length stays).
    public static func zero(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { zero($0) }
    }

    /// Runs `body` with `byteCount` bytes of scratch memory that are zeroed before and after.
    static func withScratch<Result>(byteCount: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> Result) rethrows -> Result {
        try withUnsafeTemporaryAllocation(byteCount: byteCount, alignment: 16) { scratch in
            scratch.initializeMemory(as: UInt8.self, repeating: 0)
            defer { zero(scratch) }
            return try body(scratch)
        }
    }
}

/// Comparisons whose running time does not depend on the bytes compared.
public enum ConstantTime {
    /// True if both buffers hold the same bytes. Lengths are public and compared first;
    /// the contents are always read in full (no early exit on the first difference).
    public static func equal(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<lhs.count {
            difference |= lhs[index] ^ rhs[index]
        }
        return difference == 0
    }

    public static func equal(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { equal(left, $0) } }
    }
}

/// Failures of the cryptographic primitives.
public enum CryptoError: Error, Equatable, CustomStringConvertible {
    /// A key of the wrong length (`expected` bytes).
    case invalidKeySize(expected: Int)
    /// A nonce of the wrong length (`expected` bytes).
    case invalidNonceSize(expected: Int)
    /// Longer than the cipher can encrypt under one nonce.
    case messageTooLong
    /// The tag did not match: wrong key, or the data, nonce or associated data were changed.
    case authenticationFailed
    /// The kernel's random generator failed with this errno.
    case randomUnavailable(Int32)

    public var description: String {
        switch self {
        case .invalidKeySize(let expected): "the key must be \(expected) bytes"
        case .invalidNonceSize(let expected): "the nonce must be \(expected) bytes"
        case .messageTooLong: "the message is too long to encrypt"
        case .authenticationFailed: "authentication failed (wrong key, or the data was changed)"
        case .randomUnavailable(let code): "the kernel's random generator failed: \(String(cString: strerror(code)))"
        }
    }
}

/// SHA-256 (FIPS 180-4), written here because the package may not depend on a crypto library.
/// Names and verifies content-addressed assets, and is the hash of HMAC-SHA256.
/// `finalize` clears the internal buffers: under HMAC they hold key-derived state.
package struct SHA256 {
    private static let roundConstants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    private var state: [UInt32] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
    ]
    /// Input not yet compressed (always shorter than one 64-byte block between calls).
    private var pending: [UInt8] = []
    private var totalLength: UInt64 = 0

    package init() {
        // Room for a whole block up front: growing would free buffers holding input uncleared.
        pending.reserveCapacity(64)
    }

    /// Lowercase hex digest of `bytes`.
    package static func hexDigest(of bytes: [UInt8]) -> String {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalizeHex()
    }

    package mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    mutating func update(_ buffer: UnsafeRawBufferPointer) {
        totalLength &+= UInt64(buffer.count)
        var index = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, buffer.count)
            pending.append(contentsOf: buffer[0..<take])
            index = take
            guard pending.count == 64 else { return }
            // Moved out (not copied) so that the one buffer is compressed, cleared and reused.
            var block: [UInt8] = []
            swap(&block, &pending)
            block.withUnsafeBytes { compress($0) }
            SecureMemory.zero(&block)
            block.removeAll(keepingCapacity: true)
            pending = block
        }
        while buffer.count - index >= 64 {
            compress(UnsafeRawBufferPointer(rebasing: buffer[index..<(index + 64)]))
            index += 64
        }
        pending.append(contentsOf: buffer[index...])
    }

    package mutating func finalize() -> [UInt8] {
        let bitLength = totalLength &* 8
        var tail = pending
        tail.append(0x80)
        while tail.count % 64 != 56 {
            tail.append(0)
        }
        for shift in stride(from: 56, through: 0, by: -8) {
            tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        tail.withUnsafeBytes { buffer in
            for start in stride(from: 0, to: buffer.count, by: 64) {
                compress(UnsafeRawBufferPointer(rebasing: buffer[start..<(start + 64)]))
            }
        }
        var digest = [UInt8](repeating: 0, count: 32)
        for (index, word) in state.enumerated() {
            for byte in 0..<4 { digest[index * 4 + byte] = UInt8(truncatingIfNeeded: word >> UInt32(24 - 8 * byte)) }
        }
        SecureMemory.zero(&tail)
        SecureMemory.zero(&pending)
        pending.removeAll()
        state.withUnsafeMutableBytes { SecureMemory.zero($0) }
        return digest
    }

    mutating func finalizeHex() -> String {
        Hex.encode(finalize())
    }

    /// One block into `state`. The message schedule lives on the stack and is cleared after use;
    /// the loops read through pointers, without the bounds and uniqueness checks of arrays (every
    /// record file name of a first sync is hashed to find its folder).
    private mutating func compress(_ block: UnsafeRawBufferPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
            for index in 0..<16 {
                schedule[index] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self))
            }
            for index in 16..<64 {
                let s0 = rotateRight(schedule[index - 15], 7) ^ rotateRight(schedule[index - 15], 18) ^ (schedule[index - 15] >> 3)
                let s1 = rotateRight(schedule[index - 2], 17) ^ rotateRight(schedule[index - 2], 19) ^ (schedule[index - 2] >> 10)
                schedule[index] = schedule[index - 16] &+ s0 &+ schedule[index - 7] &+ s1
            }
            state.withUnsafeMutableBufferPointer { state in
                Self.roundConstants.withUnsafeBufferPointer { constants in
                    var a = state[0], b = state[1], c = state[2], d = state[3]
                    var e = state[4], f = state[5], g = state[6], h = state[7]
                    for index in 0..<64 {
                        let sum1 = rotateRight(e, 6) ^ rotateRight(e, 11) ^ rotateRight(e, 25)
                        let choice = (e & f) ^ (~e & g)
                        let temp1 = h &+ sum1 &+ choice &+ constants[index] &+ schedule[index]
                        let sum0 = rotateRight(a, 2) ^ rotateRight(a, 13) ^ rotateRight(a, 22)
                        let majority = (a & b) ^ (a & c) ^ (b & c)
                        let temp2 = sum0 &+ majority
                        h = g; g = f; f = e; e = d &+ temp1
                        d = c; c = b; b = a; a = temp1 &+ temp2
                    }
                    state[0] &+= a; state[1] &+= b; state[2] &+= c; state[3] &+= d
                    state[4] &+= e; state[5] &+= f; state[6] &+= g; state[7] &+= h
                }
            }
            SecureMemory.zero(UnsafeMutableRawBufferPointer(schedule))
        }
    }

}

private func rotateRight(_ value: UInt32, _ count: UInt32) -> UInt32 {
    (value >> count) | (value << (32 - count))
}

/// Poly1305 (RFC 8439 §2.5): a one-time authenticator over GF(2^130 − 5).
///
/// The accumulator and `r` are held in three limbs of 44, 44 and 42 bits, multiplied
/// into 128-bit products (the layout of poly1305-donna-64). Every block costs the same
/// instructions whatever the key and message; the final reduction selects with masks,
/// not branches.
struct Poly1305 {
    static let keyByteCount = 32
    static let tagByteCount = 16
    static let blockByteCount = 16

    private static let mask44: UInt64 = 0xfff_ffff_ffff
    private static let mask42: UInt64 = 0x3ff_ffff_ffff
    /// 2^128 in the top limb: the bit appended to every full 16-byte block.
    private static let fullBlockBit: UInt64 = 1 << 40

    private let r0: UInt64, r1: UInt64, r2: UInt64
    /// r1 and r2 times 20: a product's part above 2^130 folds back multiplied by 5 (2^130 ≡ 5),
    /// and limb positions 44·3 = 132 = 130 + 2 add the factor 4.
    private let s1: UInt64, s2: UInt64
    private let pad0: UInt64, pad1: UInt64
    private var h0: UInt64 = 0, h1: UInt64 = 0, h2: UInt64 = 0

    /// `key` is the 32-byte one-time key: r (clamped here) then s.
    init(key: UnsafeRawBufferPointer) {
        precondition(key.count == Self.keyByteCount)
        let t0 = key.loadLittleEndianUInt64(at: 0), t1 = key.loadLittleEndianUInt64(at: 8)
        r0 = t0 & 0xffc_0fff_ffff
        r1 = ((t0 >> 44) | (t1 << 20)) & 0xfff_ffc0_ffff
        r2 = (t1 >> 24) & 0x00f_ffff_fc0f
        s1 = r1 &* 20
        s2 = r2 &* 20
        pad0 = key.loadLittleEndianUInt64(at: 16)
        pad1 = key.loadLittleEndianUInt64(at: 24)
    }

    /// The tag of `message` under `key` (RFC 8439 §2.5.1: a short last block gets a 0x01 byte after it).
    static func authenticate(_ message: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) -> [UInt8] {
        var mac = Poly1305(key: key)
        let whole = message.count - message.count % blockByteCount
        mac.absorbBlocks(UnsafeRawBufferPointer(rebasing: message[0..<whole]), topBit: fullBlockBit)
        if whole < message.count {
            SecureMemory.withScratch(byteCount: blockByteCount) { block in
                let tail = message.count - whole
                block.copyMemory(from: UnsafeRawBufferPointer(rebasing: message[whole...]))
                block[tail] = 1
                mac.absorbBlocks(UnsafeRawBufferPointer(block), topBit: 0)
            }
        }
        return mac.finalize()
    }

    /// Absorbs `bytes`, zero-padding a short last block to 16 bytes (the AEAD's pad16, RFC 8439 §2.8).
    mutating func absorbPadded(_ bytes: UnsafeRawBufferPointer) {
        let whole = bytes.count - bytes.count % Self.blockByteCount
        absorbBlocks(UnsafeRawBufferPointer(rebasing: bytes[0..<whole]), topBit: Self.fullBlockBit)
        guard whole < bytes.count else { return }
        SecureMemory.withScratch(byteCount: Self.blockByteCount) { block in
            block.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[whole...]))
            absorbBlocks(UnsafeRawBufferPointer(block), topBit: Self.fullBlockBit)
        }
    }

    /// h = (h + block + topBit·2^128) · r mod 2^130 − 5, for each 16-byte block (partially reduced).
    private mutating func absorbBlocks(_ blocks: UnsafeRawBufferPointer, topBit: UInt64) {
        var h0 = self.h0, h1 = self.h1, h2 = self.h2
        var offset = 0
        while offset < blocks.count {
            let t0 = blocks.loadLittleEndianUInt64(at: offset), t1 = blocks.loadLittleEndianUInt64(at: offset + 8)
            h0 &+= t0 & Self.mask44
            h1 &+= ((t0 >> 44) | (t1 << 20)) & Self.mask44
            h2 &+= ((t1 >> 24) & Self.mask42) | topBit

            let d0 = Self.product(h0, r0) &+ Self.product(h1, s2) &+ Self.product(h2, s1)
            var d1 = Self.product(h0, r1) &+ Self.product(h1, r0) &+ Self.product(h2, s2)
            var d2 = Self.product(h0, r2) &+ Self.product(h1, r1) &+ Self.product(h2, r0)

            var carry = UInt64(truncatingIfNeeded: d0 >> 44)
            h0 = UInt64(truncatingIfNeeded: d0) & Self.mask44
            d1 &+= UInt128(carry)
            carry = UInt64(truncatingIfNeeded: d1 >> 44)
            h1 = UInt64(truncatingIfNeeded: d1) & Self.mask44
            d2 &+= UInt128(carry)
            carry = UInt64(truncatingIfNeeded: d2 >> 42)
            h2 = UInt64(truncatingIfNeeded: d2) & Self.mask42
            h0 &+= carry &* 5
            carry = h0 >> 44
            h0 &= Self.mask44
            h1 &+= carry
            offset += Self.blockByteCount
        }
        self.h0 = h0; self.h1 = h1; self.h2 = h2
    }

    @inline(__always)
    private static func product(_ a: UInt64, _ b: UInt64) -> UInt128 {
        UInt128(a) &* UInt128(b)
    }

    /// The 16-byte tag: h fully reduced mod 2^130 − 5, plus s, mod 2^128.
    mutating func finalize() -> [UInt8] {
        var h0 = self.h0, h1 = self.h1, h2 = self.h2
        var carry = h1 >> 44; h1 &= Self.mask44
        h2 &+= carry; carry = h2 >> 42; h2 &= Self.mask42
        h0 &+= carry &* 5; carry = h0 >> 44; h0 &= Self.mask44
        h1 &+= carry; carry = h1 >> 44; h1 &= Self.mask44
        h2 &+= carry; carry = h2 >> 42; h2 &= Self.mask42
        h0 &+= carry &* 5; carry = h0 >> 44; h0 &= Self.mask44
        h1 &+= carry

        // g = h + 5 − 2^130; if that did not go negative, h ≥ p and g is the reduced value.
        var g0 = h0 &+ 5; carry = g0 >> 44; g0 &= Self.mask44
        var g1 = h1 &+ carry; carry = g1 >> 44; g1 &= Self.mask44
        var g2 = h2 &+ carry &- (1 << 42)
        let useG = (g2 >> 63) &- 1  // all ones when g2 did not borrow
        g0 &= useG; g1 &= useG; g2 &= useG
        h0 = (h0 & ~useG) | g0
        h1 = (h1 & ~useG) | g1
        h2 = (h2 & ~useG) | g2

        h0 &+= pad0 & Self.mask44; carry = h0 >> 44; h0 &= Self.mask44
        h1 &+= (((pad0 >> 44) | (pad1 << 20)) & Self.mask44) &+ carry; carry = h1 >> 44; h1 &= Self.mask44
        h2 &+= ((pad1 >> 24) & Self.mask42) &+ carry; h2 &= Self.mask42

        let low = h0 | (h1 << 44), high = (h1 >> 20) | (h2 << 24)
        self.h0 = 0; self.h1 = 0; self.h2 = 0
        var tag = [UInt8](repeating: 0, count: Self.tagByteCount)
        tag.withUnsafeMutableBytes { out in
            out.storeBytes(of: low.littleEndian, toByteOffset: 0, as: UInt64.self)
            out.storeBytes(of: high.littleEndian, toByteOffset: 8, as: UInt64.self)
        }
        return tag
    }
}

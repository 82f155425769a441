/// The ChaCha20 stream cipher (RFC 8439 §2.3–2.4) and HChaCha20 (draft-irtf-cfrg-xchacha §2.2).
///
/// Only additions, XORs and fixed rotations of 32-bit words: nothing branches on or
/// indexes memory by key or data, so the running time depends on the length alone.
enum ChaCha20 {
    static let keyByteCount = 32
    static let nonceByteCount = 12
    static let blockByteCount = 64
    /// The most blocks one (key, nonce) can produce: the block counter is 32 bits.
    static let maxBlocks = 1 << 32

    /// XORs the keystream of (`key`, `nonce`) from block `counter` on into `buffer`:
    /// encryption and decryption alike. The caller keeps the counter from wrapping.
    static func xorKeystream(
        into buffer: UnsafeMutableRawBufferPointer, key: UnsafeRawBufferPointer,
        nonce: UnsafeRawBufferPointer, counter: UInt32
    ) {
        precondition(key.count == keyByteCount && nonce.count == nonceByteCount)
        guard let base = buffer.baseAddress else { return }
        var input = ChaChaState<UInt32>(key: key, counter: counter, nonce: nonce)
        var offset = 0
        // Four blocks at a time in SIMD lanes, then single blocks, then a partial one.
        while buffer.count - offset >= 4 * blockByteCount {
            let lanes = ChaChaState<SIMD4<UInt32>>(fourBlocksFrom: input)
            var blocks = lanes
            blocks.permute()
            blocks.add(lanes)
            blocks.xor(into: base + offset)
            input.w12 &+= 4
            offset += 4 * blockByteCount
        }
        while buffer.count - offset >= blockByteCount {
            var block = input
            block.permute()
            block.add(input)
            block.xor(into: base + offset)
            input.w12 &+= 1
            offset += blockByteCount
        }
        guard offset < buffer.count else { return }
        var block = input
        block.permute()
        block.add(input)
        SecureMemory.withScratch(byteCount: blockByteCount) { keystream in
            block.xor(into: keystream.baseAddress!)
            for index in 0..<(buffer.count - offset) {
                buffer[offset + index] ^= keystream[index]
            }
        }
    }

    /// One 64-byte keystream block (RFC 8439 §2.3.2; block 0 is the AEAD's Poly1305 key, §2.6).
    static func block(key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, counter: UInt32) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: blockByteCount)
        block.withUnsafeMutableBytes { xorKeystream(into: $0, key: key, nonce: nonce, counter: counter) }
        return block
    }

    /// HChaCha20: a 32-byte subkey from the key and a 16-byte nonce, written to `subkey`.
    static func hChaCha20(key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, into subkey: UnsafeMutableRawBufferPointer) {
        precondition(key.count == keyByteCount && nonce.count == 16 && subkey.count == 32)
        var state = ChaChaState<UInt32>(
            key: key, counter: nonce.loadLittleEndianUInt32(at: 0),
            nonce: UnsafeRawBufferPointer(rebasing: nonce[4..<16]))
        state.permute()
        let out = subkey.baseAddress!
        // The first and last rows: the words an observer could compute from the public
        // constants and nonce if the rounds were undone (the XSalsa20 security argument).
        out.storeBytes(of: state.w0.littleEndian, toByteOffset: 0, as: UInt32.self)
        out.storeBytes(of: state.w1.littleEndian, toByteOffset: 4, as: UInt32.self)
        out.storeBytes(of: state.w2.littleEndian, toByteOffset: 8, as: UInt32.self)
        out.storeBytes(of: state.w3.littleEndian, toByteOffset: 12, as: UInt32.self)
        out.storeBytes(of: state.w12.littleEndian, toByteOffset: 16, as: UInt32.self)
        out.storeBytes(of: state.w13.littleEndian, toByteOffset: 20, as: UInt32.self)
        out.storeBytes(of: state.w14.littleEndian, toByteOffset: 24, as: UInt32.self)
        out.storeBytes(of: state.w15.littleEndian, toByteOffset: 28, as: UInt32.self)
    }
}

/// A 32-bit ChaCha word, or four of them side by side (one per block) in SIMD lanes.
protocol ChaChaWord {
    static func &+ (lhs: Self, rhs: Self) -> Self
    static func ^ (lhs: Self, rhs: Self) -> Self
    func rotatedLeft(by count: UInt32) -> Self
}

extension UInt32: ChaChaWord {
    @inline(__always)
    func rotatedLeft(by count: UInt32) -> UInt32 { self &<< count | self &>> (32 - count) }
}

extension SIMD4: ChaChaWord where Scalar == UInt32 {
    /// Joined with `&+`, not `|`: the optimiser turns the OR of two shifts into a rotate,
    /// which SSE2 lacks, and then splits the vector into scalars.
    @inline(__always)
    func rotatedLeft(by count: UInt32) -> SIMD4<UInt32> { (self &<< count) &+ (self &>> (32 - count)) }
}

/// The sixteen-word ChaCha state. Stored properties rather than an array so that the
/// optimiser keeps the words in registers, with no bounds checks and no allocation.
struct ChaChaState<Word: ChaChaWord> {
    var w0: Word, w1: Word, w2: Word, w3: Word, w4: Word, w5: Word, w6: Word, w7: Word
    var w8: Word, w9: Word, w10: Word, w11: Word, w12: Word, w13: Word, w14: Word, w15: Word

    /// The 20 rounds: ten column rounds, each followed by a diagonal round.
    @inline(__always)
    mutating func permute() {
        for _ in 0..<10 {
            Self.quarterRound(&w0, &w4, &w8, &w12)
            Self.quarterRound(&w1, &w5, &w9, &w13)
            Self.quarterRound(&w2, &w6, &w10, &w14)
            Self.quarterRound(&w3, &w7, &w11, &w15)
            Self.quarterRound(&w0, &w5, &w10, &w15)
            Self.quarterRound(&w1, &w6, &w11, &w12)
            Self.quarterRound(&w2, &w7, &w8, &w13)
            Self.quarterRound(&w3, &w4, &w9, &w14)
        }
    }

    @inline(__always)
    static func quarterRound(_ a: inout Word, _ b: inout Word, _ c: inout Word, _ d: inout Word) {
        a = a &+ b; d = (d ^ a).rotatedLeft(by: 16)
        c = c &+ d; b = (b ^ c).rotatedLeft(by: 12)
        a = a &+ b; d = (d ^ a).rotatedLeft(by: 8)
        c = c &+ d; b = (b ^ c).rotatedLeft(by: 7)
    }

    /// Adds the input words (the feed-forward that makes the block function one-way).
    @inline(__always)
    mutating func add(_ input: ChaChaState) {
        w0 = w0 &+ input.w0; w1 = w1 &+ input.w1; w2 = w2 &+ input.w2; w3 = w3 &+ input.w3
        w4 = w4 &+ input.w4; w5 = w5 &+ input.w5; w6 = w6 &+ input.w6; w7 = w7 &+ input.w7
        w8 = w8 &+ input.w8; w9 = w9 &+ input.w9; w10 = w10 &+ input.w10; w11 = w11 &+ input.w11
        w12 = w12 &+ input.w12; w13 = w13 &+ input.w13; w14 = w14 &+ input.w14; w15 = w15 &+ input.w15
    }
}

extension ChaChaState<UInt32> {
    /// Constants, key, block counter and 96-bit nonce, all little-endian words.
    @inline(__always)
    init(key: UnsafeRawBufferPointer, counter: UInt32, nonce: UnsafeRawBufferPointer) {
        w0 = 0x6170_7865; w1 = 0x3320_646e; w2 = 0x7962_2d32; w3 = 0x6b20_6574
        w4 = key.loadLittleEndianUInt32(at: 0); w5 = key.loadLittleEndianUInt32(at: 4)
        w6 = key.loadLittleEndianUInt32(at: 8); w7 = key.loadLittleEndianUInt32(at: 12)
        w8 = key.loadLittleEndianUInt32(at: 16); w9 = key.loadLittleEndianUInt32(at: 20)
        w10 = key.loadLittleEndianUInt32(at: 24); w11 = key.loadLittleEndianUInt32(at: 28)
        w12 = counter
        w13 = nonce.loadLittleEndianUInt32(at: 0); w14 = nonce.loadLittleEndianUInt32(at: 4)
        w15 = nonce.loadLittleEndianUInt32(at: 8)
    }

    /// XORs the state, serialised little-endian, into the 64 bytes at `bytes`.
    @inline(__always)
    func xor(into bytes: UnsafeMutableRawPointer) {
        Self.xor(w0, bytes, 0); Self.xor(w1, bytes, 4); Self.xor(w2, bytes, 8); Self.xor(w3, bytes, 12)
        Self.xor(w4, bytes, 16); Self.xor(w5, bytes, 20); Self.xor(w6, bytes, 24); Self.xor(w7, bytes, 28)
        Self.xor(w8, bytes, 32); Self.xor(w9, bytes, 36); Self.xor(w10, bytes, 40); Self.xor(w11, bytes, 44)
        Self.xor(w12, bytes, 48); Self.xor(w13, bytes, 52); Self.xor(w14, bytes, 56); Self.xor(w15, bytes, 60)
    }

    @inline(__always)
    private static func xor(_ word: UInt32, _ bytes: UnsafeMutableRawPointer, _ offset: Int) {
        let current = bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
        bytes.storeBytes(of: current ^ word.littleEndian, toByteOffset: offset, as: UInt32.self)
    }
}

extension ChaChaState<SIMD4<UInt32>> {
    /// Blocks n, n+1, n+2 and n+3 of `state` (whose counter is n), one per lane.
    @inline(__always)
    init(fourBlocksFrom state: ChaChaState<UInt32>) {
        w0 = .init(repeating: state.w0); w1 = .init(repeating: state.w1); w2 = .init(repeating: state.w2); w3 = .init(repeating: state.w3)
        w4 = .init(repeating: state.w4); w5 = .init(repeating: state.w5); w6 = .init(repeating: state.w6); w7 = .init(repeating: state.w7)
        w8 = .init(repeating: state.w8); w9 = .init(repeating: state.w9); w10 = .init(repeating: state.w10);
        w11 = .init(repeating: state.w11)
        w12 = SIMD4(repeating: state.w12) &+ SIMD4(0, 1, 2, 3)
        w13 = .init(repeating: state.w13); w14 = .init(repeating: state.w14); w15 = .init(repeating: state.w15)
    }

    /// XORs the four blocks, serialised little-endian, into the 256 bytes at `bytes`.
    @inline(__always)
    func xor(into bytes: UnsafeMutableRawPointer) {
        Self.xor(w0, w1, w2, w3, bytes, 0)
        Self.xor(w4, w5, w6, w7, bytes, 16)
        Self.xor(w8, w9, w10, w11, bytes, 32)
        Self.xor(w12, w13, w14, w15, bytes, 48)
    }

    /// `a`…`d` are words j…j+3 of the four blocks (lane = block): transposed, they are
    /// 16 consecutive keystream bytes of each block, at `offset` within it.
    @inline(__always)
    private static func xor(
        _ a: SIMD4<UInt32>, _ b: SIMD4<UInt32>, _ c: SIMD4<UInt32>, _ d: SIMD4<UInt32>,
        _ bytes: UnsafeMutableRawPointer, _ offset: Int
    ) {
        let ab01 = SIMD4(a[0], b[0], a[1], b[1]), ab23 = SIMD4(a[2], b[2], a[3], b[3])
        let cd01 = SIMD4(c[0], d[0], c[1], d[1]), cd23 = SIMD4(c[2], d[2], c[3], d[3])
        xor(SIMD4(ab01[0], ab01[1], cd01[0], cd01[1]), bytes + offset)
        xor(SIMD4(ab01[2], ab01[3], cd01[2], cd01[3]), bytes + 64 + offset)
        xor(SIMD4(ab23[0], ab23[1], cd23[0], cd23[1]), bytes + 128 + offset)
        xor(SIMD4(ab23[2], ab23[3], cd23[2], cd23[3]), bytes + 192 + offset)
    }

    @inline(__always)
    private static func xor(_ words: SIMD4<UInt32>, _ bytes: UnsafeMutableRawPointer) {
        let current = bytes.loadUnaligned(as: SIMD4<UInt32>.self)
        bytes.storeBytes(
            of: current ^ SIMD4(words[0].littleEndian, words[1].littleEndian, words[2].littleEndian, words[3].littleEndian),
            as: SIMD4<UInt32>.self)
    }
}

extension UnsafeRawBufferPointer {
    /// The little-endian word at `offset` (no alignment required).
    @inline(__always)
    func loadLittleEndianUInt32(at offset: Int) -> UInt32 {
        UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    func loadLittleEndianUInt64(at offset: Int) -> UInt64 {
        UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}

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
    static func xorKeystream(into buffer: UnsafeMutableRawBufferPointer, key: UnsafeRawBufferPointer,
                             nonce: UnsafeRawBufferPointer, counter: UInt32) {
        precondition(key.count == keyByteCount && nonce.count == nonceByteCount)
        guard let base = buffer.baseAddress else { return }
        var input = ChaChaState(key: key, counter: counter, nonce: nonce)
        var offset = 0
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
        var state = ChaChaState(key: key, counter: nonce.loadLittleEndianUInt32(at: 0),
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

/// The sixteen-word ChaCha state. Stored properties rather than an array so that the
/// optimiser keeps the words in registers, with no bounds checks and no allocation.
struct ChaChaState {
    var w0: UInt32 = 0x6170_7865, w1: UInt32 = 0x3320_646e, w2: UInt32 = 0x7962_2d32, w3: UInt32 = 0x6b20_6574
    var w4: UInt32, w5: UInt32, w6: UInt32, w7: UInt32, w8: UInt32, w9: UInt32, w10: UInt32, w11: UInt32
    var w12: UInt32, w13: UInt32, w14: UInt32, w15: UInt32

    /// Constants, key, block counter and 96-bit nonce, all little-endian words.
    @inline(__always)
    init(key: UnsafeRawBufferPointer, counter: UInt32, nonce: UnsafeRawBufferPointer) {
        w4 = key.loadLittleEndianUInt32(at: 0); w5 = key.loadLittleEndianUInt32(at: 4)
        w6 = key.loadLittleEndianUInt32(at: 8); w7 = key.loadLittleEndianUInt32(at: 12)
        w8 = key.loadLittleEndianUInt32(at: 16); w9 = key.loadLittleEndianUInt32(at: 20)
        w10 = key.loadLittleEndianUInt32(at: 24); w11 = key.loadLittleEndianUInt32(at: 28)
        w12 = counter
        w13 = nonce.loadLittleEndianUInt32(at: 0); w14 = nonce.loadLittleEndianUInt32(at: 4)
        w15 = nonce.loadLittleEndianUInt32(at: 8)
    }

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
    static func quarterRound(_ a: inout UInt32, _ b: inout UInt32, _ c: inout UInt32, _ d: inout UInt32) {
        a &+= b; d ^= a; d = d &<< 16 | d &>> 16
        c &+= d; b ^= c; b = b &<< 12 | b &>> 20
        a &+= b; d ^= a; d = d &<< 8 | d &>> 24
        c &+= d; b ^= c; b = b &<< 7 | b &>> 25
    }

    /// Adds the input words (the feed-forward that makes the block function one-way).
    @inline(__always)
    mutating func add(_ input: ChaChaState) {
        w0 &+= input.w0; w1 &+= input.w1; w2 &+= input.w2; w3 &+= input.w3
        w4 &+= input.w4; w5 &+= input.w5; w6 &+= input.w6; w7 &+= input.w7
        w8 &+= input.w8; w9 &+= input.w9; w10 &+= input.w10; w11 &+= input.w11
        w12 &+= input.w12; w13 &+= input.w13; w14 &+= input.w14; w15 &+= input.w15
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

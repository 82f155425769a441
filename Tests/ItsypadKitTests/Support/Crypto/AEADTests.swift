import Testing

@testable import ItsypadSupport

@Suite("ChaCha20-Poly1305 and XChaCha20-Poly1305")
struct AEADTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String, key: String, nonce: String, associatedData: String, plaintext: [UInt8], ciphertext: String, tag: String
        var testDescription: String { name }
    }

    /// RFC 8439 §2.8.2 (encryption) and Appendix A.5 (decryption).
    static let chachaVectors = [
        Vector(
            name: "§2.8.2", key: "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f",
            nonce: "070000004041424344454647", associatedData: "50515253c0c1c2c3c4c5c6c7", plaintext: SampleText.sunscreen,
            ciphertext: "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b"
                + "1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
                + "3ff4def08e4b7a9de576d26586cec64b6116",
            tag: "1ae10b594f09e26a7e902ecbd0600691"),
        Vector(
            name: "A.5", key: "1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0",
            nonce: "000000000102030405060708", associatedData: "f33388860000000000004e91", plaintext: SampleText.internetDrafts,
            ciphertext: "64a0861575861af460f062c79be643bd5e805cfd345cf389f108670ac76c8cb24c6cfc18755d43eea09ee94e382d26b0"
                + "bdb7b73c321b0100d4f03b7f355894cf332f830e710b97ce98c8a84abd0b948114ad176e008d33bd60f982b1ff37c855"
                + "9797a06ef4f0ef61c186324e2b3506383606907b6a7c02b0f9f6157b53c867e4b9166c767b804d46a59b5216cde7a4e9"
                + "9040c5a40433225ee282a1b0a06c523eaf4534d7f83fa1155b0047718cbc546a0d072b04b3564eea1b422273f548271a"
                + "0bb2316053fa76991955ebd63159434ecebb4e466dae5a1073a6727627097a1049e617d91d361094fa68f0ff77987130"
                + "305beaba2eda04df997b714d6c6f2c29a6ad5cb4022b02709b",
            tag: "eead9d67890cbb22392336fea1851f38"),
    ]

    @Test("RFC 8439 AEAD vectors", arguments: chachaVectors)
    func chacha(vector: Vector) throws {
        let sealed = hex(vector.ciphertext) + hex(vector.tag)
        #expect(
            try ChaCha20Poly1305.seal(
                vector.plaintext, key: key(vector.key), nonce: hex(vector.nonce),
                authenticating: hex(vector.associatedData)) == sealed)
        #expect(
            try ChaCha20Poly1305.open(
                sealed, key: key(vector.key), nonce: hex(vector.nonce),
                authenticating: hex(vector.associatedData)) == vector.plaintext)
    }

    /// draft-irtf-cfrg-xchacha-03 Appendix A.1 / A.3.1.
    @Test("XChaCha20-Poly1305 draft vector")
    func xchacha() throws {
        let nonce = hex("404142434445464748494a4b4c4d4e4f5051525354555657")
        let associatedData = hex("50515253c0c1c2c3c4c5c6c7")
        let sealed = hex(
            "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb731c7f1b0b4aa6440bf3a82f4eda7e39"
                + "ae64c6708c54c216cb96b72e1213b4522f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9"
                + "21f9664c97637da9768812f615c68b13b52e" + "c0875924c1c7987947deafd8780acf49")
        #expect(
            try XChaCha20Poly1305.seal(SampleText.sunscreen, key: sequentialKey80, nonce: nonce, authenticating: associatedData) == sealed)
        #expect(
            try XChaCha20Poly1305.open(sealed, key: sequentialKey80, nonce: nonce, authenticating: associatedData) == SampleText.sunscreen)
    }

    @Test("every single-bit change to ciphertext, tag, nonce or associated data is refused")
    func bitFlips() throws {
        let nonce = hex("404142434445464748494a4b4c4d4e4f5051525354555657")
        let associatedData = Array("zone/type/name".utf8)
        let sealed = try XChaCha20Poly1305.seal(
            Array("secret clipboard text".utf8), key: sequentialKey, nonce: nonce, authenticating: associatedData)
        func refused(_ sealed: [UInt8], _ nonce: [UInt8], _ associatedData: [UInt8]) -> Bool {
            (try? XChaCha20Poly1305.open(sealed, key: sequentialKey, nonce: nonce, authenticating: associatedData)) == nil
        }
        for bit in 0..<(sealed.count * 8) {
            var changed = sealed
            changed[bit / 8] ^= 1 << (bit % 8)
            #expect(refused(changed, nonce, associatedData), "bit \(bit) of the sealed bytes")
        }
        for bit in 0..<(nonce.count * 8) {
            var changed = nonce
            changed[bit / 8] ^= 1 << (bit % 8)
            #expect(refused(sealed, changed, associatedData), "bit \(bit) of the nonce")
        }
        #expect(refused(sealed, nonce, associatedData + [0]))
        #expect(refused(sealed, nonce, Array(associatedData.dropLast())))
        #expect(refused(Array(sealed.dropLast()), nonce, associatedData))
        #expect(refused(Array(sealed.prefix(15)), nonce, associatedData))
        #expect(throws: CryptoError.authenticationFailed) {
            try XChaCha20Poly1305.open(sealed, key: sequentialKey80, nonce: nonce, authenticating: associatedData)
        }
    }

    @Test("keys and nonces of the wrong length are refused")
    func sizes() {
        #expect(throws: CryptoError.invalidKeySize(expected: 32)) {
            try ChaCha20Poly1305.seal([], key: key("00"), nonce: [UInt8](repeating: 0, count: 12))
        }
        #expect(throws: CryptoError.invalidNonceSize(expected: 12)) {
            try ChaCha20Poly1305.open([UInt8](repeating: 0, count: 16), key: sequentialKey, nonce: [UInt8](repeating: 0, count: 24))
        }
        #expect(throws: CryptoError.invalidNonceSize(expected: 24)) {
            try XChaCha20Poly1305.seal([], key: sequentialKey, nonce: [UInt8](repeating: 0, count: 12))
        }
    }

    @Test("messages of every length up to ten blocks round-trip")
    func lengths() throws {
        let nonce = try SecureRandom.bytes(24)
        for length in 0...640 {
            let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
            let sealed = try XChaCha20Poly1305.seal(
                plaintext, key: sequentialKey, nonce: nonce, authenticating: [UInt8(truncatingIfNeeded: length)])
            #expect(sealed.count == length + 16)
            #expect(
                try XChaCha20Poly1305.open(sealed, key: sequentialKey, nonce: nonce, authenticating: [UInt8(truncatingIfNeeded: length)])
                    == plaintext)
        }
    }
}

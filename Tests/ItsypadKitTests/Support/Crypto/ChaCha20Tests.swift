import Testing

@testable import ItsypadSupport

@Suite("ChaCha20 and HChaCha20")
struct ChaCha20Tests {
    struct BlockVector: Sendable, CustomTestStringConvertible {
        let name: String, key: String, nonce: String, counter: UInt32, block: String
        var testDescription: String { name }
    }

    /// RFC 8439 §2.3.2 and Appendix A.1 (test vectors #1–#5).
    static let blockVectors = [
        BlockVector(
            name: "§2.3.2", key: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
            nonce: "000000090000004a00000000", counter: 1,
            block: "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
                + "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"),
        BlockVector(
            name: "A.1 #1", key: String(repeating: "00", count: 32), nonce: String(repeating: "00", count: 12), counter: 0,
            block: "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
                + "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"),
        BlockVector(
            name: "A.1 #2", key: String(repeating: "00", count: 32), nonce: String(repeating: "00", count: 12), counter: 1,
            block: "9f07e7be5551387a98ba977c732d080dcb0f29a048e3656912c6533e32ee7aed"
                + "29b721769ce64e43d57133b074d839d531ed1f28510afb45ace10a1f4b794d6f"),
        BlockVector(
            name: "A.1 #3", key: String(repeating: "00", count: 31) + "01", nonce: String(repeating: "00", count: 12), counter: 1,
            block: "3aeb5224ecf849929b9d828db1ced4dd832025e8018b8160b82284f3c949aa5a"
                + "8eca00bbb4a73bdad192b5c42f73f2fd4e273644c8b36125a64addeb006c13a0"),
        BlockVector(
            name: "A.1 #4", key: "00ff" + String(repeating: "00", count: 30), nonce: String(repeating: "00", count: 12), counter: 2,
            block: "72d54dfbf12ec44b362692df94137f328fea8da73990265ec1bbbea1ae9af0ca"
                + "13b25aa26cb4a648cb9b9d1be65b2c0924a66c54d545ec1b7374f4872e99f096"),
        BlockVector(
            name: "A.1 #5", key: String(repeating: "00", count: 32), nonce: String(repeating: "00", count: 11) + "02", counter: 0,
            block: "c2c64d378cd536374ae204b9ef933fcd1a8b2288b3dfa49672ab765b54ee27c7"
                + "8a970e0e955c14f3a88e741b97c286f75f8fc299e8148362fa198a39531bed6d"),
    ]

    @Test("RFC 8439 block function vectors", arguments: blockVectors)
    func blockFunction(vector: BlockVector) {
        let block = hex(vector.key).withUnsafeBytes { key in
            hex(vector.nonce).withUnsafeBytes { ChaCha20.block(key: key, nonce: $0, counter: vector.counter) }
        }
        #expect(block == hex(vector.block))
    }

    struct EncryptionVector: Sendable, CustomTestStringConvertible {
        let name: String, key: String, nonce: String, counter: UInt32, plaintext: [UInt8], ciphertext: String
        var testDescription: String { name }
    }

    /// RFC 8439 §2.4.2 and Appendix A.2 (test vectors #1–#3).
    static let encryptionVectors = [
        EncryptionVector(
            name: "§2.4.2 sunscreen", key: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
            nonce: "000000000000004a00000000", counter: 1, plaintext: SampleText.sunscreen,
            ciphertext: "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0bf91b65c5524733ab8f593dabcd62b357"
                + "1639d624e65152ab8f530c359f0861d807ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
                + "5af90bbf74a35be6b40b8eedf2785e42874d"),
        EncryptionVector(
            name: "A.2 #1", key: String(repeating: "00", count: 32), nonce: String(repeating: "00", count: 12), counter: 0,
            plaintext: [UInt8](repeating: 0, count: 64),
            ciphertext: "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
                + "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"),
        EncryptionVector(
            name: "A.2 #2", key: String(repeating: "00", count: 31) + "01", nonce: String(repeating: "00", count: 11) + "02",
            counter: 1, plaintext: SampleText.ietfContribution,
            ciphertext: "a3fbf07df3fa2fde4f376ca23e82737041605d9f4f4f57bd8cff2c1d4b7955ec2a97948bd3722915c8f3d337f7d37005"
                + "0e9e96d647b7c39f56e031ca5eb6250d4042e02785ececfa4b4bb5e8ead0440e20b6e8db09d881a7c6132f420e527950"
                + "42bdfa7773d8a9051447b3291ce1411c680465552aa6c405b7764d5e87bea85ad00f8449ed8f72d0d662ab052691ca66"
                + "424bc86d2df80ea41f43abf937d3259dc4b2d0dfb48a6c9139ddd7f76966e928e635553ba76c5c879d7b35d49eb2e62b"
                + "0871cdac638939e25e8a1e0ef9d5280fa8ca328b351c3c765989cbcf3daa8b6ccc3aaf9f3979c92b3720fc88dc95ed84"
                + "a1be059c6499b9fda236e7e818b04b0bc39c1e876b193bfe5569753f88128cc08aaa9b63d1a16f80ef2554d7189c411f"
                + "5869ca52c5b83fa36ff216b9c1d30062bebcfd2dc5bce0911934fda79a86f6e698ced759c3ff9b6477338f3da4f9cd85"
                + "14ea9982ccafb341b2384dd902f3d1ab7ac61dd29c6f21ba5b862f3730e37cfdc4fd806c22f221"),
        EncryptionVector(
            name: "A.2 #3", key: "1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0",
            nonce: String(repeating: "00", count: 11) + "02", counter: 42, plaintext: SampleText.jabberwocky,
            ciphertext: "62e6347f95ed87a45ffae7426f27a1df5fb69110044c0d73118effa95b01e5cf166d3df2d721caf9b21e5fb14c616871"
                + "fd84c54f9d65b283196c7fe4f60553ebf39c6402c42234e32a356b3e764312a61a5532055716ead6962568f87d3f3f77"
                + "04c6a8d1bcd1bf4d50d6154b6da731b187b58dfd728afa36757a797ac188d1"),
    ]

    @Test("RFC 8439 encryption vectors, both ways", arguments: encryptionVectors)
    func encryption(vector: EncryptionVector) {
        func transform(_ input: [UInt8]) -> [UInt8] {
            var output = input
            hex(vector.key).withUnsafeBytes { key in
                hex(vector.nonce).withUnsafeBytes { nonce in
                    output.withUnsafeMutableBytes { ChaCha20.xorKeystream(into: $0, key: key, nonce: nonce, counter: vector.counter) }
                }
            }
            return output
        }
        #expect(transform(vector.plaintext) == hex(vector.ciphertext))
        #expect(transform(hex(vector.ciphertext)) == vector.plaintext)
    }

    /// RFC 8439 §2.6.2 and Appendix A.4: the Poly1305 key is the first half of block 0.
    @Test(
        "RFC 8439 Poly1305 key generation vectors",
        arguments: [
            (
                "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f", "000000000001020304050607",
                "8ad5a08b905f81cc815040274ab29471a833b637e3fd0da508dbb8e2fdd1a646"
            ),
            (
                String(repeating: "00", count: 32), String(repeating: "00", count: 12),
                "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
            ),
            (
                String(repeating: "00", count: 31) + "01", String(repeating: "00", count: 11) + "02",
                "ecfa254f845f647473d3cb140da9e87606cb33066c447b87bc2666dde3fbb739"
            ),
            (
                "1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0", String(repeating: "00", count: 11) + "02",
                "965e3bc6f9ec7ed9560808f4d229f94b137ff275ca9b3fcbdd59deaad23310ae"
            ),
        ])
    func poly1305KeyGeneration(key: String, nonce: String, oneTimeKey: String) {
        let block = hex(key).withUnsafeBytes { key in hex(nonce).withUnsafeBytes { ChaCha20.block(key: key, nonce: $0, counter: 0) } }
        #expect(Array(block[0..<32]) == hex(oneTimeKey))
    }

    @Test("the keystream does not depend on how the input is split into calls")
    func splitCalls() {
        let input = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let nonce = hex("000000000000004a00000000")
        var whole = input
        sequentialKey.withUnsafeBytes { key in
            nonce.withUnsafeBytes { nonce in
                whole.withUnsafeMutableBytes { ChaCha20.xorKeystream(into: $0, key: key, nonce: nonce, counter: 1) }
                // Two calls: 128 bytes from block 1, then the rest from block 3.
                var parts = input
                parts.withUnsafeMutableBytes { buffer in
                    ChaCha20.xorKeystream(
                        into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<128]), key: key, nonce: nonce, counter: 1)
                    ChaCha20.xorKeystream(into: UnsafeMutableRawBufferPointer(rebasing: buffer[128...]), key: key, nonce: nonce, counter: 3)
                }
                #expect(parts == whole)
            }
        }
        #expect(whole != input)
    }

    /// draft-irtf-cfrg-xchacha-03 §2.2.1.
    @Test("HChaCha20 test vector")
    func hChaCha20() {
        var subkey = [UInt8](repeating: 0, count: 32)
        sequentialKey.withUnsafeBytes { key in
            hex("000000090000004a0000000031415927").withUnsafeBytes { nonce in
                subkey.withUnsafeMutableBytes { ChaCha20.hChaCha20(key: key, nonce: nonce, into: $0) }
            }
        }
        #expect(subkey == hex("82413b42 27b27bfe d30e4250 8a877d73 a0f9e4d5 8a74a853 c12ec413 26d3ecdc"))
    }

    /// draft-irtf-cfrg-xchacha-03 Appendix A.2 / A.3.2: XChaCha20 with block counter 0 and 1.
    @Test(
        "XChaCha20 stream vectors",
        arguments: [
            (
                UInt32(0),
                "4559abba4e48c16102e8bb2c05e6947f50a786de162f9b0b7e592a9b53d0d4e98d8d6410d540a1a6375b26d80dace4fab52384c731acbf16a5923c0c48d3575d"
                    + "4d0d2c673b666faa731061277701093a6bf7a158a8864292a41c48e3a9b4c0daece0f8d98d0d7e05b37a307bbb66333164ec9e1b24ea0d6c3ffddcec4f68e744"
                    + "3056193a03c810e11344ca06d8ed8a2bfb1e8d48cfa6bc0eb4e2464b748142407c9f431aee769960e15ba8b96890466ef2457599852385c661f752ce20f9da0c"
                    + "09ab6b19df74e76a95967446f8d0fd415e7bee2a12a114c20eb5292ae7a349ae577820d5520a1f3fb62a17ce6a7e68fa7c79111d8860920bc048ef43fe84486c"
                    + "cb87c25f0ae045f0cce1e7989a9aa220a28bdd4827e751a24a6d5c62d790a66393b93111c1a55dd7421a10184974c7c5"
            ),
            (
                UInt32(1),
                "7d0a2e6b7f7c65a236542630294e063b7ab9b555a5d5149aa21e4ae1e4fbce87ecc8e08a8b5e350abe622b2ffa617b202cfad72032a3037e76ffdcdc4376ee05"
                    + "3a190d7e46ca1de04144850381b9cb29f051915386b8a710b8ac4d027b8b050f7cba5854e028d564e453b8a968824173fc16488b8970cac828f11ae53cabd201"
                    + "12f87107df24ee6183d2274fe4c8b1485534ef2c5fbc1ec24bfc3663efaa08bc047d29d25043532db8391a8a3d776bf4372a6955827ccb0cdd4af403a7ce4c63"
                    + "d595c75a43e045f0cce1f29c8b93bd65afc5974922f214a40b7c402cdb91ae73c0b63615cdad0480680f16515a7ace9d39236464328a37743ffc28f4ddb324f4"
                    + "d0f5bbdc270c65b1749a6efff1fbaa09536175ccd29fb9e6057b307320d316838a9c71f70b5b5907a66f7ea49aadc409"
            ),
        ])
    func xChaCha20(counter: UInt32, ciphertext: String) throws {
        let nonce = hex("404142434445464748494a4b4c4d4e4f5051525354555658")
        #expect(
            try XChaCha20Poly1305.xorKeystream(SampleText.dhole, key: sequentialKey80, nonce: nonce, counter: counter) == hex(ciphertext))
        #expect(
            try XChaCha20Poly1305.xorKeystream(hex(ciphertext), key: sequentialKey80, nonce: nonce, counter: counter) == SampleText.dhole)
    }
}

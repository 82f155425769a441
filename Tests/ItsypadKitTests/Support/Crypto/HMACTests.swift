import Testing

@testable import ItsypadSupport

@Suite("HMAC-SHA256 and HKDF")
struct HMACTests {
    /// RFC 4231 §4.2–4.8, the HMAC-SHA-256 results (test case 5 is truncated to 128 bits).
    @Test(
        "RFC 4231 vectors",
        arguments: [
            (
                "1", hex(String(repeating: "0b", count: 20)), Array("Hi There".utf8),
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
            ),
            (
                "2", Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
            ),
            (
                "3", hex(String(repeating: "aa", count: 20)), hex(String(repeating: "dd", count: 50)),
                "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
            ),
            (
                "4", (1...25).map { UInt8($0) }, hex(String(repeating: "cd", count: 50)),
                "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
            ),
            (
                "5 (truncated)", hex(String(repeating: "0c", count: 20)), Array("Test With Truncation".utf8),
                "a3b6167473100ee06e0c796c2955552b"
            ),
            (
                "6", hex(String(repeating: "aa", count: 131)), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
            ),
            (
                "7", hex(String(repeating: "aa", count: 131)),
                Array(
                    ("This is a test using a larger than block-size key and a larger than block-size data. "
                        + "The key needs to be hashed before being used by the HMAC algorithm.").utf8),
                "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
            ),
        ])
    func hmac(testCase: String, key: [UInt8], data: [UInt8], expected: String) {
        let code = key.withUnsafeBytes { HMACSHA256.authenticationCode(for: data, key: $0) }
        #expect(hexString(Array(code.prefix(expected.count / 2))) == expected, "test case \(testCase)")
    }

    @Test("HMAC over data fed in pieces equals HMAC over the whole")
    func incremental() {
        let data = (0..<300).map { UInt8(truncatingIfNeeded: $0) }
        var mac = sequentialKey.withUnsafeBytes { HMACSHA256(key: $0) }
        mac.update(Array(data[0..<1]))
        mac.update(Array(data[1..<130]))
        mac.update(Array(data[130...]))
        #expect(mac.finalize() == HMACSHA256.authenticationCode(for: data, key: sequentialKey))
    }

    /// RFC 5869 Appendix A.1–A.3 (the SHA-256 cases).
    @Test(
        "RFC 5869 vectors",
        arguments: [
            (
                "A.1", hex(String(repeating: "0b", count: 22)), hex("000102030405060708090a0b0c"), hex("f0f1f2f3f4f5f6f7f8f9"), 42,
                "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
                "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
            ),
            (
                "A.2", (0x00...0x4f).map { UInt8($0) }, (0x60...0xaf).map { UInt8($0) }, (0xb0...0xff).map { UInt8($0) }, 82,
                "06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244",
                "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09"
                    + "da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87"
            ),
            (
                "A.3", hex(String(repeating: "0b", count: 22)), [], [], 42,
                "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
                "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"
            ),
        ])
    func hkdf(testCase: String, ikm: [UInt8], salt: [UInt8], info: [UInt8], length: Int, prk: String, okm: String) {
        let pseudorandomKey = HKDF.extract(salt: salt, inputKeyMaterial: SecretBytes(copying: ikm))
        #expect(hexString(pseudorandomKey.bytes) == prk, "\(testCase) PRK")
        #expect(hexString(HKDF.expand(pseudorandomKey: pseudorandomKey, info: info, byteCount: length).bytes) == okm, "\(testCase) OKM")
        #expect(hexString(HKDF.deriveKey(from: SecretBytes(copying: ikm), salt: salt, info: info, byteCount: length).bytes) == okm)
    }

    @Test("constant-time comparison")
    func constantTimeEquality() {
        #expect(ConstantTime.equal([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equal([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equal([1, 2, 3], [0, 2, 3]))
        #expect(!ConstantTime.equal([1, 2, 3], [1, 2]))
        #expect(ConstantTime.equal([], []))
        #expect(key("0102").isEqual(to: key("0102")))
        #expect(!key("0102").isEqual(to: key("0103")))
    }

    @Test("random bytes come from the kernel and differ between calls")
    func random() throws {
        let first = try SecureRandom.bytes(32), second = try SecureRandom.bytes(32)
        #expect(first.count == 32 && first != second)
        #expect(try SecretBytes.random(count: 32).count == 32)
        #expect(try SecureRandom.bytes(0) == [])
    }

    @Test("zeroing clears a buffer in place")
    func zeroing() {
        var bytes: [UInt8] = [1, 2, 3]
        SecureMemory.zero(&bytes)
        #expect(bytes == [0, 0, 0])
    }
}

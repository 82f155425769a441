import Testing

@testable import ItsypadSupport

@Suite("SHA-256")
struct SHA256Tests {
    @Test(
        "FIPS 180-2 test vectors",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
        ])
    func vectors(input: String, expected: String) {
        #expect(SHA256.hexDigest(of: Array(input.utf8)) == expected)
    }

    @Test("one million 'a'")
    func millionA() {
        let input = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(SHA256.hexDigest(of: input) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("feeding the input in uneven pieces gives the same digest")
    func incremental() {
        let input = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var hasher = SHA256()
        var start = 0
        for length in [1, 63, 64, 65, 0, 7, 200] + [Int](repeating: 100, count: 6) {
            let end = min(input.count, start + length)
            hasher.update(Array(input[start..<end]))
            start = end
        }
        hasher.update(Array(input[start...]))
        #expect(hasher.finalizeHex() == SHA256.hexDigest(of: input))
        #expect(SHA256.hexDigest(of: input) != SHA256.hexDigest(of: Array(input.dropLast())))
    }
}

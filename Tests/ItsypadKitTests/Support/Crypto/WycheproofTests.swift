import Testing
@testable import ItsypadKit

/// Project Wycheproof's AEAD test vectors, run in full: every group, valid and invalid.
///
/// Source: the C2SP/wycheproof repository, testvectors_v1/chacha20_poly1305_test.json and
/// testvectors_v1/xchacha20_poly1305_test.json (Apache License 2.0), committed unmodified
/// under Tests/Fixtures/wycheproof/ (see the README there for the exact revision).
@Suite("Wycheproof AEAD vectors")
struct WycheproofTests {
    struct Case {
        let id: Int, key: [UInt8], nonce: [UInt8], associatedData: [UInt8], message: [UInt8], ciphertext: [UInt8], tag: [UInt8]
        let valid: Bool
    }

    /// Every case of a fixture; fails the test loudly if the file is missing, malformed or short.
    static func cases(file: String, algorithm: String, expectedCount: Int) throws -> [Case] {
        var path = #filePath
        for _ in 0..<4 { path = FileSystem.directoryName(path) }
        path += "/Fixtures/wycheproof/" + file
        let bytes = try #require(try FileSystem.read(path), "missing test vector file \(path)")
        let document = try JSONValue.parse(bytes)
        try #require(document["algorithm"]?.stringValue == algorithm)
        try #require(document["numberOfTests"]?.int64Value == Int64(expectedCount), "\(file) should declare \(expectedCount) tests")
        var cases: [Case] = []
        for group in try #require(document["testGroups"]?.arrayValue) {
            for test in try #require(group["tests"]?.arrayValue) {
                func field(_ name: String) throws -> [UInt8] { hex(try #require(test[name]?.stringValue, "tcId field \(name)")) }
                let result = try #require(test["result"]?.stringValue)
                try #require(result == "valid" || result == "invalid", "unexpected result \(result)")
                cases.append(Case(id: Int(try #require(test["tcId"]?.int64Value)), key: try field("key"), nonce: try field("iv"),
                                  associatedData: try field("aad"), message: try field("msg"), ciphertext: try field("ct"),
                                  tag: try field("tag"), valid: result == "valid"))
            }
        }
        try #require(cases.count == expectedCount, "\(file) has \(cases.count) cases, expected \(expectedCount)")
        try #require(cases.contains { $0.valid } && cases.contains { !$0.valid })
        return cases
    }

    typealias Seal = ([UInt8], SecretBytes, [UInt8], [UInt8]) throws -> [UInt8]

    /// Valid cases must seal to exactly ct ‖ tag and open back; invalid ones must fail to open
    /// (and, with a nonce of the wrong size, to seal).
    static func check(_ cases: [Case], nonceSize: Int, seal: Seal, open: Seal) {
        for test in cases {
            let key = SecretBytes(copying: test.key)
            let sealed = test.ciphertext + test.tag
            let opened = try? open(sealed, key, test.nonce, test.associatedData)
            if test.valid {
                #expect((try? seal(test.message, key, test.nonce, test.associatedData)) == sealed, "tcId \(test.id) seal")
                #expect(opened == test.message, "tcId \(test.id) open")
            } else {
                #expect(opened == nil, "tcId \(test.id) must not open")
                if test.nonce.count != nonceSize {
                    #expect(throws: CryptoError.invalidNonceSize(expected: nonceSize), "tcId \(test.id)") {
                        try seal(test.message, key, test.nonce, test.associatedData)
                    }
                }
            }
        }
    }

    @Test("chacha20_poly1305_test.json: all 325 cases")
    func chacha20Poly1305() throws {
        let cases = try Self.cases(file: "chacha20_poly1305_test.json", algorithm: "CHACHA20-POLY1305", expectedCount: 325)
        Self.check(cases, nonceSize: 12,
                   seal: { try ChaCha20Poly1305.seal($0, key: $1, nonce: $2, authenticating: $3) },
                   open: { try ChaCha20Poly1305.open($0, key: $1, nonce: $2, authenticating: $3) })
    }

    @Test("xchacha20_poly1305_test.json: all 315 cases")
    func xchacha20Poly1305() throws {
        let cases = try Self.cases(file: "xchacha20_poly1305_test.json", algorithm: "XCHACHA20-POLY1305", expectedCount: 315)
        Self.check(cases, nonceSize: 24,
                   seal: { try XChaCha20Poly1305.seal($0, key: $1, nonce: $2, authenticating: $3) },
                   open: { try XChaCha20Poly1305.open($0, key: $1, nonce: $2, authenticating: $3) })
    }
}

import Testing

@testable import ItsypadSupport

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
                cases.append(
                    Case(
                        id: Int(try #require(test["tcId"]?.int64Value)), key: try field("key"), nonce: try field("iv"),
                        associatedData: try field("aad"), message: try field("msg"), ciphertext: try field("ct"),
                        tag: try field("tag"), valid: result == "valid"))
            }
        }
        try #require(cases.count == expectedCount, "\(file) has \(cases.count) cases, expected \(expectedCount)")
        try #require(cases.contains { $0.valid } && cases.contains { !$0.valid })
        return cases
    }

    /// The two AEADs and their fixtures (case counts as the files declare them).
    enum Algorithm: String, CaseIterable, Sendable {
        case chacha20Poly1305 = "CHACHA20-POLY1305"
        case xchacha20Poly1305 = "XCHACHA20-POLY1305"

        var file: String { self == .chacha20Poly1305 ? "chacha20_poly1305_test.json" : "xchacha20_poly1305_test.json" }
        var expectedCount: Int { self == .chacha20Poly1305 ? 325 : 315 }
        var nonceSize: Int { self == .chacha20Poly1305 ? 12 : 24 }

        func seal(_ message: [UInt8], _ key: SecretBytes, _ nonce: [UInt8], _ associatedData: [UInt8]) throws -> [UInt8] {
            self == .chacha20Poly1305
                ? try ChaCha20Poly1305.seal(message, key: key, nonce: nonce, authenticating: associatedData)
                : try XChaCha20Poly1305.seal(message, key: key, nonce: nonce, authenticating: associatedData)
        }

        func open(_ sealed: [UInt8], _ key: SecretBytes, _ nonce: [UInt8], _ associatedData: [UInt8]) throws -> [UInt8] {
            self == .chacha20Poly1305
                ? try ChaCha20Poly1305.open(sealed, key: key, nonce: nonce, authenticating: associatedData)
                : try XChaCha20Poly1305.open(sealed, key: key, nonce: nonce, authenticating: associatedData)
        }
    }

    /// Valid cases must seal to exactly ct ‖ tag and open back; invalid ones must fail to open
    /// (and, with a nonce of the wrong size, to seal).
    @Test("every case of chacha20_poly1305_test.json (325) and xchacha20_poly1305_test.json (315)", arguments: Algorithm.allCases)
    func allCases(algorithm: Algorithm) throws {
        let cases = try Self.cases(file: algorithm.file, algorithm: algorithm.rawValue, expectedCount: algorithm.expectedCount)
        for test in cases {
            let key = SecretBytes(copying: test.key)
            let sealed = test.ciphertext + test.tag
            let opened = try? algorithm.open(sealed, key, test.nonce, test.associatedData)
            if test.valid {
                #expect((try? algorithm.seal(test.message, key, test.nonce, test.associatedData)) == sealed, "tcId \(test.id) seal")
                #expect(opened == test.message, "tcId \(test.id) open")
            } else {
                #expect(opened == nil, "tcId \(test.id) must not open")
                if test.nonce.count != algorithm.nonceSize {
                    #expect(throws: CryptoError.invalidNonceSize(expected: algorithm.nonceSize), "tcId \(test.id)") {
                        try algorithm.seal(test.message, key, test.nonce, test.associatedData)
                    }
                }
            }
        }
    }
}

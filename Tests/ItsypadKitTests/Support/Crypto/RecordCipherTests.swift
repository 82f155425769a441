import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadSupport

@Suite("Record cipher")
struct RecordCipherTests {
    static let zone = "zone-1"
    static let clipName = "0f7c6b1e-4a4e-4c57-9a57-3b1d1c1e9b10"

    static func cipher(_ masterHex: String = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f") throws -> RecordCipher {
        try RecordCipher(masterKey: key(masterHex))
    }

    /// Made by an independent script (Python: HKDF, HMAC, a reference HChaCha20 and the
    /// `cryptography` package's ChaCha20-Poly1305) from the documented format, padding included.
    @Test("opens content and assets sealed by an independent implementation of the format")
    func interoperability() throws {
        let sealed =
            "AWRlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e9X7+n+Dc3fBwYS+CoLfB4Ifhv+ge1UYcp9UCtbkZu2dSz/QZxFId11n8//1PAS1obIb29VQClb/"
            + "HA6SPtZCvUnCHeHY5Enf7DnwXn391z9lRfIB+dFTbw4zKXkSDuSgoKg27fvo/v/04AqxB5EVYMs="
        let context = RecordCipher.lengthPrefixed(["itsypad record", "1", Self.zone, "ClipboardEntry", Self.clipName])
        let opened = try Self.cipher().openRecordContent(sealed, context: context)
        #expect(
            String(decoding: opened, as: UTF8.self)
                == #"{"pinned":{"type":"INT64","value":1},"text":{"type":"STRING","value":"copied on the laptop"}}"#)
        let asset = hex(
            "016465666768696a6b6c6d6e6f707172737475767778797a7b929e44245a8de57e1c4cd380532c7edc390c15292661000faee11a7efe5b21a5"
                + "65244c7daea49a8e9833f420b076210c")
        #expect(try Self.cipher().openAsset(asset, zoneID: Self.zone) == Array("large tab content".utf8))
    }

    @Test("key check value and hashed names are fixed by the key (known answers from an independent script)")
    func derivedValues() throws {
        let cipher = try Self.cipher()
        #expect(cipher.keyCheckValue == "46e871844378fc1b51665d0fd8f1c2b5")
        #expect(cipher.matches(keyCheckValue: "46e871844378fc1b51665d0fd8f1c2b5"))
        #expect(!cipher.matches(keyCheckValue: "46e871844378fc1b51665d0fd8f1c2b6"))
        #expect(!cipher.matches(keyCheckValue: ""))
        let hashed = cipher.hashedName("clipboard.maxEntries", recordType: "Setting")
        #expect(hashed == "2bb50f394558c19b572d142c967e49f24556850f8fa79b49768288c1f1fdabee")
        #expect(NameRules.isSafeFileName(hashed, maxLength: NameRules.maxRecordNameLength))
        #expect(try Self.cipher().hashedName("clipboard.maxEntries", recordType: "Setting") == hashed)
        #expect(cipher.hashedName("clipboard.retention", recordType: "Setting") != hashed)
        #expect(cipher.hashedName("clipboard.maxEntries", recordType: "Other") != hashed)

        let other = try RecordCipher(masterKey: try SecretBytes.random(count: 32))
        #expect(other.keyCheckValue != cipher.keyCheckValue)
        #expect(!other.matches(keyCheckValue: cipher.keyCheckValue))
        #expect(other.hashedName("clipboard.maxEntries", recordType: "Setting") != hashed)
    }

    @Test("a master key that is not 32 bytes is refused")
    func invalidKey() {
        #expect(throws: RecordCipherError.invalidKey) { try RecordCipher(masterKey: key("00112233")) }
    }

    /// Sizes from the same independent script: 32-byte steps up to 1 KiB, Padmé above.
    @Test(
        "plaintext is padded to a size class before sealing",
        arguments: [(0, 32), (30, 32), (31, 32), (1023, 1024), (1024, 1088), (1025, 1088), (5000, 5120), (1 << 20, 1_081_344)])
    func padding(count: Int, padded: Int) throws {
        #expect(RecordCipher.paddedCount(count) == padded)
        let plaintext = [UInt8](repeating: 0x80, count: count)
        #expect(RecordCipher.padded(plaintext).count == padded)
        #expect(RecordCipher.unpadded(RecordCipher.padded(plaintext)) == plaintext)
        let sealed = try Self.cipher().sealAsset(plaintext, zoneID: Self.zone)
        #expect(sealed.count == RecordCipher.sealedByteCount(plaintextCount: count))
    }

    @Test("texts of different lengths in one size class seal to the same length")
    func equalLengths() throws {
        let cipher = try Self.cipher()
        let short = try cipher.sealRecordContent(Array("hunter2".utf8), context: [])
        let long = try cipher.sealRecordContent(Array("a passphrase of 31 characters!!".utf8), context: [])
        #expect(short.utf8.count == long.utf8.count)
    }

    @Test(
        "padding that is not exactly the format's is refused",
        arguments: [[], [0], [0x80, 0x80], [1, 0x80] + [UInt8](repeating: 0, count: 29)])
    func badPadding(_ bytes: [UInt8]) {
        #expect(RecordCipher.unpadded(bytes) == nil)
    }

    @Test("assets round-trip, and are bound to their zone and key")
    func assets() throws {
        let cipher = try Self.cipher()
        let content = Array(String(repeating: "large tab line\n", count: 5000).utf8)
        let sealed = try cipher.sealAsset(content, zoneID: Self.zone)
        #expect(sealed.count == RecordCipher.sealedByteCount(plaintextCount: content.count))
        #expect(try cipher.openAsset(sealed, zoneID: Self.zone) == content)
        #expect(!String(decoding: sealed, as: UTF8.self).contains("large tab line"))
        #expect(throws: RecordCipherError.authenticationFailed) { try cipher.openAsset(sealed, zoneID: "zone-2") }
        var flipped = sealed
        flipped[sealed.count / 2] ^= 0x80
        #expect(throws: RecordCipherError.authenticationFailed) { try cipher.openAsset(flipped, zoneID: Self.zone) }
        #expect(throws: RecordCipherError.authenticationFailed) { try cipher.openAsset(Array(sealed.dropLast()), zoneID: Self.zone) }
        let other = try RecordCipher(masterKey: try SecretBytes.random(count: 32))
        #expect(throws: RecordCipherError.authenticationFailed) { try other.openAsset(sealed, zoneID: Self.zone) }
        // Record and asset keys differ: a record's sealed bytes do not open as an asset.
        let recordSealed = try cipher.sealRecordContent(content, context: RecordCipher.lengthPrefixed(["itsypad record", Self.zone]))
        let recordBlob = try #require(Base64.decode(recordSealed))
        #expect(throws: RecordCipherError.authenticationFailed) { try cipher.openAsset(recordBlob, zoneID: Self.zone) }
    }
}

@Suite("Base64")
struct Base64Tests {
    /// RFC 4648 §10.
    @Test(
        "RFC 4648 vectors",
        arguments: [
            ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
        ])
    func vectors(plain: String, encoded: String) {
        #expect(Base64.encode(Array(plain.utf8)) == encoded)
        #expect(Base64.decode(encoded) == Array(plain.utf8))
    }

    @Test("all byte values round-trip")
    func allBytes() {
        let bytes = (0...255).map { UInt8($0) }
        for length in 0...bytes.count { #expect(Base64.decode(Base64.encode(Array(bytes[0..<length]))) == Array(bytes[0..<length])) }
    }

    @Test(
        "only the canonical text decodes",
        arguments: ["Zg=", "Zh==", "Zm9=", "Zg==Zg==", "Z===", "====", "Zm9v\n", "Zm9-", "Zm 9", "Zm9vY"])
    func strict(text: String) {
        #expect(Base64.decode(text) == nil)
    }

    @Test("decoding into a buffer replaces what it held, and leaves nothing of a text that is not canonical")
    func intoBuffer() {
        var bytes = Array("left over from before".utf8)
        #expect(Array("Zm9vYmE=".utf8).withUnsafeBufferPointer { Base64.decode($0, into: &bytes) } && bytes == Array("fooba".utf8))
        #expect(!Array("Zm9=".utf8).withUnsafeBufferPointer { Base64.decode($0, into: &bytes) } && bytes.isEmpty)
    }

    @Test("encoding in pieces of a multiple of three bytes joins into the whole's text")
    func inPieces() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        var text = [UInt8](repeating: 0, count: Base64.encodedCount(bytes.count))
        bytes.withUnsafeBytes { bytes in
            text.withUnsafeMutableBufferPointer { text in
                for start in stride(from: 0, to: bytes.count, by: 300) {
                    let end = min(bytes.count, start + 300)
                    Base64.encode(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), into: text.baseAddress! + start / 3 * 4)
                }
            }
        }
        #expect(String(decoding: text, as: UTF8.self) == Base64.encode(bytes))
    }
}

import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

@Suite("Record cipher")
struct RecordCipherTests {
    static let zone = "zone-1"

    static func cipher(_ masterHex: String = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f") throws -> RecordCipher {
        try RecordCipher(masterKey: key(masterHex))
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
}

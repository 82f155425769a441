import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

@Suite("Record cipher")
struct RecordCipherTests {
    static let zone = "zone-1"
    static let clipName = "0f7c6b1e-4a4e-4c57-9a57-3b1d1c1e9b10"

    static func cipher(_ masterHex: String = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f") throws -> RecordCipher {
        try RecordCipher(masterKey: key(masterHex))
    }

    static let record = BackendRecord(
        recordName: "5d1c8a4e-2b3f-4c6d-8e9f-0a1b2c3d4e5f", recordType: "ScratchTab", recordChangeTag: "42",
        fields: [
            "name": .string("passwords ✓"),
            "content": .string("hunter2\nline \"two\"\u{1}"),
            "nameLocked": .int64(1),
            "ratio": .double(-0.125),
            "lastModified": .timestamp(1_790_000_000_123),
            "tags": .stringList(["a", "b c"]),
            "contentAsset": .asset(AssetReference(fileChecksum: String(repeating: "ab", count: 32), size: 1_000_000)),
        ],
        created: Stamp(timestamp: 1, deviceID: "device-a"), modified: Stamp(timestamp: 2, deviceID: "device-b"))

    /// The base64 sealed field of `record`, decoded.
    static func blob(_ record: BackendRecord) throws -> [UInt8] {
        guard case .string(let text)? = record.fields[RecordCipher.sealedFieldName] else { throw RecordCipherError.notSealed }
        return try #require(Base64.decode(text))
    }

    static func withBlob(_ record: BackendRecord, _ blob: [UInt8]) -> BackendRecord {
        var changed = record
        changed.fields = [RecordCipher.sealedFieldName: .string(Base64.encode(blob))]
        return changed
    }

    @Test("a sealed record keeps its identity and stamps, hides every field, and opens to the original")
    func roundTrip() throws {
        let cipher = try Self.cipher()
        let sealed = try cipher.seal(Self.record, zoneID: Self.zone)
        #expect(Array(sealed.fields.keys) == ["sealed"])
        #expect(sealed.recordName == Self.record.recordName && sealed.recordType == Self.record.recordType)
        #expect(sealed.recordChangeTag == "42" && sealed.created == Self.record.created && sealed.modified == Self.record.modified)
        let stored = String(decoding: try JSONCoding.encode(sealed), as: UTF8.self)
        for secret in ["hunter2", "passwords", "contentAsset", "abababab", "1000000", "1790000000123", "nameLocked"] {
            #expect(!stored.contains(secret), "\(secret) is visible in \(stored)")
        }
        #expect(try NameRules.problem(with: sealed) == nil)
        #expect(try cipher.open(sealed, zoneID: Self.zone) == Self.record)
        // A fresh nonce each time: the same record never seals to the same bytes.
        #expect(try cipher.seal(Self.record, zoneID: Self.zone).fields != sealed.fields)
        #expect(
            try Self.blob(sealed).count == RecordCipher.sealedByteCount(plaintextCount: try JSONCoding.encode(Self.record.fields).count))
    }

    /// Made by an independent script (Python: HKDF, HMAC, a reference HChaCha20 and the
    /// `cryptography` package's ChaCha20-Poly1305) from the documented format.
    @Test("opens a record sealed by an independent implementation of the format")
    func interoperability() throws {
        let sealed = BackendRecord(
            recordName: Self.clipName, recordType: "ClipboardEntry",
            fields: [
                "sealed": .string(
                    "AWRlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e9X7+n+Dc3fBwYS+CoLfB4Ifhv+ge1UYcp9UCtbkZu2dSz/QZxFId11n8//1PAS1obIb29VQClb/"
                        + "HA6SPtZCvUnCHeHY5Enf7DnwXn391z9lRfIB+dFTbw4zKXkSDuSgoKg27fvo/v/04AqxB5EVYMs=")
            ])
        let opened = try Self.cipher().open(sealed, zoneID: Self.zone)
        #expect(opened.fields == ["pinned": .int64(1), "text": .string("copied on the laptop")])
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

    @Test("a flipped bit anywhere is refused")
    func flippedBits() throws {
        let cipher = try Self.cipher()
        let sealed = try cipher.seal(Self.record, zoneID: Self.zone)
        let blob = try Self.blob(sealed)
        // Every bit of the format byte, nonce and tag; one bit per byte of the ciphertext between.
        let nonceEnd = 8 * (1 + XChaCha20Poly1305.nonceByteCount), tagStart = 8 * (blob.count - XChaCha20Poly1305.tagByteCount)
        let bits = Array(0..<nonceEnd) + Array(stride(from: nonceEnd + 3, to: tagStart, by: 8)) + Array(tagStart..<(blob.count * 8))
        for bit in bits {
            var changed = blob
            changed[bit / 8] ^= 1 << (bit % 8)
            let expected: RecordCipherError = bit < 8 ? .malformed("unknown format \(changed[0])") : .authenticationFailed
            #expect(throws: expected, "bit \(bit)") { try cipher.open(Self.withBlob(sealed, changed), zoneID: Self.zone) }
        }
    }

    @Test("a sealed field moved to another record name, record type or zone is refused")
    func moved() throws {
        let cipher = try Self.cipher()
        let sealed = try cipher.seal(Self.record, zoneID: Self.zone)
        var renamed = sealed
        renamed.recordName = "6d1c8a4e-2b3f-4c6d-8e9f-0a1b2c3d4e5f"
        #expect(throws: RecordCipherError.authenticationFailed) { try cipher.open(renamed, zoneID: Self.zone) }
        var retyped = sealed
        retyped.recordType = "ClipboardEntry"
        #expect(throws: RecordCipherError.authenticationFailed) { try cipher.open(retyped, zoneID: Self.zone) }
        #expect(throws: RecordCipherError.authenticationFailed) { try cipher.open(sealed, zoneID: "zone-2") }

        // Two records' sealed fields swapped: neither opens.
        var second = Self.record
        second.recordName = Self.clipName
        let secondSealed = try cipher.seal(second, zoneID: Self.zone)
        var swappedFirst = sealed, swappedSecond = secondSealed
        swap(&swappedFirst.fields, &swappedSecond.fields)
        #expect(throws: RecordCipherError.authenticationFailed) { try cipher.open(swappedFirst, zoneID: Self.zone) }
        #expect(throws: RecordCipherError.authenticationFailed) { try cipher.open(swappedSecond, zoneID: Self.zone) }
        // The stamps and change tag are not sealed: the backend rewrites them, so changing them is not tampering.
        var restamped = sealed
        restamped.recordChangeTag = "43"
        restamped.modified = Stamp(timestamp: 3, deviceID: "device-c")
        #expect(try cipher.open(restamped, zoneID: Self.zone).fields == Self.record.fields)
    }

    @Test("truncated, malformed and unsealed records are refused with their reason")
    func malformed() throws {
        let cipher = try Self.cipher()
        let sealed = try cipher.seal(Self.record, zoneID: Self.zone)
        let blob = try Self.blob(sealed)
        #expect(throws: RecordCipherError.authenticationFailed) {
            try cipher.open(Self.withBlob(sealed, Array(blob.dropLast())), zoneID: Self.zone)
        }
        #expect(throws: RecordCipherError.authenticationFailed) {
            try cipher.open(Self.withBlob(sealed, Array(blob.prefix(41))), zoneID: Self.zone)
        }
        #expect(throws: RecordCipherError.malformed("40 bytes is too short to be sealed")) {
            try cipher.open(Self.withBlob(sealed, Array(blob.prefix(40))), zoneID: Self.zone)
        }
        #expect(throws: RecordCipherError.malformed("0 bytes is too short to be sealed")) {
            try cipher.open(Self.withBlob(sealed, []), zoneID: Self.zone)
        }
        var notBase64 = sealed
        notBase64.fields = ["sealed": .string("!!!!")]
        #expect(throws: RecordCipherError.malformed("the sealed field is not base64")) { try cipher.open(notBase64, zoneID: Self.zone) }

        var extraField = sealed
        extraField.fields["text"] = .string("injected in the clear")
        #expect(throws: RecordCipherError.notSealed) { try cipher.open(extraField, zoneID: Self.zone) }
        #expect(throws: RecordCipherError.notSealed) { try cipher.open(Self.record, zoneID: Self.zone) }
        var wrongType = sealed
        wrongType.fields = ["sealed": .int64(1)]
        #expect(throws: RecordCipherError.notSealed) { try cipher.open(wrongType, zoneID: Self.zone) }
    }

    @Test("a record sealed under another key is refused")
    func wrongKey() throws {
        let sealed = try Self.cipher().seal(Self.record, zoneID: Self.zone)
        let other = try RecordCipher(masterKey: try SecretBytes.random(count: 32))
        #expect(throws: RecordCipherError.authenticationFailed) { try other.open(sealed, zoneID: Self.zone) }
    }

    @Test("decrypted fields are validated like any record's")
    func invalidContent() throws {
        let cipher = try Self.cipher()
        var bad = Self.record
        bad.fields = ["not a field name": .string("x")]
        let sealed = try cipher.seal(bad, zoneID: Self.zone)
        #expect { try cipher.open(sealed, zoneID: Self.zone) } throws: { error in
            guard case RecordCipherError.invalidContent(let reason) = error else { return false }
            return reason.contains("not a field name")
        }
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
        let recordBlob = try Self.blob(try cipher.seal(Self.record, zoneID: Self.zone))
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

import Testing

@testable import ItsypadSupport

@Suite("Recovery key")
struct RecoveryKeyTests {
    /// Expected forms computed by an independent script from the format's definition.
    @Test(
        "known keys have known forms",
        arguments: [
            (String(repeating: "00", count: 32), "00000-00001-00002-00003-00004-00005-00006-00007-00008-00009-0000A-0000B-0000C"),
            (
                "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
                "000GD-40R4X-0M300-E209K-185G3-R38ED-1W811-24GKZ-2GAH1-C5RR2-34D1B-P70XX-3RFGZ"
            ),
            (String(repeating: "ff", count: 32), "ZZZZD-ZZZZC-ZZZZF-ZZZZE-ZZZZ9-ZZZZ8-ZZZZB-ZZZZA-ZZZZ5-ZZZZ4-ZZZZ7-ZZZZ6-ZZZGA"),
        ])
    func knownForms(keyHex: String, text: String) throws {
        #expect(RecoveryKey.format(key(keyHex)) == text)
        #expect(try RecoveryKey.parse(text).bytes == hex(keyHex))
    }

    @Test("random keys round-trip through the typed form")
    func roundTrip() throws {
        for _ in 0..<200 {
            let secret = try SecretBytes.random(count: 32)
            let text = RecoveryKey.format(secret)
            #expect(text.count == 77)
            #expect(text.split(separator: "-").map(\.count) == [Int](repeating: 5, count: 13))
            #expect(text.unicodeScalars.allSatisfy { "0123456789ABCDEFGHJKMNPQRSTVWXYZ-".unicodeScalars.contains($0) })
            #expect(try RecoveryKey.parse(text).isEqual(to: secret))
        }
    }

    @Test("every character maps to its value and back")
    func alphabet() {
        let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
        for value in 0..<32 {
            #expect(RecoveryKey.character(for: UInt8(value)) == alphabet[value])
            #expect(RecoveryKey.value(of: alphabet[value]) == (UInt8(value), true))
        }
        for byte in UInt8(0)...UInt8(127) where !alphabet.contains(byte) {
            let (_, valid) = RecoveryKey.value(of: byte)
            let alias = "abcdefghjkmnpqrstvwxyzIiLlOo".utf8.contains(byte)
            #expect(valid == alias, "byte \(byte)")
        }
    }

    @Test("case, spaces, dashes and Crockford's aliases are accepted")
    func lenientReading() throws {
        let original = "000GD-40R4X-0M300-E209K-185G3-R38ED-1W811-24GKZ-2GAH1-C5RR2-34D1B-P70XX-3RFGZ"
        let expected = hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
        for typed in [
            original.lowercased(),
            original.replacing("-", with: " "),
            original.replacing("-", with: ""),
            "  " + original.replacing("-", with: " - ") + "\n",
            original.replacing("0", with: "O").replacing("1", with: "l"),
            original.replacing("1", with: "i"),
        ] {
            #expect(try RecoveryKey.parse(typed).bytes == expected, "\(typed)")
        }
    }

    @Test("any single mistyped character is caught and its group named")
    func substitutions() throws {
        let text = Array(RecoveryKey.format(try SecretBytes.random(count: 32)).replacing("-", with: ""))
        let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
        for position in text.indices {
            for replacement in alphabet where replacement != text[position] {
                var typed = text
                typed[position] = replacement
                #expect(throws: RecoveryKeyError.typo(groups: [position / 5 + 1])) { try RecoveryKey.parse(String(typed)) }
            }
        }
    }

    @Test("swapped neighbours and swapped groups are caught")
    func transpositions() throws {
        let groups = RecoveryKey.format(try SecretBytes.random(count: 32)).split(separator: "-").map { Array($0) }
        for group in groups.indices {
            for position in 0..<4 where groups[group][position] != groups[group][position + 1] {
                var typed = groups
                typed[group].swapAt(position, position + 1)
                #expect(throws: RecoveryKeyError.typo(groups: [group + 1])) {
                    try RecoveryKey.parse(typed.map { String($0) }.joined(separator: "-"))
                }
            }
        }
        var swapped = groups
        swapped.swapAt(2, 9)
        #expect(throws: RecoveryKeyError.typo(groups: [3, 10])) { try RecoveryKey.parse(swapped.map { String($0) }.joined(separator: "-")) }
    }

    @Test("wrong lengths, foreign characters and non-zero padding are refused")
    func malformed() {
        let text = "000GD-40R4X-0M300-E209K-185G3-R38ED-1W811-24GKZ-2GAH1-C5RR2-34D1B-P70XX-3RFGZ"
        #expect(throws: RecoveryKeyError.wrongLength(symbols: 64)) { try RecoveryKey.parse(String(text.dropLast())) }
        #expect(throws: RecoveryKeyError.wrongLength(symbols: 66)) { try RecoveryKey.parse(text + "0") }
        #expect(throws: RecoveryKeyError.wrongLength(symbols: 0)) { try RecoveryKey.parse("") }
        #expect(throws: RecoveryKeyError.invalidCharacter("U", group: 2)) { try RecoveryKey.parse("000GD-U0R4X" + text.dropFirst(11)) }
        #expect(throws: RecoveryKeyError.invalidCharacter("é", group: 1)) { try RecoveryKey.parse("é" + text) }
        // Last group with a padding bit set and a check character that matches it.
        let data = Array("P70X".utf8).map { RecoveryKey.value(of: $0).0 }
        var lastData = Array("3RFG".utf8).map { RecoveryKey.value(of: $0).0 }
        lastData[3] |= 1
        let lastGroup = String(
            decoding: (lastData + [RecoveryKey.check(lastData[...], group: 12)]).map(RecoveryKey.character(for:)), as: UTF8.self)
        #expect(RecoveryKey.check(data[...], group: 11) == RecoveryKey.value(of: UInt8(ascii: "X")).0)
        #expect(throws: RecoveryKeyError.typo(groups: [13])) { try RecoveryKey.parse(String(text.dropLast(5)) + lastGroup) }
    }

    @Test("error messages say what to fix")
    func messages() {
        #expect(RecoveryKeyError.typo(groups: [4]).description == "group 4 of the recovery key has a typo")
        #expect(RecoveryKeyError.typo(groups: [3, 10]).description == "groups 3, 10 of the recovery key have typos")
        #expect(RecoveryKeyError.wrongLength(symbols: 64).description.contains("65 characters in 13 groups of 5; this one has 64"))
        #expect(RecoveryKeyError.invalidCharacter("U", group: 2).description.hasPrefix("'U' in group 2"))
    }
}

@testable import ItsypadSupport

/// Bytes from hex digits; spaces, colons and newlines (as in RFC hex dumps) are ignored.
func hex(_ text: String) -> [UInt8] {
    let digits = text.utf8.filter { ![UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: "\n")].contains($0) }
    precondition(digits.count % 2 == 0, "odd number of hex digits")
    func value(_ digit: UInt8) -> UInt8 {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: preconditionFailure("not a hex digit: \(digit)")
        }
    }
    return stride(from: 0, to: digits.count, by: 2).map { value(digits[$0]) << 4 | value(digits[$0 + 1]) }
}

func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
}

/// A key for tests, from hex.
func key(_ text: String) -> SecretBytes { SecretBytes(copying: hex(text)) }

extension SecretBytes {
    var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}

/// The 32 bytes 00 01 02 … 1f (and 80 … 9f) that the RFCs use as keys.
let sequentialKey = key("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
let sequentialKey80 = key("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")

/// Texts that RFC 8439 and the XChaCha draft use as messages (their hex dumps spell these bytes).
enum SampleText {
    static let sunscreen = Array(
        "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
    static let ietfContribution = Array(
        ("Any submission to the IETF intended by the Contributor for publication as all or part of an IETF "
            + "Internet-Draft or RFC and any statement made within the context of an IETF activity is considered an \"IETF Contribution\". "
            + "Such statements include oral statements in IETF sessions, as well as written and electronic communications made at any "
            + "time or place, which are addressed to").utf8)
    static let jabberwocky = Array(
        "'Twas brillig, and the slithy toves\nDid gyre and gimble in the wabe:\nAll mimsy were the borogoves,\nAnd the mome raths outgrabe."
            .utf8)
    static let internetDrafts = Array(
        ("Internet-Drafts are draft documents valid for a maximum of six months and may be updated, replaced, "
            + "or obsoleted by other documents at any time. It is inappropriate to use Internet-Drafts as reference material or to cite "
            + "them other than as /\u{201C}work in progress./\u{201D}").utf8)
    static let dhole = Array(
        ("The dhole (pronounced \"dole\") is also known as the Asiatic wild dog, red dog, and whistling dog. "
            + "It is about the size of a German shepherd but looks more like a long-legged fox. This highly elusive and skilled jumper "
            + "is classified with wolves, coyotes, jackals, and foxes in the taxonomic family Canidae.").utf8)
}

import Testing

@testable import ItsypadSupport

@Suite("Poly1305")
struct Poly1305Tests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String, key: String, message: [UInt8], tag: String
        var testDescription: String { name }
    }

    static let zeros16 = String(repeating: "00", count: 16)
    static let ietfKey = "36e5f6b5c5e06070f0efca96227a863e"
    static let jabberwockyKey = "1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0"
    static let rOne = "01" + String(repeating: "00", count: 15)
    static let rTwo = "02" + String(repeating: "00", count: 15)
    static let rFour = "0100000000000000" + "0400000000000000"
    static let ff16 = String(repeating: "ff", count: 16)
    static let reductionBlocks = "e33594d7505e43b9" + "0000000000000000" + "3394d7505e4379cd" + "0100000000000000" + zeros16

    /// RFC 8439 §2.5.2 and Appendix A.3 (test vectors #1–#11; #5–#11 give R and S separately: key = R ‖ S).
    static let vectors = [
        Vector(
            name: "§2.5.2", key: "85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b",
            message: Array("Cryptographic Forum Research Group".utf8), tag: "a8061dc1305136c6c22b8baf0c0127a9"),
        Vector(name: "A.3 #1", key: zeros16 + zeros16, message: [UInt8](repeating: 0, count: 64), tag: zeros16),
        Vector(name: "A.3 #2 (r = 0)", key: zeros16 + ietfKey, message: SampleText.ietfContribution, tag: ietfKey),
        Vector(name: "A.3 #3", key: ietfKey + zeros16, message: SampleText.ietfContribution, tag: "f3477e7cd95417af89a6b8794c310cf0"),
        Vector(name: "A.3 #4", key: jabberwockyKey, message: SampleText.jabberwocky, tag: "4541669a7eaaee61e708dc7cbcc5eb62"),
        Vector(
            name: "A.3 #5 partially reduced result", key: rTwo + zeros16, message: hex(ff16), tag: "03" + String(repeating: "00", count: 15)
        ),
        Vector(name: "A.3 #6 s overflows 2^128", key: rTwo + ff16, message: hex(rTwo), tag: "03" + String(repeating: "00", count: 15)),
        Vector(
            name: "A.3 #7 carry into an all-ones limb", key: rOne + zeros16,
            message: hex(ff16 + "f0" + String(repeating: "ff", count: 15) + "11" + String(repeating: "00", count: 15)),
            tag: "05" + String(repeating: "00", count: 15)),
        Vector(
            name: "A.3 #8 result exactly 2^130 - 5", key: rOne + zeros16,
            message: hex(ff16 + "fb" + String(repeating: "fe", count: 15) + String(repeating: "01", count: 16)), tag: zeros16),
        Vector(
            name: "A.3 #9 result exactly 2^130 - 6", key: rTwo + zeros16, message: hex("fd" + String(repeating: "ff", count: 15)),
            tag: "fa" + String(repeating: "ff", count: 15)),
        Vector(
            name: "A.3 #10 131-bit intermediate", key: rFour + zeros16, message: hex(reductionBlocks + rOne),
            tag: "1400000000000000" + "5500000000000000"),
        Vector(
            name: "A.3 #11 131-bit final result", key: rFour + zeros16, message: hex(reductionBlocks),
            tag: "13" + String(repeating: "00", count: 15)),
    ]

    @Test("RFC 8439 vectors", arguments: vectors)
    func vector(_ vector: Vector) {
        let tag = hex(vector.key).withUnsafeBytes { key in vector.message.withUnsafeBytes { Poly1305.authenticate($0, key: key) } }
        #expect(tag == hex(vector.tag))
    }

    @Test("absorbPadded equals authenticate over the zero-padded message")
    func padding() {
        let message = (0..<37).map { UInt8($0) }
        let padded = message + [UInt8](repeating: 0, count: 11)
        let key = hex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b")
        key.withUnsafeBytes { key in
            var mac = Poly1305(key: key)
            message.withUnsafeBytes { mac.absorbPadded($0) }
            // A zero-padded block is a full block (2^128 added), which `authenticate` adds to full blocks only.
            let expected = padded.withUnsafeBytes { Poly1305.authenticate($0, key: key) }
            #expect(mac.finalize() == expected)
        }
    }
}

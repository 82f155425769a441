import Testing
@testable import ItsypadKit

@Suite struct PackedIDTests {
    @Test func roundTripsThroughItsTextForm() throws {
        for _ in 0..<200 {
            let id = Identifier.make().lowercased()
            let packed = try #require(PackedID(canonical: id))
            #expect(packed.string == id)
            #expect(packed == PackedID(id))
            var short: [UInt8] = []
            packed.appendText(to: &short, hexDigits: 8)
            #expect(String(decoding: short, as: UTF8.self) == Identifier.short(id))
        }
    }

    /// Only the lowercase form round-trips exactly; anything else is not a canonical id.
    @Test(arguments: ["00000000-0000-4000-8000-00000000000A", "00000000-0000-4000-8000-00000000000g",
                      "00000000-0000-4000-8000-00000000000:", "00000000-0000-4000-8000-00000000000/",
                      "000000000-000-4000-8000-000000000000", "00000000-0000-4000-8000-0000000000000",
                      "00000000-0000-4000-8000-00000000000", "00000000x0000-4000-8000-000000000000"])
    func refusesAnythingButTheLowercaseForm(_ text: String) {
        #expect(PackedID(canonical: text) == nil)
    }
}

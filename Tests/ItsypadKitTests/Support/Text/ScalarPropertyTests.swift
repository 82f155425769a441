import Testing

@testable import ItsypadSupport

/// The ASCII tables of `\w`, `\b` and `(?i)` give what the general rule gives for every ASCII scalar.
@Suite struct ScalarPropertyTests {
    @Test func asciiTablesAgreeWithTheGeneralRule() throws {
        for value in UInt32(0)..<0x80 {
            let scalar = try #require(Unicode.Scalar(value))
            #expect(ScalarProperty.isWord(value) == ScalarProperty.word.contains(scalar), "U+\(value)")
            #expect(CaseFolding.fold(value) == CaseFolding.lowercase(CaseFolding.uppercase(scalar)).value, "U+\(value)")
        }
    }
}

import Testing
@testable import ItsypadKit

@Suite struct TextTests {
    @Test(arguments: [
        ("hello", 10, "hello"),
        ("  a \n\t b  ", 10, "a b"),
        ("abcdefghijkl", 5, "abcd…"),
        ("one two three", 7, "one tw…"),
    ])
    func previews(_ text: String, _ limit: Int, _ expected: String) {
        #expect(Text.preview(text, limit: limit) == expected)
    }

    @Test(arguments: [
        ("# Notes\nbody", "# Notes"),
        ("\n\n   indented title   \nrest", "indented title"),
        ("", "Untitled"),
        ("   \n \n", "Untitled"),
        (String(repeating: "x", count: 40), String(repeating: "x", count: 30)),
    ])
    func namesTabsAfterTheFirstLine(_ content: String, _ name: String) {
        #expect(Tab.derivedName(for: content) == name)
    }

    @Test func suggestsNearestWord() {
        #expect(Text.suggestion(for: "clp", among: ["tab", "clip", "settings"]) == "clip")
        #expect(Text.suggestion(for: "clipboard.maxEntry", among: Settings.keys) == "clipboard.maxEntries")
        #expect(Text.suggestion(for: "zzzzzz", among: ["tab", "clip"]) == nil)
    }

    @Test func refusesInvalidUTF8() {
        #expect(Text.decodeUTF8([0x68, 0x69]) == "hi")
        #expect(Text.decodeUTF8([0xC3, 0x28]) == nil)
    }

    @Test func identifiersAreVersion4AndParse() {
        let id = Identifier.make()
        #expect(Identifier.isValid(id))
        #expect(id == id.lowercased())
        #expect(Array(id)[14] == "4")
        #expect(Identifier.bytes(id).map(Identifier.format) == id)
        #expect(!Identifier.isValid("not-a-uuid"))
    }
}

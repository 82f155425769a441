import Testing

@testable import ItsypadSync

@Suite struct ThreeWayMergeTests {
    @Test(arguments: [
        ("a\nb\nc", "A\nb\nc", "a\nb\nC", ThreeWayMerge.Outcome.merged("A\nb\nC")),
        ("a\nb\nc", "a\nb\nc\nd", "z\na\nb\nc", .merged("z\na\nb\nc\nd")),
        ("a\nb\nc", "a\nc", "a\nb\nc\ne", .merged("a\nc\ne")),
        ("a\nb\nc", "a\nX\nc", "a\nY\nc", .conflict),
        ("a\nb\nc", "a\nX\nc", "a\nX\nc", .merged("a\nX\nc")),
        ("one", "one", "two", .merged("two")),
        ("", "mine", "theirs", .conflict),
    ])
    func merges(_ ancestor: String, _ local: String, _ remote: String, _ expected: ThreeWayMerge.Outcome) {
        #expect(ThreeWayMerge.merge(ancestor: ancestor, local: local, remote: remote) == expected)
        // The merge is symmetric in its two sides.
        #expect(ThreeWayMerge.merge(ancestor: ancestor, local: remote, remote: local) == expected)
    }
}

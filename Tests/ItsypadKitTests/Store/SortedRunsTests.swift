import Testing

@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

/// `SortedRuns` hands back what it was given in order, however many runs it spilled, merged with
/// slots that were in order already.
@Suite struct SortedRunsTests {
    let directory = TemporaryDirectory()

    static func slot(_ number: UInt64, at time: Int64) -> ClipSlot {
        ClipSlot(id: PackedID(high: number, low: 1), timestamp: time, offset: number, length: 1, flags: 0)
    }

    @Test(arguments: [1, 3, 64, 1 << 16])
    func handsBackEverySlotInTheIndexOrder(_ runLength: Int) throws {
        var generator = SystemRandomNumberGenerator()
        let given = (0..<500).map { SortedRunsTests.slot(UInt64($0), at: Int64.random(in: 0..<50, using: &generator)) }
        let others = (500..<600).map { SortedRunsTests.slot(UInt64($0), at: Int64($0 % 60)) }.sorted { $0.sortsBefore($1) }
        let runs = try SortedRuns<ClipSlot>(directory: directory.path, in: FileTree(root: directory.path), runLength: runLength)
        for slot in given { try runs.append(slot) }
        var handed: [ClipSlot] = []
        var rest = Optional(others)
        try runs.forEachSorted(mergedWith: { chunk in
            chunk = rest ?? []
            rest = nil
        }) {
            handed.append($0)
            return true
        }
        #expect(handed == (given + others).sorted { $0.sortsBefore($1) })
        #expect(try FileTree(root: directory.path).list(directory.path, includingHidden: true) == [], "the scratch file has no name")
    }
}

import Testing

@testable import ItsypadModel

@Suite struct EditHistoryTests {
    func clock(_ physical: Int64, _ device: String, counter: Int = 0) -> HybridTimestamp {
        HybridTimestamp(physical: physical, counter: counter, device: device)
    }

    @Test func keepsTheLatestEditPerDevice() {
        var history = EditHistory([clock(5, "a"), clock(3, "b")])
        history.record(clock(4, "a"))
        history.record(clock(7, "b"))
        #expect(history.clocks == [clock(5, "a"), clock(7, "b")])
    }

    @Test(arguments: [
        (["5.0.a", "3.0.b"], ["5.0.a"], true),
        (["5.0.a", "3.0.b"], ["4.0.a", "3.0.b"], true),
        (["5.0.a"], ["5.0.a", "1.0.b"], false),  // an edit by b it lacks
        (["5.0.a"], ["6.0.a"], false),  // a later edit by a
        ([], [], true),
    ])
    func includes(_ mine: [String], _ theirs: [String], _ expected: Bool) throws {
        let a = try #require(EditHistory(strings: mine)), b = try #require(EditHistory(strings: theirs))
        #expect(a.includes(b) == expected)
    }

    @Test func unionHasEverythingEitherHas() {
        let a = EditHistory([clock(5, "a"), clock(1, "b")])
        let b = EditHistory([clock(2, "b"), clock(9, "c")])
        let union = a.union(b)
        #expect(union.includes(a) && union.includes(b))
        #expect(union == b.union(a))
    }

    @Test(arguments: [["5.0.a", "not a clock"], ["1.99999999999999.a"], Array(repeating: "1.0.a", count: 1001)])
    func refusesWhatIsNotAHistory(_ strings: [String]) {
        #expect(EditHistory(strings: strings) == nil)
    }
}

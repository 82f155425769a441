import ItsypadModel
import ItsypadSupport
import Testing

struct HybridTimestampTests {
    /// The stored form as it was first read: split at Characters, numbers read by `Int64(_:)`.
    static func reference(_ text: String) -> HybridTimestamp? {
        let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let physical = Milliseconds(parts[0]), Time.validRange.contains(physical),
            let counter = Int(parts[1]), (0...HybridTimestamp.maxCounter).contains(counter)
        else { return nil }
        return HybridTimestamp(physical: physical, counter: counter, device: String(parts[2]))
    }

    static let texts = [
        "1700000000000.0.deva", "1700000000000.12.92d60c50-b067-46c7-ade5-382d79860684", "5.0.a", "0.0.", "0.0.a.b.c",
        "+5.+1.a", "-0.0.a", "-1.0.a", "5.-1.a", "5.1099511627776.a", "5.1099511627777.a", "9223372036854775807.0.a",
        "9223372036854775808.0.a", "-9223372036854775808.0.a", "00012.007.a", "", ".", "..", "...", "5", "5.0", "5.0.",
        "5..a", ".0.a", "+.0.a", "-.0.a", "5 .0.a", " 5.0.a", "5.0x.a", "5.0.\u{301}", "5.\u{301}0.a", "5\u{301}.0.a",
        "5.0.é", "é.0.a", "5.0.日本", "5.0.a\u{0}b", "1e3.0.a", "0x10.0.a", "٣.0.a",
        // Dots that a neighbour joins to its Character: combining marks, prepended marks, ZWJ, CR LF.
        "5.\u{301}.0.a", "5.0.\u{301}.b", "5\u{600}.0.a", "5.0\u{600}.a", "5.\u{600}.0.a", "\u{600}.5.0.a", "5.0\u{200D}.a",
        "5.0.\u{200D}", "5\r\n.0.a", "5.\r\n.a", "5.0.\u{1F1E6}\u{1F1E8}.a", "5.0.👨‍👩‍👧", "5.\u{20DD}.0.a.\u{301}",
    ]

    @Test("the stored form reads as Int64 and a split at Characters read it", arguments: texts)
    func readsAsBefore(_ text: String) {
        #expect(HybridTimestamp(text) == Self.reference(text))
    }

    @Test("every reading survives its stored form")
    func roundTrips() {
        for stamp in [
            HybridTimestamp(physical: 0, device: ""), HybridTimestamp(physical: 1_700_000_000_000, counter: 3, device: "dev.with.dots"),
            HybridTimestamp(physical: Time.validRange.upperBound, counter: HybridTimestamp.maxCounter, device: "é"),
        ] {
            #expect(HybridTimestamp(stamp.description) == stamp)
        }
    }
}

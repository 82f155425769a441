import Testing
@testable import ItsypadKit

@Suite struct TimeTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (Int64(1_732_200_000_123), "2024-11-21T14:40:00.123Z"),
        (Int64(951_782_400_000), "2000-02-29T00:00:00.000Z"),
        (Int64(-1), "1969-12-31T23:59:59.999Z"),
    ])
    func formatsISO8601(_ ms: Int64, _ text: String) {
        #expect(Time.iso8601(ms) == text)
        #expect(Time.parseISO8601(text) == ms)
    }

    @Test func parsesOffsetsAndMissingFraction() {
        #expect(Time.parseISO8601("2024-11-21T15:40:00+01:00") == 1_732_200_000_000)
        #expect(Time.parseISO8601("2024-11-21T14:40:00.5Z") == 1_732_200_000_500)
        #expect(Time.parseISO8601("2024-13-01T00:00:00Z") == nil)
        #expect(Time.parseISO8601("yesterday") == nil)
    }

    @Test(arguments: [("90s", Int64(90_000)), ("30m", 1_800_000), ("12h", 43_200_000), ("7d", 604_800_000), ("2w", 1_209_600_000)])
    func parsesDurations(_ text: String, _ ms: Int64) {
        #expect(RetentionDuration(text)?.milliseconds == ms)
    }

    @Test(arguments: ["", "7", "d", "-1d", "0d", "7y", "1.5h"])
    func rejectsBadDurations(_ text: String) {
        #expect(RetentionDuration(text) == nil)
    }

    @Test func neverMeansNoLimit() {
        #expect(RetentionDuration("never") == .never)
        #expect(RetentionDuration.never.milliseconds == nil)
    }

    @Test func hybridClockOrdersAfterWhatItSaw() {
        let remote = HybridTimestamp(physical: 5_000, counter: 2, device: "b")
        // This device's clock is behind (1,000) but its edit must still win.
        let next = HybridTimestamp.next(after: remote, now: 1_000, device: "a")
        #expect(next > remote)
        #expect(HybridTimestamp(next.description) == next)
        #expect(HybridTimestamp.next(after: remote, now: 9_000, device: "a") == HybridTimestamp(physical: 9_000, device: "a"))
        #expect(HybridTimestamp(physical: 1, device: "a") < HybridTimestamp(physical: 1, device: "b"))
    }
}

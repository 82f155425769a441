import Testing

@testable import ItsypadModel
@testable import ItsypadSupport

@Suite struct TimeTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (Int64(1_732_200_000_123), "2024-11-21T14:40:00.123Z"),
        (Int64(951_782_400_000), "2000-02-29T00:00:00.000Z"),
        (Int64(-1), "1969-12-31T23:59:59.999Z"),
        (Time.representable.lowerBound, "0000-01-01T00:00:00.000Z"),
        (Time.representable.upperBound, "9999-12-31T23:59:59.999Z"),
        (Int64(1_767_225_599_005), "2025-12-31T23:59:59.005Z"), (Int64(1_767_225_600_050), "2026-01-01T00:00:00.050Z"),
        (Int64(1_767_225_610_100), "2026-01-01T00:00:10.100Z"), (Int64(-62_135_596_800_001), "0000-12-31T23:59:59.999Z"),
        (Int64(-59_011_459_200_000), "0100-01-01T00:00:00.000Z"), (Int64(946_684_799_999), "1999-12-31T23:59:59.999Z"),
    ])
    func formatsISO8601(_ ms: Int64, _ text: String) {
        #expect(Time.iso8601(ms) == text)
        #expect(Time.parseISO8601(text) == ms)
    }

    /// One writer reused for many times (as a listing does, keeping the last
    /// day's date) writes what `iso8601` writes for each: within a day, across
    /// midnight, back to an earlier day and clamped at both ends.
    @Test func aReusedWriterWritesWhatIso8601Writes() {
        var random = SeededGenerator(seed: 10)
        let day: Int64 = 86_400_000
        var times: [Int64] = [0, 1, day - 1, day, day - 1, -1, Int64.min, Int64.max, Time.representable.upperBound, 0]
        for _ in 0..<500 {
            let base = Int64.random(in: Time.representable, using: &random)
            times += [base, base + 1, base + day, base - 1_000, base + Int64.random(in: 0..<day, using: &random)]
        }
        var writer = ISO8601Writer()
        for ms in times {
            let text = [UInt8](unsafeUninitializedCapacity: ISO8601Writer.length) { buffer, count in
                writer.write(ms, to: buffer.baseAddress!)
                count = ISO8601Writer.length
            }
            #expect(String(decoding: text, as: UTF8.self) == Time.iso8601(ms), "\(ms)")
        }
    }

    @Test func everyRepresentableTimeRoundTrips() {
        var random = SeededGenerator(seed: 9)
        for _ in 0..<2000 {
            let ms = Int64.random(in: Time.representable, using: &random)
            #expect(Time.parseISO8601(Time.iso8601(ms)) == ms, "\(ms)")
        }
    }

    @Test(arguments: [Int64.min, Int64.min + 1, -62_167_219_200_001, 253_402_300_800_000, Int64.max])
    func timesOutsideTheRangeAreWrittenAtItsEnds(_ ms: Int64) {
        let text = Time.iso8601(ms)
        #expect(text == (ms < 0 ? "0000-01-01T00:00:00.000Z" : "9999-12-31T23:59:59.999Z"))
        #expect(Time.parseISO8601(text) != nil)
    }

    @Test(arguments: [
        ("2024-11-21T15:40:00+01:00", Int64(1_732_200_000_000)), ("2024-11-21T13:40:00-01:00", 1_732_200_000_000),
        ("2024-11-22T04:40:00+14:00", 1_732_200_000_000), ("2024-11-21T00:40:00-14:00", 1_732_200_000_000),
        ("2024-11-21T14:40:00-00:00", 1_732_200_000_000), ("2024-11-21T20:10:00+05:30", 1_732_200_000_000),
        ("2024-11-21T14:40:00.5Z", 1_732_200_000_500), ("2024-11-21T14:40:00.12Z", 1_732_200_000_120),
        ("2024-11-21T14:40:00.123456789Z", 1_732_200_000_123), ("2024-11-21T14:40:00.999999Z", 1_732_200_000_999),
        ("2024-02-29T00:00:00Z", 1_709_164_800_000), ("2000-02-29T00:00:00Z", 951_782_400_000),
        ("0000-02-29T00:00:00Z", -62_162_121_600_000), ("1970-01-31T23:59:59Z", 2_678_399_000),
        ("1970-12-31T00:00:00Z", 31_449_600_000), ("9999-12-31T23:59:59.999+00:00", 253_402_300_799_999),
    ])
    func parsesValidForms(_ text: String, _ ms: Int64) {
        #expect(Time.parseISO8601(text) == ms)
    }

    @Test(arguments: [
        // Dates that do not exist
        "2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2025-02-30T00:00:00Z", "2024-04-31T00:00:00Z", "2024-06-31T00:00:00Z",
        "2024-09-31T00:00:00Z", "2024-11-31T00:00:00Z", "2024-01-32T00:00:00Z", "2024-00-10T00:00:00Z", "2024-13-01T00:00:00Z",
        "2024-01-00T00:00:00Z",
        // Times out of range
        "2024-01-01T24:00:00Z", "2024-01-01T23:60:00Z", "2024-01-01T23:59:60Z", "2024-01-01T99:00:00Z",
        // Offsets out of range or misspelt
        "2024-01-01T00:00:00+14:01", "2024-01-01T00:00:00-15:00", "2024-01-01T00:00:00+99:99", "2024-01-01T00:00:00+01:60",
        "2024-01-01T00:00:00+0100", "2024-01-01T00:00:00+01", "2024-01-01T00:00:00", "2024-01-01T00:00:00z",
        // Fractions
        "2024-01-01T00:00:00.Z", "2024-01-01T00:00:00.1234567890Z", "2024-01-01T00:00:00,5Z",
        // Other spellings and garbage
        "2024-01-01 00:00:00Z", "2024-01-01t00:00:00Z", "2024-01-01T00:00Z", "2024-01-01", " 2024-01-01T00:00:00Z",
        "2024-01-01T00:00:00Z ", "2024-1-01T00:00:00Z", "+2024-01-01T00:00:00Z", "yesterday", "",
        // Years that do not round-trip in four digits
        "10000-01-01T00:00:00Z", "-0001-01-01T00:00:00Z", "0000-01-01T00:30:00+01:00", "9999-12-31T23:59:59-00:01",
    ])
    func rejectsInvalidForms(_ text: String) {
        #expect(Time.parseISO8601(text) == nil)
    }

    @Test func storedTimesLieBetween1970And9999() {
        #expect(Time.stored(0) == 0 && Time.stored(Time.validRange.upperBound) == Time.validRange.upperBound)
        for outside in [Int64.min, -1, Time.validRange.upperBound + 1, Int64.max] { #expect(Time.stored(outside) == nil) }
        #expect(Time.clamped(.min) == 0 && Time.clamped(.max) == Time.validRange.upperBound)
        #expect(Time.validRange.contains(Time.now()))
        #expect(Time.validRange.upperBound == Time.representable.upperBound)
    }

    @Test func legacyReferenceDatesAreRangeChecked() {
        #expect(Time.fromReferenceDate(seconds: 0) == 978_307_200_000)
        #expect(Time.fromReferenceDate(seconds: 753_892_800.25) == 1_732_200_000_250)
        for seconds in [1e300, -1e300, .infinity, .nan, 8e12] {
            #expect(Time.fromReferenceDate(seconds: seconds) == nil)
        }
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

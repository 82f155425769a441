#if canImport(Glibc)
import Glibc
#endif

/// Milliseconds since the Unix epoch: the one time unit the store, the JSON
/// output and the sync records share.
public typealias Milliseconds = Int64

public enum Time {
    /// The dates itsypad stores: 1970-01-01 to 9999-12-31. A time read from a file outside them is
    /// malformed (see `stored(_:)`); a clock outside them is taken as the nearest end.
    public static let validRange: ClosedRange<Milliseconds> = 0...253_402_300_799_999

    /// The wall clock now, in milliseconds (within `validRange`).
    public static func now() -> Milliseconds {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return clamped(
            Milliseconds(spec.tv_sec).multipliedReportingOverflow(by: 1000).partialValue + Milliseconds(spec.tv_nsec / 1_000_000))
    }

    /// `ms` moved into `validRange`.
    public static func clamped(_ ms: Milliseconds) -> Milliseconds {
        min(max(ms, validRange.lowerBound), validRange.upperBound)
    }

    /// A time read from a file or another device, if it is one itsypad stores (within `validRange`).
    public static func stored(_ ms: Milliseconds?) -> Milliseconds? {
        ms.flatMap { validRange.contains($0) ? $0 : nil }
    }

    /// The times that ISO 8601 with four-digit years can write, from
    /// 0000-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z: what
    /// ``iso8601(_:)`` writes and ``parseISO8601(_:)`` reads back.
    public static let representable: ClosedRange<Milliseconds> =
        daysFromCivil(year: 0, month: 1, day: 1) * 86_400_000...daysFromCivil(year: 10_000, month: 1, day: 1) * 86_400_000 - 1

    /// ISO 8601 in UTC with milliseconds, e.g. `2026-11-21T22:46:05.123Z`.
    /// A time outside ``representable`` (only damaged data holds one) is
    /// written as the nearest end of that range, so that it still reads back.
    public static func iso8601(_ ms: Milliseconds) -> String {
        var bytes: [UInt8] = []
        appendISO8601(ms, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `iso8601(ms)` as UTF-8.
    package static func appendISO8601(_ ms: Milliseconds, to out: inout [UInt8]) {
        var writer = ISO8601Writer()
        out.appendWritten(count: ISO8601Writer.length) { writer.write(ms, to: $0) }
    }

    /// Parses the ISO 8601 form this project writes, strictly:
    /// `YYYY-MM-DDThh:mm:ss`, an optional fraction of 1 to 9 digits (kept to
    /// the millisecond, truncated), then `Z` or an offset `±hh:mm` of at most
    /// 14 hours (the widest in use). Dates must exist (February 29 only in
    /// leap years), times are 00:00:00 to 23:59:59 (no leap second, no 24:00),
    /// and the instant must be ``representable``. Anything else is nil.
    public static func parseISO8601(_ text: String) -> Milliseconds? {
        var text = text
        return text.withUTF8(parseISO8601(utf8:))
    }

    /// `parseISO8601` of UTF-8 bytes (an import reads 100,000 dates).
    package static func parseISO8601(utf8 chars: UnsafeBufferPointer<UInt8>) -> Milliseconds? {
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= chars.count else { return nil }
            var value = 0
            for c in chars[from..<from + count] {
                guard c >= 0x30 && c <= 0x39 else { return nil }
                value = value * 10 + Int(c - 0x30)
            }
            return value
        }
        func isByte(_ index: Int, _ ascii: Unicode.Scalar) -> Bool { index < chars.count && chars[index] == UInt8(ascii: ascii) }
        guard isByte(4, "-"), isByte(7, "-"), isByte(10, "T"), isByte(13, ":"), isByte(16, ":"),
            let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second < 60
        else { return nil }
        var index = 19
        var millis = 0
        if isByte(index, ".") {
            index += 1
            let digitsStart = index
            while index < chars.count, chars[index] >= 0x30, chars[index] <= 0x39 {
                if index - digitsStart < 3 { millis = millis * 10 + Int(chars[index] - 0x30) }
                index += 1
            }
            let digits = index - digitsStart
            guard (1...9).contains(digits) else { return nil }
            for _ in digits..<max(digits, 3) { millis *= 10 }
        }
        var offsetMinutes = 0
        if isByte(index, "Z") {
            index += 1
        } else if isByte(index, "+") || isByte(index, "-"), isByte(index + 3, ":"),
            let hours = number(index + 1, 2), let minutes = number(index + 4, 2), minutes < 60, hours * 60 + minutes <= 14 * 60
        {
            offsetMinutes = (hours * 60 + minutes) * (isByte(index, "-") ? -1 : 1)
            index += 6
        } else {
            return nil
        }
        guard index == chars.count else { return nil }
        let days = daysFromCivil(year: Int64(year), month: month, day: day)
        let seconds = days * 86400 + Int64(hour * 3600 + minute * 60 + second - offsetMinutes * 60)
        let ms = seconds * 1000 + Int64(millis)
        return representable.contains(ms) ? ms : nil
    }

    /// A date stored as seconds since 2001-01-01 (Foundation's reference
    /// date, as Itsypad's key-value store wrote them); nil when it is not a
    /// finite number or not ``representable``.
    public static func fromReferenceDate(seconds: Double) -> Milliseconds? {
        let ms = ((seconds + 978_307_200) * 1000).rounded()
        guard ms.isFinite, Double(representable.lowerBound) <= ms, ms <= Double(representable.upperBound) else { return nil }
        return Milliseconds(ms)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    // Howard Hinnant's civil-from-days algorithms: exact for the proleptic Gregorian calendar.
    static func civilDate(fromDays days: Int64) -> (Int64, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func daysFromCivil(year: Int64, month: Int, day: Int) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

/// A retention period as users write it: `90s`, `30m`, `12h`, `7d`, `2w` or `never`.
public struct RetentionDuration: Equatable, Sendable, CustomStringConvertible {
    /// nil means never.
    public let milliseconds: Milliseconds?
    public let description: String

    public static let never = RetentionDuration(milliseconds: nil, description: "never")
    public static let examples = ["never", "90s", "30m", "12h", "1d", "7d", "2w"]

    private init(milliseconds: Milliseconds?, description: String) {
        self.milliseconds = milliseconds
        self.description = description
    }

    public init?(_ text: String) {
        let text = text.lowercased()
        if text == "never" { self = .never; return }
        guard let unit = text.last, let count = Int64(text.dropLast()), count > 0, count < 1_000_000 else { return nil }
        let scale: Milliseconds
        switch unit {
        case "s": scale = 1000
        case "m": scale = 60_000
        case "h": scale = 3_600_000
        case "d": scale = 86_400_000
        case "w": scale = 604_800_000
        default: return nil
        }
        self.init(milliseconds: count * scale, description: text)
    }
}

/// Writes `Time.iso8601` texts in place, keeping the date of the last day it
/// wrote: the times of a listing fall on few days, and the calendar is most of the work.
package struct ISO8601Writer {
    /// The length of every text.
    package static let length = 24
    private var lastDay: Int64?
    private var lastDate = (year: 0, month: 0, day: 0)

    package init() {}

    /// Writes `Time.iso8601(ms)` as the `length` bytes at `text`.
    package mutating func write(_ ms: Milliseconds, to text: UnsafeMutablePointer<UInt8>) {
        let ms = min(max(ms, Time.representable.lowerBound), Time.representable.upperBound)
        let seconds = Time.floorDivide(ms, 1000)
        let millis = Int(ms - seconds * 1000)
        let days = Time.floorDivide(seconds, 86400)
        let secondOfDay = Int(seconds - days * 86400)
        if days != lastDay {
            let (year, month, day) = Time.civilDate(fromDays: days)
            (lastDay, lastDate) = (days, (Int(year), month, day))
        }
        // `YYYY-MM-DDThh:mm:ss.sssZ`; every value written is below 100 (the year and the milliseconds in two parts).
        func twoDigits(_ value: Int, at position: Int) {
            let tens = value / 10
            text[position] = 0x30 &+ UInt8(truncatingIfNeeded: tens)
            text[position + 1] = 0x30 &+ UInt8(truncatingIfNeeded: value - tens * 10)
        }
        twoDigits(lastDate.year / 100, at: 0)
        twoDigits(lastDate.year % 100, at: 2)
        twoDigits(lastDate.month, at: 5)
        twoDigits(lastDate.day, at: 8)
        twoDigits(secondOfDay / 3600, at: 11)
        twoDigits(secondOfDay / 60 % 60, at: 14)
        twoDigits(secondOfDay % 60, at: 17)
        twoDigits(millis / 10, at: 20)
        text[22] = 0x30 &+ UInt8(truncatingIfNeeded: millis % 10)
        (text[4], text[7], text[10], text[13], text[16], text[19], text[23]) = (0x2D, 0x2D, 0x54, 0x3A, 0x3A, 0x2E, 0x5A)
    }
}

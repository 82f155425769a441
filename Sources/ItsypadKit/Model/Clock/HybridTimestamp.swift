import ItsypadSupport

/// A hybrid logical clock reading: wall-clock milliseconds plus a counter, tied
/// to a device. A device whose clock runs behind still orders its edit after
/// every version it has seen, and ties break on the device id, so every device
/// picks the same winner (Itsypad once trusted each device's clock).
public struct HybridTimestamp: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var physical: Milliseconds
    public var counter: Int
    public var device: String

    public init(physical: Milliseconds, counter: Int = 0, device: String) {
        self.physical = physical
        self.counter = counter
        self.device = device
    }

    /// Counters beyond this are refused when read, so that advancing one can never overflow.
    public static let maxCounter = 1 << 40

    /// The next reading for an edit made now, after `previous` (the version edited).
    public static func next(after previous: HybridTimestamp?, now: Milliseconds, device: String) -> HybridTimestamp {
        let now = Time.clamped(now)
        guard let previous, previous.physical >= now else { return HybridTimestamp(physical: now, device: device) }
        return previous.advanced(device: device)
    }

    /// The stamp of a merge of two versions: after both, and computed from them
    /// alone, so every device merging the same versions stamps the result alike
    /// (the merger's wall clock would let a stale change win by being merged late).
    public static func merged(_ a: HybridTimestamp, _ b: HybridTimestamp) -> HybridTimestamp {
        let latest = max(a, b)
        return latest.advanced(device: latest.device)
    }

    /// The reading right after this one. Never traps, and stays a reading `init?(_:)` accepts:
    /// a counter at its end moves the physical time on; at the end of time it stays put.
    private func advanced(device: String) -> HybridTimestamp {
        if counter < HybridTimestamp.maxCounter {
            return HybridTimestamp(physical: physical, counter: counter + 1, device: device)
        }
        if physical < Time.validRange.upperBound {
            return HybridTimestamp(physical: physical + 1, device: device)
        }
        return HybridTimestamp(physical: physical, counter: counter, device: device)
    }

    public static func < (a: HybridTimestamp, b: HybridTimestamp) -> Bool {
        (a.physical, a.counter, a.device) < (b.physical, b.counter, b.device)
    }

    /// `physical.counter.device`, the form stored in files and records.
    public var description: String { "\(physical).\(counter).\(device)" }

    /// Parses the stored form; nil when malformed, a time outside `Time.validRange` or a counter
    /// outside 0…`maxCounter` included. The numbers read as `Int64(_:)` reads them (a sign, then
    /// digits); the device is everything after the second dot. The text is split at Characters, so
    /// that a dot a combining mark follows splits nothing.
    public init?(_ text: String) {
        guard let first = HybridTimestamp.dot(in: text, from: text.startIndex) else { return nil }
        let afterFirst = text.utf8.index(after: first)
        guard let second = HybridTimestamp.dot(in: text, from: afterFirst), let physical = Milliseconds(text[..<first]),
            let counter = Int(text[afterFirst..<second])
        else { return nil }
        self.init(checking: physical, counter, String(text[text.utf8.index(after: second)...]))
    }

    /// The first dot from `start` that is a Character of its own, where splitting at Characters
    /// splits: found in the UTF-8 bytes, without walking every Character (a file's clocks are read
    /// for every tab a sync or a listing reads).
    private static func dot(in text: String, from start: String.Index) -> String.Index? {
        var position = start
        while let dot = text.utf8[position...].firstIndex(of: UInt8(ascii: ".")) {
            position = text.utf8.index(after: dot)
            if String.Index(dot, within: text) != nil, String.Index(position, within: text) != nil { return dot }
        }
        return nil
    }

    private init?(checking physical: Milliseconds, _ counter: Int, _ device: String) {
        guard Time.validRange.contains(physical), (0...HybridTimestamp.maxCounter).contains(counter) else { return nil }
        self.init(physical: physical, counter: counter, device: device)
    }
}

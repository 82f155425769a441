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

    /// The next reading for an edit made now, after `previous` (the version edited).
    public static func next(after previous: HybridTimestamp?, now: Milliseconds, device: String) -> HybridTimestamp {
        guard let previous, previous.physical >= now else { return HybridTimestamp(physical: now, device: device) }
        return HybridTimestamp(physical: previous.physical, counter: previous.counter + 1, device: device)
    }

    public static func < (a: HybridTimestamp, b: HybridTimestamp) -> Bool {
        (a.physical, a.counter, a.device) < (b.physical, b.counter, b.device)
    }

    /// `physical.counter.device`, the form stored in files and records.
    public var description: String { "\(physical).\(counter).\(device)" }

    public init?(_ text: String) {
        let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let physical = Milliseconds(parts[0]), let counter = Int(parts[1]) else { return nil }
        self.init(physical: physical, counter: counter, device: String(parts[2]))
    }
}

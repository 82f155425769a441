/// Which edits a version of a tab or clip includes: for each device that edited
/// it, the hybrid clock of its latest edit (a version vector whose entries are
/// clocks). One device's edits of an item form a chain (each is made on top of
/// the previous), so one clock per device says exactly which of its edits a
/// version has seen. The sync engine keeps it in the records it syncs; the
/// backend's `VersionVector` numbers journal entries instead.
///
/// Sync compares histories to tell a version that already contains another
/// (adopt it, nothing is lost) from truly concurrent ones (merge them), and a
/// deletion made by a device that had seen every edit from one that had not.
public struct EditHistory: Equatable, Hashable, Sendable {
    /// The latest edit per device, sorted by device.
    public private(set) var clocks: [HybridTimestamp]

    public init(_ clocks: [HybridTimestamp] = []) {
        self.clocks = []
        for clock in clocks { record(clock) }
    }

    /// Adds an edit: it replaces an older clock of the same device.
    public mutating func record(_ clock: HybridTimestamp) {
        if let index = clocks.firstIndex(where: { $0.device == clock.device }) {
            clocks[index] = max(clocks[index], clock)
        } else {
            clocks.append(clock)
            clocks.sort { $0.device < $1.device }
        }
    }

    public func recording(_ clock: HybridTimestamp) -> EditHistory {
        var copy = self
        copy.record(clock)
        return copy
    }

    /// Every edit either side includes.
    public func union(_ other: EditHistory) -> EditHistory {
        var result = self
        for clock in other.clocks { result.record(clock) }
        return result
    }

    /// The latest edit `device` made that this version includes.
    public func clock(of device: String) -> HybridTimestamp? {
        clocks.first { $0.device == device }
    }

    /// True when this version includes every edit `other` includes.
    public func includes(_ other: EditHistory) -> Bool {
        other.clocks.allSatisfy { theirs in clock(of: theirs.device).map { $0 >= theirs } ?? false }
    }

    /// The stored form: each clock as `physical.counter.device`.
    public var strings: [String] { clocks.map(\.description) }

    /// More entries than devices anyone syncs: a longer list read from elsewhere is refused.
    static let maxEntries = 1000

    /// Parses the stored form; nil when an element is not a clock or the list is implausibly long.
    public init?(strings: [String]) {
        guard strings.count <= EditHistory.maxEntries else { return nil }
        var clocks: [HybridTimestamp] = []
        for text in strings {
            guard let clock = HybridTimestamp(text) else { return nil }
            clocks.append(clock)
        }
        self.init(clocks)
    }
}

import ItsypadSupport

/// The causal history of one record version in a replicated backend: for each device,
/// the sequence number of that device's latest change to the record that the version includes.
///
/// Version X covers Y when every entry of Y is at most X's; two versions neither of which covers
/// the other are concurrent (siblings). Each device numbers its own changes, so a device's entries
/// only grow and a plain vector is exact: a device always builds on its own previous change.
public struct VersionVector: Hashable, Sendable, CustomStringConvertible {
    /// Device id → sequence number, each at least 1.
    public private(set) var entries: [String: Int64]

    /// More devices than this ever writing one backend is refused, so a hostile file cannot make vectors huge.
    public static let maxEntries = 1000
    /// Sequence numbers stay below 2^53, exact in any JSON reader.
    public static let maxSequence: Int64 = 1 << 53

    /// The empty vector: before the first version.
    public init() { entries = [:] }

    /// A vector from entries already known to be valid (device ids checked, sequences in range).
    init(unchecked entries: [String: Int64]) { self.entries = entries }

    /// Parses the text form `device:seq,device:seq`, entries sorted by device id, each once, numbers
    /// written without sign or leading zero. The text form is canonical, so equal vectors have equal
    /// text. Returns nil for anything else: a tag read from a backend is untrusted.
    public init?(tag: String) {
        // Device ids and sequences are ASCII, so the tag is split at bytes.
        guard tag.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        var entries: [String: Int64] = [:]
        var previous: Substring?
        let parts = tag.isEmpty ? [] : tag.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
        guard parts.count <= Self.maxEntries else { return nil }
        for part in parts {
            let pair = part.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false).map { Substring($0) }
            guard pair.count == 2, Self.isDeviceID(pair[0]), previous.map({ $0 < pair[0] }) ?? true,
                let sequence = Self.sequence(pair[1])
            else { return nil }
            entries[String(pair[0])] = sequence
            previous = pair[0]
        }
        self.entries = entries
    }

    /// The canonical text form; it is also the version's change tag.
    public var tag: String {
        entries.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
    }

    public var description: String { tag.isEmpty ? "(empty)" : tag }

    public var isEmpty: Bool { entries.isEmpty }

    /// Every entry of `other` is at most this vector's entry for the same device.
    public func covers(_ other: VersionVector) -> Bool {
        other.entries.allSatisfy { device, sequence in (entries[device] ?? 0) >= sequence }
    }

    /// Neither covers the other.
    public func isConcurrent(with other: VersionVector) -> Bool {
        !covers(other) && !other.covers(self)
    }

    /// The entry-wise maximum: the history of a merge of both.
    public func joined(with other: VersionVector) -> VersionVector {
        VersionVector(unchecked: entries.merging(other.entries, uniquingKeysWith: max))
    }

    /// The entry-wise minimum: the history both share.
    public func meet(with other: VersionVector) -> VersionVector {
        var shared: [String: Int64] = [:]
        for (device, sequence) in entries {
            if let theirs = other.entries[device] { shared[device] = min(sequence, theirs) }
        }
        return VersionVector(unchecked: shared)
    }

    /// The vector of a change by `device`, numbered `sequence`, made on top of this version.
    /// Nil when the device id is not valid or the sequence is out of range or does not advance.
    public func advanced(by device: String, to sequence: Int64) -> VersionVector? {
        guard Self.isDeviceID(Substring(device)), (1..<Self.maxSequence).contains(sequence), sequence > (entries[device] ?? 0),
            entries[device] != nil || entries.count < Self.maxEntries
        else { return nil }
        var advanced = entries
        advanced[device] = sequence
        return VersionVector(unchecked: advanced)
    }

    /// Longest device id.
    public static let maxDeviceIDLength = 64

    /// Device ids: 1 to 64 characters of A-Z a-z 0-9 and "-", not starting with "-".
    public static func isDeviceID<Text: StringProtocol>(_ text: Text) -> Bool {
        let bytes = text.utf8
        guard (1...maxDeviceIDLength).contains(bytes.count), bytes.first != UInt8(ascii: "-") else { return false }
        return bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
        }
    }

    /// A sequence number in its canonical decimal form, 1 ..< maxSequence.
    private static func sequence(_ text: Substring) -> Int64? {
        let bytes = text.utf8
        guard (1...16).contains(bytes.count), bytes.first != UInt8(ascii: "0"),
            bytes.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let value = Int64(text), value < maxSequence
        else { return nil }
        return value
    }
}

import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Random (version 4) UUIDs as lowercase strings: record names on the backend
/// and ids on the command line.
public enum Identifier {
    public static func make() -> String {
        // Two 64-bit draws, two system calls (a byte at a time would be sixteen: ids name every temporary file).
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for _ in 0..<2 { withUnsafeBytes(of: generator.next() as UInt64) { bytes += $0 } }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return format(bytes)
    }

    package static func format(_ bytes: [UInt8]) -> String {
        PackedID(bytes).string
    }

    /// True for a canonical UUID string (any case).
    public static func isValid(_ text: String) -> Bool { bytes(text) != nil }

    /// The 16 bytes of a UUID string (hex digits in either case), nil when it is not one.
    public static func bytes(_ text: String) -> [UInt8]? { PackedID(text)?.bytes }

    /// Short form shown in listings: enough to be a unique 4+ character prefix.
    public static func short(_ id: String) -> String { String(id.prefix(8)) }

    /// A prefix a user may type: at least 4 hex digits (dashes allowed).
    public static func isPrefixCandidate(_ text: String) -> Bool {
        text.count >= 4 && text.count <= 36 && text.allSatisfy { $0.isHexDigit || $0 == "-" }
    }
}

/// A UUID's 16 bytes as two integers: a cheap set member and index slot field,
/// printed without building a String.
package struct PackedID: Hashable {
    package let high: UInt64
    package let low: UInt64

    package init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    init(_ bytes: [UInt8]) {
        high = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        low = bytes[8..<16].reduce(0) { $0 << 8 | UInt64($1) }
    }

    package init?(_ text: String) {
        var text = text
        guard let packed = text.withUTF8(PackedID.init(anyCaseUTF8:)) else { return nil }
        self = packed
    }

    /// Only the lowercase form `string` gives back: a key that must round-trip exactly.
    package init?(canonical text: String) {
        var text = text
        guard let packed = text.withUTF8(PackedID.init(canonicalUTF8:)) else { return nil }
        self = packed
    }

    /// A UUID's text with hex digits in either case, as `init?(_:)` reads it, from bytes (an import reads 100,000 ids).
    package init?(anyCaseUTF8 utf8: UnsafeBufferPointer<UInt8>) {
        guard utf8.count == 36 else { return nil }
        let packed = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { lowercased in
            for index in 0..<36 {
                let byte = utf8[index]
                lowercased[index] = byte &- 0x41 < 26 ? byte | 0x20 : byte
            }
            return PackedID(canonicalUTF8: UnsafeBufferPointer(lowercased))
        }
        guard let packed else { return nil }
        self = packed
    }

    /// Every listed line's id is read this way: no table, no per-digit branch on the position.
    package init?(canonicalUTF8 utf8: UnsafeBufferPointer<UInt8>) {
        guard utf8.count == 36, utf8[8] == 0x2D, utf8[13] == 0x2D, utf8[18] == 0x2D, utf8[23] == 0x2D else { return nil }
        var high: UInt64 = 0, low: UInt64 = 0
        var invalid: UInt8 = 0
        func add(_ range: Range<Int>, to word: inout UInt64) {
            for index in range {
                let value = PackedID.lowercaseHexValue(utf8[index])
                invalid |= value
                word = word << 4 | UInt64(value & 0x0F)
            }
        }
        add(0..<8, to: &high)
        add(9..<13, to: &high)
        add(14..<18, to: &high)
        add(19..<23, to: &low)
        add(24..<36, to: &low)
        guard invalid & 0xF0 == 0 else { return nil }
        self.init(high: high, low: low)
    }

    /// 0–15 for a digit or a lowercase a–f, 0xFF for anything else.
    static func lowercaseHexValue(_ byte: UInt8) -> UInt8 {
        let digit = byte &- 0x30
        if digit < 10 { return digit }
        let letter = byte &- 0x61
        return letter < 6 ? letter &+ 10 : 0xFF
    }

    /// Random UUIDs need no mixing of both halves: one word is hashed (a listing looks up 100,000 ids).
    package func hash(into hasher: inout Hasher) {
        hasher.combine(high ^ (low &* 0x9E37_79B9_7F4A_7C15))
    }

    package var bytes: [UInt8] { (0..<16).map { byte(at: $0) } }

    package var string: String {
        var text: [UInt8] = []
        text.reserveCapacity(36)
        appendText(to: &text)
        return String(decoding: text, as: UTF8.self)
    }

    package func byte(at index: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: (index < 8 ? high : low) >> UInt64(56 - 8 * (index % 8)))
    }

    /// Appends the lowercase text form.
    package func appendText(to out: inout [UInt8]) {
        out.appendWritten(count: PackedID.textLength) { writeText(to: $0) }
    }

    /// Whether `utf8` is the lowercase text form (a listing checks that each line it reads is its slot's).
    package func isText(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard utf8.count == 36, let text = UnsafeRawPointer(utf8.baseAddress) else { return false }
        // The digits compared a word or half a word at a time where the text holds them (8-4-4-4-12), then the
        // dashes; the middle words split in halves, first digits in the low one. (Without a closure over the
        // words in memory: a listing checks 100,000 lines.)
        let words = digitWords
        let (second, third) = (UInt64(littleEndian: words.1), UInt64(littleEndian: words.2))
        func half(at offset: Int) -> UInt32 { UInt32(littleEndian: text.loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
        return text.loadUnaligned(as: UInt64.self) == words.0
            && half(at: 9) == UInt32(truncatingIfNeeded: second) && half(at: 14) == UInt32(truncatingIfNeeded: second >> 32)
            && half(at: 19) == UInt32(truncatingIfNeeded: third) && half(at: 24) == UInt32(truncatingIfNeeded: third >> 32)
            && text.loadUnaligned(fromByteOffset: 28, as: UInt64.self) == words.3
            && text.load(fromByteOffset: 8, as: UInt8.self) == 0x2D && text.load(fromByteOffset: 13, as: UInt8.self) == 0x2D
            && text.load(fromByteOffset: 18, as: UInt8.self) == 0x2D && text.load(fromByteOffset: 23, as: UInt8.self) == 0x2D
    }

    /// The 32 digits, eight to a word, in the order they are written.
    @inline(__always)
    private var digitWords: (UInt64, UInt64, UInt64, UInt64) {
        (
            PackedID.hexText(UInt32(truncatingIfNeeded: high >> 32)), PackedID.hexText(UInt32(truncatingIfNeeded: high)),
            PackedID.hexText(UInt32(truncatingIfNeeded: low >> 32)), PackedID.hexText(UInt32(truncatingIfNeeded: low))
        )
    }

    /// The length of the text form.
    private static let textLength = 36

    /// Writes the lowercase text form, 8-4-4-4-12, as the `textLength` bytes at `text`, in five copies.
    @inline(__always)
    private func writeText(to text: UnsafeMutablePointer<UInt8>) {
        var words = digitWords
        withUnsafeBytes(of: &words) { digits in
            let base = UnsafeMutableRawPointer(text)
            func copy(_ from: Int, to: Int, _ count: Int) {
                (base + to).copyMemory(from: digits.baseAddress! + from, byteCount: count)
            }
            copy(0, to: 0, 8)
            copy(8, to: 9, 4)
            copy(12, to: 14, 4)
            copy(16, to: 19, 4)
            copy(20, to: 24, 12)
            (text[8], text[13], text[18], text[23]) = (0x2D, 0x2D, 0x2D, 0x2D)
        }
    }

    /// The eight lowercase hex digits of `value`, most significant first in memory.
    @inline(__always)
    static func hexText(_ value: UInt32) -> UInt64 {
        // One nibble per byte, the most significant nibble in the lowest byte.
        var spread = UInt64(value)
        spread = (spread & 0xFFFF_0000) << 16 | spread & 0xFFFF
        spread = (spread & 0x0000_FF00_0000_FF00) << 8 | spread & 0x0000_00FF_0000_00FF
        spread = (spread & 0x00F0_00F0_00F0_00F0) << 4 | spread & 0x000F_000F_000F_000F
        spread = spread.byteSwapped
        // '0' + nibble, and 'a' - '0' - 10 more where the nibble is 10 or more.
        let letters = ((spread &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
        return (spread &+ 0x3030_3030_3030_3030 &+ letters &* 0x27).littleEndian
    }
}

/// The ids whose lowercase text form starts with a given text, told from
/// their packed form: a lookup by prefix among 10,000 tabs formats no text.
package struct PackedIDPrefix {
    private var mask: (high: UInt64, low: UInt64) = (0, 0)
    private var value: (high: UInt64, low: UInt64) = (0, 0)

    /// nil when no id's text starts with `text` (a dash out of place, anything but a lowercase hex digit, too long).
    package init?(_ text: String) {
        var digit = 0
        for (position, byte) in text.utf8.enumerated() {
            guard position < 36 else { return nil }
            if position == 8 || position == 13 || position == 18 || position == 23 {
                guard byte == 0x2D else { return nil }
                continue
            }
            let nibble = PackedID.lowercaseHexValue(byte)
            guard nibble <= 0x0F else { return nil }
            let shift = UInt64(60 - 4 * (digit % 16))
            if digit < 16 {
                mask.high |= 0x0F << shift
                value.high |= UInt64(nibble) << shift
            } else {
                mask.low |= 0x0F << shift
                value.low |= UInt64(nibble) << shift
            }
            digit += 1
        }
    }

    package func matches(_ id: PackedID) -> Bool {
        id.high & mask.high == value.high && id.low & mask.low == value.low
    }

    /// The smallest id the prefix matches: those it matches follow it in (high, low) order.
    package var smallest: PackedID { PackedID(high: value.high, low: value.low) }
}

/// Resolving what the user typed (a full id, a 4+ character prefix or, for tabs,
/// a name) to exactly one item.
public enum Resolution<Item> {
    case found(Item)
    case ambiguous([Item])
    case notFound

    package var isNotFound: Bool { if case .notFound = self { return true }; return false }
}

/// A set of packed ids, kept in the order they were inserted, with a table of
/// their indices probed in place: a sync of 100,000 clips asks one whether
/// each is waiting. Random UUIDs need no hashing: their bits, mixed with a seed of
/// this set's own, pick the slot (a `Set` would hash each id, and its table
/// of separate parts would cost more than the listing's own work).
package struct PackedIDSet {
    /// The members, in the order they were inserted.
    private var members: [PackedID] = []
    /// 1 + a member's index, or 0 for an empty slot; a power of two slots, at most half taken.
    private var slots: [UInt32]
    private let seed = UInt64.random(in: 0...UInt64.max) | 1

    package init(minimumCapacity: Int = 0) {
        slots = PackedIDSet.emptySlots(for: minimumCapacity)
    }

    package var count: Int { members.count }
    package var isEmpty: Bool { members.isEmpty }

    package func contains(_ id: PackedID) -> Bool { index(of: id) != nil }

    /// The member at `index` in the order of insertion.
    package subscript(index: Int) -> PackedID { members[index] }

    /// Where `id` stands in the order of insertion.
    package func index(of id: PackedID) -> Int? {
        guard !isEmpty else { return nil }
        return slots.withUnsafeBufferPointer { slots in
            members.withUnsafeBufferPointer { members in
                var slot = PackedIDSet.slot(of: id, seed: seed, mask: slots.count - 1)
                while slots[slot] != 0 {
                    let member = Int(slots[slot]) - 1
                    if members[member] == id { return member }
                    slot = (slot + 1) & (slots.count - 1)
                }
                return nil
            }
        }
    }

    /// Whether `id` was not a member before.
    @discardableResult
    package mutating func insert(_ id: PackedID) -> Bool {
        guard index(of: id) == nil else { return false }
        if 2 * (count + 1) > slots.count { grow(to: count + 1) }
        members.append(id)
        PackedIDSet.place(id, at: count - 1, seed: seed, in: &slots)
        return true
    }

    package mutating func reserveCapacity(_ capacity: Int) {
        members.reserveCapacity(capacity)
        if 2 * capacity > slots.count { grow(to: capacity) }
    }

    private mutating func grow(to capacity: Int) {
        var larger = PackedIDSet.emptySlots(for: Swift.max(capacity, 2 * count))
        for (index, member) in members.enumerated() { PackedIDSet.place(member, at: index, seed: seed, in: &larger) }
        slots = larger
    }

    /// Puts `id`, the member at `index`, in the first free slot from its own.
    private static func place(_ id: PackedID, at index: Int, seed: UInt64, in slots: inout [UInt32]) {
        var slot = slot(of: id, seed: seed, mask: slots.count - 1)
        while slots[slot] != 0 { slot = (slot + 1) & (slots.count - 1) }
        slots[slot] = UInt32(index + 1)
    }

    private static func slot(of id: PackedID, seed: UInt64, mask: Int) -> Int {
        // High bits of a multiplication by an odd seed, from both words.
        let mixed = (id.high ^ (id.low &* 0x9E37_79B9_7F4A_7C15)) &* seed
        return Int(truncatingIfNeeded: (mixed ^ mixed >> 29) >> 16) & mask
    }

    /// Empty slots for `capacity` members at most half taken: a power of two, at least 8.
    private static func emptySlots(for capacity: Int) -> [UInt32] {
        var count = 8
        while count < 2 * capacity { count *= 2 }
        return [UInt32](repeating: 0, count: count)
    }
}

extension PackedIDSet {
    /// The members in the order they were inserted, taken out: the set is left empty, and no copy of them is made.
    package mutating func takeMembers() -> [PackedID] {
        slots = PackedIDSet.emptySlots(for: 0)
        defer { members = [] }
        return members
    }
}

/// Packed ids in order, found by binary search: a set that no longer changes, in 16 bytes an id
/// (a `PackedIDSet` takes 24 or more, with its table of slots).
package struct SortedPackedIDs {
    package let ids: [PackedID]

    /// Sorts `ids` in place, moving `values` (one for each) with them; also returns the place in the
    /// sorted order of each id's former index. Holds 8 bytes an id beside them while it works.
    package static func sorting<Value>(_ ids: consuming [PackedID], with values: inout [Value]) -> (SortedPackedIDs, places: [UInt32]) {
        precondition(ids.count == values.count && ids.count < UInt32.max)
        var formerIndices = Array(0..<UInt32(ids.count))
        ids.withUnsafeBufferPointer { ids in
            formerIndices.sort { ids[Int($0)] < ids[Int($1)] }
        }
        SortedPackedIDs.gather(&ids, from: formerIndices)
        SortedPackedIDs.gather(&values, from: formerIndices)
        var places = [UInt32](repeating: 0, count: ids.count)
        for (place, former) in formerIndices.enumerated() { places[Int(former)] = UInt32(place) }
        return (SortedPackedIDs(ids: ids), places)
    }

    private init(ids: [PackedID]) {
        self.ids = ids
    }

    package var count: Int { ids.count }

    package subscript(index: Int) -> PackedID { ids[index] }

    /// Where `id` stands in the order.
    package func index(of id: PackedID) -> Int? {
        var (low, high) = (0, ids.count)
        while low < high {
            let middle = (low + high) / 2
            if ids[middle] < id { low = middle + 1 } else { high = middle }
        }
        return low < ids.count && ids[low] == id ? low : nil
    }

    /// Puts the element at `sources[i]` at `i`, in place, a cycle of the permutation `sources` at a time.
    private static func gather<Element>(_ elements: inout [Element], from sources: [UInt32]) {
        var done = [UInt64](repeating: 0, count: (elements.count + 63) / 64)
        for start in elements.indices where done[start / 64] & 1 << (start % 64) == 0 {
            let first = elements[start]
            var target = start
            while true {
                done[target / 64] |= 1 << (target % 64)
                let source = Int(sources[target])
                if source == start { break }
                elements[target] = elements[source]
                target = source
            }
            elements[target] = first
        }
    }
}

extension PackedID: Comparable {
    package static func < (left: PackedID, right: PackedID) -> Bool { (left.high, left.low) < (right.high, right.low) }
}

extension PackedIDSet: Sequence {
    /// The members, in the order they were inserted.
    package func makeIterator() -> IndexingIterator<[PackedID]> { members.makeIterator() }
}

/// Ids in about 4 bytes each, not the ids themselves: it may answer "maybe" for an id never
/// inserted (about one time in 100,000 while within its capacity) but never "no" for one inserted.
/// The clip ledger's answer to "may this clip have a line?" for a million clips.
package struct PackedIDFilter {
    private var words: [UInt64]
    /// Inserts the filter took for new ids (a few under the distinct ids: a false "maybe" is not counted).
    package private(set) var count = 0
    /// The ids it holds at its false-"maybe" rate; past it the rate grows, and a new one should be built.
    package let capacity: Int
    private let seed = UInt64.random(in: 0...UInt64.max) | 1

    private static let bitsPerID = 24
    private static let probes = 16

    package init(capacity: Int) {
        self.capacity = Swift.max(capacity, 1 << 12)
        var bits = 64
        while bits < self.capacity * PackedIDFilter.bitsPerID { bits *= 2 }
        words = [UInt64](repeating: 0, count: bits / 64)
    }

    package var isFull: Bool { count > capacity }

    package func mayContain(_ id: PackedID) -> Bool {
        let bits = Bits(of: id, in: self)
        return (0..<PackedIDFilter.probes).allSatisfy { probe in
            let (word, bit) = bits[probe]
            return words[word] & bit != 0
        }
    }

    package mutating func insert(_ id: PackedID) {
        // The bits are worked out first, then set in a plain loop: a closure that captured `self` while
        // setting them would hold a second reference to `words` and copy the whole filter at every bit.
        let bits = Bits(of: id, in: self)
        var new = false
        for probe in 0..<PackedIDFilter.probes {
            let (word, bit) = bits[probe]
            new = new || words[word] & bit == 0
            words[word] |= bit
        }
        if new { count += 1 }
    }

    /// An id's bits: double hashing over two mixes of both words.
    private struct Bits {
        let first: UInt64
        let step: UInt64
        let mask: UInt64

        init(of id: PackedID, in filter: PackedIDFilter) {
            mask = UInt64(filter.words.count * 64 - 1)
            first = PackedIDFilter.mix((id.high ^ id.low &* 0x9E37_79B9_7F4A_7C15) &* filter.seed)
            step = PackedIDFilter.mix((id.low ^ id.high &* 0xC2B2_AE3D_27D4_EB4F) &* filter.seed) | 1
        }

        /// The word and the bit in it of probe number `probe`.
        subscript(probe: Int) -> (Int, UInt64) {
            let bit = (first &+ UInt64(probe) &* step) & mask
            return (Int(bit >> 6), 1 << (bit & 63))
        }
    }

    private static func mix(_ value: UInt64) -> UInt64 {
        var value = value
        value = (value ^ value >> 30) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ value >> 27) &* 0x94D0_49BB_1331_11EB
        return value ^ value >> 31
    }
}

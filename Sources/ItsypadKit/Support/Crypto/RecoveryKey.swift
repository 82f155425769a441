/// The form in which a person reads and types a 256-bit key: 13 groups of five
/// Crockford base32 characters separated by dashes, e.g. `7K3QH-0VZ2M-…`.
///
/// Four characters of each group carry key bits (52 × 5 = 260 bits: the 256 of the key,
/// then four zero bits); the fifth checks them together with the group's position. So any
/// one mistyped character in a group, two neighbours typed in swapped order, or two whole
/// groups typed in each other's place is caught, and the message names the group. Reading
/// ignores case, spaces and dashes, and takes O for 0 and I or L for 1, as Crockford's
/// alphabet intends (it has no I, L, O or U). A mistake the checks cannot see (several in
/// one group) still cannot slip through: the backend's key check value refuses the key.
///
/// Encoding and decoding compute characters arithmetically, without a lookup table or a
/// branch on the key's bits. The formatted `String` is, like any string, not wiped.
public enum RecoveryKey {
    public static let keyByteCount = 32
    public static let groupCount = 13
    static let dataPerGroup = 4
    static let symbolsPerGroup = dataPerGroup + 1
    static let symbolCount = groupCount * symbolsPerGroup

    /// `key` (32 bytes) as 13 dash-separated groups of five characters.
    public static func format(_ key: SecretBytes) -> String {
        precondition(key.count == keyByteCount, "a recovery key holds a 32-byte key")
        var data = [UInt8](repeating: 0, count: groupCount * dataPerGroup)
        var text = [UInt8]()
        text.reserveCapacity(symbolCount + groupCount - 1)
        defer {
            SecureMemory.zero(&data)
            SecureMemory.zero(&text)
        }
        key.withUnsafeBytes { key in
            SecureMemory.withScratch(byteCount: keyByteCount + 2) { bits in
                bits.copyMemory(from: key)
                for index in data.indices { data[index] = symbol(index, of: UnsafeRawBufferPointer(bits)) }
            }
        }
        for group in 0..<groupCount {
            if group > 0 { text.append(UInt8(ascii: "-")) }
            let symbols = data[(group * dataPerGroup)..<((group + 1) * dataPerGroup)]
            for value in symbols { text.append(character(for: value)) }
            text.append(character(for: check(symbols, group: group)))
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The key in `text`, or why it cannot be one.
    public static func parse(_ text: String) throws(RecoveryKeyError) -> SecretBytes {
        var symbols = [UInt8]()
        symbols.reserveCapacity(symbolCount)
        defer { SecureMemory.zero(&symbols) }
        for scalar in text.unicodeScalars where !isSeparator(scalar) {
            let (value, valid) = scalar.isASCII ? self.value(of: UInt8(scalar.value)) : (0, false)
            guard valid else {
                throw .invalidCharacter(Character(scalar), group: min(symbols.count / symbolsPerGroup + 1, groupCount))
            }
            symbols.append(value)
            guard symbols.count <= symbolCount else { throw .wrongLength(symbols: text.unicodeScalars.filter { !isSeparator($0) }.count) }
        }
        guard symbols.count == symbolCount else { throw .wrongLength(symbols: symbols.count) }

        var data = [UInt8]()
        data.reserveCapacity(groupCount * dataPerGroup)
        defer { SecureMemory.zero(&data) }
        var badGroups: [Int] = []
        for group in 0..<groupCount {
            let start = group * symbolsPerGroup
            let groupData = symbols[start..<(start + dataPerGroup)]
            data.append(contentsOf: groupData)
            if check(groupData, group: group) != symbols[start + dataPerGroup] { badGroups.append(group + 1) }
        }
        // The last symbol's low four bits are padding beyond the 256 key bits.
        if data[data.count - 1] & 0x0f != 0, badGroups.last != groupCount { badGroups.append(groupCount) }
        guard badGroups.isEmpty else { throw .typo(groups: badGroups) }

        return SecretBytes(count: keyByteCount) { key in
            SecureMemory.withScratch(byteCount: keyByteCount + 2) { bits in
                for (index, value) in data.enumerated() { store(value, at: index, in: bits) }
                key.copyMemory(from: UnsafeRawBufferPointer(rebasing: bits[0..<keyByteCount]))
            }
        }
    }

    private static func isSeparator(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "-" || scalar == "\t" || scalar == "\n" || scalar == "\r"
    }

    // MARK: Bits

    /// Symbol `index`: bits 5·index ..< 5·index + 5 of `bits`, most significant first.
    /// `bits` has two bytes of zeros after the key so the last symbol can read past it.
    private static func symbol(_ index: Int, of bits: UnsafeRawBufferPointer) -> UInt8 {
        let bit = index * 5
        let pair = UInt16(bits[bit / 8]) << 8 | UInt16(bits[bit / 8 + 1])
        return UInt8(truncatingIfNeeded: pair >> (11 - bit % 8)) & 0x1f
    }

    private static func store(_ value: UInt8, at index: Int, in bits: UnsafeMutableRawBufferPointer) {
        let bit = index * 5
        let pair = UInt16(value) << (11 - bit % 8)
        bits[bit / 8] |= UInt8(truncatingIfNeeded: pair >> 8)
        bits[bit / 8 + 1] |= UInt8(truncatingIfNeeded: pair)
    }

    // MARK: The check symbol

    /// c = g + α·d₀ + α²·d₁ + α³·d₂ + α⁴·d₃ in GF(32) (x⁵ + x² + 1, α = x; addition is XOR).
    /// Distinct non-zero weights catch any one changed symbol; α ≠ 1 catches swapped
    /// neighbours; the position g catches a group typed in another group's place.
    static func check(_ data: ArraySlice<UInt8>, group: Int) -> UInt8 {
        var sum = UInt8(group)
        var weight = 0
        for value in data {
            weight += 1
            var term = value
            for _ in 0..<weight { term = timesAlpha(term) }
            sum ^= term
        }
        return sum
    }

    /// Multiplies by x modulo x⁵ + x² + 1, with a mask instead of a branch.
    private static func timesAlpha(_ value: UInt8) -> UInt8 {
        let overflow = 0 &- ((value >> 4) & 1)
        return ((value << 1) & 0x1f) ^ (0x05 & overflow)
    }

    // MARK: Characters (Crockford: 0-9 A-H J K M N P-T V-Z)

    /// The character for 0…31: '0' + value, shifted past the letters the alphabet leaves out.
    static func character(for value: UInt8) -> UInt8 {
        let v = Int32(value)
        func atLeast(_ bound: Int32) -> Int32 { ~((v - bound) >> 31) }
        let skips = (atLeast(10) & 7) + (atLeast(18) & 1) + (atLeast(20) & 1) + (atLeast(22) & 1) + (atLeast(27) & 1)
        return UInt8(truncatingIfNeeded: v + 48 + skips)
    }

    /// The value of an ASCII character, and whether it is one of the alphabet (or an alias).
    static func value(of byte: UInt8) -> (UInt8, Bool) {
        var c = Int32(byte)
        func within(_ low: UInt8, _ high: UInt8) -> Int32 { ((Int32(low) - 1 - c) & (c - Int32(high) - 1)) >> 31 }
        c -= within(UInt8(ascii: "a"), UInt8(ascii: "z")) & 0x20
        let digit = within(UInt8(ascii: "0"), UInt8(ascii: "9")), aToH = within(UInt8(ascii: "A"), UInt8(ascii: "H"))
        let jk = within(UInt8(ascii: "J"), UInt8(ascii: "K")), mn = within(UInt8(ascii: "M"), UInt8(ascii: "N"))
        let pToT = within(UInt8(ascii: "P"), UInt8(ascii: "T")), vToZ = within(UInt8(ascii: "V"), UInt8(ascii: "Z"))
        let one = within(UInt8(ascii: "I"), UInt8(ascii: "I")) | within(UInt8(ascii: "L"), UInt8(ascii: "L"))
        let zero = within(UInt8(ascii: "O"), UInt8(ascii: "O"))
        let value =
            (digit & (c - 48)) | (aToH & (c - 55)) | (jk & (c - 56)) | (mn & (c - 57))
            | (pToT & (c - 58)) | (vToZ & (c - 59)) | (one & 1)
        let valid = digit | aToH | jk | mn | pToT | vToZ | one | zero
        return (UInt8(truncatingIfNeeded: value), valid != 0)
    }
}

/// Why a typed recovery key was refused.
public enum RecoveryKeyError: Error, Equatable, CustomStringConvertible {
    /// A character outside the alphabet, in this group (1-based).
    case invalidCharacter(Character, group: Int)
    /// Not 65 characters once spaces and dashes are left out.
    case wrongLength(symbols: Int)
    /// These groups (1-based) do not match their check character.
    case typo(groups: [Int])

    public var description: String {
        switch self {
        case .invalidCharacter(let character, let group):
            return "'\(character)' in group \(group) is not a recovery key character (they are 0-9 and A-Z without I, L, O, U)"
        case .wrongLength(let symbols):
            return
                "a recovery key has \(RecoveryKey.symbolCount) characters in \(RecoveryKey.groupCount) groups of 5; this one has \(symbols)"
        case .typo(let groups):
            let list = groups.map(String.init).joined(separator: ", ")
            return groups.count == 1 ? "group \(list) of the recovery key has a typo" : "groups \(list) of the recovery key have typos"
        }
    }
}

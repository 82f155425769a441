/// What the byte-level text paths (listing previews, search) need to know of a
/// non-ASCII scalar: how Swift joins it with its neighbours into characters,
/// whether it is whitespace, and whether its bytes compare as its character
/// does. A scalar outside the table is `unknown`: a text holding one takes the
/// general path (Swift's `Character`s and `lowercased()`). The table is checked
/// against Swift itself, scalar by scalar, by `ScalarKindTests`.
package enum ScalarKind: UInt8 {
    /// A character of its own unless a joiner follows (Grapheme_Cluster_Break Other), combining
    /// class 0, unchanged by NFC, and lowercased to one scalar of this kind.
    case other
    /// `other`, and Extended_Pictographic: after a ZWJ it joins the emoji before it.
    case pictographic
    /// `other`, and whitespace.
    case space
    /// A character of its own like `other`, whose bytes do not compare as its character does: NFC
    /// changes it, or it lowercases to several scalars or to one outside the table.
    case unsearchable
    /// A control: a character of its own whatever stands around it.
    case control
    /// A control that is whitespace (NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR).
    case controlSpace
    /// Joins the character before it, with combining class 0 (ZWJ, variation selectors, skin tones, keycap, tags).
    case joiner
    /// Joins the character before it with a nonzero combining class: its bytes do not compare as characters do.
    case mark
    /// A regional indicator: two make one flag.
    case regional
    case unknown

    /// The kind of `value`, a scalar of 0x80 or more. A loop over many scalars holds
    /// `ScalarKindTable.shared` once and asks it instead.
    package static func of(_ value: UInt32) -> ScalarKind { ScalarKindTable.shared.kind(of: value) }

    /// The scalar of `bytes` at `index` and its length; nil when the bytes there are not valid UTF-8
    /// (a stray continuation byte, an overlong form, a surrogate, beyond U+10FFFF, cut short).
    @inline(__always)
    package static func decode(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> (value: UInt32, length: Int)? {
        let lead = bytes[index]
        if lead < 0x80 { return (UInt32(lead), 1) }
        let available = bytes.count - index
        let next = bytes.baseAddress! + index + 1
        func continues(_ count: Int) -> Bool {
            guard available > count else { return false }
            for offset in 0..<count where next[offset] & 0xC0 != 0x80 { return false }
            return true
        }
        if lead < 0xE0 {
            guard lead >= 0xC2, continues(1) else { return nil }
            return (UInt32(lead & 0x1F) << 6 | UInt32(next[0] & 0x3F), 2)
        }
        if lead < 0xF0 {
            guard continues(2) else { return nil }
            let value = UInt32(lead & 0x0F) << 12 | UInt32(next[0] & 0x3F) << 6 | UInt32(next[1] & 0x3F)
            guard value >= 0x800, value & 0xF800 != 0xD800 else { return nil }
            return (value, 3)
        }
        guard lead <= 0xF4, continues(3) else { return nil }
        let value = UInt32(lead & 0x07) << 18 | UInt32(next[0] & 0x3F) << 12 | UInt32(next[1] & 0x3F) << 6 | UInt32(next[2] & 0x3F)
        guard value >= 0x1_0000, value <= 0x10_FFFF else { return nil }
        return (value, 4)
    }

    /// Writes `value` as UTF-8 at `out`; returns the length.
    @inline(__always)
    package static func encode(_ value: UInt32, to out: UnsafeMutablePointer<UInt8>) -> Int {
        switch value {
        case ..<0x80:
            out[0] = UInt8(value)
            return 1
        case ..<0x800:
            (out[0], out[1]) = (UInt8(0xC0 | value >> 6), UInt8(0x80 | value & 0x3F))
            return 2
        case ..<0x1_0000:
            (out[0], out[1], out[2]) = (UInt8(0xE0 | value >> 12), UInt8(0x80 | value >> 6 & 0x3F), UInt8(0x80 | value & 0x3F))
            return 3
        default:
            (out[0], out[1], out[2], out[3]) = (
                UInt8(0xF0 | value >> 18), UInt8(0x80 | value >> 12 & 0x3F), UInt8(0x80 | value >> 6 & 0x3F), UInt8(0x80 | value & 0x3F)
            )
            return 4
        }
    }

}

/// The lowercases of `ScalarKind.other` scalars, made on first use from Swift's own mappings and
/// kept for the life of the process (a loop holds a copy: one pointer).
package struct ScalarLowercases: @unchecked Sendable {
    /// Lowercases where some scalar of the table has another one: below U+0800 and in Latin Extended
    /// Additional, at 0x800 + the scalar's last byte (fullwidth letters are a fixed offset).
    private let lowercases: UnsafePointer<UInt16>

    package static let shared = ScalarLowercases()

    private init() {
        func lower(_ value: UInt32) -> UInt16 {
            guard let scalar = Unicode.Scalar(value), value >= 0x80, ScalarKind.of(value) == .other else { return UInt16(value) }
            let mapping = scalar.properties.lowercaseMapping.unicodeScalars
            return mapping.count == 1 ? UInt16(mapping.first!.value) : UInt16(value)
        }
        lowercases = ScalarKindTable.immortal((0..<0x800).map(lower) + (0x1E00..<0x1F00).map(lower))
    }

    /// The lowercase of an `other` scalar.
    @inline(__always)
    package func lowercase(_ value: UInt32) -> UInt32 {
        if value < 0x80 { return (0x41...0x5A).contains(value) ? value | 0x20 : value }
        if value < 0x800 { return UInt32(lowercases[Int(value)]) }
        if value & ~0xFF == 0x1E00 { return UInt32(lowercases[0x800 + Int(value & 0xFF)]) }
        return (0xFF21...0xFF3A).contains(value) ? value + 0x20 : value
    }
}

/// `ScalarKind`'s table, two levels deep: a page of 256 kinds for each block of 256 scalars, shared by
/// the blocks of one kind throughout. Made once and kept for the life of the process, so that a
/// copy of it is a few pointers a loop can hold: no lookup goes through the global's
/// initialization check.
package struct ScalarKindTable: @unchecked Sendable {
    private let pageOfBlock: UnsafePointer<UInt8>
    private let pages: UnsafePointer<ScalarKind>
    /// For each byte, the length of the scalars it leads when every scalar it can lead is of kind
    /// `other` (then any continuation bytes make a valid one); 0 for any other byte.
    private let otherLeads: UnsafePointer<UInt8>

    package static let shared = ScalarKindTable()

    /// The kind of `value`, a scalar of 0x80 or more.
    @inline(__always)
    package func kind(of value: UInt32) -> ScalarKind {
        guard value < 0x11_0000 else { return .unknown }
        return pages[Int(pageOfBlock[Int(value >> 8)]) << 8 | Int(value & 0xFF)]
    }

    /// The kind of a scalar of any value: of ASCII, tab to CR are `controlSpace`, other controls `control`.
    @inline(__always)
    package func kind(ofAny value: UInt32) -> ScalarKind {
        if value < 0x80 {
            if (0x09...0x0D).contains(value) { return .controlSpace }
            return value < 0x20 || value == 0x7F ? .control : value == 0x20 ? .space : .other
        }
        return kind(of: value)
    }

    /// The length of the scalar `lead` starts when every scalar it can start is of kind `other`; else 0.
    @inline(__always)
    package func otherLeadLength(_ lead: UInt8) -> Int { Int(otherLeads[Int(lead)]) }

    /// A copy that lives as long as the process.
    fileprivate static func immortal<Element>(_ elements: [Element]) -> UnsafePointer<Element> {
        let storage = UnsafeMutablePointer<Element>.allocate(capacity: elements.count)
        storage.initialize(from: elements, count: elements.count)
        return UnsafePointer(storage)
    }

    private init() {
        // A block a range covers whole takes its kind's page; a block that ranges share gets a page of its own.
        let uniform = (0...ScalarKind.unknown.rawValue).map { [UInt8](repeating: $0, count: 256) }
        var blocks = [UInt8](repeating: ScalarKind.unknown.rawValue, count: 0x1100)
        var pages = uniform
        for (range, kind) in ScalarKindTable.ranges {
            for block in Int(range.lowerBound >> 8)...Int(range.upperBound >> 8) {
                let start = max(Int(range.lowerBound), block << 8), end = min(Int(range.upperBound), block << 8 | 0xFF)
                if start & 0xFF == 0 && end & 0xFF == 0xFF {
                    blocks[block] = kind.rawValue
                    continue
                }
                if Int(blocks[block]) < uniform.count {
                    pages.append(pages[Int(blocks[block])])
                    blocks[block] = UInt8(pages.count - 1)
                }
                let page = Int(blocks[block])
                for value in start...end { pages[page][value & 0xFF] = kind.rawValue }
            }
        }
        precondition(pages.count <= 256, "a page number is one byte")
        let kinds = pages.flatMap { $0 }.map { ScalarKind(rawValue: $0)! }
        func isOther(_ values: Range<Int>) -> Bool {
            values.allSatisfy { kinds[Int(blocks[$0 >> 8]) << 8 | $0 & 0xFF] == .other }
        }
        // Two-byte leads cover 64 scalars; three-byte ones 4,096 (E0 and ED lead only some of theirs).
        let leads = (0..<256).map { lead -> UInt8 in
            switch lead {
            case 0xC2...0xDF: return isOther((lead & 0x1F) << 6..<((lead & 0x1F) + 1) << 6) ? 2 : 0
            case 0xE1...0xEC, 0xEE...0xEF: return isOther((lead & 0x0F) << 12..<((lead & 0x0F) + 1) << 12) ? 3 : 0
            default: return 0
            }
        }
        pageOfBlock = ScalarKindTable.immortal(blocks)
        self.pages = ScalarKindTable.immortal(kinds)
        otherLeads = ScalarKindTable.immortal(leads)
    }

    /// Every scalar of the table but unknown ones, by range.
    static let ranges: [(ClosedRange<UInt32>, ScalarKind)] = [
        (0x80...0x84, .control), (0x85...0x85, .controlSpace), (0x86...0x9F, .control), (0xA0...0xA0, .space),
        (0xA1...0xA8, .other), (0xA9...0xA9, .pictographic), (0xAA...0xAC, .other), (0xAD...0xAD, .control),
        (0xAE...0xAE, .pictographic), (0xAF...0x12F, .other), (0x130...0x130, .unsearchable), (0x131...0x239, .other),
        (0x23A...0x23A, .unsearchable), (0x23B...0x23D, .other), (0x23E...0x23E, .unsearchable),
        (0x23F...0x2FF, .other), (0x300...0x34E, .mark), (0x34F...0x34F, .joiner), (0x350...0x36F, .mark),
        (0x370...0x373, .other), (0x374...0x374, .unsearchable), (0x375...0x37D, .other),
        (0x37E...0x37E, .unsearchable), (0x37F...0x386, .other), (0x387...0x387, .unsearchable),
        (0x388...0x482, .other), (0x483...0x487, .mark), (0x488...0x489, .joiner), (0x48A...0x590, .other),
        (0x591...0x5BD, .mark), (0x5BE...0x5BE, .other), (0x5BF...0x5BF, .mark), (0x5C0...0x5C0, .other),
        (0x5C1...0x5C2, .mark), (0x5C3...0x5C3, .other), (0x5C4...0x5C5, .mark), (0x5C6...0x5C6, .other),
        (0x5C7...0x5C7, .mark), (0x5C8...0x5FF, .other), (0x606...0x60F, .other), (0x610...0x61A, .mark),
        (0x61B...0x61B, .other), (0x61C...0x61C, .control), (0x61D...0x64A, .other), (0x64B...0x65F, .mark),
        (0x660...0x66F, .other), (0x670...0x670, .mark), (0x671...0x6D5, .other), (0x6D6...0x6DC, .mark),
        (0x6DE...0x6DE, .other), (0x6DF...0x6E4, .mark), (0x6E5...0x6E6, .other), (0x6E7...0x6E8, .mark),
        (0x6E9...0x6E9, .other), (0x6EA...0x6ED, .mark), (0x6EE...0x70E, .other), (0x710...0x710, .other),
        (0x711...0x711, .mark), (0x712...0x72F, .other), (0x730...0x74A, .mark), (0x74B...0x7A5, .other),
        (0x7A6...0x7B0, .joiner), (0x7B1...0x7EA, .other), (0x7EB...0x7F3, .mark), (0x7F4...0x7FC, .other),
        (0x7FD...0x7FD, .mark), (0x7FE...0x7FF, .other), (0x1E00...0x1EFF, .other), (0x2002...0x200A, .space),
        (0x200B...0x200B, .control), (0x200C...0x200D, .joiner), (0x200E...0x200F, .control),
        (0x2010...0x2027, .other), (0x2028...0x2029, .controlSpace), (0x202A...0x202E, .control),
        (0x202F...0x202F, .space), (0x2030...0x203B, .other), (0x203C...0x203C, .pictographic),
        (0x203D...0x2048, .other), (0x2049...0x2049, .pictographic), (0x204A...0x205E, .other),
        (0x205F...0x205F, .space), (0x2060...0x206F, .control), (0x2070...0x20CF, .other), (0x20D0...0x20DC, .mark),
        (0x20DD...0x20E0, .joiner), (0x20E1...0x20E1, .mark), (0x20E2...0x20E4, .joiner), (0x20E5...0x20F0, .mark),
        (0x20F1...0x2121, .other), (0x2122...0x2122, .pictographic), (0x2123...0x2125, .other),
        (0x2126...0x2126, .unsearchable), (0x2127...0x2129, .other), (0x212A...0x212B, .unsearchable),
        (0x212C...0x2131, .other), (0x2132...0x2132, .unsearchable), (0x2133...0x2138, .other),
        (0x2139...0x2139, .pictographic), (0x213A...0x215F, .other), (0x2160...0x216F, .unsearchable),
        (0x2170...0x2182, .other), (0x2183...0x2183, .unsearchable), (0x2184...0x2193, .other),
        (0x2194...0x2199, .pictographic), (0x219A...0x21A8, .other), (0x21A9...0x21AA, .pictographic),
        (0x21AB...0x2319, .other), (0x231A...0x231B, .pictographic), (0x231C...0x2327, .other),
        (0x2328...0x2328, .pictographic), (0x2329...0x232A, .unsearchable), (0x232B...0x23CE, .other),
        (0x23CF...0x23CF, .pictographic), (0x23D0...0x23E8, .other), (0x23E9...0x23F3, .pictographic),
        (0x23F4...0x23F7, .other), (0x23F8...0x23FA, .pictographic), (0x23FB...0x24B5, .other),
        (0x24B6...0x24C1, .unsearchable), (0x24C3...0x24CF, .unsearchable), (0x24D0...0x25A9, .other),
        (0x25AA...0x25AB, .pictographic), (0x25AC...0x25B5, .other), (0x25B6...0x25B6, .pictographic),
        (0x25B7...0x25BF, .other), (0x25C0...0x25C0, .pictographic), (0x25C1...0x25FA, .other),
        (0x25FB...0x25FE, .pictographic), (0x25FF...0x25FF, .other), (0x2600...0x2604, .pictographic),
        (0x2605...0x260D, .other), (0x260E...0x260E, .pictographic), (0x260F...0x2610, .other),
        (0x2611...0x2611, .pictographic), (0x2612...0x2613, .other), (0x2614...0x2615, .pictographic),
        (0x2616...0x2617, .other), (0x2618...0x2618, .pictographic), (0x2619...0x261C, .other),
        (0x261D...0x261D, .pictographic), (0x261E...0x261F, .other), (0x2620...0x2620, .pictographic),
        (0x2621...0x2621, .other), (0x2622...0x2623, .pictographic), (0x2624...0x2625, .other),
        (0x2626...0x2626, .pictographic), (0x2627...0x2629, .other), (0x262A...0x262A, .pictographic),
        (0x262B...0x262D, .other), (0x262E...0x262F, .pictographic), (0x2630...0x2637, .other),
        (0x2638...0x263A, .pictographic), (0x263B...0x263F, .other), (0x2640...0x2640, .pictographic),
        (0x2641...0x2641, .other), (0x2642...0x2642, .pictographic), (0x2643...0x2647, .other),
        (0x2648...0x2653, .pictographic), (0x2654...0x265E, .other), (0x265F...0x2660, .pictographic),
        (0x2661...0x2662, .other), (0x2663...0x2663, .pictographic), (0x2664...0x2664, .other),
        (0x2665...0x2666, .pictographic), (0x2667...0x2667, .other), (0x2668...0x2668, .pictographic),
        (0x2669...0x267A, .other), (0x267B...0x267B, .pictographic), (0x267C...0x267D, .other),
        (0x267E...0x267F, .pictographic), (0x2680...0x2691, .other), (0x2692...0x2697, .pictographic),
        (0x2698...0x2698, .other), (0x2699...0x2699, .pictographic), (0x269A...0x269A, .other),
        (0x269B...0x269C, .pictographic), (0x269D...0x269F, .other), (0x26A0...0x26A1, .pictographic),
        (0x26A2...0x26A6, .other), (0x26A7...0x26A7, .pictographic), (0x26A8...0x26A9, .other),
        (0x26AA...0x26AB, .pictographic), (0x26AC...0x26AF, .other), (0x26B0...0x26B1, .pictographic),
        (0x26B2...0x26BC, .other), (0x26BD...0x26BE, .pictographic), (0x26BF...0x26C3, .other),
        (0x26C4...0x26C5, .pictographic), (0x26C6...0x26C7, .other), (0x26C8...0x26C8, .pictographic),
        (0x26C9...0x26CD, .other), (0x26CE...0x26CF, .pictographic), (0x26D0...0x26D0, .other),
        (0x26D1...0x26D1, .pictographic), (0x26D2...0x26D2, .other), (0x26D3...0x26D4, .pictographic),
        (0x26D5...0x26E8, .other), (0x26E9...0x26EA, .pictographic), (0x26EB...0x26EF, .other),
        (0x26F0...0x26F5, .pictographic), (0x26F6...0x26F6, .other), (0x26F7...0x26FA, .pictographic),
        (0x26FB...0x26FC, .other), (0x26FD...0x26FD, .pictographic), (0x26FE...0x2701, .other),
        (0x2702...0x2702, .pictographic), (0x2703...0x2704, .other), (0x2705...0x2705, .pictographic),
        (0x2706...0x2707, .other), (0x2708...0x270D, .pictographic), (0x270E...0x270E, .other),
        (0x270F...0x270F, .pictographic), (0x2710...0x2711, .other), (0x2712...0x2712, .pictographic),
        (0x2713...0x2713, .other), (0x2714...0x2714, .pictographic), (0x2715...0x2715, .other),
        (0x2716...0x2716, .pictographic), (0x2717...0x271C, .other), (0x271D...0x271D, .pictographic),
        (0x271E...0x2720, .other), (0x2721...0x2721, .pictographic), (0x2722...0x2727, .other),
        (0x2728...0x2728, .pictographic), (0x2729...0x2732, .other), (0x2733...0x2734, .pictographic),
        (0x2735...0x2743, .other), (0x2744...0x2744, .pictographic), (0x2745...0x2746, .other),
        (0x2747...0x2747, .pictographic), (0x2748...0x274B, .other), (0x274C...0x274C, .pictographic),
        (0x274D...0x274D, .other), (0x274E...0x274E, .pictographic), (0x274F...0x2752, .other),
        (0x2753...0x2755, .pictographic), (0x2756...0x2756, .other), (0x2757...0x2757, .pictographic),
        (0x2758...0x2762, .other), (0x2763...0x2764, .pictographic), (0x2765...0x2794, .other),
        (0x2795...0x2797, .pictographic), (0x2798...0x27A0, .other), (0x27A1...0x27A1, .pictographic),
        (0x27A2...0x27AF, .other), (0x27B0...0x27B0, .pictographic), (0x27B1...0x27BE, .other),
        (0x27BF...0x27BF, .pictographic), (0x27C0...0x2933, .other), (0x2934...0x2935, .pictographic),
        (0x2936...0x2ADB, .other), (0x2ADC...0x2ADC, .unsearchable), (0x2ADD...0x2B04, .other),
        (0x2B05...0x2B07, .pictographic), (0x2B08...0x2B1A, .other), (0x2B1B...0x2B1C, .pictographic),
        (0x2B1D...0x2B4F, .other), (0x2B50...0x2B50, .pictographic), (0x2B51...0x2B54, .other),
        (0x2B55...0x2B55, .pictographic), (0x2B56...0x2BFF, .other), (0x2E80...0x2FFF, .other),
        (0x3000...0x3000, .space), (0x3001...0x3029, .other), (0x302A...0x302F, .mark),
        (0x3030...0x3030, .pictographic), (0x3031...0x303C, .other), (0x303D...0x303D, .pictographic),
        (0x303E...0x3098, .other), (0x3099...0x309A, .mark), (0x309B...0x3296, .other),
        (0x3297...0x3297, .pictographic), (0x3298...0x3298, .other), (0x3299...0x3299, .pictographic),
        (0x329A...0x4DBF, .other), (0x4E00...0x9FFF, .other), (0xAC00...0xD7A3, .other), (0xFE00...0xFE0F, .joiner),
        (0xFE30...0xFE4F, .other), (0xFF00...0xFF9D, .other), (0xFF9E...0xFF9F, .joiner), (0xFFA0...0xFFEF, .other),
        (0x1F000...0x1F003, .other), (0x1F004...0x1F004, .pictographic), (0x1F005...0x1F02B, .other),
        (0x1F02C...0x1F02F, .pictographic), (0x1F030...0x1F093, .other), (0x1F094...0x1F09F, .pictographic),
        (0x1F0A0...0x1F0AE, .other), (0x1F0AF...0x1F0B0, .pictographic), (0x1F0B1...0x1F0BF, .other),
        (0x1F0C0...0x1F0C0, .pictographic), (0x1F0C1...0x1F0CE, .other), (0x1F0CF...0x1F0D0, .pictographic),
        (0x1F0D1...0x1F0F5, .other), (0x1F0F6...0x1F0FF, .pictographic), (0x1F100...0x1F16F, .other),
        (0x1F170...0x1F171, .pictographic), (0x1F172...0x1F17D, .other), (0x1F17E...0x1F17F, .pictographic),
        (0x1F180...0x1F18D, .other), (0x1F18E...0x1F18E, .pictographic), (0x1F18F...0x1F190, .other),
        (0x1F191...0x1F19A, .pictographic), (0x1F19B...0x1F1AD, .other), (0x1F1AE...0x1F1E5, .pictographic),
        (0x1F1E6...0x1F1FF, .regional), (0x1F200...0x1F200, .other), (0x1F201...0x1F20F, .pictographic),
        (0x1F210...0x1F219, .other), (0x1F21A...0x1F21A, .pictographic), (0x1F21B...0x1F22E, .other),
        (0x1F22F...0x1F22F, .pictographic), (0x1F230...0x1F231, .other), (0x1F232...0x1F23A, .pictographic),
        (0x1F23B...0x1F23B, .other), (0x1F23C...0x1F23F, .pictographic), (0x1F240...0x1F248, .other),
        (0x1F249...0x1F25F, .pictographic), (0x1F260...0x1F265, .other), (0x1F266...0x1F321, .pictographic),
        (0x1F322...0x1F323, .other), (0x1F324...0x1F393, .pictographic), (0x1F394...0x1F395, .other),
        (0x1F396...0x1F397, .pictographic), (0x1F398...0x1F398, .other), (0x1F399...0x1F39B, .pictographic),
        (0x1F39C...0x1F39D, .other), (0x1F39E...0x1F3F0, .pictographic), (0x1F3F1...0x1F3F2, .other),
        (0x1F3F3...0x1F3F5, .pictographic), (0x1F3F6...0x1F3F6, .other), (0x1F3F7...0x1F3FA, .pictographic),
        (0x1F3FB...0x1F3FF, .joiner), (0x1F400...0x1F4FD, .pictographic), (0x1F4FE...0x1F4FE, .other),
        (0x1F4FF...0x1F53D, .pictographic), (0x1F53E...0x1F548, .other), (0x1F549...0x1F54E, .pictographic),
        (0x1F54F...0x1F54F, .other), (0x1F550...0x1F567, .pictographic), (0x1F568...0x1F56E, .other),
        (0x1F56F...0x1F570, .pictographic), (0x1F571...0x1F572, .other), (0x1F573...0x1F57A, .pictographic),
        (0x1F57B...0x1F586, .other), (0x1F587...0x1F587, .pictographic), (0x1F588...0x1F589, .other),
        (0x1F58A...0x1F58D, .pictographic), (0x1F58E...0x1F58F, .other), (0x1F590...0x1F590, .pictographic),
        (0x1F591...0x1F594, .other), (0x1F595...0x1F596, .pictographic), (0x1F597...0x1F5A3, .other),
        (0x1F5A4...0x1F5A5, .pictographic), (0x1F5A6...0x1F5A7, .other), (0x1F5A8...0x1F5A8, .pictographic),
        (0x1F5A9...0x1F5B0, .other), (0x1F5B1...0x1F5B2, .pictographic), (0x1F5B3...0x1F5BB, .other),
        (0x1F5BC...0x1F5BC, .pictographic), (0x1F5BD...0x1F5C1, .other), (0x1F5C2...0x1F5C4, .pictographic),
        (0x1F5C5...0x1F5D0, .other), (0x1F5D1...0x1F5D3, .pictographic), (0x1F5D4...0x1F5DB, .other),
        (0x1F5DC...0x1F5DE, .pictographic), (0x1F5DF...0x1F5E0, .other), (0x1F5E1...0x1F5E1, .pictographic),
        (0x1F5E2...0x1F5E2, .other), (0x1F5E3...0x1F5E3, .pictographic), (0x1F5E4...0x1F5E7, .other),
        (0x1F5E8...0x1F5E8, .pictographic), (0x1F5E9...0x1F5EE, .other), (0x1F5EF...0x1F5EF, .pictographic),
        (0x1F5F0...0x1F5F2, .other), (0x1F5F3...0x1F5F3, .pictographic), (0x1F5F4...0x1F5F9, .other),
        (0x1F5FA...0x1F64F, .pictographic), (0x1F650...0x1F67F, .other), (0x1F680...0x1F6C5, .pictographic),
        (0x1F6C6...0x1F6CA, .other), (0x1F6CB...0x1F6D2, .pictographic), (0x1F6D3...0x1F6D4, .other),
        (0x1F6D5...0x1F6E5, .pictographic), (0x1F6E6...0x1F6E8, .other), (0x1F6E9...0x1F6E9, .pictographic),
        (0x1F6EA...0x1F6EA, .other), (0x1F6EB...0x1F6F0, .pictographic), (0x1F6F1...0x1F6F2, .other),
        (0x1F6F3...0x1F6FF, .pictographic), (0x1F700...0x1F7D9, .other), (0x1F7DA...0x1F7FF, .pictographic),
        (0x1F800...0x1F80B, .other), (0x1F80C...0x1F80F, .pictographic), (0x1F810...0x1F847, .other),
        (0x1F848...0x1F84F, .pictographic), (0x1F850...0x1F859, .other), (0x1F85A...0x1F85F, .pictographic),
        (0x1F860...0x1F887, .other), (0x1F888...0x1F88F, .pictographic), (0x1F890...0x1F8AD, .other),
        (0x1F8AE...0x1F8AF, .pictographic), (0x1F8B0...0x1F8BB, .other), (0x1F8BC...0x1F8BF, .pictographic),
        (0x1F8C0...0x1F8C1, .other), (0x1F8C2...0x1F8CF, .pictographic), (0x1F8D0...0x1F8D8, .other),
        (0x1F8D9...0x1F8FF, .pictographic), (0x1F900...0x1F90B, .other), (0x1F90C...0x1F93A, .pictographic),
        (0x1F93B...0x1F93B, .other), (0x1F93C...0x1F945, .pictographic), (0x1F946...0x1F946, .other),
        (0x1F947...0x1F9FF, .pictographic), (0x1FA00...0x1FA57, .other), (0x1FA58...0x1FA5F, .pictographic),
        (0x1FA60...0x1FA6D, .other), (0x1FA6E...0x1FAFF, .pictographic), (0x20000...0x2A6DF, .other),
        (0xE0020...0xE007F, .joiner),
    ]
}

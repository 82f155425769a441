import Testing

@testable import ItsypadModel

@Suite struct PackedIDTests {
    @Test func roundTripsThroughItsTextForm() throws {
        for _ in 0..<200 {
            let id = Identifier.make().lowercased()
            let packed = try #require(PackedID(canonical: id))
            #expect(packed.string == id)
            #expect(packed == PackedID(id))
            var text: [UInt8] = []
            packed.appendText(to: &text)
            #expect(String(decoding: text, as: UTF8.self) == id)
        }
    }

    /// `isText` (a listing's check that a line holds its slot's id, compared a
    /// word at a time) holds for the id's own text only: any byte changed, a
    /// digit in uppercase, a dash moved or a length off by one is another text.
    @Test(arguments: [
        "00000000-0000-4000-8000-000000000000", "ffffffff-ffff-4fff-bfff-ffffffffffff", "0123abcd-4567-489a-bcde-f0123456789a",
    ])
    func isTextHoldsForTheIDsOwnTextOnly(_ text: String) throws {
        let id = try #require(PackedID(canonical: text))
        let bytes = Array(text.utf8)
        #expect(bytes.withUnsafeBufferPointer(id.isText))
        for index in bytes.indices {
            for replacement in [
                UInt8(ascii: "0"), UInt8(ascii: "a"), UInt8(ascii: "-"), UInt8(ascii: "g"), bytes[index] ^ 0x20, bytes[index] ^ 0x01,
            ]
            where replacement != bytes[index] {
                var changed = bytes
                changed[index] = replacement
                #expect(!changed.withUnsafeBufferPointer(id.isText), "\(String(decoding: changed, as: UTF8.self))")
            }
        }
        #expect(!Array(bytes.dropLast()).withUnsafeBufferPointer(id.isText))
        #expect(!(bytes + [0x30]).withUnsafeBufferPointer(id.isText))
        #expect(!Array(text.uppercased().utf8).withUnsafeBufferPointer(id.isText) || text.uppercased() == text)
        #expect(!Array(text.filter { $0 != "-" }.utf8 + Array("0000".utf8)).withUnsafeBufferPointer(id.isText))
    }

    /// A prefix matches exactly the ids whose text starts with it, at every length and around the dashes.
    @Test func aPrefixMatchesTheIdsWhoseTextStartsWithIt() throws {
        var generator = SeededGenerator(seed: 12)
        for _ in 0..<50 {
            let id = try #require(PackedID(canonical: Identifier.make().lowercased()))
            let other = try #require(PackedID(canonical: Identifier.make().lowercased()))
            let text = id.string
            for length in 0...36 {
                let prefix = String(text.prefix(length))
                let packed = try #require(PackedIDPrefix(prefix))
                #expect(packed.matches(id))
                #expect(packed.matches(other) == other.string.hasPrefix(prefix))
                // One character changed: a different digit, or a digit where a dash belongs.
                guard length > 0 else { continue }
                var changed = Array(prefix.utf8)
                let last = changed.count - 1
                changed[last] =
                    changed[last] == 0x2D
                    ? 0x30
                    : Array("0123456789abcdef".utf8).filter { $0 != changed[last] }
                        .randomElement(using: &generator)!
                #expect(PackedIDPrefix(String(decoding: changed, as: UTF8.self))?.matches(id) != true)
            }
        }
    }

    @Test(arguments: ["0000000x", "ABCD", "0000-000", String(repeating: "0", count: 37), "00000000-0000-4000-8000-0000000000000"])
    func aPrefixNoIdCanHaveMatchesNothing(_ text: String) {
        #expect(PackedIDPrefix(text) == nil)
    }

    /// Only the lowercase form round-trips exactly; anything else is not a canonical id.
    @Test(arguments: [
        "00000000-0000-4000-8000-00000000000A", "00000000-0000-4000-8000-00000000000g",
        "00000000-0000-4000-8000-00000000000:", "00000000-0000-4000-8000-00000000000/",
        "000000000-000-4000-8000-000000000000", "00000000-0000-4000-8000-0000000000000",
        "00000000-0000-4000-8000-00000000000", "00000000x0000-4000-8000-000000000000",
    ])
    func refusesAnythingButTheLowercaseForm(_ text: String) {
        #expect(PackedID(canonical: text) == nil)
    }
}

/// `PackedIDSet` (a flat table probed in place, for the pending clips a
/// listing looks up) must answer as `Set<PackedID>` does, whatever the ids:
/// the all-zero id, ids whose words mix to the same value, runs that differ in
/// one bit, repeats, and enough to grow the table several times.
@Suite struct PackedIDSetTests {
    static func random(_ count: Int, seed: UInt64) -> [PackedID] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in PackedID(high: generator.next(), low: generator.next()) }
    }

    static let cases: [(name: String, ids: [PackedID])] = [
        ("none", []),
        ("the zero id", [PackedID(high: 0, low: 0)]),
        ("zero among others", [PackedID(high: 0, low: 0), PackedID(high: 0, low: 1), PackedID(high: 1, low: 0)]),
        (
            "one bit apart",
            (0..<64).map { PackedID(high: 1 << UInt64($0), low: 0) } + (0..<64).map { PackedID(high: 0, low: 1 << UInt64($0)) }
        ),
        ("a run of low words", (0..<3000).map { PackedID(high: 0x1234_5678_0000_4000, low: 0x8000_0000_0000_0000 | UInt64($0)) }),
        ("words that mix alike", (0..<500).map { PackedID(high: UInt64($0) &* 0x9E37_79B9_7F4A_7C15, low: UInt64($0)) }),
        ("repeats", random(300, seed: 1) + random(300, seed: 1)),
        ("many", random(20_000, seed: 2)),
    ]

    @Test(arguments: cases.map(\.name))
    func answersAsSetDoes(_ name: String) throws {
        let ids = try #require(PackedIDSetTests.cases.first { $0.name == name }).ids
        let expected = Set(ids)
        for reserved in [0, ids.count] {
            var set = PackedIDSet()
            set.reserveCapacity(reserved)
            for (index, id) in ids.enumerated() {
                set.insert(id)
                // Members stay members while the table grows under them.
                if index % 97 == 0 { #expect(ids[...index].allSatisfy(set.contains)) }
            }
            #expect(set.count == expected.count)
            #expect(set.isEmpty == expected.isEmpty)
            #expect(Set(set) == expected)
            #expect(Array(set).count == expected.count)
            #expect(ids.allSatisfy(set.contains))
            let others = PackedIDSetTests.random(2000, seed: 3) + [PackedID(high: 0, low: 2), PackedID(high: 0, low: 0)]
            for other in others { #expect(set.contains(other) == expected.contains(other), "\(other)") }
            // The order of insertion.
            let order = Array(set)
            #expect(order == ids.reduce(into: [PackedID]()) { if !$0.contains($1) { $0.append($1) } } || ids.count > 5000)
            for (index, id) in order.enumerated() where index % 7 == 0 { #expect(set.index(of: id) == index) }
            for other in others.prefix(50) where !expected.contains(other) { #expect(set.index(of: other) == nil) }
        }
    }
}

/// `SortedPackedIDs.sorting` sorts ids in place with a value each, says where each went, and finds them.
@Suite struct SortedPackedIDsTests {
    @Test(arguments: [0, 1, 2, 9, 5000])
    func sortsWithTheirValuesAndFindsThem(count: Int) throws {
        let ids = PackedIDSetTests.random(count, seed: UInt64(count) + 7)
        var set = PackedIDSet()
        for id in ids { set.insert(id) }
        let members = Array(set)
        var values = members.indices.map { $0 * 3 }
        let (sorted, places) = SortedPackedIDs.sorting(set.takeMembers(), with: &values)
        #expect(set.isEmpty && !set.contains(members.first ?? PackedID(high: 0, low: 0)))
        #expect(sorted.ids == members.sorted())
        for (former, id) in members.enumerated() {
            let place = Int(places[former])
            #expect(sorted[place] == id && values[place] == former * 3)
            #expect(sorted.index(of: id) == place)
        }
        for other in PackedIDSetTests.random(50, seed: 99) where !members.contains(other) { #expect(sorted.index(of: other) == nil) }
    }
}

/// `PackedIDFilter` never answers "no" for an id it holds, and rarely "maybe" for one it does not.
@Suite struct PackedIDFilterTests {
    @Test func holdsWhatWasInsertedAndRarelyMore() {
        let ids = PackedIDSetTests.random(50_000, seed: 4)
        var filter = PackedIDFilter(capacity: ids.count)
        for id in ids + ids.prefix(100) { filter.insert(id) }
        #expect(ids.allSatisfy(filter.mayContain))
        #expect(!filter.isFull)
        // Repeats are not counted; a false "maybe" at insertion may leave a few ids out of the count.
        #expect(filter.count <= ids.count && filter.count > ids.count - 10, "\(filter.count)")
        let others = PackedIDSetTests.random(100_000, seed: 5)
        #expect(others.filter(filter.mayContain).count < 10)
        #expect(!PackedIDFilter(capacity: 0).mayContain(ids[0]))
    }
}

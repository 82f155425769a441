import Testing

@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

@Suite struct ClipStoreTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path + "/clips" }

    func entry(_ text: String, at time: Int64, pinned: Bool = false) -> ClipEntry {
        ClipEntry(id: Identifier.make(), text: text, timestamp: time, pinned: pinned)
    }

    @Test func addsNewestFirstAndDeduplicatesOnlyTheNewest() throws {
        let store = try ClipStore(directory: path)
        let a = try store.add(entry("a", at: 1), maxEntries: 10)
        _ = try store.add(entry("b", at: 2), maxEntries: 10)
        let again = try store.add(entry("b", at: 3), maxEntries: 10)
        #expect(again.duplicate)
        _ = try store.add(entry("a", at: 4), maxEntries: 10)
        #expect(try store.entries().map(\.text) == ["a", "b", "a"])
        #expect(try store.entries().last?.id == a.entry.id)
    }

    /// `live(ids:)` reads outward from where the last call found its entries: whatever it asks for
    /// next (before, after, around, removed or unknown ids), it finds every live one.
    @Test func findsLiveEntriesWhereverTheLastOnesWere() throws {
        let store = try ClipStore(directory: path)
        // Several chunks of the index (`slotChunk`).
        let entries = (0..<(3 * ClipStore.slotChunk + 100)).map { entry("clip \($0)", at: Int64($0)) }
        _ = try store.insert(entries)
        let removed = entries[5000].id
        _ = try store.remove(ids: [removed])
        let known = Set(entries.map(\.id))
        var generator = SeededGenerator(seed: 7)
        let asks: [[Int]] = [
            [12_000, 12_001], [100, 101], [12_200], [6000, 50, 12_287], Array(7000..<9000), [0], [5000, 5001],
            (0..<300).map { _ in Int.random(in: 0..<entries.count, using: &generator) },
        ]
        for ask in asks {
            let ids = Set(ask.map { entries[$0].id } + [Identifier.make()])
            let live = try store.live(ids: ids)
            #expect(live.keys.sorted() == ids.filter { $0 != removed && known.contains($0) }.sorted(), "\(ask.prefix(3))")
            #expect(
                ask.allSatisfy { live[entries[$0].id].map(\.text) ?? "removed" == (entries[$0].id == removed ? "removed" : "clip \($0)") })
        }
    }

    @Test func evictsOldestUnpinnedBeyondTheLimit() throws {
        let store = try ClipStore(directory: path)
        let first = try store.add(entry("1", at: 1), maxEntries: 3).entry
        _ = try store.add(entry("2", at: 2), maxEntries: 3)
        try store.setPinned(id: first.id, true)
        _ = try store.add(entry("3", at: 3), maxEntries: 3)
        let outcome = try store.add(entry("4", at: 4), maxEntries: 3)
        #expect(outcome.evicted.count == 1)
        #expect(try store.entries().map(\.text) == ["4", "3", "1"])
        // Unpinning makes the old entry evictable again.
        try store.setPinned(id: first.id, false)
        _ = try store.add(entry("5", at: 5), maxEntries: 3)
        #expect(try store.entries().map(\.text) == ["5", "4", "3"])
        #expect(try ClipStore(directory: path).entries().map(\.text) == ["5", "4", "3"])
    }

    /// Entries that came in without the limit (a sync's merge) are evicted by the rule `add` applies.
    @Test func evictionOfAMergedHistoryIsTheRuleOfAdd() throws {
        let store = try ClipStore(directory: path)
        let pinned = entry("pinned", at: 1, pinned: true)
        _ = try store.insert([pinned] + (2...6).map { entry("\($0)", at: Int64($0)) })
        #expect(try store.evict(keeping: 10).isEmpty)
        let evicted = try store.evict(keeping: 3)
        #expect(evicted.count == 3)
        #expect(try store.entries().map(\.text) == ["6", "5", "pinned"])
        // The same history through `add` ends the same.
        let other = try ClipStore(directory: directory.path + "/other")
        _ = try other.insert([pinned] + (2...5).map { entry("\($0)", at: Int64($0)) })
        _ = try other.add(entry("6", at: 6), maxEntries: 3)
        #expect(try other.entries().map(\.text) == ["6", "5", "pinned"])
        #expect(try ClipStore(directory: path).entries().map(\.text) == ["6", "5", "pinned"])
    }

    @Test func survivesAStaleOrMissingIndex() throws {
        do {
            let store = try ClipStore(directory: path)
            for i in 0..<20 { _ = try store.add(entry("entry \(i)", at: Int64(i)), maxEntries: 100) }
            try store.remove(ids: try store.entries(limit: 2).map(\.id))
        }
        // A crash between the log append and the index update leaves the index behind.
        let log = try #require(try FileSystem.read(path + "/log"))
        let extra = try ClipStore.addLine(entry("written before the crash", at: 100))
        try FileSystem.writeAtomically(path + "/log", log + extra)
        #expect(try ClipStore(directory: path).entries(limit: 1).map(\.text) == ["written before the crash"])
        try FileSystem.remove(path + "/index")
        let rebuilt = try ClipStore(directory: path)
        #expect(rebuilt.count == 19)
        #expect(try rebuilt.entries(limit: 2).map(\.text) == ["written before the crash", "entry 17"])
    }

    /// A rebuild (which sorts the log's lines by id, in runs spilled to disk when there are many)
    /// reads every entry's lines in the order of the log: removals, pins, an add again of a live
    /// entry (a dead line), an entry back after its removal, lines in another form; small runs
    /// make it merge several. The index it writes is the one the changes kept up to date.
    @Test(arguments: [1 << 16, 3])
    func aRebuiltIndexIsTheOneTheChangesKept(runLength: Int) throws {
        let store = try ClipStore(directory: path)
        let entries = (0..<12).map { entry("entry \($0)", at: Int64(100 - $0 % 4)) }
        _ = try store.insert(entries)
        try store.remove(ids: [entries[1].id, entries[5].id])
        try store.setPinned(id: entries[2].id, true)
        try store.setPinned(id: entries[3].id, true)
        try store.setPinned(id: entries[3].id, false)
        _ = try store.insert([entries[5], entry("later", at: 200, pinned: true)])
        _ = try store.add(entry("added", at: 300), maxEntries: 100)
        let (keptSlots, keptHeader) = (try store.index.allSlots(), store.index.header)
        var log = try #require(try FileSystem.read(path + "/log"))
        // An add of a live entry again, and a removal of an entry that is not there: dead lines both.
        log += try ClipStore.addLine(entries[0])
        ClipStore.appendRemoveLine(PackedID(Identifier.make())!, to: &log)
        try FileSystem.writeAtomically(path + "/log", log)
        let tree = FileTree(root: path)
        let rebuilt = try ClipStore.buildIndex(
            log: try AppendFile(path: path + "/log", in: tree), directory: path, in: tree, runLength: runLength)
        #expect(rebuilt.erased)
        // A removed entry's text is spaces in the log: what was worked out of it no longer matters.
        let comparable = { (slots: [ClipSlot]) in
            slots.map {
                $0.isDeleted
                    ? ClipSlot(id: $0.id, timestamp: $0.timestamp, offset: $0.offset, length: $0.length, flags: ClipSlot.deleted) : $0
            }
        }
        #expect(comparable(try rebuilt.index.allSlots()) == comparable(keptSlots))
        #expect(rebuilt.index.header.slotCount == 15 && rebuilt.index.header.liveCount == 13)
        #expect(rebuilt.index.header.deadLines == keptHeader.deadLines + 3)
        #expect(try FileSystem.read(path + "/log") == log, "the removed texts were erased already")
        #expect(try ClipStore(directory: path).entries().count == 13)
    }

    /// Whether a text compares as bytes (for the anchored search) and whether it is its own preview
    /// (for the listing) are worked out when it is added, inserted or imported, and again, the same,
    /// when the index is rebuilt from the log.
    @Test func whatIsWorkedOutOfATextSurvivesARebuild() throws {
        let texts = [
            "plain ascii", "Привет мир", "合并分支", "tab\tand\nnewline", "e\u{301}", "bell\u{7}", "\u{212A}elvin", "👍🏽 ok", " lead",
            "two  spaces", "\"quoted\"", String(repeating: "长", count: 120),
        ]
        let store = try ClipStore(directory: path)
        for (time, text) in texts.enumerated() { _ = try store.add(entry(text, at: Int64(time)), maxEntries: 100) }
        _ = try store.insert([entry("Straße", at: 50), entry("\u{130}stanbul", at: 51)])
        let all = texts + ["Straße", "\u{130}stanbul"]
        let comparesAsBytes = all.map(TextQuery.comparesAsBytes(text:)), ownPreview = all.map(PreviewBuilder.isOwnPreview(text:))
        #expect(comparesAsBytes.contains(true) && comparesAsBytes.contains(false))
        #expect(ownPreview == [true, true, true, false, true, false, true, true, false, false, false, false, true, true])
        #expect(try store.index.allSlots().map(\.comparesAsBytes) == comparesAsBytes)
        #expect(try store.index.allSlots().map(\.isOwnPreview) == ownPreview)
        try FileSystem.remove(path + "/index")
        let rebuilt = try ClipStore(directory: path).index.allSlots()
        #expect(rebuilt.map(\.comparesAsBytes) == comparesAsBytes)
        #expect(rebuilt.map(\.isOwnPreview) == ownPreview)
    }

    @Test func aRemovalThatACrashLeftUnerasedIsErasedWhenTheLogIsOpened() throws {
        let removed = entry("removed words", at: 2)
        var log = try ClipStore.addLine(entry("kept", at: 1)) + ClipStore.addLine(removed)
        ClipStore.appendRemoveLine(PackedID(removed.id)!, to: &log)
        try FileSystem.makeDirectory(path)
        try FileSystem.writeAtomically(path + "/log", log)
        #expect(try ClipStore(directory: path).entries().map(\.text) == ["kept"])
        let bytes = try #require(try FileSystem.read(path + "/log"))
        #expect(bytes.count == log.count)
        #expect(!String(decoding: bytes, as: UTF8.self).contains("removed words"))
    }

    @Test func aRemovedLineInAnotherFormIsCompactedAway() throws {
        let removed = entry("removed words", at: 1)
        let foreign = #"{"id":"\#(removed.id)","op":"add","ts":1,"text":"removed words"}"#
        try FileSystem.makeDirectory(path)
        try FileSystem.writeAtomically(path + "/log", Array(foreign.utf8) + [0x0A] + ClipStore.addLine(entry("kept", at: 2)))
        let store = try ClipStore(directory: path)
        #expect(try store.remove(ids: [removed.id]) == [removed.id])
        #expect(try store.entries().map(\.text) == ["kept"])
        let bytes = try #require(try FileSystem.read(path + "/log"))
        #expect(!String(decoding: bytes, as: UTF8.self).contains("removed words"))
    }

    @Test func ignoresATornLastLine() throws {
        do {
            let store = try ClipStore(directory: path)
            _ = try store.add(entry("kept", at: 1), maxEntries: 10)
        }
        let log = try #require(try FileSystem.read(path + "/log"))
        try FileSystem.writeAtomically(path + "/log", log + Array("{\"op\":\"add\",\"id\":\"tor".utf8))
        let store = try ClipStore(directory: path)
        #expect(try store.entries().map(\.text) == ["kept"])
        _ = try store.add(entry("after", at: 2), maxEntries: 10)
        #expect(try ClipStore(directory: path).entries().map(\.text) == ["after", "kept"])
    }

    @Test func reportsACorruptLogWithoutTouchingIt() throws {
        try FileSystem.makeDirectory(path)
        let garbage = Array("this is not json\n".utf8)
        try FileSystem.writeAtomically(path + "/log", garbage)
        #expect(throws: ItsypadError.self) { try ClipStore(directory: path) }
        #expect(try FileSystem.read(path + "/log") == garbage)
    }

    @Test func compactsOnceDeadLinesOutnumberLiveOnes() throws {
        let store = try ClipStore(directory: path)
        for i in 0..<3000 { _ = try store.add(entry("entry \(i)", at: Int64(i)), maxEntries: 10) }
        #expect(store.count == 10)
        let lines = try #require(try FileSystem.read(path + "/log")).filter { $0 == 0x0A }.count
        #expect(lines < 2200, "the log was never compacted: \(lines) lines")
        #expect(try ClipStore(directory: path).entries().map(\.text) == (2990..<3000).reversed().map { "entry \($0)" })
    }

    @Test func compactionKeepsTextsPinsAndReasonsExactly() throws {
        let store = try ClipStore(directory: path)
        let pinned = try store.add(entry("pin \"me\"\n日本", at: 1), maxEntries: 10).entry
        let local = ClipEntry(id: Identifier.make(), text: String(repeating: "big\t", count: 400_000), timestamp: 2, localOnly: .secret)
        _ = try store.add(local, maxEntries: 10)
        let gone = try store.add(entry("gone", at: 3), maxEntries: 10).entry
        try store.setPinned(id: pinned.id, true)
        try store.remove(ids: [gone.id])
        try store.compact()
        let reopened = try ClipStore(directory: path)
        #expect(try reopened.entries() == [local, ClipEntry(id: pinned.id, text: pinned.text, timestamp: 1, pinned: true)])
        let log = try #require(try FileSystem.read(path + "/log"))
        #expect(
            try log == ClipStore.addLine(ClipEntry(id: pinned.id, text: pinned.text, timestamp: 1, pinned: true)) + ClipStore.addLine(local)
        )
    }

    /// The bytes `addLine` writes are the JSON serializer's, so any JSON reader gets the same entry.
    @Test func addLinesAreTheSerializersJSON() throws {
        let entry = ClipEntry(id: Identifier.make(), text: "q\"\\\u{1}\n é", timestamp: -5, pinned: true, localOnly: .ignored)
        let json = JSONValue.object([
            ("op", .string("add")), ("id", .string(entry.id)), ("ts", .integer(-5)), ("pinned", .bool(true)),
            ("local", .string("ignored")), ("text", .string(entry.text)),
        ])
        #expect(try ClipStore.addLine(entry) == Array((json.serialized() + "\n").utf8))
    }

    @Test func insertsOlderEntriesInTimeOrderAndSkipsKnownIds() throws {
        let store = try ClipStore(directory: path)
        let newest = try store.add(entry("new", at: 100), maxEntries: 10).entry
        let old = entry("old", at: 50)
        #expect(try store.insert([old, newest]).map(\.id) == [old.id])
        #expect(try store.entries().map(\.text) == ["new", "old"])
        #expect(try ClipStore(directory: path).entries().map(\.text) == ["new", "old"])
    }

    @Test func entriesOfAnyAgeMergeIntoALongHistoryInTimeOrder() throws {
        let store = try ClipStore(directory: path)
        // Over one chunk of the index (16,384 slots), every other time taken.
        _ = try store.insert((0..<20_000).map { entry("held \($0)", at: 2 * Int64($0) + 2) })
        let pinned = try store.add(entry("pinned", at: 100_000), maxEntries: 30_000).entry
        try store.setPinned(id: pinned.id, true)
        // A page of a first sync: older, newer and tied times, ids in no order of time.
        let page = [entry("first", at: 1), entry("tie", at: 40_000), entry("between", at: 30_001), entry("newest", at: 200_000)]
        #expect(Set(try store.insert(page.shuffled()).map(\.id)) == Set(page.map(\.id)))
        let expected = (["newest", "pinned", "tie", "held 19999"], ["between", "held 14999"], ["held 0", "first"])
        for reader in [store, try ClipStore(directory: path)] {
            let texts = try reader.entries().map(\.text)
            #expect(texts.count == 20_005 && reader.count == 20_005)
            #expect(Array(texts.prefix(4)) == expected.0)
            #expect(Array(texts[texts.firstIndex(of: "between")!...].prefix(2)) == expected.1)
            #expect(Array(texts.suffix(2)) == expected.2)
        }
        // Eviction still starts from the oldest unpinned entry.
        #expect(try store.evict(keeping: 20_003).count == 2)
        #expect(try store.entries().suffix(2).map(\.text) == ["held 2", "held 1"])
    }

    @Test func resolvesPrefixes() throws {
        let store = try ClipStore(directory: path)
        let added = try store.add(entry("x", at: 1), maxEntries: 10).entry
        guard case .found(let found) = try store.resolve(String(added.id.prefix(6)).uppercased()) else {
            Issue.record("prefix did not resolve")
            return
        }
        #expect(found.id == added.id)
        #expect(
            {
                if case .notFound = try? store.resolve("abc") { return true }; return false
            }())
    }

    @Test func keepsFilesPrivate() throws {
        let store = try ClipStore(directory: path)
        _ = try store.add(entry("secret", at: 1), maxEntries: 10)
        var info = stat()
        stat(path + "/log", &info)
        #expect(info.st_mode & 0o777 == 0o600)
    }
}

/// `ClipLineHeader` reads a line's start with word comparisons of its own; it
/// must read every line as `FixedFormReader` does, the reader it replaced:
/// the same fields, or nil for the same lines (then the JSON parser reads them).
@Suite struct ClipLineHeaderTests {
    static let id = "0123abcd-4567-489a-bcde-f0123456789a"
    static let start = #"{"op":"add","id":""# + id

    static let lines = [
        start + #"","ts":1767225600000,"pinned":false,"text":"hi"}"#,
        start + #"","ts":0,"pinned":true,"text":""}"#,
        start + #"","ts":-5,"pinned":false,"text":"x"}"#,
        start + #"","ts":123456789012345678,"pinned":false,"text":"x"}"#,
        start + #"","ts":1234567890123456789,"pinned":false,"text":"x"}"#,
        start + #"","ts":,"pinned":false,"text":"x"}"#,
        start + #"","ts":-,"pinned":false,"text":"x"}"#,
        start + #"","ts":+5,"pinned":false,"text":"x"}"#,
        start + #"","ts":12a,"pinned":false,"text":"x"}"#,
        // Digit runs that end at every byte of the words they are read in, and bytes just outside the digits.
        start + #"","ts":12345678,"pinned":false,"text":"x"}"#,
        start + #"","ts":123456789,"pinned":false,"text":"x"}"#,
        start + #"","ts":1234567890123456,"pinned":false,"text":"x"}"#,
        start + #"","ts":12345678901234567,"pinned":false,"text":"x"}"#,
        start + #"","ts":-999999999999999999,"pinned":true,"text":"x"}"#,
        start + #"","ts":99999999999999999999,"pinned":false,"text":"x"}"#,
        start + #"","ts":1234567/,"pinned":false,"text":"x"}"#,
        start + #"","ts":12345678:,"pinned":false,"text":"x"}"#,
        start + #"","ts":123²,"pinned":false,"text":"x"}"#,
        start + #"","ts":1767225600000,"pinned":false}"#,
        start + #"","ts":5,"pinned":tru,"text":"x"}"#,
        start + #"","ts":5,"pinned":falsy,"text":"x"}"#,
        start + #"","ts":5,"pinned":true,"local":"secret","text":"x"}"#,
        start + #"","ts":5,"pinned":false,"local":"local","text":"x"}"#,
        start + #"","ts":5,"pinned":false,"local":"no such reason","text":"x"}"#,
        start + #"","ts":5,"pinned":false,"local":"","text":"x"}"#,
        start + #"","ts":5,"pinned":false,"local":"#,
        start + #"","ts":5,"pinned":false,"local":"0123456789012345678901234567890123456789","text":"x"}"#,
        start + #"","ts":5,"pinned":false,"text":"#,
        start + #"","ts":5,"pinned":false,"text":""#,
        start + #"","ts":5,"pinned":false,"texts":"x"}"#,
        start + #"","ts":5 ,"pinned":false,"text":"x"}"#,
        start + #"",  "ts":5,"pinned":false,"text":"x"}"#,
        #"{"op":"add","id":"0123abcd","ts":5,"pinned":false,"text":"x"}"#,
        #"{"op":"del","id":""# + id + #"","ts":5,"pinned":false,"text":"x"}"#,
        #"{ "op":"add","id":""# + id + #"","ts":5,"pinned":false,"text":"x"}"#,
        "",
    ]

    /// The header as the JSON-form reader reads it.
    static func reference(_ line: UnsafeBufferPointer<UInt8>) -> (Int64, Bool, Int, Int, LocalOnlyReason?)? {
        var reader = FixedFormReader(line)
        guard reader.skip(#"{"op":"add","id":""#), line.count >= 18 + 36 else { return nil }
        reader.position += 36
        guard reader.skip(#"","ts":"#), let timestamp = reader.integer(), reader.skip(#","pinned":"#) else { return nil }
        let pinned = reader.skip("true")
        guard pinned || reader.skip("false") else { return nil }
        let pinnedEnd = reader.position
        var reason: LocalOnlyReason?
        if reader.skip(#","local":""#) {
            let start = reader.position
            while let byte = reader.current, byte != 0x22, reader.position - start < 32 { reader.position += 1 }
            guard reader.current == 0x22 else { return nil }
            reason =
                LocalOnlyReason(rawValue: String(decoding: UnsafeBufferPointer(rebasing: line[start..<reader.position]), as: UTF8.self))
                ?? .requested
            reader.position += 1
        }
        guard reader.skip(#","text":""#) else { return nil }
        return (timestamp, pinned, pinnedEnd, reader.position, reason)
    }

    @Test(arguments: lines)
    func readsEveryStartOfALineAsTheReaderItReplaced(_ line: String) {
        let bytes = Array(line.utf8)
        // The whole line, and every shorter start of it (a listing may read only a line's first bytes).
        for end in stride(from: bytes.count, through: 0, by: -1) {
            bytes[..<end].withUnsafeBufferPointer { start in
                let expected = ClipLineHeaderTests.reference(start)
                let header = ClipLineHeader(start)
                #expect((header == nil) == (expected == nil), "\(line) cut at \(end)")
                if let header, let expected {
                    #expect(header.timestamp(of: start) == expected.0 && header.pinned == expected.1, "\(line)")
                    #expect(header.pinnedEnd == expected.2 && header.textStart == expected.3 && header.localOnly == expected.4, "\(line)")
                }
            }
        }
    }

    @Test func readsTheFormAddLineWrites() throws {
        let line = Array(ClipLineHeaderTests.lines[0].utf8)
        let header = try #require(line.withUnsafeBufferPointer(ClipLineHeader.init))
        #expect(line.withUnsafeBufferPointer(header.timestamp) == 1_767_225_600_000 && !header.pinned && header.localOnly == nil)
        #expect(Array(line[header.textStart...]) == Array(#"hi"}"#.utf8))
    }
}

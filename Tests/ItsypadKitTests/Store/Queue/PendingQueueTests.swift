import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

@Suite struct PendingQueueTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path + "/sync/pending.log" }
    let a = RecordKey(.tab, "a"), b = RecordKey(.tab, "b")

    @Test func deduplicatesInFirstPendingOrder() throws {
        let queue = try PendingQueue(path: path)
        try queue.enqueue(.save, a)
        try queue.enqueue(.save, b)
        try queue.enqueue(.save, a)
        #expect(try queue.changes().map(\.key) == [a, b])
        #expect(try PendingQueue(path: path).changes().map(\.key) == [a, b])
    }

    /// A watch names the records queued after it began, by any queue of the same log, and not the
    /// confirmations; once the log is put in place by a compaction it answers nil (unknown).
    @Test func watchNamesRecordsQueuedSinceItBegan() throws {
        let queue = try PendingQueue(path: path)
        try queue.enqueue(.save, a)
        let watch = try queue.watch()
        #expect(try watch.queuedSince() == [])
        let c = RecordKey(.clip, Identifier.make().lowercased())
        try PendingQueue(path: path).enqueue(.delete, c)
        try queue.confirm([try #require(try queue.change(for: a))])
        #expect(try watch.queuedSince() == [c])
        try PendingQueue(path: path).enqueue(.save, b)
        #expect(try watch.queuedSince() == [c, b])
        try PendingQueue(path: path).compact { _ in true }
        #expect(try watch.queuedSince() == nil)
    }

    @Test func deleteReplacesSave() throws {
        let queue = try PendingQueue(path: path)
        try queue.enqueue(.save, a)
        try queue.enqueue(.delete, a)
        #expect(try PendingQueue(path: path).changes().map { "\($0.key.name) \($0.operation)" } == ["a delete"])
    }

    @Test func confirmingAnOlderVersionKeepsALaterEdit() throws {
        let queue = try PendingQueue(path: path)
        try queue.enqueue(.save, a)
        let batch = try queue.changes()
        try queue.enqueue(.save, a)  // edited while the batch was in flight
        try queue.confirm(batch)
        #expect(try PendingQueue(path: path).changes().map(\.key) == [a])
        try queue.confirm(try queue.changes())
        #expect(try PendingQueue(path: path).changes().isEmpty)
    }

    @Test func discardingForgetsOnlyWhatWaitsForTheKeysGiven() throws {
        let queue = try PendingQueue(path: path)
        let clip = RecordKey(.clip, "00000000-0000-4000-8000-000000000001")
        try queue.enqueue(.save, [a, b, clip])
        _ = try queue.changes()
        try queue.discard([a, clip, RecordKey(.tab, "never queued")])
        #expect(try queue.changes().map(\.key) == [b])
        #expect(try PendingQueue(path: path).changes().map(\.key) == [b])
        // A change made after the discard waits again.
        try queue.enqueue(.save, clip)
        #expect(try PendingQueue(path: path).changes().map(\.key) == [b, clip])
    }

    @Test func compactionKeepsVersionsAndDropsDeletesTheBackendNeverHad() throws {
        let queue = try PendingQueue(path: path)
        try queue.enqueue(.save, a)
        try queue.enqueue(.save, b)
        try queue.enqueue(.delete, b)
        let before = try queue.changes()
        try queue.compact { _ in false }
        #expect(try PendingQueue(path: path).changes() == before.filter { $0.key == a })
    }

    @Test func ignoresATornTail() throws {
        let queue = try PendingQueue(path: path)
        try queue.enqueue(.save, a)
        let bytes = try #require(try FileSystem.read(path))
        try FileSystem.writeAtomically(path, bytes + Array("{\"op\":\"sa".utf8))
        #expect(try PendingQueue(path: path).changes().map(\.key) == [a])
    }

    @Test func remembersHardDeletions() throws {
        let queue = try PendingQueue(path: path)
        try queue.enqueue(.delete, [a], hard: true)
        try queue.enqueue(.delete, b)
        #expect(try PendingQueue(path: path).changes().map(\.hard) == [true, false])
        try queue.compact { _ in true }
        #expect(try PendingQueue(path: path).changes().map(\.hard) == [true, false])
    }

    @Test func compactionKeepsTheQueuesIdentity() throws {
        let queue = try PendingQueue(path: path)
        try queue.enqueue(.save, a)
        #expect(queue.identity == nil)
        try queue.compact(identity: "q1") { _ in true }
        try queue.enqueue(.save, b)
        try queue.compact { _ in true }
        #expect(try PendingQueue(path: path).identity == "q1")
        try FileSystem.remove(path)
        try PendingQueue(path: path).enqueue(.save, a)
        #expect(try PendingQueue(path: path).identity == nil, "a log made from scratch is not the one named")
    }

    @Test(arguments: [
        (
            "garbage before the last line",
            [
                "{\"op\":\"save\",\"type\":\"ScratchTab\",\"id\":\"a\"}", "not json",
                "{\"op\":\"save\",\"type\":\"ScratchTab\",\"id\":\"b\"}",
            ], true
        ),
        ("garbage as the last line", ["{\"op\":\"save\",\"type\":\"ScratchTab\",\"id\":\"a\"}", "not json"], false),
    ])
    func reportsDamageButNotATornTail(_ case: String, _ lines: [String], _ damaged: Bool) throws {
        try FileSystem.makeDirectory(directory.path + "/sync")
        try FileSystem.writeAtomically(path, Array(lines.map { $0 + "\n" }.joined().utf8))
        let queue = try PendingQueue(path: path)
        #expect(try queue.changes().first?.key == a, "readable lines still count")
        #expect((queue.damage != nil) == damaged, "\(`case`): \(queue.damage ?? "none")")
    }
}

@Suite struct ClipSyncLedgerTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path + "/sync/clips.log" }
    let x = Identifier.make(), y = Identifier.make()

    @Test func keepsTheLastEntryPerClipAndLooksUpFewWithoutDecodingAll() throws {
        let ledger = ClipSyncLedger(path: path)
        let history = EditHistory([HybridTimestamp(physical: 5, device: "d")])
        try ledger.set([
            (x, ClipSyncLedger.Entry(tag: "1", pinned: false)), (y, ClipSyncLedger.Entry(tag: "2", pinned: true, history: history)),
        ])
        let change = HybridTimestamp(physical: 9, device: "me")
        try ledger.recordChange(ids: [x], clock: change)
        try ledger.set([(y, ClipSyncLedger.Entry(tag: "3", pinned: false, history: history))])
        let reopened = ClipSyncLedger(path: path)
        #expect(try reopened.entries([x]) == [x: ClipSyncLedger.Entry(tag: "1", pinned: false, change: change)])
        #expect(try reopened.entries([y])[y]?.tag == "3")
        try reopened.forget([x])
        #expect(try ClipSyncLedger(path: path).all().keys.sorted() == [y])
    }

    /// A ledger open for a push answers from what it read and the lines appended since, by it or
    /// another process, and anew after the log was replaced: never "no entry" for a clip with one.
    @Test func seesLinesAppendedSinceAndALogReplaced() throws {
        var ledger = ClipSyncLedger(path: path)
        #expect(try ledger.entries([x, y]).isEmpty)
        try ledger.set([(x, ClipSyncLedger.Entry(tag: "1", pinned: false))])
        #expect(try ledger.entries([x, y]).keys.sorted() == [x])
        // Another process appends, then replaces the log with one naming only y, while the lock is
        // handed over: the data store opens the ledger again with what the last one read.
        try ClipSyncLedger(path: path).set([(y, ClipSyncLedger.Entry(tag: "2", pinned: true))])
        ledger = ClipSyncLedger(path: path, named: ledger.named)
        #expect(try ledger.entries([x, y]).keys.sorted() == [x, y].sorted())
        try ClipSyncLedger(path: path).reset()
        try ClipSyncLedger(path: path).set([(y, ClipSyncLedger.Entry(tag: "3", pinned: true))])
        ledger = ClipSyncLedger(path: path, named: ledger.named)
        #expect(try ledger.entries([x, y]) == [y: ClipSyncLedger.Entry(tag: "3", pinned: true)])
        // Past the filter's first capacity: it is built again, larger, and still knows every clip.
        let many = (0..<5000).map { _ in Identifier.make() }
        try ledger.set(many.map { ($0, ClipSyncLedger.Entry(tag: "4", pinned: false)) })
        #expect(try ledger.entries(Set(many)).count == many.count)
        #expect(try ledger.entries([y, x]).keys.sorted() == [y])
    }

    @Test func aChangeStampedByAClockThatWentBackStillComesAfter() {
        let mine = HybridTimestamp(physical: 100, counter: 2, device: "me")
        let entry = ClipSyncLedger.Entry(
            tag: "1", pinned: true, history: EditHistory([mine]), change: HybridTimestamp(physical: 50, device: "me"))
        #expect(entry.localHistory.clock(of: "me") == HybridTimestamp(physical: 100, counter: 3, device: "me"))
        #expect(entry.localHistory == entry.localHistory, "the same on every run")
    }

    @Test func rewritesItselfOnceDoubled() throws {
        let ledger = ClipSyncLedger(path: path)
        for round in 0..<120 {
            try ledger.set((0..<200).map { (id($0), ClipSyncLedger.Entry(tag: String(round), pinned: round % 2 == 0)) })
        }
        // 120 rounds of 200 lines are over 2 MiB: only rewrites keep it under.
        #expect((FileTree.containing(path).fileSize(path) ?? 0) < 2 << 20)
        #expect(PendingQueue.baseLine(of: path) != nil)
        #expect(try ClipSyncLedger(path: path).all().count == 200)
        #expect(try ClipSyncLedger(path: path).all().values.allSatisfy { $0.tag == "119" })
    }

    @Test func aLedgerOfDistinctClipsIsNotRewritten() throws {
        let ledger = ClipSyncLedger(path: path)
        // Over 1 MiB of lines, each of another clip, as a first sync writes them: nothing to drop.
        for round in 0..<16 {
            try ledger.set((0..<1000).map { (id(round * 1000 + $0), ClipSyncLedger.Entry(tag: "t", pinned: false)) })
        }
        #expect((FileTree.containing(path).fileSize(path) ?? 0) > 1 << 20)
        #expect(PendingQueue.baseLine(of: path) == nil, "rewritten")
        #expect(try ClipSyncLedger(path: path).all().count == 16000)
    }

    /// A canonical id numbered `index`.
    private func id(_ index: Int) -> String {
        let digits = String(index)
        return "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - digits.count) + digits
    }
}

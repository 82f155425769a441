import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// `PendingQueue.keys()` answers from `sync/pending.keys` and the lines after
/// it; whatever the summary holds, the answer is the full replay's.
@Suite struct PendingSummaryTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path + "/sync/pending.log" }
    var summaryPath: String { directory.path + "/sync/pending.keys" }

    /// Enough clips that their lines pass `PendingSummary.rewriteAfter`.
    static let clips = (0..<1200).map {
        RecordKey(.clip, PackedID(high: 0x1234_5678_0000_4000, low: 0x8000_0000_0000_0000 | UInt64($0)).string)
    }
    static let tabs = (0..<5).map { RecordKey(.tab, "tab \($0) ✓") }

    /// Every key the tests name, and one they never queue.
    static let everyKey = clips + tabs + [RecordKey(.clip, PackedID(high: 0x7777_0000_0000_4000, low: 0x8000_0000_0000_0001).string)]

    /// The waiting keys by a fresh queue through the summary, and by a full replay; each key looked up
    /// one at a time (as a listing does) must agree with the replay.
    func keys(sourceLocation: SourceLocation = #_sourceLocation) throws -> (summarized: [String], replayed: [String]) {
        let summarized = try PendingQueue(path: path).keys()
        let replayed = try PendingQueue(path: path).changes().map(\.key)
        let records = try PendingQueue(path: path).waitingRecords()
        let waiting = Set(replayed)
        let disagreeing = PendingSummaryTests.everyKey.filter { records.contains($0) != waiting.contains($0) }
        #expect(disagreeing.isEmpty, "looked up one at a time: \(disagreeing.prefix(3))", sourceLocation: sourceLocation)
        func names(_ set: RecordKeySet) -> [String] {
            (set.clips.map(\.string) + set.others.map { "\($0.type) \($0.name)" }).sorted()
        }
        return (names(summarized), replayed.map { $0.type == .clip ? $0.name : "\($0.type) \($0.name)" }.sorted())
    }

    func expectAgreement(_ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (summarized, replayed) = try keys(sourceLocation: sourceLocation)
        #expect(summarized == replayed, comment, sourceLocation: sourceLocation)
    }

    @Test func keysMatchAFullReplayAsTheQueueChanges() throws {
        let queue = try PendingQueue(path: path)
        try queue.enqueue(.save, PendingSummaryTests.clips + PendingSummaryTests.tabs)
        try expectAgreement("no summary yet")
        #expect(FileSystem.exists(summaryPath), "a long replay leaves a summary")
        let written = try FileSystem.read(summaryPath)
        try expectAgreement("a summary of the whole log")

        // Pending, then sent, then changed again; a few appended lines are replayed after the summary.
        let sent = try queue.changes().filter { $0.key.type == .tab || $0.key.name.hasSuffix("1") }
        try queue.confirm(sent)
        try queue.enqueue(.save, [PendingSummaryTests.clips[1], PendingSummaryTests.tabs[0]])
        try queue.enqueue(.delete, PendingSummaryTests.clips[2], tag: "t")
        try expectAgreement("a summary and a short tail")
        #expect(try FileSystem.read(summaryPath) == written, "a short tail does not rewrite the summary")

        // A long tail: the summary is written again.
        try queue.confirm(try queue.changes().filter { $0.key.type == .clip })
        try expectAgreement("a summary and a long tail")
        #expect(try FileSystem.read(summaryPath) != written)
        try queue.enqueue(.save, PendingSummaryTests.clips[7])
        try expectAgreement("the new summary and a short tail")

        // Compaction replaces the log: the summary no longer describes it.
        try queue.compact { _ in true }
        try queue.enqueue(.save, PendingSummaryTests.clips[9])
        try expectAgreement("after compaction")
    }

    /// The log rewritten in place with as many bytes (which itsypad never does: it only appends, or
    /// replaces the file), in the first or the last bytes the summary covers.
    @Test(arguments: [0, PendingSummaryTests.clips.count - 1])
    func aSummaryOfOtherBytesIsNotUsed(_ changed: Int) throws {
        let queue = try PendingQueue(path: path)
        try queue.enqueue(.save, PendingSummaryTests.clips)
        try expectAgreement("first")
        var log = try #require(try FileSystem.read(path))
        let range = try #require(log.firstRange(of: Array(PendingSummaryTests.clips[changed].name.utf8)))
        log.replaceSubrange(range, with: Array(PackedID(high: 0x9999_0000_0000_4000, low: 0x8000_0000_0000_0000).string.utf8))
        let fd = open(path, O_WRONLY)
        #expect(fd >= 0)
        try FileSystem.writeAll(fd: fd, log, at: 0, path: path)
        close(fd)
        try expectAgreement("a summary of other bytes")
    }

    /// Damage in every byte of the trailer and a sample of the body, truncation and foreign files:
    /// never a crash, never a wrong answer from `keys()` (a lookup reads one entry, unchecked).
    @Test func aDamagedSummaryIsIgnoredAndRewritten() throws {
        let queue = try PendingQueue(path: path)
        try queue.enqueue(.save, PendingSummaryTests.clips + PendingSummaryTests.tabs)
        try queue.confirm(Array(try queue.changes().prefix(100)))
        try expectAgreement("first")
        let good = try #require(try FileSystem.read(summaryPath))
        var damaged: [[UInt8]] = [
            [], Array(good.suffix(PendingSummary.trailerSize - 1)), Array(good.dropFirst()), [0] + good,
            Array(repeating: 0xFF, count: good.count),
        ]
        let trailer = good.count - PendingSummary.trailerSize
        for position in Array(trailer..<good.count) + Array(stride(from: 0, to: trailer, by: 997)) {
            var bytes = good
            bytes[position] ^= 0x40
            damaged.append(bytes)
        }
        for bytes in damaged {
            try FileSystem.writeAtomically(summaryPath, bytes)
            try expectAgreement("damaged summary of \(bytes.count) bytes")
            #expect(try FileSystem.read(summaryPath) == good, "rewritten")
        }
        try FileSystem.remove(summaryPath)
        #expect(symlink(path, summaryPath) == 0)
        try expectAgreement("a symlink in its place")
        try FileSystem.remove(summaryPath)
        #expect(mkfifo(summaryPath, 0o600) == 0)
        try expectAgreement("a FIFO in its place")
    }

    @Test func aTornLastLineIsLeftForLater() throws {
        let queue = try PendingQueue(path: path)
        try queue.enqueue(.save, PendingSummaryTests.clips)
        let torn = Array(#"{"op":"save","type":"ScratchTab","id":"torn"#.utf8)
        let appended = try #require(try FileSystem.read(path)) + torn
        try FileSystem.writeAtomically(path, appended)
        try expectAgreement("torn tail")
        // The writer that finds the torn line cuts it; the summary still covers whole lines only.
        try queue.enqueue(.save, PendingSummaryTests.tabs[0])
        try expectAgreement("after the cut")
    }
}

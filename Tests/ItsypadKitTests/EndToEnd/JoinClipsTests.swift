import Testing

@testable import ItsypadSupport

/// A device joining many clips inserts them into its clip history a page at a time (through the
/// binary, under `strace`): the fetch's order (record folders, by hashed name) is not the history's
/// (by time), so each insert merges into the index and rewrites it whole.
@Suite("End to end: a device joining clips", .needs(["strace"]))
struct JoinClipsTests {
    /// A new device joins 1,500 clips of a compacted sender (read from its record files, in the
    /// order of their folders), one fetched page: the clip index is replaced at most once. It was
    /// replaced once a step of a hundred (15 times here; 1,000 times, each a rewrite of the whole
    /// index, for a join of 100,000).
    @Test("a joining device rewrites its clip index once a page, not once a step")
    func clipIndexRewrittenOncePerPage() throws {
        let sender = FirstPushTests.sender(clips: 1500)
        #expect(sender.inProcess(["sync"]).0 == 0)
        #expect(sender.inProcess(["sync", "compact"]).0 == 0)
        let joiner = Device()
        #expect(joiner.inProcess(["settings", "set", "clipboard.maxEntries", "100000"]).0 == 0)
        // Renamed in its folder, named by the descriptor strace's `-y` resolves: `…/clips>, "index")`.
        let index = joiner.dataDir + "/clips>, \"index\")"
        let lines = try FirstPushTests.traced(
            joiner, ["sync", "enable", FirstPushTests.backend(of: sender)], strace: ["-y", "-e", "trace=renameat,renameat2,rename"])
        let replaced = lines.filter { $0.contains("rename") && $0.contains(index) }.count
        #expect(replaced <= 1, "the clip index was replaced \(replaced) times by a join of one page")
        #expect(joiner.inProcess(["clip", "ls"]).1.split(separator: "\n").count == 1500)
    }
}

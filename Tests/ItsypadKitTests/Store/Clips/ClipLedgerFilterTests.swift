import Testing

@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

/// `ClipSyncLedger.entries` answers from the filter of the clips the log names, read on from where
/// it stopped (a fast path, see FAST-PATHS.md), what a reading of the whole log says (`all()`):
/// as lines are added by this ledger and by another on the same file, and after the log is replaced.
@Suite struct ClipLedgerFilterTests {
    static func id(_ index: Int) -> String {
        let hex = String(index, radix: 16)
        return "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex
    }

    static func check(_ ledger: ClipSyncLedger, asking asked: Set<String>, _ step: String) throws {
        let whole = try ledger.all().filter { asked.contains($0.key) }
        #expect(try ledger.entries(asked) == whole, "\(step)")
    }

    @Test func entriesAreWhatTheWholeLogSays() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/clips.log"
        let ledger = ClipSyncLedger(path: path)
        let other = ClipSyncLedger(path: path)
        let clock = ClipLedgerLineTests.clock
        for round in 0..<8 {
            let writer = round % 2 == 0 ? ledger : other
            let written = (round * 50..<round * 50 + 80).map(Self.id)
            try writer.set(
                written.map { ($0, ClipSyncLedger.Entry(tag: "t\(round)", pinned: round % 3 == 0, history: EditHistory([clock]))) })
            try writer.recordChange(ids: Array(written.prefix(10)), clock: ClipLedgerLineTests.later)
            try writer.forget(Array(written.suffix(5)))
            // Clips of this round, of earlier ones, and never written.
            let asked = Set(written.prefix(40) + (0..<round * 50).filter { $0 % 7 == 0 }.map(Self.id) + (10_000..<10_040).map(Self.id))
            try Self.check(ledger, asking: asked, "round \(round)")
            #expect(try ledger.entries(asked).count > 30, "round \(round)")
        }
        try other.reset()
        try other.set([(Self.id(3), ClipSyncLedger.Entry(tag: "after the reset"))])
        try Self.check(ledger, asking: [Self.id(3), Self.id(4)], "after the log was replaced")
        #expect(try ledger.entries([Self.id(3), Self.id(4)]).keys.sorted() == [Self.id(3)])
    }
}

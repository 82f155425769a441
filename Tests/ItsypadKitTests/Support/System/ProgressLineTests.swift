import Testing

@testable import ItsypadSupport

/// `ProgressLine`: what it draws, at most ten times a second, and the erasing at the end.
@Suite struct ProgressLineTests {
    final class Screen {
        var written: [String] = []
        var seconds = 100.0
    }

    @Test func drawsInPlaceAtMostTenTimesASecondAndErasesAtTheEnd() {
        let screen = Screen()
        var line = ProgressLine(draw: { screen.written.append($0) }, clock: { screen.seconds })
        line.update("sending", done: 0, of: 4000, unit: .records)
        screen.seconds += 0.05
        line.update("sending", done: 100, of: 4000, unit: .records)
        #expect(screen.written == ["\r\u{1B}[Ksending: 0 of 4,000 records"], "the second within a tenth of a second is not drawn")
        screen.seconds += 0.95
        line.update("sending", done: 1000, of: 4000, unit: .records)
        #expect(screen.written.last == "\r\u{1B}[Ksending: 1,000 of 4,000 records, 1,000/s, 3 s left")
        line.finish()
        #expect(screen.written.last == "\r\u{1B}[K")
        #expect(screen.written.count == 3)
        line.finish()
        #expect(screen.written.count == 3, "nothing shown, nothing to erase")
    }

    @Test func textForEachUnit() {
        #expect(ProgressLine.text("receiving", done: 12345, of: nil, unit: .records, seconds: 2) == "receiving: 12,345 records, 6,172/s")
        #expect(
            ProgressLine.text("importing", done: 50_000_000, of: 200_000_000, unit: .bytes, seconds: 5)
                == "importing: 50.0 of 200.0 MB, 10.0 MB/s, 15 s left")
        #expect(ProgressLine.text("sending", done: 1, of: 1_000_000, unit: .records, seconds: 1).hasSuffix(", 1/s, 277 h 46 min left"))
        #expect(ProgressLine.grouped(999) == "999" && ProgressLine.grouped(1_234_567) == "1,234,567" && ProgressLine.grouped(0) == "0")
    }
}

/// Long work's progress as one line redrawn in place, "syncing: 12,345 of 100,000 records,
/// 4,321/s, 21 s left": each drawing starts with a carriage return and an erase to the end of
/// the line, at most `drawsPerSecond` a second, and `finish` erases it. It only draws: whoever
/// makes one decides whether a person watches (standard error a terminal, no --quiet).
package struct ProgressLine {
    package enum Unit: Sendable {
        case records
        case bytes
    }

    /// What a drawing and the erasing begin with: carriage return, erase to the end of the line.
    package static let erase = "\r\u{1B}[K"
    package static let drawsPerSecond = 10.0

    private let draw: (String) -> Void
    private let clock: () -> Double
    private var started: Double?
    private var drawn: Double?
    /// Whether a line is on the screen, to be erased.
    package private(set) var isShown = false

    /// `draw` writes and flushes its text; `clock` is in seconds and never jumps (`Monotonic`).
    package init(draw: @escaping (String) -> Void, clock: @escaping () -> Double = Monotonic.seconds) {
        self.draw = draw
        self.clock = clock
    }

    /// Shows `done` of `total` (nil: not known), unless the line was drawn less than a tenth of a second ago.
    package mutating func update(_ label: String, done: Int, of total: Int?, unit: Unit) {
        let now = clock()
        let started = self.started ?? now
        self.started = started
        if let drawn, now - drawn < 1 / ProgressLine.drawsPerSecond { return }
        drawn = now
        draw(ProgressLine.erase + ProgressLine.text(label, done: done, of: total, unit: unit, seconds: now - started))
        isShown = true
    }

    /// Erases the line, if one is shown: what is written next starts on a clean line.
    package mutating func finish() {
        if isShown { draw(ProgressLine.erase) }
        (isShown, started, drawn) = (false, nil, nil)
    }

    /// "LABEL: DONE of TOTAL UNIT, RATE/s, N s left"; the rate once some time has passed, the time
    /// left once the total is known too.
    static func text(_ label: String, done: Int, of total: Int?, unit: Unit, seconds: Double) -> String {
        var text = label + ": " + amount(done, unit, withUnit: total == nil)
        if let total { text += " of " + amount(total, unit, withUnit: true) }
        guard seconds >= 0.5, done > 0 else { return text }
        let rate = Double(done) / seconds
        text += ", " + amount(Int(rate), unit, withUnit: unit == .bytes) + "/s"
        if let total, total >= done { text += ", " + duration(Double(total - done) / rate) + " left" }
        return text
    }

    private static func amount(_ value: Int, _ unit: Unit, withUnit: Bool) -> String {
        switch unit {
        case .records: return grouped(value) + (withUnit ? " records" : "")
        case .bytes:
            let tenths = value * 10 / 1_000_000
            return "\(tenths / 10).\(tenths % 10)" + (withUnit ? " MB" : "")
        }
    }

    /// Digits in groups of three: 1,234,567.
    static func grouped(_ value: Int) -> String {
        let digits = Array(String(value))
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0, digit != "-", digits[index - 1] != "-" { text += "," }
            text.append(digit)
        }
        return text
    }

    private static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        return whole < 60 ? "\(whole) s" : whole < 3600 ? "\(whole / 60) min \(whole % 60) s" : "\(whole / 3600) h \(whole / 60 % 60) min"
    }
}

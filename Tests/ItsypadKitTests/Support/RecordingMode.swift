import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Files committed to the repository that tests compare output with: the generated completions and
/// man pages, and the listings' golden outputs. With the mode's variable set to 1 a check writes the
/// file instead and records an issue saying so, so that a run that records never passes as a check.
struct RecordingMode {
    /// The environment variable that turns recording on.
    let variable: String
    /// The command that re-records the files, named when a check fails.
    let command: String
    let isOn: Bool

    init(variable: String, command: String, isOn: Bool? = nil) {
        self.variable = variable
        self.command = command
        self.isOn = isOn ?? (getenv(variable).map { String(cString: $0) == "1" } ?? false)
    }

    /// Completions and man pages (`GeneratedFiles`).
    static let regenerate = RecordingMode(
        variable: "ITSYPAD_REGENERATE", command: "ITSYPAD_REGENERATE=1 swift test --filter 'CompletionsTests|ManPageTests'")
    /// The listings' outputs (`ListingGoldenTests`).
    static let recordGolden = RecordingMode(
        variable: "ITSYPAD_RECORD_GOLDEN", command: "ITSYPAD_RECORD_GOLDEN=1 swift test --filter ListingGoldenTests")

    /// Records an issue naming the first differing line when the file at `path` (shown as `name`) does
    /// not hold `output`; when recording, writes it and records an issue saying so.
    func check(_ path: String, _ output: [UInt8], name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let committed = try FileSystem.read(path)
        guard committed != output else { return }
        if isOn {
            try FileSystem.writeAtomically(path, output, mode: 0o644)
            Issue.record("\(name) recorded: re-run without \(variable) to check it", sourceLocation: sourceLocation)
            return
        }
        Issue.record(
            "\(name) is not what the test makes: \(RecordingMode.difference(committed, output))\nAfter a deliberate change, re-record it with: \(command)",
            sourceLocation: sourceLocation)
    }

    /// Where `committed` (nil: missing) first differs from `output`, line by line.
    static func difference(_ committed: [UInt8]?, _ output: [UInt8]) -> String {
        guard let committed else { return "it is missing" }
        let old = committed.split(separator: 0x0A, omittingEmptySubsequences: false)
        let new = output.split(separator: 0x0A, omittingEmptySubsequences: false)
        let common = min(old.count, new.count)
        let line = (0..<common).first { old[$0] != new[$0] } ?? common
        func shown(_ lines: [ArraySlice<UInt8>]) -> String {
            line < lines.count ? String(decoding: lines[line], as: UTF8.self).debugDescription : "(end of file)"
        }
        return "line \(line + 1) is\n  \(shown(old))\nbut should be\n  \(shown(new))"
    }
}

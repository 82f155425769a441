import Testing

@testable import ItsypadSupport

/// Recording mode itself (`RecordingMode`, behind the completions, man pages and listing goldens): a
/// run that records writes the files and fails saying so, and a check never writes.
@Suite struct RecordingModeTests {
    let scratch = TemporaryDirectory()

    func mode(recording: Bool) -> RecordingMode {
        RecordingMode(variable: "ITSYPAD_TEST_RECORD", command: "ITSYPAD_TEST_RECORD=1 swift test", isOn: recording)
    }

    /// The issue a check records, which the caller expects: the test fails when none is recorded.
    func expectIssue(saying words: String, _ body: () throws -> Void) rethrows {
        try withKnownIssue {
            try body()
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains(words) }
        }
    }

    @Test func recordingWritesTheFilesAndFailsSayingSo() throws {
        scratch.write("stale.out", "old line\n")
        try expectIssue(saying: "stale.out recorded: re-run without ITSYPAD_TEST_RECORD") {
            try mode(recording: true).check(scratch.file("stale.out"), Array("new line\n".utf8), name: "stale.out")
        }
        #expect(scratch.read("stale.out") == "new line\n")
        try expectIssue(saying: "missing.out recorded: re-run without ITSYPAD_TEST_RECORD") {
            try mode(recording: true).check(scratch.file("missing.out"), Array("made\n".utf8), name: "missing.out")
        }
        #expect(scratch.read("missing.out") == "made\n")
    }

    @Test func recordingLeavesAFileThatAgreesAndPasses() throws {
        scratch.write("same.out", "same\n")
        try mode(recording: true).check(scratch.file("same.out"), Array("same\n".utf8), name: "same.out")
        #expect(scratch.read("same.out") == "same\n")
    }

    @Test func checkingNamesTheFirstDifferenceAndWritesNothing() throws {
        scratch.write("golden.out", "one\ntwo\n")
        try expectIssue(saying: "line 2 is\n  \"two\"\nbut should be\n  \"2\"") {
            try mode(recording: false).check(scratch.file("golden.out"), Array("one\n2\n".utf8), name: "golden.out")
        }
        #expect(scratch.read("golden.out") == "one\ntwo\n")
        try expectIssue(saying: "re-record it with: ITSYPAD_TEST_RECORD=1 swift test") {
            try mode(recording: false).check(scratch.file("absent.out"), [], name: "absent.out")
        }
        #expect(scratch.read("absent.out") == nil)
    }

    /// CONTRIBUTING.md gives each mode's command as the checks name it.
    @Test func contributingGivesEachModesCommand() throws {
        let guide = String(decoding: try #require(try FileSystem.read(GeneratedFiles.root + "/CONTRIBUTING.md")), as: UTF8.self)
        for mode in [RecordingMode.regenerate, .recordGolden] { #expect(guide.contains(mode.command), "\(mode.command)") }
    }
}

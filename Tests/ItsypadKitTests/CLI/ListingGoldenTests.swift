import Testing

@testable import ItsypadCLI
@testable import ItsypadSupport

/// Listings of a corpus of awkward text (multi-byte, combining, right-to-left,
/// tabs, newlines, control and escape sequences, invalid-looking sequences,
/// long lines) must stay byte-identical to the outputs recorded in
/// Tests/Fixtures/Listing before listing was rewritten for speed. Off a
/// terminal these outputs feed pipes (fzf, scripts): they must never drift.
///
/// To re-record after a deliberate change of format: `ITSYPAD_RECORD_GOLDEN=1 swift test --filter ListingGoldenTests`.
@Suite struct ListingGoldenTests {
    static let fixtures: String = {
        var path = #filePath
        for _ in 0..<3 { path = FileSystem.directoryName(path) }
        return path + "/Fixtures/Listing"
    }()

    static let now: Milliseconds = 1_767_400_000_000

    static let searches = [
        "café", "CAFÉ", "cafe\u{301}", "e", "É", "kelvin", "K", "\u{212A}", "ß", "SS", "straße", "istanbul", "i\u{307}",
        "σ", "ΣΊΣΥΦΟΣ", "\t", "\n", "\r\n", "x", "9999", "", "\"", "\\", "日本", "👍", "ﬁ", "fi", ";", "`", "\u{37E}",
        "עולם", "\u{1B}", "\u{1B}[2j", "TEXT", "text", "a\u{308}", "\u{301}", "word word", "\u{A0}nbsp", "🇫🇷", "Z",
    ]

    /// Command lines and the fixture each one's output must equal.
    static let cases: [(name: String, arguments: [String])] =
        [
            ("clip-ls", ["clip", "ls"]),
            ("clip-ls-n3", ["clip", "ls", "-n", "3"]),
            ("clip-ls-pinned", ["clip", "ls", "--pinned"]),
            ("clip-ls-json", ["clip", "ls", "--json"]),
            ("clip-ls-json-n2-pinned", ["clip", "ls", "--json", "-n", "2", "--pinned"]),
            ("clip-ls-json-search-cafe", ["clip", "ls", "--json", "--search", "CAFÉ"]),
            ("export", ["export"]),
            ("tab-ls", ["tab", "ls"]),
            ("tab-ls-json", ["tab", "ls", "--json"]),
        ] + searches.enumerated().map { ("clip-ls-search-\($0.offset)", ["clip", "ls", "--search", $0.element]) }

    let device = Device()

    init() throws {
        let corpus = try #require(try FileSystem.read(ListingGoldenTests.fixtures + "/corpus.json"))
        let (status, _, err) = device.inProcess(
            ["import", "-"], stdin: String(decoding: corpus, as: UTF8.self), now: ListingGoldenTests.now)
        #expect(status == 0, "\(err)")
    }

    static var recording: Bool { RecordingMode.recordGolden.isOn }

    /// Compares `output` with the recorded one (see `RecordingMode.check`).
    func check(_ name: String, _ output: [UInt8]) throws {
        try RecordingMode.recordGolden.check(ListingGoldenTests.fixtures + "/" + name + ".out", output, name: name + ".out")
    }

    func run(_ arguments: [String]) -> [UInt8] {
        let context = Context.memory(
            environment: ["ITSYPAD_DATA_DIR": device.dataDir, "TMPDIR": device.directory.path],
            now: { ListingGoldenTests.now })
        let status = Itsypad.run(arguments, context: context)
        #expect(status == 0, "\(arguments): \(context.standardError.text)")
        return context.standardOutput.captured
    }

    @Test func listingsMatchTheRecordedOutputs() throws {
        for (name, arguments) in ListingGoldenTests.cases { try check(name, run(arguments)) }
    }

    /// `show` prints exact bytes; every entry and tab of the corpus, one after another.
    @Test func showPrintsExactBytes() throws {
        let corpus = try JSONValue.parse(try #require(try FileSystem.read(ListingGoldenTests.fixtures + "/corpus.json")))
        var clips: [UInt8] = []
        for clip in corpus["clips"]?.arrayValue ?? [] {
            let id = try #require(clip["id"]?.stringValue)
            clips += Array("--- \(id)\n".utf8) + run(["clip", "show", id])
        }
        try check("clip-show", clips)
        var tabs: [UInt8] = []
        for tab in corpus["tabs"]?.arrayValue ?? [] {
            let id = try #require(tab["id"]?.stringValue)
            let name = try #require(tab["name"]?.stringValue)
            tabs += Array("--- \(id)\n".utf8) + run(["tab", "show", name]) + run(["tab", "show", String(id.prefix(6))])
        }
        try check("tab-show", tabs)
    }

    /// On a terminal the same listings come out with control characters,
    /// escape sequences and bidirectional overrides replaced, nothing else changed.
    @Test(.disabled(if: recording, "recording the outputs"), arguments: [("clip-ls", ["clip", "ls"]), ("tab-ls", ["tab", "ls"])])
    func onATerminalListingsAreMadeSafe(_ name: String, _ arguments: [String]) throws {
        let context = Context.memory(environment: ["ITSYPAD_DATA_DIR": device.dataDir], stdoutIsTerminal: true)
        #expect(Itsypad.run(arguments, context: context) == 0)
        let output = context.standardOutput.captured
        let golden = try #require(try FileSystem.read(ListingGoldenTests.fixtures + "/" + name + ".out"))
        let expected = golden.split(separator: 0x0A, omittingEmptySubsequences: false).map { line -> [UInt8] in
            var line = Array(line)
            Text.makeTerminalSafe(&line)
            return line
        }
        #expect(output == Array(expected.joined(separator: [0x0A])))
        #expect(output != golden, "the corpus holds escape sequences: a terminal must not get them")
        let text = String(decoding: output, as: UTF8.self)
        for forbidden in ["\u{1B}", "\u{07}", "\u{9B}", "\u{85}", "\u{202E}", "\u{2066}", "\u{0}"] {
            #expect(
                !text.unicodeScalars.contains(forbidden.unicodeScalars.first!),
                "U+\(String(forbidden.unicodeScalars.first!.value, radix: 16))")
        }
    }

    /// The built binary writing to a pipe prints the same bytes.
    @Test(.disabled(if: recording, "recording the outputs"), arguments: ["clip-ls", "tab-ls", "clip-ls-json"])
    func binaryOffATerminalPrintsTheSameBytes(_ name: String) throws {
        let arguments = try #require(ListingGoldenTests.cases.first { $0.name == name }).arguments
        let result = try device.runArguments(arguments)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdoutBytes == (try FileSystem.read(ListingGoldenTests.fixtures + "/" + name + ".out")))
    }
}

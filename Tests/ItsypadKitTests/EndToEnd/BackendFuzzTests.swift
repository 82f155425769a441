import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Random damage to real backend files (records, journal lines, zone.json) fed to `sync`
/// on a device with data of its own, synced and not. Each run must finish in time without a crash,
/// touch nothing outside the data directories and the backend, keep the device's data, and exit 0
/// or 1 (1 with a reason). Seeds are fixed; ITSYPAD_FUZZ_RUNS asks for more runs than the default.
@Suite struct BackendFuzzTests {
    static let defaultRuns = 40

    static var runs: Int {
        var pointer = environ
        while let entry = pointer.pointee {
            let pair = String(cString: entry)
            if pair.hasPrefix("ITSYPAD_FUZZ_RUNS="), let count = Int(pair.dropFirst("ITSYPAD_FUZZ_RUNS=".count)) { return count }
            pointer += 1
        }
        return defaultRuns
    }

    @Test func randomDamageToBackendFilesIsContained() throws {
        let world = try HostileWorld()
        // More history to damage: a setting, a second batch from the peer.
        try world.setUp(world.peer, "settings", "set", "clipboard.maxEntries", "500")
        try world.setUp(world.peer, "clip", "add", "second peer clip")
        try world.setUp(world.peer, "sync")
        try world.setUp(world.victim, "sync")
        // The victim's own work that has not been sent yet.
        try world.setUp(world.victim, "tab", "new", "--name", "unsynced", "typed while offline")
        try world.setUp(world.victim, "clip", "add", "copied while offline")

        let template = world.input + "/template"
        try FileSystem.makeDirectory(template)
        try shell("cp -a '\(world.backend)' '\(world.victim)' '\(template)/'")
        let targets = try fuzzTargets(world)
        try #require(targets.count >= 6)

        for run in 0..<Self.runs {
            var random = SplitMix64(seed: 0x1757_ADDE_0000 + UInt64(run))
            try shell(
                "rm -rf '\(world.backend)' '\(world.victim)' && cp -a '\(template)/backend' '\(template)/victim' '\(world.scratch.path)/'")
            let target = targets[random.next(below: targets.count)]
            let original = try #require(try FileSystem.read(target))
            let donor = try #require(try FileSystem.read(targets[random.next(below: targets.count)]))
            let mutation = Mutation.allCases[random.next(below: Mutation.allCases.count)]
            let damaged =
                target.hasSuffix(".log")
                ? Self.mutateOneLine(original, mutation, donor: donor, random: &random)
                : mutation.apply(to: original, donor: donor, random: &random)
            try FileSystem.writeAtomically(target, damaged)
            // Every other run, the device has lost its place (an expired token): it reads every record
            // and compares, so damaged records meet the deletion check too.
            let fullFetch = run % 2 == 1
            if fullFetch { try dropToken(world.victim) }
            let label = "run \(run): \(mutation) of \(target.dropFirst(world.backend.count))\(fullFetch ? ", full fetch" : "")"

            let sync = try world.run(world.victim, "sync")
            world.expectContained(sync)
            #expect(sync.status == 0 || sync.status == 1, "\(label): exit \(sync.status): \(sync.stderr)")
            if sync.status == 1 { #expect(sync.stderr.contains("Error:"), "\(label): no reason given") }
            let export = try world.run(world.victim, "export")
            world.expectContained(export)
            #expect(export.status == 0, "\(label): \(export.stderr)")
            let exported = (try? JSONValue.parse(export.stdout)) ?? .null
            let tabs = (exported["tabs"]?.arrayValue ?? []).compactMap { $0["content"]?.stringValue }
            let clips = (exported["clips"]?.arrayValue ?? []).compactMap { $0["text"]?.stringValue }
            for kept in ["the victim's own tab", "typed while offline"] { #expect(tabs.contains(kept), "\(label): lost \(kept)") }
            for kept in ["the victim's own clip", "copied while offline"] { #expect(clips.contains(kept), "\(label): lost \(kept)") }
        }
    }

    func dropToken(_ dataDir: String) throws {
        let path = dataDir + "/sync/state.json"
        guard case .object(let members) = try JSONValue.parse(try #require(try FileSystem.read(path))) else {
            Issue.record("\(path) is not a JSON object")
            return
        }
        try FileSystem.writeAtomically(path, Array(JSONValue.object(members.filter { $0.0 != "token" }).serialized().utf8))
    }

    /// Record files, every device's journal segments, and zone.json.
    func fuzzTargets(_ world: HostileWorld) throws -> [String] {
        var targets = [world.backend + "/zone.json"]
        for device in try FileSystem.list(world.backend + "/devices") {
            let journal = world.backend + "/devices/" + device + "/journal"
            targets += try FileSystem.list(journal).map { journal + "/" + $0 }
        }
        for type in try FileSystem.list(world.backend + "/records") {
            let folder = world.backend + "/records/" + type
            targets += try fannedOutRecordFiles(in: folder).map { folder + "/" + $0 }
        }
        return targets
    }

    /// Damages one line of a journal segment, keeping the others (and the line breaks) as they were.
    static func mutateOneLine(_ bytes: [UInt8], _ mutation: Mutation, donor: [UInt8], random: inout SplitMix64) -> [UInt8] {
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        if lines.last == [] { lines.removeLast() }
        guard !lines.isEmpty else { return mutation.apply(to: bytes, donor: donor, random: &random) }
        let index = random.next(below: lines.count)
        lines[index] = mutation.apply(to: lines[index], donor: donor, random: &random).filter { $0 != 0x0A }
        return Array(lines.joined(separator: [0x0A])) + [0x0A]
    }

    func shell(_ script: String) throws {
        let result = try Process.shell(script)
        try #require(result.status == 0, "\(script): \(result.stderr)")
    }
}

/// Ways to damage a file.
enum Mutation: CaseIterable {
    case bitFlips, truncation, splice, extremeNumber, traversalName

    static let extremeNumbers = [
        "9223372036854775807", "-9223372036854775808", "9223372036854775808", "-1", "0", "1e300",
        "9007199254740993", "-0", "1.5",
    ]
    static let hostileNames = [
        "../../outside/canary", "/etc/passwd", "..", "", "x\\u0000y", "../../../../../../tmp/fuzz-escape",
        String(repeating: "n", count: 400), "\\u001b]52;c;eA==\\u0007", "ScratchTab/../../outside",
    ]

    func apply(to bytes: [UInt8], donor: [UInt8], random: inout SplitMix64) -> [UInt8] {
        guard !bytes.isEmpty else { return donor }
        var result = bytes
        switch self {
        case .bitFlips:
            for _ in 0...random.next(below: 8) {
                result[random.next(below: result.count)] ^= UInt8(1) << UInt8(random.next(below: 8))
            }
        case .truncation:
            result.removeSubrange(random.next(below: result.count)...)
        case .splice:
            let start = random.next(below: donor.count + 1)
            let piece = donor[start..<min(donor.count, start + random.next(below: 200) + 1)]
            let at = random.next(below: result.count + 1)
            result.replaceSubrange(at..<min(result.count, at + random.next(below: 50)), with: piece)
        case .extremeNumber:
            let runs = Self.runs(in: result) { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            guard !runs.isEmpty else { return Mutation.bitFlips.apply(to: bytes, donor: donor, random: &random) }
            let run = runs[random.next(below: runs.count)]
            result.replaceSubrange(run, with: Array(Self.extremeNumbers[random.next(below: Self.extremeNumbers.count)].utf8))
        case .traversalName:
            // A quoted string's content.
            let quotes = result.indices.filter { result[$0] == UInt8(ascii: "\"") }
            guard quotes.count >= 2 else { return Mutation.bitFlips.apply(to: bytes, donor: donor, random: &random) }
            let pair = random.next(below: quotes.count / 2) * 2
            let name = Self.hostileNames[random.next(below: Self.hostileNames.count)]
            result.replaceSubrange(quotes[pair] + 1..<quotes[pair + 1], with: Array(name.utf8))
        }
        return result
    }

    /// Maximal runs of bytes matching `belongs`.
    static func runs(in bytes: [UInt8], where belongs: (UInt8) -> Bool) -> [Range<Int>] {
        var runs: [Range<Int>] = []
        var start: Int?
        for (index, byte) in bytes.enumerated() {
            if belongs(byte) {
                if start == nil { start = index }
            } else if let first = start {
                runs.append(first..<index)
                start = nil
            }
        }
        if let start { runs.append(start..<bytes.count) }
        return runs
    }
}

/// A small seeded generator, so that every run is reproducible from its seed.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// 0..<bound (bound > 0).
    mutating func next(below bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

import Testing

@testable import ItsypadStore
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// What walks the whole history streams it: `import`, an index rebuild, `import --from clipman`,
/// `clip pin` and `clip prune` of 200,000 clips take about the memory they take for 1,000 (a history
/// of 1,000,000 stays under 64 MiB; see listing-bench.sh).
@Suite struct LargeHistoryMemoryTests {
    /// An export of `count` clips, one a second, written to a file of `device`'s directory.
    static func export(_ count: Int, on device: Device) -> String {
        var document = #"{"format":"itsypad-export","version":1,"clips":["#
        document.reserveCapacity(count * 150)
        for number in 0..<count {
            let hex = String(number, radix: 16)
            let id = "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex
            let time = Time.iso8601(1_767_225_600_000 + Int64(number) * 1000)
            if number > 0 { document += "," }
            document += #"{"id":""# + id + #"","text":"clip number "# + String(number) + #"","timestamp":""# + time + #""}"#
        }
        document += "]}"
        device.directory.write("export-\(count).json", document)
        return device.directory.file("export-\(count).json")
    }

    /// The peak memory (KiB) of each command that walks a history of `count` clips, by name: an import
    /// of an export into a new history; a listing that rebuilds its index (removed, as a copy of the data
    /// directory, which changes the log's inode, leaves it stale); an import from clipman of a few texts,
    /// one of them in the history already; a pin of the oldest entry; a prune of a tenth.
    static func peaks(_ count: Int) throws -> [String: Int] {
        let device = Device()
        try device.run("settings", "set", "clipboard.maxEntries", "2000000")
        func peak(_ name: String, _ arguments: [String]) throws -> (String, Int) {
            let measured = try ImportSafetyTests.peakMemory(device, arguments)
            #expect(measured.result.status == 0, "\(name): \(measured.result.stderr)")
            return (name, measured.kib)
        }
        var peaks = [try peak("import", ["--quiet", "import", export(count, on: device)])]
        let newest = try device.run("clip", "ls", "--json", "-n", "3").stdout
        try FileSystem.remove(DataDirectoryLayout(root: device.dataDir).clips + "/index")
        peaks.append(try peak("rebuild", ["clip", "ls", "--json", "-n", "3"]))
        #expect(try device.run("clip", "ls", "--json", "-n", "3").stdout == newest)
        // clipman's file is the oldest first: the text the history holds is the oldest.
        let texts = ["clip number \(count / 2)", "new one", "new two"]
        device.directory.write("clipman.json", JSONValue.array(texts.map(JSONValue.string)).serialized())
        peaks.append(try peak("import --from clipman", ["import", "--from", "clipman", device.directory.file("clipman.json")]))
        let listed = try device.run("clip", "ls", "-n", "3").stdout.split(separator: "\n").map { $0.split(separator: "\t").last ?? "" }
        #expect(listed == ["new two", "new one", "clip number \(count - 1)"], "\(listed)")
        #expect(try device.run("sync", "status").stdout.contains(" \(count + 2) clips"))
        // The export's ids share their first 20 digits (a short prefix names many): the whole id.
        peaks.append(try peak("pin", ["clip", "pin", "00000000-0000-4000-8000-000000000000"]))
        #expect(try device.run("clip", "ls", "--pinned").stdout.hasSuffix(" number 0\n"))
        peaks.append(try peak("prune", ["clip", "prune", "--keep", String(count - count / 10)]))
        #expect(try device.run("clip", "ls", "-n", "1").stdout.hasSuffix("\tnew two\n"))
        #expect(try device.run("sync", "status").stdout.contains(" \(count - count / 10) clips"))
        return Dictionary(uniqueKeysWithValues: peaks)
    }

    /// `clip add` of a large text holds it about twice (the text, then its log line), never the
    /// three times a growing line would (listing-bench's bound: 3x the clip, binary included).
    @Test(.needs(["time"]))
    func aLargeClipIsHeldAboutTwiceWhileAdded() throws {
        let device = Device()
        try device.run("settings", "set", "clipboard.maxBytes", String(32 << 20))
        let unit = Array("a line with \"quotes\", a tab\t, café and 日本\n".utf8)
        let text = Array(repeating: unit, count: (8 << 20) / unit.count).flatMap { $0 }
        let small = try ImportSafetyTests.peakMemory(device, ["clip", "add"], stdin: unit)
        let large = try ImportSafetyTests.peakMemory(device, ["clip", "add"], stdin: text)
        #expect(small.result.status == 0 && large.result.status == 0, "\(large.result.stderr)")
        // Before the line was sized first: 2.8 times the text over a small add's peak.
        #expect(large.kib - small.kib < text.count * 5 / 2 / 1024, "\(small.kib) KiB, then \(large.kib) KiB for \(text.count >> 10) KiB")
        let id = large.result.stdout.split(separator: "\n").first.map(String.init) ?? ""
        #expect(try device.runArguments(["clip", "show", id]).stdoutBytes == text)
    }

    @Test(.needs(["time"]))
    func whatWalksTheHistoryHoldsWhatItHoldsForAFewEntries() throws {
        let few = try LargeHistoryMemoryTests.peaks(1000)
        let many = try LargeHistoryMemoryTests.peaks(200_000)
        // Before they streamed, more than for 1,000: the import 36 MiB (every slot, sorted in a copy), the
        // rebuild 26 MiB (every slot and a table of every id), the import from clipman 42 MiB (a table of
        // every text), the pin and the prune every slot (the prune 33 MiB, every id as a String too). Now
        // the imports' set of ids is what grows (about 24 bytes a clip); the others hold what they change.
        let bounds = ["import": 24 << 10, "rebuild": 12 << 10, "import --from clipman": 24 << 10, "pin": 4 << 10, "prune": 12 << 10]
        for (name, bound) in bounds {
            #expect(many[name]! - few[name]! < bound, "\(name): \(few[name]!) KiB for 1,000, \(many[name]!) for 200,000")
        }
    }
}

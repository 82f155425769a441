import Testing

@testable import ItsypadStore
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// What walks the whole history streams it: `import` and `clip prune` of 200,000 clips take about
/// the memory they take for 1,000 (a history of 1,000,000 stays under 64 MiB; see listing-bench.sh).
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

    /// The peak memory (KiB) of an import of `count` clips into a new history, and of a prune of a tenth of them after it.
    static func importAndPrune(_ count: Int) throws -> (importing: Int, pruning: Int) {
        let device = Device()
        try device.run("settings", "set", "clipboard.maxEntries", "2000000")
        let importing = try ImportSafetyTests.peakMemory(device, ["--quiet", "import", export(count, on: device)])
        #expect(importing.result.status == 0, "\(importing.result.stderr)")
        let pruning = try ImportSafetyTests.peakMemory(device, ["clip", "prune", "--keep", String(count - count / 10)])
        #expect(pruning.result.status == 0, "\(pruning.result.stderr)")
        let listed = try device.run("clip", "ls", "-n", "1")
        #expect(listed.stdout.hasSuffix("\tclip number \(count - 1)\n"), "\(listed.stdout)")
        #expect(try device.run("sync", "status").stdout.contains(" \(count - count / 10) clips"))
        return (importing.kib, pruning.kib)
    }

    @Test(.enabled(if: FileSystem.exists("/usr/bin/time"), "/usr/bin/time is not installed"))
    func importAndPruneHoldWhatTheyHoldForAFewEntries() throws {
        let few = try LargeHistoryMemoryTests.importAndPrune(1000)
        let many = try LargeHistoryMemoryTests.importAndPrune(200_000)
        // Before they streamed, 36 MiB more for the import (every slot, sorted in a copy) and 33 MiB
        // more for the prune (every slot, and every id as a String); now the import's set of ids is
        // what grows (about 24 bytes a clip), and the prune holds only what it removes.
        #expect(many.importing - few.importing < 24 << 10, "import: \(few.importing) KiB for 1,000, \(many.importing) for 200,000")
        #expect(many.pruning - few.pruning < 12 << 10, "prune: \(few.pruning) KiB for 1,000, \(many.pruning) for 200,000")
    }

    /// The peak memory (KiB) of a listing that rebuilds the index of a history of `count` clips (removed,
    /// as a copy of the data directory, which changes the log's inode, leaves it stale), and of an import
    /// from clipman of a few texts into it, one of them in the history already.
    static func rebuildAndImportFromClipman(_ count: Int) throws -> (rebuilding: Int, importing: Int) {
        let device = Device()
        try device.run("settings", "set", "clipboard.maxEntries", "2000000")
        try #require(try device.run("--quiet", "import", export(count, on: device)).status == 0)
        let newest = try device.run("clip", "ls", "--json", "-n", "3").stdout
        try FileSystem.remove(DataDirectoryLayout(root: device.dataDir).clips + "/index")
        let rebuilding = try ImportSafetyTests.peakMemory(device, ["clip", "ls", "--json", "-n", "3"])
        #expect(rebuilding.result.status == 0, "\(rebuilding.result.stderr)")
        #expect(rebuilding.result.stdout == newest)
        // clipman's file is the oldest first: the text the history holds is the oldest.
        let texts = ["clip number \(count / 2)", "new one", "new two"]
        device.directory.write("clipman.json", JSONValue.array(texts.map(JSONValue.string)).serialized())
        let importing = try ImportSafetyTests.peakMemory(device, ["import", "--from", "clipman", device.directory.file("clipman.json")])
        #expect(importing.result.status == 0, "\(importing.result.stderr)")
        #expect(try device.run("sync", "status").stdout.contains(" \(count + 2) clips"))
        let listed = try device.run("clip", "ls", "-n", "3").stdout.split(separator: "\n").map { $0.split(separator: "\t").last ?? "" }
        #expect(listed == ["new two", "new one", "clip number \(count - 1)"], "\(listed)")
        return (rebuilding.kib, importing.kib)
    }

    @Test(.enabled(if: FileSystem.exists("/usr/bin/time"), "/usr/bin/time is not installed"))
    func anIndexRebuildAndAnImportFromClipmanHoldWhatTheyHoldForAFewEntries() throws {
        let few = try LargeHistoryMemoryTests.rebuildAndImportFromClipman(1000)
        let many = try LargeHistoryMemoryTests.rebuildAndImportFromClipman(200_000)
        // Before they streamed, the rebuild held every slot and a table of every id (about 20 MiB more),
        // and the import a table of every text the history holds (about 80 MiB more); now what grows
        // is the import's set of ids, as in an import of an export.
        #expect(many.rebuilding - few.rebuilding < 12 << 10, "rebuild: \(few.rebuilding) KiB for 1,000, \(many.rebuilding) for 200,000")
        #expect(many.importing - few.importing < 24 << 10, "import: \(few.importing) KiB for 1,000, \(many.importing) for 200,000")
    }
}

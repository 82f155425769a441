import Testing

@testable import ItsypadModel
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Images and other bytes through the built binary: added from a pipe, listed on one line,
/// shown byte for byte, exported, imported, removed with their files, and synced as assets
/// that an encrypted backend holds only sealed.
@Suite struct BinaryClipTests {
    let device = Device()
    var blobs: String { device.dataDir + "/clips/blobs" }

    func add(_ bytes: [UInt8], _ extra: [String] = [], environment: [String: String] = [:]) throws -> RunResult {
        try device.runArguments(["clip", "add"] + extra, stdin: bytes, environment: environment)
    }

    func addedID(_ bytes: [UInt8], _ extra: [String] = []) throws -> String {
        let result = try add(bytes, extra)
        try #require(result.status == 0, "clip add failed: \(result.stderr)")
        return result.stdout.trimmingNewline
    }

    func listing(_ arguments: [String] = []) throws -> String { try device.runArguments(["clip", "ls"] + arguments).stdout }

    func blobNames() -> [String] { FileSystem.exists(blobs) ? ((try? FileSystem.list(blobs, includingHidden: true)) ?? []) : [] }

    @Test("each format is stored byte for byte and listed with its type", arguments: TestImages.all.map { ($0.type, $0.bytes, $0.width) })
    func eachFormat(_ image: (type: String, bytes: [UInt8], width: Int?)) throws {
        let id = try addedID(image.bytes)
        let pixels = image.width == nil ? "" : " 640×480"
        #expect(try listing() == "\(id.prefix(8))\t[[ \(image.type)\(pixels) \(image.bytes.count) B ]]\n")
        #expect(try device.runArguments(["clip", "show", id]).stdoutBytes == image.bytes)
        #expect(blobNames() == [id])
    }

    @Test func typeGivenWinsOverWhatTheBytesLookLike() throws {
        // UTF-8 text given as an image stays bytes of that type; a PNG given as octet-stream is that.
        let text = Array("not really an image".utf8)
        let id = try addedID(text, ["--type", "Image/PNG"])
        let json = try JSONValue.parse(try listing(["--json"]))
        #expect(
            json.arrayValue?[0]["type"] == .string("image/png") && json.arrayValue?[0]["text"] == .null
                && json.arrayValue?[0]["size"] == .integer(19))
        #expect(try device.runArguments(["clip", "show", id]).stdoutBytes == text)
        let png = TestImages.png(width: 2, height: 2)
        _ = try addedID(png, ["--type", "application/octet-stream"])
        #expect(try listing(["-n", "1"]).hasSuffix("[[ application/octet-stream \(png.count) B ]]\n"))
        // text/plain keeps text as text.
        _ = try addedID(Array("plain".utf8), ["--type", "text/plain"])
        #expect(try listing(["-n", "1"]).hasSuffix("\tplain\n"))
    }

    @Test func bytesThatAreNotTextAreKeptAsOctetStream() throws {
        let bytes: [UInt8] = [0x66, 0x6F, 0xFF, 0x0A, 0x00]
        let id = try addedID(bytes)
        #expect(try listing().hasSuffix("[[ application/octet-stream 5 B ]]\n"))
        #expect(try device.runArguments(["clip", "show", id]).stdoutBytes == bytes)
    }

    @Test("an invalid MIME type stores nothing", arguments: ["image/png\n", "image/png\nx", "image", "a b/c", "/png", "image/"])
    func invalidType(_ type: String) throws {
        let result = try add(TestImages.png(width: 1, height: 1), ["--type", type])
        #expect(result.status == 64)
        #expect(result.stderr.contains("not a MIME type"))
        #expect(try listing().isEmpty && blobNames().isEmpty)
    }

    @Test("empty input is refused, whatever its type", arguments: [[], ["--type", "image/png"]])
    func emptyInput(_ extra: [String]) throws {
        let result = try add([], extra)
        #expect(result.status == 1 && result.stderr.contains("empty"))
        #expect(try listing().isEmpty)
    }

    @Test(
        "CLIPBOARD_STATE sensitive, clear and nil store and queue nothing; other values change nothing",
        arguments: [("sensitive", false), ("clear", false), ("nil", false), ("data", true), ("", true)])
    func clipboardState(_ example: (state: String, stored: Bool)) throws {
        let result = try add(Array("hunter2".utf8), environment: ["CLIPBOARD_STATE": example.state])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty != example.stored)
        #expect(try listing().contains("hunter2") == example.stored)
        let pending = try JSONValue.parse(try device.runArguments(["sync", "status", "--json"]).stdout)["pending"]?["ClipboardEntry"]
        #expect((pending?.int64Value ?? 0) == (example.stored ? 1 : 0))
        // An image offered by a password manager is not stored either.
        let image = try add(TestImages.png(width: 1, height: 1), environment: ["CLIPBOARD_STATE": example.state])
        #expect(image.status == 0 && blobNames().isEmpty != example.stored)
    }

    @Test func truncatedImagesAreKeptWithoutPixels() throws {
        let cut = Array(TestImages.png(width: 640, height: 480).prefix(20))
        let id = try addedID(cut)
        #expect(try listing() == "\(id.prefix(8))\t[[ image/png 20 B ]]\n")
        #expect(try device.runArguments(["clip", "show", id]).stdoutBytes == cut)
    }

    @Test func searchSkipsBinaryEntriesAndPinsShow() throws {
        let id = try addedID(Array("GIF89a".utf8) + [0, 0, 0, 0] + Array("needle".utf8))
        _ = try addedID(Array("a needle in text".utf8))
        #expect(try listing(["--search", "needle"]).hasSuffix("\ta needle in text\n"))
        #expect(try listing(["--search", "needle"]).split(separator: "\n").count == 1)
        #expect(try device.runArguments(["clip", "pin", id]).status == 0)
        #expect(try listing(["--pinned"]) == "\(id.prefix(8))\t[pinned] [[ image/gif 16 B ]]\n")
    }

    @Test func removalPruneAndClearDeleteTheBytes() throws {
        let first = try addedID(TestImages.png(width: 1, height: 1, seed: 1))
        let second = try addedID(TestImages.jpeg(width: 1, height: 1, seed: 2))
        let third = try addedID(TestImages.gif(width: 1, height: 1, seed: 3))
        #expect(Set(blobNames()) == [first, second, third])
        #expect(try device.run("clip", "rm", first).status == 0)
        #expect(Set(blobNames()) == [second, third])
        #expect(try device.run("clip", "prune", "--keep", "1").status == 0)
        #expect(blobNames() == [third])
        #expect(try device.run("clip", "clear").status == 0)
        #expect(blobNames().isEmpty)
        // Eviction by clip add.
        #expect(try device.run("settings", "set", "clipboard.maxEntries", "1").status == 0)
        let kept = try addedID(TestImages.png(width: 1, height: 1, seed: 4))
        _ = try addedID(Array("text".utf8))
        #expect(try listing().hasSuffix("\ttext\n") && !blobNames().contains(kept))
    }

    @Test func exportAndImportCarryTheBytes() throws {
        let png = TestImages.png(width: 640, height: 480, payload: 10_000)
        let pdf = TestImages.pdf()
        _ = try addedID(png)
        _ = try addedID(pdf, ["--local"])
        _ = try addedID(Array("text".utf8))
        let export = try device.run("export")
        try #require(export.status == 0)
        let other = Device()
        #expect(try other.runArguments(["import", "-"], stdin: export.stdoutBytes).status == 0)
        #expect(try other.runArguments(["clip", "ls"]).stdout == (try listing()))
        for id in try listing().split(separator: "\n").map({ String($0.prefix(8)) }) {
            #expect(try other.run("clip", "show", id).stdoutBytes == (try device.run("clip", "show", id).stdoutBytes))
        }
        let json = try JSONValue.parse(try other.run("clip", "ls", "--json").stdout)
        #expect(json.arrayValue?[1]["localOnly"] == .bool(true) && json.arrayValue?[2]["size"] == .integer(Int64(png.count)))
    }

    /// An entry whose file is gone, holds other bytes or is a link (never followed): export writes
    /// every other entry, names that one and exits 1, and its document imports; the history still
    /// lists the entry, `clip show` of it says what is wrong and what to do, and removing it ends that.
    @Test(
        arguments: [
            ("missing", "are missing: there is no file"), ("damaged", "are damaged:"), ("a link", "cannot be read:"),
        ])
    func anEntryWithoutItsBytesIsNamedAndTheRestExported(_ damage: (kind: String, says: String)) throws {
        _ = try addedID(Array("older text".utf8))
        let keptImage = TestImages.png(width: 2, height: 2, payload: 64, seed: 2)
        let kept = try addedID(keptImage)
        let lost = try addedID(TestImages.png(width: 3, height: 3, payload: 64, seed: 3))
        _ = try addedID(Array("newest text".utf8))
        let file = blobs + "/" + lost
        try FileSystem.remove(file)
        switch damage.kind {
        case "damaged": FileSystem.writeText(file, "not the image")
        case "a link": #expect(symlink(blobs + "/" + kept, file) == 0)
        default: break
        }
        let export = try device.run("export")
        #expect(export.status == 1, "\(export.stderr)")
        #expect(export.stderr.contains("left out of the export: the bytes of entry \(lost.prefix(8)) \(damage.says)"), "\(export.stderr)")
        #expect(export.stderr.contains("everything else was exported (1 clip left out)"), "\(export.stderr)")
        let exported = try JSONValue.parse(export.stdout)["clips"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        #expect(exported.count == 3 && !exported.contains(lost) && exported.contains(kept))

        let other = Device()
        let imported = try other.runArguments(["import", "-"], stdin: export.stdoutBytes)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try other.run("clip", "show", kept).stdoutBytes == keptImage)
        #expect(try other.run("clip", "ls").stdout.split(separator: "\n").count == 3)

        #expect(try listing().contains(String(lost.prefix(8))))
        let show = try device.run("clip", "show", lost)
        #expect(show.status == 1 && show.stdout.isEmpty, "\(show.stderr)")
        #expect(show.stderr.contains(damage.says) && show.stderr.contains("'itsypad clip rm \(lost.prefix(8))'"), "\(show.stderr)")
        #expect(try device.run("clip", "rm", lost).status == 0)
        #expect(try device.run("export").status == 0)
        #expect(try device.run("clip", "show", kept).stdoutBytes == keptImage)
    }

    @Test(
        "an import with a damaged binary clip imports nothing",
        arguments: [
            (#""data": "iVBORw0K"#, #""data": "iVBORw0!"#), (#""data": "iVBORw0K"#, #""data": "iVBORw0"#), (#""size": 57"#, #""size": 58"#),
        ])
    func damagedImport(_ change: (from: String, to: String)) throws {
        _ = try addedID(Array("kept text".utf8))
        _ = try addedID(TestImages.png(width: 1, height: 1, payload: 16))
        let export = try device.run("export").stdout
        #expect(export.contains(change.from))
        let other = Device()
        let changed = export.split(separator: change.from, omittingEmptySubsequences: false).joined(separator: change.to)
        let result = try other.run("import", "-", stdin: changed)
        #expect(result.status == 1 && result.stderr.contains("nothing was imported"))
        #expect(try other.run("clip", "ls").stdout.isEmpty)
    }

    @Test("an image syncs byte for byte, sealed in an encrypted backend", arguments: [false, true])
    func syncs(_ encrypted: Bool) throws {
        let scratch = TemporaryDirectory()
        let backend = scratch.path + "/backend"
        let image = TestImages.png(width: 640, height: 480, payload: 64 << 10, seed: 9)
        let id = try addedID(image)
        let enable = try device.run("sync", "enable", backend, encrypted ? "--encrypt" : "--no-encrypt")
        try #require(enable.status == 0, "\(enable.stderr)")
        let other = Device()
        let joined =
            encrypted
            ? try other.run("sync", "enable", backend, "--key", "-", stdin: try device.run("sync", "key", "show").stdout)
            : try other.run("sync", "enable", backend, "--no-encrypt")
        try #require(joined.status == 0, "\(joined.stderr)")
        #expect(try other.run("clip", "show", id).stdoutBytes == image)
        #expect(try other.run("clip", "ls").stdout == "\(id.prefix(8))\t[[ image/png 640×480 64 KiB ]]\n")
        // Pieces of the image's noise in the backend's files: all of them in the clear, none sealed.
        // (grep reads lines: a piece with a newline could not be found.)
        let pieces = stride(from: 1024, to: image.count - 32, by: 4096).map { Array(image[$0..<$0 + 32]) }.filter { !$0.contains(0x0A) }
        #expect(pieces.count >= 8)
        let found = try pieces.filter { try backendHolds($0, backend) }.count
        #expect(found == (encrypted ? 0 : pieces.count))
        // Removed on the other device, it goes here too, bytes and all.
        #expect(try other.run("clip", "rm", id).status == 0)
        #expect(try other.run("sync").status == 0)
        #expect(try device.run("sync").status == 0)
        #expect(try listing().isEmpty && blobNames().isEmpty)
    }

    @Test func largerThanMaxSyncBytesStaysLocalAndSaysSo() throws {
        let scratch = TemporaryDirectory()
        #expect(try device.run("settings", "set", "clipboard.maxSyncBytes", "1000").status == 0)
        #expect(try device.run("settings", "set", "clipboard.maxSyncBytes", "60000000").status != 0)
        let small = try addedID(TestImages.png(width: 1, height: 1, payload: 100, seed: 1))
        let large = try addedID(TestImages.png(width: 1, height: 1, payload: 2000, seed: 2))
        try #require(try device.run("sync", "enable", scratch.path + "/backend", "--no-encrypt").status == 0)
        let json = try JSONValue.parse(try listing(["--json"]))
        #expect(json.arrayValue?[0]["id"] == .string(large) && json.arrayValue?[0]["syncState"] == .string("localOnly"))
        #expect(json.arrayValue?[1]["id"] == .string(small) && json.arrayValue?[1]["syncState"] == .string("synced"))
        let status = try JSONValue.parse(try device.run("sync", "status", "--json").stdout)
        #expect(status["localOnlyReasons"]?["large"] == .integer(1))
        let other = Device()
        try #require(try other.run("sync", "enable", scratch.path + "/backend", "--no-encrypt").status == 0)
        #expect(try other.run("clip", "ls").stdout.split(separator: "\n").map { String($0.prefix(8)) } == [String(small.prefix(8))])
    }

    /// Whether a file under `path` holds `bytes` (grep -F cannot take any byte: a PCRE of escapes in the C locale can).
    private func backendHolds(_ bytes: [UInt8], _ path: String) throws -> Bool {
        let pattern = bytes.map { "\\x{" + String($0, radix: 16) + "}" }.joined()
        let result = try Process.run("/usr/bin/grep", ["-rlaP", pattern, path], environment: ["LC_ALL": "C", "PATH": "/usr/bin:/bin"])
        #expect(result.status <= 1, "grep failed: \(result.stderr)")
        return result.status == 0
    }
}

import Testing

@testable import ItsypadModel
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Runs the built binary: pipes, exit codes, locking, crashes.
@Suite struct BinaryTests {
    let device = Device()

    @Test func pipesInAndOutExactly() throws {
        let added = try device.run("clip", "add", stdin: "piped\n")
        #expect(added.status == 0)
        let id = added.stdout.trimmingNewline
        #expect(Identifier.isValid(id))
        let shown = try device.run("clip", "show", id)
        #expect(shown.stdoutBytes == Array("piped\n".utf8))
        #expect(shown.stderr.isEmpty)
    }

    @Test func unknownCommandExits64WithSuggestion() throws {
        let result = try device.run("clpi")
        #expect(result.status == 64)
        #expect(result.stderr.contains("Did you mean 'clip'?"))
        #expect(result.stdout.isEmpty)
    }

    @Test func lockedDataDirectoryExits75() throws {
        try device.run("clip", "add", "x")
        let lock = try #require(try FileLock(path: device.dataDir + "/lock", mode: .exclusive, timeout: 1))
        let result = try device.run("clip", "add", "y", environment: ["ITSYPAD_LOCK_TIMEOUT": "0.2"])
        #expect(result.status == 75)
        #expect(result.stderr.contains("locked"))
        _ = lock
    }

    @Test func refusesANewerFormatAndLeavesItAlone() throws {
        try FileSystem.makeDirectory(device.dataDir)
        let meta = "{\"format\": 99, \"deviceID\": \"x\"}\n"
        try FileSystem.writeAtomically(device.dataDir + "/meta.json", Array(meta.utf8))
        let result = try device.run("clip", "add", "x")
        #expect(result.status == 1)
        #expect(result.stderr.contains("newer"))
        #expect(try FileSystem.read(device.dataDir + "/meta.json") == Array(meta.utf8))
        #expect(!FileSystem.exists(device.dataDir + "/clips"))
    }

    @Test func corruptTabFileIsNamedNotDeleted() throws {
        try device.run("tab", "new", "fine")
        let broken = device.dataDir + "/tabs/00000000-0000-4000-8000-000000000000.json"
        try FileSystem.writeAtomically(broken, Array("{ torn".utf8))
        let result = try device.run("tab", "ls")
        #expect(result.status == 1)
        #expect(result.stderr.contains("00000000-0000-4000-8000-000000000000.json is corrupt"))
        #expect(FileSystem.exists(broken))
    }

    @Test func directoriesAndFilesArePrivate() throws {
        try device.run("clip", "add", "secret")
        try device.run("tab", "new", "secret")
        for path in [device.dataDir, device.dataDir + "/clips", device.dataDir + "/tabs"] {
            var info = stat()
            stat(path, &info)
            #expect(info.st_mode & 0o777 == 0o700, "\(path)")
        }
        for path in [device.dataDir + "/clips/log", device.dataDir + "/meta.json", device.dataDir + "/sync/pending.log"] {
            var info = stat()
            stat(path, &info)
            #expect(info.st_mode & 0o777 == 0o600, "\(path)")
        }
    }

    @Test func anEmptyDataDirectoryIsAUsageError() throws {
        let scratch = TemporaryDirectory()
        let result = try Process.shell("cd '\(scratch.path)' && '\(Process.itsypad)' --data-dir '' clip add x")
        #expect(result.status == ExitCode.usage, "\(result.stderr)")
        #expect(try FileSystem.list(scratch.path, includingHidden: true).isEmpty, "the current directory was not made a data directory")
    }

    @Test func aDataDirectoryOthersCanReadIsWarnedAbout() throws {
        try device.run("clip", "add", "x")
        #expect(try device.run("clip", "ls").stderr.isEmpty)
        try #require(chmod(device.dataDir, 0o755) == 0)
        let result = try device.run("clip", "ls")
        #expect(result.status == 0)
        let warnings = result.stderr.split(separator: "\n")
        #expect(
            warnings.count == 1 && warnings[0].contains("accessible by other users") && warnings[0].contains("chmod 700"),
            "\(result.stderr)")
    }

    @Test func closedPipeExitsQuietly() throws {
        let lines = (0..<3000).map { "entry \($0)" }.joined(separator: "\n")
        try device.run("settings", "set", "clipboard.maxEntries", "5000")
        // Seed quickly through import rather than 3,000 processes.
        let clips = (0..<3000).map { i in
            "{\"id\":\"\(Identifier.make())\",\"text\":\"entry \(i) \(String(repeating: "x", count: 60))\",\"timestamp\":\"2026-01-01T00:00:\(twoDigits(i % 60)).000Z\"}"
        }
        let document = "{\"format\":\"itsypad-export\",\"version\":1,\"clips\":[\(clips.joined(separator: ","))]}"
        #expect(try device.run("import", "-", stdin: document).status == 0)
        _ = lines
        let script = "set -o pipefail 2>/dev/null; ITSYPAD_DATA_DIR='\(device.dataDir)' '\(Process.itsypad)' clip ls | head -1"
        let result = try Process.run("/bin/bash", ["-c", script])
        #expect(result.stderr.isEmpty)
        #expect(result.stdout.split(separator: "\n").count == 1)
    }

    @Test func concurrentWritersLoseNothing() throws {
        let binary = Process.itsypad
        let script = """
            for w in 1 2 3; do
              ( for i in $(seq 1 25); do ITSYPAD_DATA_DIR='\(device.dataDir)' '\(binary)' clip add "writer $w entry $i" >/dev/null || echo fail; done ) &
            done
            ( for i in $(seq 1 10); do ITSYPAD_DATA_DIR='\(device.dataDir)' '\(binary)' clip prune --older-than 1w >/dev/null || echo fail; done ) &
            wait
            """
        let result = try Process.run("/bin/bash", ["-c", script])
        #expect(!result.stdout.contains("fail"))
        #expect(try device.run("clip", "ls").stdout.split(separator: "\n").count == 75)
    }

    @Test func killedWritersLeaveEveryAcknowledgedChange() throws {
        let binary = Process.itsypad
        let acked = device.directory.file("acked")
        // Writers record an id only after itsypad returned it; a killer shoots them at random moments.
        let script = """
            ( for i in $(seq 1 400); do ITSYPAD_DATA_DIR='\(device.dataDir)' '\(binary)' clip add "entry $i $RANDOM" >> '\(acked)' 2>/dev/null; done ) &
            writer=$!
            for k in $(seq 1 60); do sleep 0.0$((RANDOM % 9 + 1)); pkill -9 -P $writer 2>/dev/null; done
            wait $writer
            """
        _ = try Process.run("/bin/bash", ["-c", script])
        let ids = (device.directory.read("acked") ?? "").split(separator: "\n").map(String.init).filter(Identifier.isValid)
        #expect(ids.count > 50)
        let listing = try device.run("clip", "ls", "--json")
        #expect(listing.status == 0, "\(listing.stderr)")
        let present = Set(try #require(try JSONValue.parse(listing.stdout).arrayValue).compactMap { $0["id"]?.stringValue })
        #expect(ids.allSatisfy(present.contains), "acknowledged entries missing after kill -9")
        #expect(try device.run("clip", "add", "after the storm").status == 0)
    }
}

func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }

import Testing

@testable import ItsypadCLI
@testable import ItsypadStore
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// `itsypad sync …` as a person and a script see it: status wording and JSON,
/// status during a running sync, the progress line.
@Suite struct SyncCommandTests {
    let device = Device()
    let backend = TemporaryDirectory()

    func output(_ arguments: String...) -> String {
        let (status, out, err) = device.inProcess(arguments)
        #expect(status == 0, "\(arguments.joined(separator: " ")) failed: \(err)")
        return out
    }

    @Test func statusSpeaksInWordsWithPlurals() {
        _ = output("tab", "new", "one")
        _ = output("clip", "add", "a")
        _ = output("clip", "add", "b")
        _ = output("settings", "set", "clipboard.retention", "7d")
        _ = output("clip", "add", "--local", "mine")
        let status = output("sync", "status")
        #expect(status.contains("pending:    1 tab, 2 clips, 1 setting\n"), "\(status)")
        #expect(status.contains("local-only: 1 (1 clip added with --local)\n"), "\(status)")
        #expect(status.contains("activity:   idle\n"), "\(status)")
        _ = output("clip", "add", "--local", "also mine")
        #expect(output("sync", "status").contains("local-only: 2 (2 clips added with --local)\n"))
    }

    /// `sync enable ~` by a slip must not put a backend among the user's files.
    @Test func enableRefusesAFolderHoldingSomethingElse() throws {
        let folder = backend.path + "/home"
        mkdir(folder, 0o700)
        backend.write("home/notes.txt", "mine")
        mkdir(folder + "/Documents", 0o700)
        let (status, _, err) = device.inProcess(["sync", "enable", folder])
        #expect(status == 1, "\(err)")
        #expect(err.contains(folder) && err.contains("'Documents' and 1 more") && err.contains("nothing was changed"), "\(err)")
        #expect(try FileSystem.list(folder, includingHidden: true).sorted() == ["Documents", "notes.txt"])
        #expect(device.inProcess(["settings", "get", "sync.backend"]).1 == "")
        #expect(device.inProcess(["settings", "get", "sync.enabled"]).1 == "false\n")
    }

    @Test(arguments: ["missing", "empty", "shared by Syncthing", "a backend"])
    func enableTakesANewEmptyOrBackendFolder(_ kind: String) throws {
        let folder = backend.path + "/sync"
        switch kind {
        case "empty": mkdir(folder, 0o700)
        case "shared by Syncthing":
            mkdir(folder, 0o700)
            mkdir(folder + "/.stfolder", 0o700)
        case "a backend": #expect(Device().inProcess(["sync", "enable", folder]).0 == 0)
        default: break
        }
        let (status, _, err) = device.inProcess(["sync", "enable", folder])
        #expect(status == 0, "\(err)")
        #expect(FileSystem.exists(folder + "/zone.json"))
    }

    @Test func enableWarnsOnceAboutABackendOthersCanWrite() throws {
        let folder = backend.path + "/open"
        mkdir(folder, 0o700)
        chmod(folder, 0o777)
        let (status, _, err) = device.inProcess(["sync", "enable", folder])
        #expect(status == 0, "\(err)")
        #expect(err.split(separator: "\n").filter { $0.contains(folder) }.count == 1, "\(err)")
    }

    /// A second encrypted backend never discards the first one's key: enabling either again takes its key back,
    /// whether the device made the key (--encrypt) or was given it (--key -).
    @Test func anotherEncryptedBackendKeepsTheKeyOfTheFirst() throws {
        func succeed(_ device: Device, _ arguments: String..., stdin: String? = nil) -> String {
            let (status, out, err) = device.inProcess(arguments, stdin: stdin)
            #expect(status == 0, "\(arguments.joined(separator: " ")): \(err)")
            return out
        }
        let first = backend.path + "/first", second = backend.path + "/second"
        _ = succeed(device, "clip", "add", "in the first")
        _ = succeed(device, "sync", "enable", first, "--encrypt")
        let firstKey = succeed(device, "sync", "key", "show")
        _ = succeed(device, "sync", "enable", second, "--encrypt")
        let secondKey = succeed(device, "sync", "key", "show")
        #expect(firstKey != secondKey)
        for (path, key) in [(first, firstKey), (second, secondKey), (first, firstKey)] {
            _ = succeed(device, "sync", "enable", path)
            #expect(succeed(device, "sync", "key", "show") == key)
        }

        let other = Device()
        _ = succeed(other, "sync", "enable", first, "--key", "-", stdin: firstKey)
        _ = succeed(other, "sync", "enable", second, "--key", "-", stdin: secondKey)
        _ = succeed(other, "sync", "enable", first)
        #expect(succeed(other, "sync", "key", "show") == firstKey)
        #expect(succeed(other, "clip", "ls").contains("in the first"))
        _ = succeed(other, "sync", "enable", second)
        #expect(succeed(other, "sync", "key", "show") == secondKey)

        // The key follows the backend however it is chosen: a setting changed by hand too.
        for (path, key) in [(first, firstKey), (second, secondKey)] {
            _ = succeed(device, "settings", "set", "sync.backend", path)
            _ = succeed(device, "sync")
            #expect(succeed(device, "sync", "key", "show") == key)
        }
    }

    /// Before the first sync no backend has the record: adding and removing it leaves nothing to send.
    @Test func itemsAddedAndRemovedBeforeTheFirstSyncLeaveNothingPending() throws {
        let tab = output("tab", "new", "short-lived").trimmingNewline
        let clip = output("clip", "add", "short-lived too").trimmingNewline
        _ = output("tab", "rm", tab)
        _ = output("clip", "rm", clip)
        #expect(output("sync", "status").contains("pending:    0 tabs, 0 clips, 0 settings\n"))
        #expect(try PendingQueue(path: device.dataDir + "/sync/pending.log").changes().isEmpty)

        // Once synced, a removal is a change the backend must hear about.
        _ = output("sync", "enable", backend.path + "/b")
        let synced = output("tab", "new", "kept a while").trimmingNewline
        _ = output("sync")
        _ = output("tab", "rm", synced)
        #expect(output("sync", "status").contains("pending:    1 tab, 0 clips, 0 settings\n"))
    }

    /// New fields go at the end: the documented order is kept.
    @Test func statusJSONKeepsItsFieldOrder() throws {
        _ = output("clip", "add", "--local", "mine")
        let json = try JSONValue.parse(output("sync", "status", "--json"))
        guard case .object(let members) = json else { Issue.record("not an object: \(json)"); return }
        #expect(
            members.map(\.0) == [
                "enabled", "backend", "deviceID", "deviceName", "lastPush", "lastPull", "pending", "failed",
                "localOnly", "lastError", "localOnlyReasons", "syncing", "quarantined", "remote", "waiting",
            ])
        #expect(json["localOnly"] == .integer(1))
        #expect(json["localOnlyReasons"]?["local"] == .integer(1))
        #expect(json["localOnlyReasons"]?["fileBacked"] == .integer(0))
        #expect(json["syncing"] == .null)
    }

    /// A sync holding the lock does not make status wait: it reads what is
    /// persisted and says who is syncing since when.
    @Test func statusDoesNotWaitForARunningSync() throws {
        _ = output("clip", "add", "--local", "mine")
        _ = output("tab", "new", "pending tab")
        let lock = try #require(try FileLock(path: device.dataDir + "/lock", mode: .exclusive, timeout: 1))
        let since: Milliseconds = 1_800_000_000_000
        try FileSystem.writeAtomically(
            DataDirectoryLayout(root: device.dataDir).runningSync, Array("{\"pid\":\(getpid()),\"since\":\(since)}".utf8))

        // Were it to wait for the lock, it would give up after 2 s with 75.
        let result = try device.run("sync", "status", environment: ["ITSYPAD_LOCK_TIMEOUT": "2"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("activity:   syncing (pid \(getpid()), since \(Time.iso8601(since)))\n"), "\(result.stdout)")
        #expect(result.stdout.contains("pending:    1 tab, 0 clips, 0 settings\n"))
        #expect(result.stdout.contains("local-only: 1 (1 clip added with --local)\n"))
        let json = try JSONValue.parse(try device.run("sync", "status", "--json", environment: ["ITSYPAD_LOCK_TIMEOUT": "2"]).stdout)
        #expect(json["syncing"]?["pid"] == .integer(Int64(getpid())))
        #expect(json["syncing"]?["since"] == .string(Time.iso8601(since)))
        _ = lock
    }

    /// The note of a sync killed with -9 names a dead process: status no longer believes it.
    @Test func aStaleSyncNoteIsIgnored() throws {
        _ = output("clip", "add", "x")
        let exited = try Process.shell("echo $$")
        let deadPID = try #require(Int32(exited.stdout.trimmingNewline))
        try FileSystem.writeAtomically(
            DataDirectoryLayout(root: device.dataDir).runningSync, Array("{\"pid\":\(deadPID),\"since\":1}".utf8))
        #expect(output("sync", "status").contains("activity:   idle\n"))
        // With the lock held by something that is not a sync, status waits as every command does.
        let lock = try #require(try FileLock(path: device.dataDir + "/lock", mode: .exclusive, timeout: 1))
        #expect(try device.run("sync", "status", environment: ["ITSYPAD_LOCK_TIMEOUT": "0.2"]).status == 75)
        _ = lock
    }

    @Test func aSyncLeavesNoNoteBehind() throws {
        _ = output("sync", "enable", backend.path + "/b")
        _ = output("clip", "add", "x")
        _ = output("sync")
        #expect(!FileSystem.exists(DataDirectoryLayout(root: device.dataDir).runningSync))
    }

    /// On a terminal the progress line is cleared before the summary is printed.
    @Test func theProgressLineIsClearedBeforeTheSummary() throws {
        _ = output("sync", "enable", backend.path + "/b")
        _ = output("clip", "add", "x")
        // One buffer for both streams records exactly what a terminal would receive, in order.
        let terminal = OutputBuffer()
        let context = Context(
            environment: ["ITSYPAD_DATA_DIR": device.dataDir], stdinIsTerminal: true, stdoutIsTerminal: true,
            stderrIsTerminal: true, standardOutput: terminal, standardError: terminal, readInput: { [] })
        #expect(Itsypad.run(["sync"], context: context) == 0)
        #expect(terminal.text.contains("\r\u{1B}[Ksending: 1 of 1 records"), "\(terminal.text)")
        #expect(TerminalScreen.render(terminal.text) == ["pulled 0, pushed 1, resolved 0 conflicts", ""])
    }

    /// The same through a real pseudo-terminal, where stdout and stderr are separate descriptors.
    @Test(.needs(["script"]))
    func theProgressLineIsClearedOnARealTerminal() throws {
        _ = output("sync", "enable", backend.path + "/b")
        _ = output("clip", "add", "x")
        var environment = Process.baseEnvironment
        environment["ITSYPAD_DATA_DIR"] = device.dataDir
        environment["TERM"] = "dumb"
        let result = try Process.run("script", ["-qec", "'\(Process.itsypad)' sync", "/dev/null"], environment: environment)
        #expect(result.status == 0, "\(result.stdout)")
        let screen = TerminalScreen.render(result.stdout.replacing("\r\n", with: "\n"))
        #expect(screen.filter { !$0.isEmpty } == ["pulled 0, pushed 1, resolved 0 conflicts"], "\(result.stdout.debugDescription)")
    }
}

/// What a terminal shows for text with carriage returns and "erase to end of line".
enum TerminalScreen {
    static func render(_ text: String) -> [String] {
        var lines: [[Character]] = [[]]
        var column = 0
        var rest = Substring(text)
        while let character = rest.first {
            if rest.hasPrefix("\u{1B}[K") {
                lines[lines.count - 1].removeSubrange(min(column, lines[lines.count - 1].count)...)
                rest = rest.dropFirst(3)
                continue
            }
            rest = rest.dropFirst()
            switch character {
            case "\r": column = 0
            case "\n": lines.append([]); column = 0
            default:
                if column < lines[lines.count - 1].count {
                    lines[lines.count - 1][column] = character
                } else {
                    lines[lines.count - 1].append(character)
                }
                column += 1
            }
        }
        return lines.map { String($0) }
    }
}

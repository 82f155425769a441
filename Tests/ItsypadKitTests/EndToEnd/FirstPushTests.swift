import Testing

@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport
@testable import ItsypadSync

#if canImport(Glibc)
import Glibc
#endif

/// The sending side of a first sync of a large history, through the binary and a backend directory.
@Suite("End to end: a first push", .needs(["strace"]))
struct FirstPushTests {
    /// A device that enabled a new backend while its history was empty, then imported `count`
    /// clips (`clip 0` …): its next sync is a first push of them all. Its backend is `backend(of:)`.
    static func sender(clips count: Int) -> Device {
        sender(importing: "clips", count: count) { index in
            [("text", .string("clip \(index)")), ("timestamp", .string(Time.iso8601(1_767_400_000_000 + Int64(index))))]
        }
    }

    /// The same with `count` tabs (`tab 0` …).
    static func sender(tabs count: Int) -> Device {
        sender(importing: "tabs", count: count, fields: tab)
    }

    /// The fields of the imported tab `index`.
    static func tab(_ index: Int) -> [(String, JSONValue)] {
        [("content", .string("tab \(index)")), ("lastModified", .string(Time.iso8601(1_767_400_000_000 + Int64(index))))]
    }

    /// A sender (see `sender(clips:)`) that imported `count` items of an export's `section`, each
    /// with a new id and the `fields` of its index.
    private static func sender(importing section: String, count: Int, fields: (Int) -> [(String, JSONValue)]) -> Device {
        let device = Device()
        #expect(device.inProcess(["sync", "enable", backend(of: device)]).0 == 0)
        #expect(device.inProcess(["settings", "set", "clipboard.maxEntries", "100000"]).0 == 0)
        importing(section, count: count, into: device, fields: fields)
        return device
    }

    /// Imports into `device` `count` items of an export's `section`, each with a new id and the `fields` of its index.
    static func importing(_ section: String, count: Int, into device: Device, fields: (Int) -> [(String, JSONValue)]) {
        let items = (0..<count).map { index in JSONValue.object([("id", .string(Identifier.make()))] + fields(index)) }
        let document = JSONValue.object([("format", .string("itsypad-export")), ("version", .integer(1)), (section, .array(items))])
        #expect(device.inProcess(["import", "-"], stdin: document.serialized()).0 == 0)
    }

    static func backend(of device: Device) -> String { device.directory.path + "/backend" }

    /// A copy of a sender's data directory and backend, its settings naming the copied backend.
    static func copy(dataDir: String, backend sent: String) throws -> Device {
        let copy = Device()
        for (from, to) in [(dataDir, copy.dataDir), (sent, backend(of: copy))] {
            let copied = try Process.run("/bin/cp", ["-a", from, to])
            #expect(copied.status == 0, "\(copied.stderr)")
        }
        #expect(copy.inProcess(["settings", "set", "sync.backend", backend(of: copy)]).0 == 0)
        return copy
    }

    /// Calls of each system call a run of `arguments` made, counted by `strace -c -f` (with `failed`,
    /// the calls that failed).
    static func systemCalls(_ device: Device, _ arguments: [String], failed: Bool = false) throws -> [String: Int] {
        let scratch = TemporaryDirectory()
        let summary = scratch.path + "/calls"
        let result = try device.runArguments(["-f", "-c", "-o", summary, Process.itsypad] + arguments, program: "/usr/bin/strace")
        #expect(result.status == 0, "\(arguments) failed: \(result.stderr)")
        var calls: [String: Int] = [:]
        for line in String(decoding: try FileSystem.read(summary) ?? [], as: UTF8.self).split(separator: "\n") {
            let columns = line.split(separator: " ")
            // % time, seconds, usecs/call, calls, [errors,] syscall.
            guard columns.count >= 5, let name = columns.last, let count = Int(columns[3]) else { continue }
            calls[String(name)] = failed ? (columns.count == 6 ? Int(columns[4]) ?? 0 : 0) : count
        }
        return calls
    }

    @Test(
        "a first push makes its record files durable a batch at a time, with a few opens a record and no folder listed")
    func systemCallsPerRecord() throws {
        // Two batches: one of the backend's 2,000, and a smaller one.
        let records = 2500
        let sender = Self.sender(clips: records)
        let calls = try Self.systemCalls(sender, ["sync"])
        let syncs = ["fsync", "fdatasync", "syncfs"].reduce(0) { $0 + calls[$1, default: 0] }
        // Per batch a journal line, device.json and the engine's own files: a few dozen in all, not two a record.
        #expect(syncs < records / 20, "\(syncs) syncs for \(records) records: \(calls)")
        // Each record file: its temporary file, created once, and a few opens of the engine's own files per batch.
        #expect(calls["openat", default: 0] < records * 4, "\(calls["openat", default: 0]) opens for \(records) records: \(calls)")
        // The fetch after the push lists no record folder (it passes over this device's own
        // changes; read back, a page of 2,000 is more than a page lists folders for): the 256 of
        // clips take two reads each.
        #expect(calls["getdents64", default: 0] < 256, "\(calls["getdents64", default: 0]) directory reads: \(calls)")
    }

    /// Bytes read from each file (its path) by a run of `arguments`, from `strace -y`'s read and pread64 calls.
    static func bytesRead(_ device: Device, _ arguments: [String]) throws -> [String: Int] {
        try perFile(device, arguments, calls: "read,pread64") { $0 }
    }

    /// What `calls` (strace's `trace=` list) did to each file or directory (its path) in a run of
    /// `arguments`, summed: `value` of each call's result.
    static func perFile(_ device: Device, _ arguments: [String], calls: String, _ value: (Int) -> Int) throws -> [String: Int] {
        let scratch = TemporaryDirectory()
        let trace = scratch.path + "/trace"
        let result = try device.runArguments(
            ["-f", "-qq", "-y", "-e", "trace=" + calls, "-o", trace, Process.itsypad] + arguments, program: "/usr/bin/strace")
        #expect(result.status == 0, "\(arguments) failed: \(result.stderr)")
        var sums: [String: Int] = [:]
        for line in String(decoding: try FileSystem.read(trace) ?? [], as: UTF8.self).split(separator: "\n") {
            // `PID pread64(FD</path>, "…"…, COUNT, OFFSET) = BYTES`
            guard let open = line.firstIndex(of: "<"), let close = line[open...].firstIndex(of: ">"),
                let last = line.split(separator: " ").last, let returned = Int(last)
            else { continue }
            sums[String(line[line.index(after: open)..<close]), default: 0] += value(returned)
        }
        return sums
    }

    @Test("a first push reads the clip index and the sync ledger about once, not once a batch")
    func readsTheHistoryOnce() throws {
        // Ten batches of the backend's 2,000.
        let records = 20_000
        let sender = Self.sender(clips: records)
        let read = try Self.bytesRead(sender, ["sync"])
        let layout = DataDirectoryLayout(root: sender.dataDir)
        for (name, path) in [("clip index", layout.clips + "/index"), ("sync ledger", layout.clipLedger)] {
            let size = FileTree(root: sender.dataDir).fileSize(path) ?? 0
            let bytes = read.first { $0.key.hasSuffix(String(path.dropFirst(sender.dataDir.count))) }?.value ?? 0
            // The push reads each about once, the pull of its own changes after it and a walk over the
            // history once more. Read once a batch, they were read over 40 and 10 times over.
            #expect(size > 0 && bytes < 5 * size, "the \(name) of \(size) bytes was read for \(bytes)")
        }
    }

    /// The peak memory (KiB) of the pull after a first push of `count` clips, which fetches the push's own versions back.
    static func pullAfterPush(clips count: Int) throws -> Int {
        let sender = Self.sender(clips: count)
        #expect(try sender.run("--quiet", "sync", "push").status == 0)
        let pull = try ImportSafetyTests.peakMemory(sender, ["sync", "pull"])
        #expect(pull.result.status == 0, "\(pull.result.stderr)")
        #expect(try sender.run("sync", "status").stdout.contains(" 0 clips,"))
        return pull.kib
    }

    @Test(
        "the pull after a first push of 60,000 clips holds what it holds after a push of 12,000", .needs(["time"]))
    func pullAfterPushHoldsNothingARecord() throws {
        // Both fetch pages of 2,000 from full journal segments of about 6,000 changes.
        let few = try Self.pullAfterPush(clips: 12_000)
        let many = try Self.pullAfterPush(clips: 60_000)
        // It kept a key of every record it fetched: 11 MiB more here, more than 80 MiB for 1,000,000.
        #expect(many - few < 3 << 9, "the pull after a push of 12,000: \(few) KiB, of 60,000: \(many) KiB")
    }

    @Test(
        "a first push of tabs reads the tabs of a batch together, stores their tags once a batch, and sets no file's mode twice")
    func tabSystemCallsPerRecord() throws {
        let records = 2500
        let sender = Self.sender(tabs: records)
        let calls = try Self.systemCalls(sender, ["sync"])
        // Each tab: its file read to send it (its tag then goes to sync/tab-tags: no tab file is
        // written); its record file; and a few opens a batch. Read again and rewritten with its tag, it was
        // three opens more. The fetch after the push
        // reading every tab's file again made it more than seven; each lookup walking from the data directory, twelve.
        #expect(calls["openat", default: 0] < records * 7, "\(calls["openat", default: 0]) opens for \(records) tabs: \(calls)")
        #expect(calls["renameat", default: 0] < records * 2 + 100, "\(calls["renameat", default: 0]) renames for \(records) tabs: \(calls)")
        // Files made with their mode already right (the umask leaves the owner's bits alone) are not changed again.
        #expect(calls["fchmod", default: 0] < 50, "\(calls["fchmod", default: 0]) changes of mode for \(records) tabs: \(calls)")
        // Two batches, each: its record files (a syncfs before their renames, one after); the tags of each
        // step go to sync/tab-tags with an fdatasync. With the tab files rewritten, one a `durableStepSize`: 9.
        #expect(calls["syncfs", default: 0] <= 10, "\(calls["syncfs", default: 0]) syncfs for \(records) tabs: \(calls)")
    }

    /// A device that imported tabs, then enabled a new backend (as `sync-bench.sh` sends them), and
    /// one that enabled it first: neither looks for a record file of its own that it never wrote (a
    /// first push made one failed open a record), from their journals' digests.
    @Test("a first push of tabs looks for no record file of its own", arguments: [true, false])
    func noOwnRecordFileLookedFor(importedFirst: Bool) throws {
        let records = 2500
        let sender: Device
        if importedFirst {
            sender = Device()
            Self.importing("tabs", count: records, into: sender, fields: Self.tab)
        } else {
            sender = Self.sender(tabs: records)
        }
        let arguments = importedFirst ? ["sync", "enable", Self.backend(of: sender)] : ["sync"]
        let lines = try Self.traced(sender, arguments, strace: ["-y", "-s", "0", "-e", "trace=openat"])
        let reads = lines.filter { $0.contains("/records/") && $0.contains("O_RDONLY") && !$0.contains("O_DIRECTORY") }
        let created = lines.filter { $0.contains("/records/") && $0.contains("O_CREAT") }
        #expect(created.count >= records, "\(created.count) record files created for \(records) tabs: the trace missed them")
        // Each record's file was looked for before it was written: 2,500.
        #expect(reads.count < 50, "\(reads.count) record files looked for: \(reads.prefix(3))")
        #expect(try sender.run("sync", "status").stdout.contains(" 0 tabs,"))
    }

    /// A first push reads each tab's file once, to send it: a tab queued by nothing since it was
    /// sent is accepted from what was sent (files opened for reading in `tabs/`, `strace -f -y`).
    @Test("a first push reads each tab's file once")
    func tabFilesReadOnce() throws {
        let records = 1000
        let sender = Self.sender(tabs: records)
        let reads = try Self.traced(sender, ["sync"], strace: ["-y", "-s", "64", "-e", "trace=openat"]).filter {
            $0.contains("/tabs>, \"") && $0.contains(".json\"") && $0.contains("O_RDONLY") && !$0.contains("O_CREAT")
        }
        #expect(reads.count >= records, "\(reads.count) tab files read for \(records) tabs: the trace missed them")
        // Before, each tab's file was read again to store its tag: two reads a tab.
        #expect(reads.count < records + records / 10, "\(reads.count) tab files read for \(records) tabs")
    }

    /// The lines `strace -f` with `options` wrote of a run of `arguments`, which must succeed.
    static func traced(_ device: Device, _ arguments: [String], strace options: [String]) throws -> [Substring] {
        let scratch = TemporaryDirectory()
        let trace = scratch.path + "/trace"
        let result = try device.runArguments(["-f"] + options + ["-o", trace, Process.itsypad] + arguments, program: "/usr/bin/strace")
        #expect(result.status == 0, "\(arguments) failed: \(result.stderr)")
        return String(decoding: try FileSystem.read(trace) ?? [], as: UTF8.self).split(separator: "\n")
    }

    /// Directories of `backend` a run of `arguments` opened, and renames in it, from `strace -f -y`.
    static func backendWalks(_ device: Device, _ arguments: [String], backend: String) throws -> (directoryOpens: Int, renames: Int) {
        var walks = (directoryOpens: 0, renames: 0)
        for line in try traced(device, arguments, strace: ["-y", "-s", "4096", "-e", "trace=openat,renameat"]) where line.contains(backend)
        {
            if line.contains("openat("), line.contains("O_DIRECTORY") { walks.directoryOpens += 1 }
            if line.contains("renameat(") { walks.renames += 1 }
        }
        return walks
    }

    @Test("a first push of tabs opens each record folder once a batch and creates its record files in place")
    func backendDirectoryOpensPerRecord() throws {
        let records = 2500
        let sender = Self.sender(tabs: records)
        let walks = try Self.backendWalks(sender, ["sync"], backend: Self.backend(of: sender))
        // Two batches, each opening the 256 folders of tabs once, and a few walks a batch to the
        // journal and device.json: about 0.4 a tab. Each record folder walked to from the root for
        // every read and write, and to the tombstones' folder for each tab, it was about 1.5.
        #expect(walks.directoryOpens < records / 2, "\(walks.directoryOpens) directory opens for \(records) tabs")
        // The journal's and device.json's replacements: a few a batch. Each record file renamed into place, it was 2,500 more.
        #expect(walks.renames < 50, "\(walks.renames) renames for \(records) tabs")
    }

    @Test("a first push writes the engine's state only when it changed, not once a batch")
    func stateSavedOnlyWhenChanged() throws {
        let sender = Self.sender(tabs: 2500)
        // What each temporary file of `sync/` received, and the state each rename of one made `state.json`.
        var written: [Substring: [Substring]] = [:]
        var states: [[Substring]] = []
        let sync = "<" + DataDirectoryLayout(root: sender.dataDir).sync
        let trace = try Self.traced(sender, ["sync"], strace: ["-qq", "-y", "-s", "65536", "-e", "trace=write,renameat"])
        for line in trace {
            guard let open = line.firstIndex(of: "<"), let close = line[open...].firstIndex(of: ">") else { continue }
            let path = line[open..<close]
            if line.contains(" write("), path.hasPrefix(sync + "/.tmp-") {
                written[path, default: []].append(line[close...])
            } else if line.contains(" renameat("), path == sync, line.hasSuffix("\"state.json\") = 0") {
                // `PID renameat(FD</…/sync>, ".tmp-…", FD</…/sync>, "state.json") = 0`
                let name = line[close...].split(separator: "\"")[1]
                states.append(written[path + "/" + name] ?? [])
            }
        }
        // Its zone, its token, the end of the push and of the pull: a few. Saved again after each
        // batch though unchanged, the file was rewritten (two fsyncs) for nothing.
        #expect(states.count >= 3, "\(states.count) writes of state.json: the trace missed them")
        let repeated = zip(states, states.dropFirst()).filter { $0.0 == $0.1 }.count
        #expect(repeated == 0, "\(repeated) of \(states.count) writes of state.json repeated the one before")
    }

    /// A first push makes each batch durable with a few calls, whatever its size: its journal line,
    /// its record files (a `syncfs`), and its acceptance while no command waits (an `fdatasync` of
    /// the tags' log and of the queue's); `device.json` records how far the record files go once
    /// for the push, not once a batch. From `strace -f -y` of the durability calls and renames.
    @Test("a first push of tabs makes a few durability calls a batch, not one a step, and device.json once")
    func durabilityCallsPerBatch() throws {
        let records = 2500
        let sender = Self.sender(tabs: records)
        let lines = try Self.traced(sender, ["sync"], strace: ["-qq", "-y", "-e", "trace=fsync,fdatasync,syncfs,renameat"])
        let calls = lines.filter { $0.contains("fsync(") || $0.contains("fdatasync(") || $0.contains("syncfs(") }
        let sync = DataDirectoryLayout(root: sender.dataDir).sync
        // A first push creates its record files: one syncfs a batch, none for anything else here.
        let batches = calls.filter { $0.contains("syncfs(") }.count
        let logSyncs = calls.filter { line in
            line.contains("fdatasync(") && [sync + "/tab-tags.log>", sync + "/pending.log>"].contains { line.contains($0) }
        }
        let deviceFiles = lines.filter { $0.contains("renameat(") && $0.contains("\"device.json\")") }
        #expect(batches >= 2, "\(batches) batches for \(records) tabs: the trace missed them")
        // Made durable a `durableStepSize` (500) at a time, it was 12 for the two batches (4 now).
        #expect(logSyncs.count <= 2 * batches, "\(logSyncs.count) syncs of the tags' and the queue's logs for \(batches) batches")
        // The push's, and three as the sync ends (the acknowledgement, the collection, the compaction);
        // once a batch instead of the push's, it was five.
        #expect(deviceFiles.count <= 4, "device.json replaced \(deviceFiles.count) times for \(batches) batches")
        // In all: 41 now; 51 before (main 700b0e9's binary, the same two batches).
        #expect(calls.count <= 45, "\(calls.count) durability calls for \(records) tabs in \(batches) batches")
        #expect(try sender.run("sync", "status").stdout.contains(" 0 tabs,"))
    }

    /// The most system calls that `counted` picks out a first push of 2,500 tabs made while holding the
    /// data directory's lock between two looks for a command waiting for it (tries of `lock-waiters`),
    /// in `strace -f -y`'s order of its opens, renames and locks, and how many looks it made.
    static func mostBetweenWaiterChecks(
        of device: Device = sender(tabs: 2500), _ arguments: [String] = ["sync"], counting counted: (Substring) -> Bool
    ) throws -> (most: Int, checks: Int) {
        var since = 0, most = 0, checks = 0
        for line in try traced(device, arguments, strace: ["-y", "-s", "0", "-e", "trace=openat,renameat,flock"]) {
            if line.contains("flock("), line.contains("/lock-waiters>") {
                checks += 1
                since = 0
            } else if line.contains("flock("), line.contains("/lock>"), line.contains("LOCK_UN") {
                since = 0
            } else if counted(line) {
                since += 1
                most = max(most, since)
            }
        }
        return (most, checks)
    }

    /// A first push writes no tab file: the tabs' new tags go to the tag store (`sync/tab-tags`), for
    /// the stamps of the files sent. Each was rewritten into the stage (`.tmp-tabs/`) and renamed
    /// into `tabs/`: a create and a rename a tab.
    @Test("a first push of tabs creates and renames no file in tabs/ or its stage")
    func tabFilesNotRewritten() throws {
        let records = 1000
        let sender = Self.sender(tabs: records)
        let lines = try Self.traced(sender, ["sync"], strace: ["-y", "-s", "64", "-e", "trace=openat,renameat"])
        let stage = "/\(FileSystem.temporaryPrefix)tabs>"
        let created = lines.filter { $0.contains("openat(") && ($0.contains("/tabs>") || $0.contains(stage)) && $0.contains("O_CREAT") }
        let renamed = lines.filter { $0.contains("renameat(") && ($0.contains("/tabs>") || $0.contains(stage)) }
        #expect(created.isEmpty, "\(created.count) tab files created for \(records) tabs: \(created.prefix(3))")
        #expect(renamed.isEmpty, "\(renamed.count) tab files renamed for \(records) tabs: \(renamed.prefix(3))")
        let read = lines.filter { $0.contains("/tabs>, \"") && $0.contains(".json\"") && !$0.contains("O_CREAT") }
        #expect(read.count >= records, "\(read.count) tab files read for \(records) tabs: the trace missed them")
        // The tags are there: nothing left to send, and the pull after the push took its own versions as they were.
        #expect(try sender.run("sync", "status").stdout.contains(" 0 tabs,"))
        let tabs = try DataStore(path: sender.dataDir, lockTimeout: 1).tabs.all()
        #expect(tabs.count == records && tabs.allSatisfy { $0.sync != nil && !$0.hasUnsyncedChanges })
    }

    /// After a first push, reading one tab finds its tag in the table by search: the table is mapped,
    /// not read through, and no log is left to read.
    @Test("tab show after a first push reads the tag table's keyed form, not every entry")
    func tabShowReadsTheKeyedTable() throws {
        let records = 2500
        let sender = Self.sender(tabs: records)
        #expect(try sender.run("--quiet", "sync").status == 0)
        let layout = DataDirectoryLayout(root: sender.dataDir)
        let tree = FileTree(root: sender.dataDir)
        #expect(!tree.exists(layout.tabTagsLog), "the push left its log of tags unmerged")
        let tableSize = tree.fileSize(layout.tabTags) ?? 0
        #expect(tableSize > 100_000, "a table of \(tableSize) bytes for \(records) tabs")
        let tab = try #require(try DataStore(path: sender.dataDir, lockTimeout: 1).tabs.all().first)
        let lines = try Self.traced(sender, ["tab", "show", tab.id], strace: ["-y", "-s", "0", "-e", "trace=openat,read,pread64,mmap"])
        #expect(lines.contains { $0.contains("openat(") && $0.contains("/sync>, \"tab-tags\"") && !$0.contains("ENOENT") })
        var tableRead = 0
        for line in lines where line.contains("/sync/tab-tags>") && (line.contains("read(") || line.contains("read64(")) {
            tableRead += Int(line.split(separator: " ").last ?? "") ?? 0
        }
        #expect(tableRead < 4096, "tab show read \(tableRead) bytes of a table of \(tableSize)")
    }

    /// The same for the tab files read, to build a batch to send and to accept what the backend
    /// stored: a command waiting while a batch of 2,000 is built waits for at most a step of them.
    @Test("a first push asks whether a command waits after every step of tab files it reads")
    func tabsReadBetweenWaiterChecks() throws {
        let (read, checks) = try Self.mostBetweenWaiterChecks { line in
            line.contains("openat(") && line.contains("/tabs>, \"") && !line.contains("O_CREAT")
        }
        #expect(checks > 0, "the sync never asked whether a command waits")
        #expect(read > 0, "no tab file read")
        #expect(read <= SyncEngine.stepSize, "\(read) tab files read without asking whether a command waits")
    }

    /// A batch's tab files are read with the data directory's lock let go: a `clip add` during a first
    /// push waits for none of those reads (tab files opened for reading while the sync holds the lock,
    /// from `strace -f -y` of its opens and locks; before, every one of the 2,500).
    @Test("a first push reads its tab files with the data directory's lock let go")
    func tabsReadWithoutTheLock() throws {
        let records = 2500
        let sender = Self.sender(tabs: records)
        let lock = "\(sender.dataDir)/lock>"
        var held = false, readHolding = 0, read = 0
        for line in try Self.traced(sender, ["sync"], strace: ["-y", "-s", "64", "-e", "trace=openat,flock"]) {
            if line.contains("flock("), line.contains(lock) {
                if line.contains("LOCK_UN") {
                    held = false
                } else if line.contains("LOCK_EX"), line.hasSuffix("= 0") {
                    held = true
                }
            } else if line.contains("openat("), line.contains("/tabs>, \""), line.contains(".json\""), !line.contains("O_CREAT") {
                read += 1
                if held { readHolding += 1 }
            }
        }
        #expect(read >= records, "\(read) tab files read for \(records) tabs: the trace missed them")
        // What a batch's groups miss is read one by one with the lock held (none here).
        #expect(readHolding <= 10, "\(readHolding) of \(read) tab files read holding the lock")
    }

    /// The tag table's rewrite (the log of accepted tags merged into it, during the push and at its end)
    /// is a hold of its own: a command waiting for the lock has it before, so it waits for the
    /// merge or for a step's acceptance, not both; nor for the merge and the queue's rewrite at the
    /// push's end. From `strace -f -y`: no stretch between two looks for a waiter (or a release of
    /// the lock) that renames the table into place also makes the tags' log durable or renames
    /// the queue's log.
    @Test("a first push rewrites the tag table in a hold of its own")
    func tagTableMergedInAHoldOfItsOwn() throws {
        let sender = Self.sender(tabs: 2500)
        let lock = "\(sender.dataDir)/lock>"
        var stretch: [Substring] = [], merges = 0
        var mixed: [[Substring]] = []
        func endStretch() {
            if stretch.contains(where: { $0.contains("renameat(") && $0.hasSuffix("\"tab-tags\")") }) {
                merges += 1
                if stretch.contains(where: { $0.contains("fdatasync(") || $0.contains("\"pending.log\")") }) { mixed.append(stretch) }
            }
            stretch = []
        }
        let trace = try Self.traced(sender, ["sync"], strace: ["-y", "-s", "64", "-e", "trace=renameat,flock,fdatasync"])
        for line in trace {
            if line.contains("flock("), line.contains("/lock-waiters>") || (line.contains(lock) && line.contains("LOCK_UN")) {
                endStretch()
            } else if line.contains("renameat(") || (line.contains("fdatasync(") && line.contains("/sync/tab-tags.log>")) {
                // strace's line ends with the result: keep the call alone.
                stretch.append(line.split(separator: ")").first.map { $0 + ")" } ?? line)
            }
        }
        endStretch()
        #expect(merges >= 2, "\(merges) merges of the tag table traced: expected one during the push and one at its end")
        #expect(mixed.isEmpty, "\(mixed.count) merges shared their hold: \(mixed.prefix(2))")
    }

    /// The same on the receiving side: a device holding a tab of its own (so that the fetched ones
    /// are put in place one rename each) joins a backend of 2,500 tabs: it writes at most a step
    /// of them into the stage, and puts at most `durableStepSize` in place, between two looks for
    /// a waiting command (a page of 2,000 was written and put in place at once).
    @Test("a joining first sync asks whether a command waits after every step of tab files it writes", arguments: [true, false])
    func tabsPulledBetweenWaiterChecks(countingRenames: Bool) throws {
        let sender = Self.sender(tabs: 2500)
        #expect(sender.inProcess(["sync"]).0 == 0)
        let stage = "/\(FileSystem.temporaryPrefix)tabs>"
        let joiner = Device()
        #expect(joiner.inProcess(["tab", "new", "--name", "own", "a tab of its own"]).0 == 0)
        let (most, checks) = try Self.mostBetweenWaiterChecks(of: joiner, ["sync", "enable", Self.backend(of: sender)]) { line in
            countingRenames
                ? line.contains("renameat(") && line.contains(stage)
                : line.contains("openat(") && line.contains(stage) && line.contains("O_CREAT")
        }
        #expect(checks > 0, "the sync never asked whether a command waits")
        #expect(most > 0, "no tab file written through the stage")
        let bound = countingRenames ? SyncEngine.durableStepSize : SyncEngine.stepSize
        #expect(most <= bound, "\(most) tab files \(countingRenames ? "put in place" : "written") without asking whether a command waits")
    }

    /// Bytes a run of `arguments` read from and wrote to the journal segments of its backend, from
    /// `strace -f -y` (each call's descriptor names its file; a call another thread interrupted
    /// is joined with its resumption).
    static func journalTraffic(_ device: Device, _ arguments: [String]) throws -> (read: Int, written: Int) {
        var unfinished: [Substring: Substring] = [:]
        var traffic = (read: 0, written: 0)
        for line in try traced(device, arguments, strace: ["-y", "-s", "0", "-e", "trace=read,pread64,write,pwrite64"]) {
            guard let space = line.firstIndex(of: " ") else { continue }
            let pid = line[..<space]
            var call = line[line.index(after: space)...].drop { $0 == " " }
            if call.hasSuffix("<unfinished ...>") {
                unfinished[pid] = call
                continue
            }
            if call.hasPrefix("<..."), let start = unfinished.removeValue(forKey: pid),
                let resumed = call.firstRange(of: "resumed>")
            {
                call = Substring(start.dropLast("<unfinished ...>".count) + call[resumed.upperBound...])
            }
            guard let open = call.firstIndex(of: "("), call[open...].contains("/journal/"),
                let equals = call.ranges(of: ") = ").last, let bytes = Int(call[equals.upperBound...])
            else { continue }
            switch call[..<open] {
            case "read", "pread64": traffic.read += bytes
            case "write", "pwrite64": traffic.written += bytes
            default: break
            }
        }
        return traffic
    }

    /// Of tabs, and of clips: 12,500, more than the 12,000 changes whose versions the fetch after
    /// a push once held in memory to return them.
    @Test(
        "a first push reads back none of the journal lines it wrote", arguments: ["tabs", "clips"])
    func journalReadBack(kind: String) throws {
        let sender = kind == "tabs" ? Self.sender(tabs: 2500) : Self.sender(clips: 12_500)
        let traffic = try Self.journalTraffic(sender, ["sync"])
        #expect(traffic.written > 500_000, "\(traffic)")
        // The fetch after the push passes over the lines this process committed and the engine
        // recorded: what is read is the journal's end before the push. Reading them back made it
        // 1.2 times what was written; reading each line back after its commit, and the whole
        // journal again to sweep tombstones and to compact, 4.2.
        #expect(Double(traffic.read) < Double(traffic.written) * 0.05, "\(traffic)")
    }

    /// Where a run is killed: at the `nth` call of `call`.
    struct KillPoint: CustomStringConvertible, Sendable {
        let call: String
        let nth: Int
        var description: String { "\(call)#\(nth)" }
    }

    /// The system calls a kill lands on: those that write, rename, open, sync, and the random
    /// draws of temporary names, so that kills land in every step of a batch (its record files,
    /// their syncs, its journal line, its acceptance in the data directory).
    static let killedCalls = [
        "openat", "write", "pwrite64", "renameat", "fsync", "fdatasync", "syncfs", "unlinkat", "mkdirat", "ftruncate", "getrandom",
    ]

    /// A copy of a sender (see `sender`) whose first push is killed at `point`, then run again: the
    /// run after it exits 0 with nothing left to send, and a device joining gets every clip exactly
    /// once. Returns whether the kill landed (the push may end before the `nth` call).
    static func killedPush(dataDir: String, backend sent: String, clips: Int, tabs: Bool = false, at point: KillPoint) throws -> Bool {
        let device = try copy(dataDir: dataDir, backend: sent)
        let killed = try device.runArguments(
            [
                // Not --seccomp-bpf: strace 6.1 then never injects at the N-th call.
                "-f", "-qq", "-o", "/dev/null", "-e", "trace=\(point.call)", "-e",
                "inject=\(point.call):signal=KILL:when=\(point.nth)", Process.itsypad, "sync",
            ], program: "/usr/bin/strace")
        let (status, _, err) = device.inProcess(["sync"])
        #expect(status == 0, "killed at \(point) (exit \(killed.status)), the next sync failed: \(err)")
        #expect(try DataStore(path: device.dataDir, lockTimeout: 1).pending().changes().isEmpty, "killed at \(point): changes left unsent")
        let joining = Device()
        let (joined, _, joinErr) = joining.inProcess(["sync", "enable", backend(of: device)])
        #expect(joined == 0, "killed at \(point): joining failed: \(joinErr)")
        if tabs {
            // Every tab once on both devices, each holding the tag of the version it has: nothing to send again.
            for (name, dataDir) in [("the killed device", device.dataDir), ("the joining device", joining.dataDir)] {
                let held = try DataStore(path: dataDir, lockTimeout: 1).tabs.all()
                #expect(
                    held.map(\.content).sorted() == (0..<clips).map { "tab \($0)" }.sorted(),
                    "killed at \(point): \(name) has \(held.count) of \(clips) tabs")
                #expect(held.allSatisfy { $0.sync != nil && !$0.hasUnsyncedChanges }, "killed at \(point): \(name) has unsynced tabs")
            }
            #expect(device.inProcess(["sync"]).0 == 0)
            #expect(try DataStore(path: device.dataDir, lockTimeout: 1).pending().changes().isEmpty, "killed at \(point): sent again")
        } else {
            let listed = try JSONValue.parse(joining.inProcess(["clip", "ls", "--json"]).1).arrayValue ?? []
            let texts = listed.compactMap { $0["text"]?.stringValue }.sorted()
            #expect(
                texts == (0..<clips).map { "clip \($0)" }.sorted(),
                "killed at \(point): the joining device has \(texts.count) of \(clips) clips")
        }
        return killed.status == 128 + SIGKILL
    }

    /// A first push killed at random points, each on its own copy of one sender, two at a time:
    /// each kill lands at the N-th call of one system call (strace's fault injection), the call
    /// drawn at random and N at random up to the calls a whole push makes of it, counted once.
    /// Of clips, and of tabs (whose tags go to the tag store, `sync/tab-tags`).
    /// `Tests/Soak/first-push-sweep.sh` runs more kills of a larger push (ITSYPAD_FIRST_PUSH_KILLS,
    /// ITSYPAD_FIRST_PUSH_CLIPS, ITSYPAD_FIRST_PUSH_SEED; ITSYPAD_FIRST_PUSH_KIND: `clips` or `tabs` only).
    @Test(
        "a first push killed at 50 random points finishes with nothing lost or doubled", arguments: ["clips", "tabs"])
    func killedAtRandomPoints(kind: String) async throws {
        if let only = FaultInjectionTests.setting("ITSYPAD_FIRST_PUSH_KIND"), only != kind { return }
        let kills = Int(FaultInjectionTests.setting("ITSYPAD_FIRST_PUSH_KILLS") ?? "") ?? 50
        let clips = Int(FaultInjectionTests.setting("ITSYPAD_FIRST_PUSH_CLIPS") ?? "") ?? 300
        var generator = SeededGenerator(seed: UInt64(FaultInjectionTests.setting("ITSYPAD_FIRST_PUSH_SEED") ?? "") ?? 36)
        let tabs = kind == "tabs"
        let sender = tabs ? Self.sender(tabs: clips) : Self.sender(clips: clips)
        let (dataDir, backend) = (sender.dataDir, Self.backend(of: sender))
        let counted = try Self.systemCalls(try Self.copy(dataDir: dataDir, backend: backend), ["sync"])
        let (points, landed) = try await Self.kill(at: kills, pointsOf: counted, generator: &generator) { point in
            try Self.killedPush(dataDir: dataDir, backend: backend, clips: clips, tabs: tabs, at: point)
        }
        #expect(landed.count >= kills, "only \(landed.count) of \(points) kills landed; counted \(counted)")
    }

    /// Runs `killed` at random points, two at a time, until `kills` of them landed (it returns
    /// whether its kill did): each point the N-th call of one of `killedCalls`, the call drawn at
    /// random and N at random up to the `counted` calls of a whole run. Returns how many points
    /// were drawn, and those that landed.
    static func kill(
        at kills: Int, pointsOf counted: [String: Int], generator: inout SeededGenerator,
        _ killed: @escaping @Sendable (KillPoint) throws -> Bool
    ) async throws -> (points: Int, landed: [KillPoint]) {
        let calls = killedCalls.filter { counted[$0, default: 0] > 0 }
        // More points than kills: a kill past the calls of one thread does not land.
        let points = (0..<kills * 3 / 2).map { _ in
            let call = calls.randomElement(using: &generator)!
            return KillPoint(call: call, nth: Int.random(in: 1...counted[call]!, using: &generator))
        }
        var landed: [KillPoint] = []
        try await withThrowingTaskGroup(of: (KillPoint, Bool).self) { group in
            var next = points.makeIterator()
            for _ in 0..<2 {
                guard let point = next.next() else { break }
                group.addTask { (point, try killed(point)) }
            }
            while let (point, didLand) = try await group.next() {
                if didLand { landed.append(point) }
                if landed.count < kills, let point = next.next() { group.addTask { (point, try killed(point)) } }
            }
        }
        return (points.count, landed)
    }
}

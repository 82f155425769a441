import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// What a fetch lists on a WebDAV server (`rclone serve webdav`, which lists one folder per
/// request): one change another device made costs the same folders listed whatever the backend
/// holds, and brings in what a whole listing brings in.
@Suite(.needs(RcloneServer.Kind.rcloneWebDAV.tools))
struct RcloneListingTests {
    let server: RcloneServer
    let scratch = TemporaryDirectory()
    /// Every HTTP request the devices' rclone makes, a `PROPFIND` line per folder listed.
    var requests: String { scratch.file("requests.log") }
    /// A line per rclone process started, its process id.
    var processes: String { scratch.file("processes.log") }

    init() throws { server = try RcloneServer(.rcloneWebDAV) }

    /// A device's remote at `path` on the server, whose rclone (a wrapper on PATH) logs each
    /// request it makes to `requests` and its process id to `processes` (`rclone rcd`'s log goes
    /// on to standard error only where it says where it serves).
    func remote(_ device: String, at path: String, fullListingInterval: Milliseconds = 3_600_000) throws -> RcloneRemote {
        let bin = scratch.file("bin")
        try FileSystem.makeDirectory(bin)
        let wrapper = """
            #!/bin/sh
            echo $$ >>'\(processes)'
            [ "$1" = rcd ] || exec /usr/bin/rclone "$@" --dump headers --log-level DEBUG --log-file '\(requests)'
            /usr/bin/rclone "$@" --dump headers --log-level DEBUG 2>&1 | tee -a '\(requests)' | grep --line-buffered 'Serving remote' >&2

            """
        scratch.write("bin/rclone", wrapper, mode: 0o700)
        var environment = Process.baseEnvironment.merging(try server.environment()) { $1 }
        environment["PATH"] = bin + ":/usr/bin:/bin"
        return RcloneRemote(
            remote: "server:" + path, directory: scratch.file(device + "-" + path), environment: environment, timeout: 60,
            fullListingInterval: fullListingInterval)
    }

    func write(_ remote: RcloneRemote, _ path: String, _ text: String) throws {
        try FileSystem.makeDirectory(FileSystem.directoryName(remote.mirror + "/" + path))
        try FileSystem.writeAtomically(remote.mirror + "/" + path, Array(text.utf8))
    }

    static func line(seq: Int, _ record: String, op: String = "save") -> String {
        #"{"seq":\#(seq),"changes":[{"seq":\#(seq),"op":"\#(op)","recordType":"T","recordName":"\#(record)"}]}"# + "\n"
    }

    static func recordFile(_ record: String, _ device: String) -> String {
        "records/T/\(FolderLayout.bucket(of: record))/\(record).\(device).json"
    }

    /// Folders listed by `body`'s rclone calls, by path on the server (a file's PROPFIND, as a
    /// download's, is not a listing).
    func foldersListed(_ body: () throws -> Void) throws -> [String] {
        let before = (try FileSystem.read(requests))?.count ?? 0
        try body()
        let log = String(decoding: (try FileSystem.read(requests, from: before)) ?? [], as: UTF8.self)
        return log.split(separator: "\n").compactMap { line in
            guard let start = line.firstRange(of: "PROPFIND /"), let end = line.firstRange(of: "/ HTTP/1.1") else { return nil }
            return String(line[line.index(before: start.upperBound)..<end.upperBound].dropLast(" HTTP/1.1".count))
        }
    }

    /// Device B holds `count` records (a journal line each) that A has fetched; B then changes one
    /// record: the folders A's fetch of that change lists, and whether the change arrived.
    func oneChange(records count: Int) throws -> (listed: [String], arrived: Bool) {
        let a = try remote("a", at: "n\(count)"), b = try remote("b", at: "n\(count)")
        try b.prepare()
        try write(b, "zone.json", "zone")
        var journal = ""
        for index in 0..<count {
            journal += Self.line(seq: index + 1, "r\(index)")
            try write(b, Self.recordFile("r\(index)", "B"), "version 1")
        }
        try write(b, "devices/B/journal/0000000000000001.log", journal)
        #expect(try b.send(message: ""))
        #expect(try a.fetch(as: "A") == .changed)
        try write(b, "devices/B/journal/0000000000000001.log", journal + Self.line(seq: count + 1, "r3"))
        try write(b, Self.recordFile("r3", "B"), "version 2")
        #expect(try b.send(message: ""))
        var fetched = RemoteFetch.unchanged
        let listed = try foldersListed { fetched = try a.fetch(as: "A") }
        let arrived = try FileSystem.read(a.mirror + "/" + Self.recordFile("r3", "B")) == Array("version 2".utf8)
        #expect(fetched == .changed)
        return (listed, arrived)
    }

    /// Ten times the records (spread over ten times the record folders) lists no more folders
    /// for one change: the cost follows the changes, not the backend.
    @Test func oneChangeListsTheSameFoldersWhateverTheBackendHolds() throws {
        let small = try oneChange(records: 12)
        let large = try oneChange(records: 120)
        #expect(small.arrived && large.arrived)
        #expect(!small.listed.isEmpty, "the wrapper logged no request")
        #expect(small.listed.count == large.listed.count, "\(small.listed) listed with 12 records, \(large.listed) with 120")
    }

    /// The record folder a change names is listed by itself: no folder above it (`records/`,
    /// `records/T/`) costs a request.
    @Test func oneChangeListsItsRecordFolderAlone() throws {
        let listed = try oneChange(records: 12).listed
        let folder = "/n12/" + FileSystem.directoryName(Self.recordFile("r3", "B")) + "/"
        #expect(listed.contains(folder), "\(listed)")
        #expect(!listed.contains { $0.hasPrefix("/n12/records") && $0 != folder }, "\(listed)")
    }

    /// One change each way (A brings in B's change and sends its own) runs one rclone process,
    /// stopped once A's remote is done with: not a process per listing and transfer.
    @Test func oneChangeEachWayRunsOneRcloneProcess() throws {
        let a = try remote("a", at: "processes"), b = try remote("b", at: "processes")
        try b.prepare()
        try write(b, "zone.json", "zone")
        try write(b, "devices/B/journal/0000000000000001.log", Self.line(seq: 1, "r1"))
        try write(b, Self.recordFile("r1", "B"), "version 1")
        #expect(try b.send(message: ""))
        #expect(try a.fetch(as: "A") == .changed)
        try write(b, "devices/B/journal/0000000000000001.log", Self.line(seq: 1, "r1") + Self.line(seq: 2, "r1"))
        try write(b, Self.recordFile("r1", "B"), "version 2")
        #expect(try b.send(message: ""))
        try write(a, "devices/A/journal/0000000000000001.log", Self.line(seq: 1, "r2"))
        try write(a, Self.recordFile("r2", "A"), "version 1")
        let before = (try FileSystem.read(processes))?.count ?? 0
        do {
            let sync = try remote("a", at: "processes")
            #expect(try sync.fetch(as: "A") == .changed)
            #expect(try sync.send(message: ""))
        }
        let started = String(decoding: (try FileSystem.read(processes, from: before)) ?? [], as: UTF8.self).split(separator: "\n")
        #expect(started.count == 1, "\(started.count) rclone processes for one change each way")
        #expect(try FileSystem.read(a.mirror + "/" + Self.recordFile("r1", "B")) == Array("version 2".utf8))
        let sent = try FileSystem.read(server.served + "/processes/" + Self.recordFile("r2", "A"))
        #expect(sent == Array("version 1".utf8), "A's change reached the server")
        for pid in started.compactMap({ pid_t($0) }) { #expect(kill(pid, 0) != 0, "rclone \(pid) still runs") }
    }

    /// The files of a mirror and what each holds.
    static func contents(_ remote: RcloneRemote) throws -> [String: [UInt8]] {
        try contents(of: remote.mirror)
    }

    /// The backend files of the backend directory `root` and what each holds.
    static func contents(of root: String) throws -> [String: [UInt8]] {
        var contents: [String: [UInt8]] = [:]
        for (path, _) in try RcloneRemote.transferredFiles(in: root) {
            contents[path] = try FileSystem.read(root + "/" + path)
        }
        return contents
    }

    /// A fetch of the record folders that new journal lines name (a record rewritten, one
    /// dropped, one new) leaves the mirror as a fetch listing the whole remote does.
    /// B sends 20 records (`r0` …, a journal line each); then, after `sent`, changes `r3`, removes
    /// `r5` and adds `r20` in its mirror, their lines appended to its journal.
    func sendRecordsThenChangeThem(_ b: RcloneRemote, sent: () throws -> Void = {}) throws {
        try b.prepare()
        try write(b, "zone.json", "zone")
        var journal = ""
        for index in 0..<20 {
            journal += Self.line(seq: index + 1, "r\(index)")
            try write(b, Self.recordFile("r\(index)", "B"), "version 1")
        }
        try write(b, "devices/B/journal/0000000000000001.log", journal)
        #expect(try b.send(message: ""))
        try sent()
        journal += Self.line(seq: 21, "r3") + Self.line(seq: 22, "r5", op: "drop") + Self.line(seq: 23, "r20")
        try write(b, "devices/B/journal/0000000000000001.log", journal)
        try write(b, Self.recordFile("r3", "B"), "version 2")
        try write(b, Self.recordFile("r20", "B"), "version 1")
        try FileSystem.remove(b.mirror + "/" + Self.recordFile("r5", "B"))
    }

    @Test func aFetchOfTheNamedFoldersBringsWhatAWholeListingBrings() throws {
        let a = try remote("a", at: "same"), b = try remote("b", at: "same")
        let whole = try remote("c", at: "same", fullListingInterval: 0)
        try sendRecordsThenChangeThem(b) {
            let fetched = try a.fetch(as: "A")
            #expect(fetched == .changed)
        }
        #expect(try b.send(message: ""))
        #expect(try a.fetch(as: "A") == .changed)
        #expect(try whole.fetch(as: "W") == .changed)
        let fetched = try Self.contents(a)
        #expect(fetched == (try Self.contents(whole)))
        #expect(fetched[Self.recordFile("r3", "B")] == Array("version 2".utf8) && fetched[Self.recordFile("r5", "B")] == nil)
    }

    /// A send that looks at the record folders the journal's new lines name leaves on the remote
    /// what a send that walks the whole mirror (`sendCompaction`) leaves: the changed record, the
    /// new one, the removed one gone.
    @Test func aSendOfWhatTheJournalNamesSendsWhatAWholeWalkSends() throws {
        let sends: [(path: String, send: (RcloneRemote) throws -> Bool)] = [
            ("named", { try $0.send(message: "") }), ("walked", { try $0.sendCompaction(message: "") }),
        ]
        var served: [[String: [UInt8]]] = []
        for (path, send) in sends {
            let b = try remote("b", at: path)
            try sendRecordsThenChangeThem(b)
            #expect(try send(b))
            served.append(try Self.contents(of: server.served + "/" + path))
        }
        #expect(served[0] == served[1])
        #expect(served[0][Self.recordFile("r3", "B")] == Array("version 2".utf8) && served[0][Self.recordFile("r5", "B")] == nil)
        #expect(served[0][Self.recordFile("r20", "B")] == Array("version 1".utf8))
    }
}

import Testing

@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The sending side of a first sync of a large history, through the binary and a backend directory.
@Suite("End to end: a first push")
struct FirstPushTests {
    /// A device with a backend enabled while its history was empty, then `count` clips imported: its next sync is a first push.
    static func sender(in fleet: Fleet, clips count: Int) {
        fleet.enable(0)
        _ = fleet[0].output("settings", "set", "clipboard.maxEntries", "100000")
        importClips(into: fleet[0], from: 0, count: count)
    }

    /// Imports clips `clip <first>` … `clip <first + count - 1>`.
    static func importClips(into device: Device, from first: Int, count: Int) {
        let clips = (first..<first + count).map { index in
            JSONValue.object([
                ("id", .string(Identifier.make())), ("text", .string("clip \(index)")),
                ("timestamp", .string(Time.iso8601(1_767_400_000_000 + Int64(index)))),
            ])
        }
        let document = JSONValue.object([("format", .string("itsypad-export")), ("version", .integer(1)), ("clips", .array(clips))])
        #expect(device.inProcess(["import", "-"], stdin: document.serialized()).0 == 0)
    }

    /// Calls of each system call a run of `arguments` made, counted by `strace -c -f`.
    static func systemCalls(_ device: Device, _ arguments: [String]) throws -> [String: Int] {
        let scratch = TemporaryDirectory()
        let summary = scratch.path + "/calls"
        let result = try device.runArguments(["-f", "-c", "-o", summary, Process.itsypad] + arguments, program: "/usr/bin/strace")
        #expect(result.status == 0, "\(arguments) failed: \(result.stderr)")
        var calls: [String: Int] = [:]
        for line in String(decoding: try FileSystem.read(summary) ?? [], as: UTF8.self).split(separator: "\n") {
            let columns = line.split(separator: " ")
            // % time, seconds, usecs/call, calls, [errors,] syscall.
            guard columns.count >= 5, let name = columns.last, let count = Int(columns[3]) else { continue }
            calls[String(name)] = count
        }
        return calls
    }

    @Test(
        "a first push makes its record files durable a batch at a time, with a few opens a record",
        .enabled(if: ExternalTool.installed("strace"), "strace is not installed"))
    func systemCallsPerRecord() throws {
        let fleet = Fleet(1)
        let records = 3000
        Self.sender(in: fleet, clips: records)
        let calls = try Self.systemCalls(fleet[0], ["sync"])
        let syncs = ["fsync", "fdatasync", "syncfs"].reduce(0) { $0 + calls[$1, default: 0] }
        // Per batch a journal line, device.json and the engine's own files: a few dozen in all, not two a record.
        #expect(syncs < records / 20, "\(syncs) syncs for \(records) records: \(calls)")
        // Each record file: its temporary file, created once, and a few opens of the engine's own files per batch.
        #expect(calls["openat", default: 0] < records * 4, "\(calls["openat", default: 0]) opens for \(records) records: \(calls)")
    }

    /// The push killed again and again, each run at a random point, then let finish: a second device
    /// joining gets every clip exactly once, and the sender has nothing left to send. Each run dies at
    /// the N-th call of one system call (strace's fault injection), the call and N drawn at random:
    /// writes, renames, opens, syncs and the random draws of temporary names, so that the kills land in
    /// every step of a batch (its record files, their syncs, its journal line, its acceptance). Runs
    /// go on until 50 have died with changes still queued; whenever a run finishes the push, more clips
    /// are imported for the next.
    @Test(
        "a first push killed at 50 random points finishes with nothing lost or doubled",
        .enabled(if: ExternalTool.installed("strace"), "strace is not installed"))
    func killedAtRandomPoints() throws {
        let fleet = Fleet(2)
        let round = 1000
        var imported = round
        Self.sender(in: fleet, clips: round)
        let sender = fleet[0]
        // The calls a run may die at, and how far into them: about as many as a batch makes.
        let points: [(call: String, calls: Int)] = [
            ("write", 1000), ("renameat", 1000), ("openat", 1500), ("fsync", 12), ("syncfs", 3), ("getrandom", 2000),
        ]
        var runs: [String] = []
        var killedWhilePending = 0
        while killedWhilePending < 50 && runs.count < 200 {
            if try DataStore(path: sender.dataDir, lockTimeout: 1).pending().changes().isEmpty {
                Self.importClips(into: sender, from: imported, count: round)
                imported += round
            }
            let point = points.randomElement()!
            let nth = Int.random(in: 1...point.calls)
            let result = try sender.runArguments(
                [
                    "-f", "-qq", "--seccomp-bpf", "-o", "/dev/null", "-e", "trace=\(point.call)", "-e",
                    "inject=\(point.call):signal=KILL:when=\(nth)",
                    Process.itsypad, "sync",
                ], program: "/usr/bin/strace")
            runs.append("\(point.call)#\(nth): \(result.status)")
            if result.status == 128 + SIGKILL { killedWhilePending += 1 }
        }
        #expect(killedWhilePending >= 50, "runs: \(runs)")

        #expect(fleet.sync(0) == 0)
        #expect(try DataStore(path: sender.dataDir, lockTimeout: 1).pending().changes().isEmpty, "changes left unsent")
        fleet.enable(1)
        let received = try fleet.clips(1)
        #expect(received.count == imported, "the joining device has \(received.count) of \(imported) clips; runs: \(runs)")
        #expect(Set(received.values) == Set((0..<imported).map { "clip \($0)|false" }), "clips lost or changed")
        try fleet.expectConverged()
    }
}

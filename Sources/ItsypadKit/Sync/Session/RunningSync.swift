import ItsypadStore
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The note a running sync leaves in `sync/running.json` (its pid and start
/// time), so that `sync status` can say a sync is under way instead of
/// waiting for the lock it holds. Advisory only: written without fsync,
/// removed when the sync ends, and ignored once its process is gone (kill -9).
package struct RunningSync: Equatable {
    let pid: Int32
    let since: Milliseconds

    /// Records the current process as syncing; the returned value removes the note again.
    static func begin(in store: DataStore, now: Milliseconds) throws -> RunningSync {
        let running = RunningSync(pid: getpid(), since: now)
        let path = store.layout.runningSync
        let bytes = Array(JSONValue.object([("pid", .integer(Int64(running.pid))), ("since", .integer(now))]).serialized().utf8)
        try storeOperation {
            // A reader that catches the file half-written sees no sync and waits for the lock as usual.
            guard let fd = try store.tree.openFile(path, flags: O_WRONLY | O_CREAT | O_TRUNC) else { throw FileSystem.fail("write", path) }
            defer { close(fd) }
            try bytes.withUnsafeBytes { try FileSystem.writeAll(fd: fd, $0, path: path) }
        }
        return running
    }

    func end(in store: DataStore) {
        _ = try? store.tree.remove(store.layout.runningSync)
    }

    /// The sync under way in the data directory, if its note is there and its process is alive.
    package static func current(in layout: DataDirectoryLayout) -> RunningSync? {
        guard let bytes = (try? FileTree(root: layout.root).read(layout.runningSync, limit: 256)) ?? nil,
            let json = try? JSONValue.parse(bytes),
            let pid = json["pid"]?.int64Value, pid > 0, pid <= Int64(Int32.max),
            let since = json["since"]?.int64Value, Time.validRange.contains(since)
        else { return nil }
        // Signal 0 checks the process exists; EPERM means it does, under another user.
        guard kill(pid_t(pid), 0) == 0 || errno == EPERM else { return nil }
        return RunningSync(pid: pid_t(pid), since: since)
    }

    package var json: JSONValue { .object([("pid", .integer(Int64(pid))), ("since", .string(Time.iso8601(since)))]) }

    package var description: String { "syncing (pid \(pid), since \(Time.iso8601(since)))" }
}

import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The summary of the queue an import stages (`PendingSummary`), gathered as the import appends
/// its lines and written once the import is committed: the listing after an import of 1,000,000
/// clips then replays nothing, and nothing holds the waiting clips (they are sorted in spilled runs).
/// It starts from the waiting records of the queue the stage copies, counts versions as a replay
/// does, and is given up (`nil`) when a line confirms changes, which a replay alone tells.
final class StagedQueueSummary {
    private let clips: SortedRuns<QueuedClip>
    private var others: [RecordKey: Int]
    /// The last version a line took.
    private var version: Int

    /// nil when the queue's summary turns out damaged.
    init?(_ waiting: WaitingRecords, scratchDirectory: String, in tree: FileTree) throws {
        clips = try SortedRuns(directory: scratchDirectory, in: tree)
        others = waiting.summary?.others ?? [:]
        version = waiting.recent.version
        let named = waiting.recent.named()
        for (key, version) in named.others { others[key] = version }
        var failure: (any Error)?
        let whole = waiting.summary?.forEachClip { id, version in
            guard failure == nil, waiting.recent.waits(.clip(id)) == nil else { return }
            do { try clips.append(QueuedClip(id: id, version: version)) } catch { failure = error }
        }
        if let failure { throw failure }
        guard whole ?? true else { return nil }
        for clip in named.clips {
            if let version = clip.version { try clips.append(QueuedClip(id: clip.id, version: version)) }
        }
    }

    /// A save or delete line of `key` appended to the queue.
    func queued(_ key: ReplayKey) throws {
        version += 1
        switch key {
        case .clip(let id): try clips.append(QueuedClip(id: id, version: version))
        case .other(let key): others[key] = version
        }
    }

    /// Writes the summary of the whole queue at `path` (moved into place with these lines).
    func write(forQueue path: String, in tree: FileTree) throws {
        guard let fd = try tree.openFile(path, flags: O_RDONLY) else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileSystem.fail("read", path) }
        try PendingSummary.write(
            to: PendingSummary.path(forLog: path), in: tree, log: fd, inode: UInt64(info.st_ino), logPath: path,
            covered: Int(info.st_size), version: version, others: others
        ) { emit in
            // In the order of ids, then versions: of a clip queued again, the last is its waiting version.
            var last: QueuedClip?
            try clips.forEachSorted { clip in
                if let last, last.id != clip.id { try emit(last.id, last.version) }
                last = clip
                return true
            }
            if let last { try emit(last.id, last.version) }
        }
    }
}

/// A waiting clip and its version, as a summary keeps it.
private struct QueuedClip: RunRecord {
    static let size = 24
    let id: PackedID
    let version: Int

    init(id: PackedID, version: Int) {
        self.id = id
        self.version = version
    }

    init(decoding bytes: UnsafeRawBufferPointer, at base: Int) {
        func integer(_ offset: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: base + offset, as: UInt64.self)) }
        id = PackedID(high: integer(0), low: integer(8))
        version = Int(integer(16))
    }

    func encoded(into bytes: inout [UInt8]) {
        bytes.appendWritten(count: Self.size) { record in
            let raw = UnsafeMutableRawPointer(record)
            raw.storeBytes(of: id.high.littleEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: id.low.littleEndian, toByteOffset: 8, as: UInt64.self)
            raw.storeBytes(of: UInt64(version).littleEndian, toByteOffset: 16, as: UInt64.self)
        }
    }

    func sortsBefore(_ other: QueuedClip) -> Bool { (id.high, id.low, version) < (other.id.high, other.id.low, other.version) }
}

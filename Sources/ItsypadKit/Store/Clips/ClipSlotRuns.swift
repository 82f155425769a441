import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Slots gathered in any order (an import's, in the document's) and handed back in the index's
/// order, holding at most `runLength` of them in memory: each run of that many is sorted and
/// written to a scratch file, and the runs are merged as they are read back. An import of
/// 1,000,000 clips then holds about 5 MiB of slots rather than 40.
final class ClipSlotRuns {
    private let scratch: ScratchFile
    /// Slots not written yet (fewer than `runLength`).
    private var unsorted: [ClipSlot] = []
    /// Each written run's slots, as positions in the scratch file.
    private var runs: [Range<Int>] = []
    private var written = 0
    private(set) var count = 0

    static let runLength = 1 << 17
    /// Slots read back from a run at once.
    private static let readLength = 2048

    /// Runs are written to an unnamed file in `directory` (which `tree` reaches), gone when this is.
    init(directory: String, in tree: FileTree) throws {
        scratch = try ScratchFile(directory: directory, in: tree)
    }

    func append(_ slot: ClipSlot) throws {
        unsorted.append(slot)
        count += 1
        guard unsorted.count == ClipSlotRuns.runLength else { return }
        unsorted.sort { $0.sortsBefore($1) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(unsorted.count * ClipSlot.size)
        for slot in unsorted { slot.encoded(into: &bytes) }
        try scratch.write(bytes, at: written * ClipSlot.size)
        runs.append(written..<written + unsorted.count)
        written += unsorted.count
        unsorted.removeAll(keepingCapacity: true)
    }

    /// Every slot in the index's order, merged with `others` (slots in that order already, handed
    /// over a chunk at a time by their function: an empty chunk ends them), until `body` returns false.
    func forEachSorted(
        mergedWith others: @escaping (inout [ClipSlot]) throws -> Void = { $0 = [] }, _ body: (ClipSlot) throws -> Bool
    ) throws {
        unsorted.sort { $0.sortsBefore($1) }
        var sources = [SortedSlots(refill: others)]
        var tail = Optional(unsorted)
        sources.append(
            SortedSlots { chunk in
                chunk = tail ?? []
                tail = nil
            })
        for run in runs {
            var next = run.lowerBound
            sources.append(
                SortedSlots { [scratch] chunk in
                    let end = min(run.upperBound, next + ClipSlotRuns.readLength)
                    try scratch.readSlots(next..<end, into: &chunk)
                    next = end
                })
        }
        while true {
            var smallest: (source: Int, slot: ClipSlot)?
            for index in sources.indices {
                guard let head = try sources[index].head() else { continue }
                if smallest.map({ head.sortsBefore($0.slot) }) ?? true { smallest = (index, head) }
            }
            guard let smallest, try body(smallest.slot) else { return }
            sources[smallest.source].advance()
        }
    }
}

/// Slots in the index's order, read a chunk at a time.
private struct SortedSlots {
    private var chunk: [ClipSlot] = []
    private var position = 0
    private var done = false
    let refill: (inout [ClipSlot]) throws -> Void

    init(refill: @escaping (inout [ClipSlot]) throws -> Void) { self.refill = refill }

    /// The next slot, nil once there is none.
    mutating func head() throws -> ClipSlot? {
        if position == chunk.count, !done {
            try refill(&chunk)
            position = 0
            done = chunk.isEmpty
        }
        return position < chunk.count ? chunk[position] : nil
    }

    mutating func advance() { position += 1 }
}

/// A file without a name in the data directory (it is unlinked as soon as it is open), for
/// what is too large to hold: gone when closed, and after a crash.
private final class ScratchFile {
    private let fd: Int32
    private let path: String

    init(directory: String, in tree: FileTree) throws {
        let path = directory + "/.scratch-\(getpid())"
        self.path = path
        guard let fd = try storeOperation({ try tree.openFile(path, flags: O_RDWR | O_CREAT | O_TRUNC) }) else {
            throw FileSystemError(path: path, code: ENOENT, operation: "write")
        }
        self.fd = fd
        _ = try? tree.remove(path)
    }

    deinit { close(fd) }

    func write(_ bytes: [UInt8], at offset: Int) throws {
        try storeOperation { try FileSystem.writeAll(fd: fd, bytes, at: offset, path: path) }
    }

    /// The slots at `positions`, replacing what `slots` held.
    func readSlots(_ positions: Range<Int>, into slots: inout [ClipSlot]) throws {
        slots.removeAll(keepingCapacity: true)
        let bytes = try storeOperation {
            try FileSystem.read(fd: fd, offset: positions.lowerBound * ClipSlot.size, count: positions.count * ClipSlot.size, path: path)
        }
        guard bytes.count == positions.count * ClipSlot.size else { throw FileSystemError(path: path, code: EIO, operation: "read") }
        bytes.withUnsafeBytes { raw in
            for offset in stride(from: 0, to: bytes.count, by: ClipSlot.size) { slots.append(ClipSlot(decoding: raw, at: offset)) }
        }
    }
}

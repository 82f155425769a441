import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A record of fixed size that `SortedRuns` sorts.
protocol RunRecord {
    /// Bytes of its encoded form.
    static var size: Int { get }
    func encoded(into bytes: inout [UInt8])
    init(decoding bytes: UnsafeRawBufferPointer, at base: Int)
    func sortsBefore(_ other: Self) -> Bool
}

extension ClipSlot: RunRecord {}

/// Records gathered in any order (an import's clips, in the document's) and handed back sorted,
/// holding at most `runLength` of them in memory: each run of that many is sorted and written to a
/// scratch file, and the runs are merged as they are read back. An import of 1,000,000 clips then
/// holds about 5 MiB of slots rather than 40.
final class SortedRuns<Record: RunRecord> {
    private let scratch: ScratchFile
    /// Records not written yet (fewer than `runLength`).
    private var unsorted: [Record] = []
    /// Each written run's records, as positions in the scratch file.
    private var runs: [Range<Int>] = []
    private var written = 0
    private(set) var count = 0

    /// Records sorted in memory before they are written as a run.
    let runLength: Int
    /// Records read back from a run at once.
    private static var readLength: Int { 2048 }

    /// Runs are written to an unnamed file in `directory` (which `tree` reaches), gone when this is.
    init(directory: String, in tree: FileTree, runLength: Int = 1 << 16) throws {
        scratch = try ScratchFile(directory: directory, in: tree)
        self.runLength = runLength
    }

    func append(_ record: Record) throws {
        unsorted.append(record)
        count += 1
        guard unsorted.count == runLength else { return }
        unsorted.sort { $0.sortsBefore($1) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(unsorted.count * Record.size)
        for record in unsorted { record.encoded(into: &bytes) }
        try scratch.write(bytes, at: written * Record.size)
        runs.append(written..<written + unsorted.count)
        written += unsorted.count
        unsorted.removeAll(keepingCapacity: true)
    }

    /// Every record in order, merged with `others` (records in order already, handed over a chunk
    /// at a time by their function: an empty chunk ends them), until `body` returns false.
    func forEachSorted(
        mergedWith others: @escaping (inout [Record]) throws -> Void = { $0 = [] }, _ body: (Record) throws -> Bool
    ) throws {
        unsorted.sort { $0.sortsBefore($1) }
        var sources = [SortedChunks(refill: others)]
        var tail = Optional(unsorted)
        sources.append(
            SortedChunks { chunk in
                chunk = tail ?? []
                tail = nil
            })
        for run in runs {
            var next = run.lowerBound
            sources.append(
                SortedChunks { [scratch] chunk in
                    let end = min(run.upperBound, next + SortedRuns.readLength)
                    try scratch.read(next..<end, into: &chunk)
                    next = end
                })
        }
        while true {
            var smallest: (source: Int, record: Record)?
            for index in sources.indices {
                guard let head = try sources[index].head() else { continue }
                if smallest.map({ head.sortsBefore($0.record) }) ?? true { smallest = (index, head) }
            }
            guard let smallest, try body(smallest.record) else { return }
            sources[smallest.source].advance()
        }
    }
}

/// Records in order, read a chunk at a time.
private struct SortedChunks<Record> {
    private var chunk: [Record] = []
    private var position = 0
    private var done = false
    let refill: (inout [Record]) throws -> Void

    init(refill: @escaping (inout [Record]) throws -> Void) { self.refill = refill }

    /// The next record, nil once there is none.
    mutating func head() throws -> Record? {
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

    /// The records at `positions`, replacing what `records` held.
    func read<Record: RunRecord>(_ positions: Range<Int>, into records: inout [Record]) throws {
        records.removeAll(keepingCapacity: true)
        let bytes = try storeOperation {
            try FileSystem.read(fd: fd, offset: positions.lowerBound * Record.size, count: positions.count * Record.size, path: path)
        }
        guard bytes.count == positions.count * Record.size else { throw FileSystemError(path: path, code: EIO, operation: "read") }
        bytes.withUnsafeBytes { raw in
            for offset in stride(from: 0, to: bytes.count, by: Record.size) { records.append(Record(decoding: raw, at: offset)) }
        }
    }
}

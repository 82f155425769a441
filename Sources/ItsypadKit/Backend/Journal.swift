#if canImport(Glibc)
import Glibc
#endif

/// One change in the journal. Its `seq` is also the change tag of the version a save wrote.
struct JournalChange: Codable, Equatable {
    enum Operation: String, Codable {
        case save, delete
    }

    let seq: Int64
    let op: Operation
    let recordType: String
    let recordName: String
    /// For a save, the new version's tag; for a delete, the tag of the version it removed.
    let tag: String?
    /// The full record, for saves only.
    let record: BackendRecord?

    var id: RecordID { RecordID(recordType: recordType, recordName: recordName) }

    static func save(_ record: BackendRecord, seq: Int64) -> JournalChange {
        JournalChange(seq: seq, op: .save, recordType: record.recordType, recordName: record.recordName, tag: record.recordChangeTag, record: record)
    }

    static func delete(_ id: RecordID, removedTag: String?, seq: Int64) -> JournalChange {
        JournalChange(seq: seq, op: .delete, recordType: id.recordType, recordName: id.recordName, tag: removedTag, record: nil)
    }
}

/// Everything one `modify` committed: one line of the journal.
struct JournalBatch: Codable {
    /// Seq of the first change.
    let seq: Int64
    let device: String
    let time: Int64
    let changes: [JournalChange]

    var lastSeq: Int64 { seq + Int64(changes.count) - 1 }

    /// The line, with "seq" written first so readers can skip lines without decoding them.
    func encodedLine() throws -> [UInt8] {
        var line = Array("{\"seq\":\(seq),\"device\":".utf8)
        line += try JSONCoding.encode(device)
        line += Array(",\"time\":\(time),\"changes\":".utf8)
        line += try JSONCoding.encode(changes)
        line += Array("}\n".utf8)
        return line
    }

    /// Why this batch is not well formed, or nil if it is.
    var problem: String? {
        guard !changes.isEmpty else { return "batch \(seq) has no changes" }
        for (index, change) in changes.enumerated() {
            guard change.seq == seq + Int64(index) else { return "batch \(seq) has change \(change.seq) out of sequence" }
            switch change.op {
            case .save:
                guard let record = change.record, record.id == change.id else { return "save \(change.seq) lacks its record" }
            case .delete:
                guard change.record == nil else { return "delete \(change.seq) carries a record" }
            }
        }
        return nil
    }
}

/// A journal segment file, `journal/<first seq, 16 digits>.log`.
struct JournalSegment: Equatable {
    let firstSeq: Int64
    let path: String
}

/// A byte position in a segment: where to resume reading. Carried in change tokens as a hint.
struct JournalPosition: Equatable, Sendable {
    let segment: Int64
    let offset: Int
}

/// A change read from the journal, with where to resume reading after it.
struct LocatedChange {
    let change: JournalChange
    let resume: JournalPosition
}

/// The result of reading the journal after some seq.
struct JournalRead {
    var changes: [LocatedChange]
    var moreComing: Bool
}

/// How much work a read did; lets tests assert that incremental fetches do not scan everything.
struct JournalReadStats: Equatable {
    var segmentsOpened = 0
    var bytesRead = 0
    var batchesDecoded = 0
    var changesDecoded = 0
}

/// The end of the journal as a writer sees it.
struct JournalTail {
    let segment: JournalSegment?
    /// Offset just after the last committed line of the last segment.
    let committedEnd: Int
    let fileSize: Int
    /// Seq of the last committed change (0 if none).
    let latestSeq: Int64

    /// Bytes after the last committed line: a write that never completed.
    var isTorn: Bool { fileSize > committedEnd }
}

/// Read failures the backend resolves by re-reading state.json.
enum JournalReadError: Error {
    /// A segment listed a moment ago is gone, or state.json changed: a compaction ran concurrently.
    case compactedMeanwhile
    /// The journal does not hold the change right after the requested seq.
    case gap(after: Int64, next: Int64)
}

/// The append-only change log, `journal/*.log`. Each line is one committed batch;
/// a last line without newline or with invalid JSON was never committed.
struct Journal {
    let directory: String
    /// Appends go to a new segment once the last one reaches this size.
    let segmentSizeLimit: Int

    private static let newline = UInt8(ascii: "\n")
    private static let seqPrefix = Array("{\"seq\":".utf8)

    static func fileName(forFirstSeq seq: Int64) -> String {
        let digits = String(seq)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits + ".log"
    }

    /// Segments in seq order. Other files (temporary ones, strays) are ignored.
    func segments() throws -> [JournalSegment] {
        let names = try FileIO.listDirectory(directory) ?? []
        return names.compactMap { name -> JournalSegment? in
            guard name.utf8.count == 20, name.hasSuffix(".log"), let seq = Int64(name.prefix(16)), seq > 0 else { return nil }
            return JournalSegment(firstSeq: seq, path: directory + "/" + name)
        }
        .sorted { $0.firstSeq < $1.firstSeq }
    }

    func totalSize() throws -> Int {
        try segments().reduce(0) { total, segment in total + ((try FileIO.status(segment.path))?.size ?? 0) }
    }

    // MARK: Reading

    /// Committed changes with seq > `seq`, in order. With `maxChanges`, stops after that many and
    /// reports whether more exist. Starts at `hint` when it is usable, otherwise at the segment
    /// whose name says it holds `seq + 1`, so the cost follows the number of changes returned.
    func read(after seq: Int64, from hint: JournalPosition?, maxChanges: Int?, stats: inout JournalReadStats) throws -> JournalRead {
        let segments = try segments()
        if let hint, let index = segments.firstIndex(where: { $0.firstSeq == hint.segment }),
           let result = try scan(after: seq, segments: segments, startIndex: index, startOffset: hint.offset, usingHint: true, maxChanges: maxChanges, stats: &stats) {
            return result
        }
        let startIndex = segments.lastIndex { $0.firstSeq <= seq + 1 } ?? 0
        return try scan(after: seq, segments: segments, startIndex: startIndex, startOffset: 0, usingHint: false, maxChanges: maxChanges, stats: &stats)
            ?? JournalRead(changes: [], moreComing: false)
    }

    /// Returns nil when a hint turns out not to be a usable starting point.
    private func scan(
        after seq: Int64,
        segments: [JournalSegment],
        startIndex: Int,
        startOffset: Int,
        usingHint: Bool,
        maxChanges: Int?,
        stats: inout JournalReadStats
    ) throws -> JournalRead? {
        guard startIndex < segments.count else { return JournalRead(changes: [], moreComing: false) }
        var collected: [LocatedChange] = []
        var expectedBatchSeq: Int64?
        for index in startIndex..<segments.count {
            let segment = segments[index]
            let offset = index == startIndex ? startOffset : 0
            // With a hint, read one byte earlier to check that it lands right after a newline.
            let readOffset = max(0, offset - 1)
            guard let bytes = try FileIO.readFileIfExists(segment.path, from: readOffset) else {
                throw JournalReadError.compactedMeanwhile
            }
            stats.segmentsOpened += 1
            stats.bytesRead += bytes.count
            if offset > 0 && bytes.first != Self.newline {
                return nil
            }
            let lines = Self.completeLines(in: bytes, from: offset - readOffset, fileOffset: readOffset)
            let nextSegmentSeq = index + 1 < segments.count ? segments[index + 1].firstSeq : nil
            let isLastSegment = index == segments.count - 1
            for (lineIndex, line) in lines.enumerated() {
                // Skip without decoding when the next line (or segment) still starts at or before seq + 1.
                let nextLineSeq = lineIndex + 1 < lines.count ? Self.peekSeq(bytes[lines[lineIndex + 1].bytes]) : nextSegmentSeq
                if let nextLineSeq, nextLineSeq <= seq + 1 {
                    continue
                }
                guard let batch = Self.decodeBatch(bytes[line.bytes]) else {
                    if isLastSegment && lineIndex == lines.count - 1 {
                        break  // A torn final write: it was never committed.
                    }
                    throw BackendError.corrupt(path: segment.path, reason: "line at byte \(line.start) is not a valid journal batch")
                }
                stats.batchesDecoded += 1
                stats.changesDecoded += batch.changes.count
                if let expectedBatchSeq, batch.seq != expectedBatchSeq {
                    throw BackendError.corrupt(path: segment.path, reason: "journal jumps from seq \(expectedBatchSeq - 1) to \(batch.seq)")
                }
                expectedBatchSeq = batch.lastSeq + 1
                for (changeIndex, change) in batch.changes.enumerated() where change.seq > seq {
                    if collected.isEmpty && change.seq != seq + 1 {
                        if usingHint { return nil }
                        throw JournalReadError.gap(after: seq, next: change.seq)
                    }
                    let isLastInLine = changeIndex == batch.changes.count - 1
                    let resume = JournalPosition(segment: segment.firstSeq, offset: isLastInLine ? line.end : line.start)
                    collected.append(LocatedChange(change: change, resume: resume))
                    if let maxChanges, collected.count > maxChanges {
                        return JournalRead(changes: Array(collected.prefix(maxChanges)), moreComing: true)
                    }
                }
            }
        }
        return JournalRead(changes: collected, moreComing: false)
    }

    // MARK: Writing (under the lock)

    /// Finds the last committed line by reading backwards from the end of the last segment.
    func tail() throws -> JournalTail {
        guard let segment = try segments().last else {
            return JournalTail(segment: nil, committedEnd: 0, fileSize: 0, latestSeq: 0)
        }
        let descriptor = open(segment.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileIO.error("open", segment.path) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw FileIO.error("fstat", segment.path) }
        let size = Int(info.st_size)
        var window = 64 * 1024
        while true {
            let start = max(0, size - window)
            let bytes = try FileIO.read(descriptor, path: segment.path, offset: start, count: size - start)
            var lines = Self.completeLines(in: bytes, from: 0, fileOffset: start)
            if start > 0 && !lines.isEmpty {
                lines.removeFirst()  // May begin mid-line.
            }
            // The last line may be torn, so the one before it is needed too.
            if start > 0 && lines.count < 2 {
                window *= 4
                continue
            }
            var committedEnd = lines.last?.end ?? 0
            var latestSeq = segment.firstSeq - 1
            if let last = lines.last {
                if let batch = Self.decodeBatch(bytes[last.bytes]) {
                    latestSeq = batch.lastSeq
                } else {
                    committedEnd = last.start
                    if lines.count >= 2 {
                        guard let batch = Self.decodeBatch(bytes[lines[lines.count - 2].bytes]) else {
                            throw BackendError.corrupt(path: segment.path, reason: "line at byte \(lines[lines.count - 2].start) is not a valid journal batch")
                        }
                        latestSeq = batch.lastSeq
                    }
                }
            }
            return JournalTail(segment: segment, committedEnd: committedEnd, fileSize: size, latestSeq: latestSeq)
        }
    }

    /// Cuts off an uncommitted (torn) last write so the next line starts cleanly.
    func repair(_ tail: JournalTail) throws -> JournalTail {
        guard tail.isTorn, let segment = tail.segment else { return tail }
        try FileIO.truncate(segment.path, to: tail.committedEnd)
        return JournalTail(segment: segment, committedEnd: tail.committedEnd, fileSize: tail.committedEnd, latestSeq: tail.latestSeq)
    }

    /// Appends the batch as one line with a single write, then fsyncs: after this returns it is committed.
    /// `tail` must be repaired first.
    func append(_ batch: JournalBatch, after tail: JournalTail) throws {
        let line = try batch.encodedLine()
        let path: String
        let previousEnd: Int
        if let segment = tail.segment, tail.committedEnd == 0 || tail.committedEnd < segmentSizeLimit {
            path = segment.path
            previousEnd = tail.committedEnd
        } else {
            path = try createSegment(firstSeq: batch.seq)
            previousEnd = 0
        }
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard descriptor >= 0 else { throw FileIO.error("open", path) }
        defer { close(descriptor) }
        do {
            try FileIO.writeAll(descriptor, line, path: path)
            try FileIO.sync(descriptor, path: path)
        } catch {
            // Leave no partial line behind; if this fails too, the next writer truncates it.
            _ = ftruncate(descriptor, off_t(previousEnd))
            throw error
        }
    }

    /// Creates an empty segment (if absent) and makes its name durable. Returns its path.
    @discardableResult
    func createSegment(firstSeq: Int64) throws -> String {
        try FileIO.makeDirectory(directory)
        let path = directory + "/" + Self.fileName(forFirstSeq: firstSeq)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, mode_t(0o600))
        guard descriptor >= 0 else { throw FileIO.error("create", path) }
        close(descriptor)
        try FileIO.syncDirectory(directory)
        return path
    }

    // MARK: Line handling

    private struct Line {
        /// Range in the bytes read, without the newline.
        let bytes: Range<Int>
        /// File offset of the first byte.
        let start: Int
        /// File offset just after the newline.
        let end: Int
    }

    /// Newline-terminated lines in `bytes[from...]`; trailing bytes without a newline are not a line.
    private static func completeLines(in bytes: [UInt8], from startIndex: Int, fileOffset: Int) -> [Line] {
        var lines: [Line] = []
        var lineStart = startIndex
        var index = startIndex
        while index < bytes.count {
            if bytes[index] == newline {
                lines.append(Line(bytes: lineStart..<index, start: fileOffset + lineStart, end: fileOffset + index + 1))
                lineStart = index + 1
            }
            index += 1
        }
        return lines
    }

    /// The batch's first seq, read from the `{"seq":N,` prefix without decoding the line.
    private static func peekSeq(_ line: ArraySlice<UInt8>) -> Int64? {
        guard line.starts(with: seqPrefix) else { return nil }
        var value: Int64 = 0
        var digits = 0
        for byte in line.dropFirst(seqPrefix.count) {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
                return digits > 0 && byte == UInt8(ascii: ",") ? value : nil
            }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow, digits < 19 else { return nil }
            value = shifted + Int64(byte - UInt8(ascii: "0"))
            digits += 1
        }
        return nil
    }

    private static func decodeBatch(_ line: ArraySlice<UInt8>) -> JournalBatch? {
        guard let batch = try? JSONCoding.decode(JournalBatch.self, from: Array(line)), batch.problem == nil else { return nil }
        return batch
    }
}

import ItsypadSupport

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
        JournalChange(
            seq: seq, op: .save, recordType: record.recordType, recordName: record.recordName, tag: record.recordChangeTag, record: record)
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

    /// The line (see `Journal.line`).
    func encodedLine() throws -> [UInt8] {
        Journal.line(
            seq: seq,
            ["device": try JSONCoding.encode(device), "time": Array(String(time).utf8), "changes": try JSONCoding.encode(changes)])
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

/// A change read from the journal, with where to resume reading after it. A change that does not
/// follow the format (a bad name, a record that does not parse) keeps its place, as `malformed`.
struct LocatedChange {
    let seq: Int64
    let entry: Entry
    let resume: JournalPosition

    enum Entry {
        case change(JournalChange)
        case malformed(QuarantinedItem)
    }

    var change: JournalChange? { if case .change(let change) = entry { return change }; return nil }
}

/// The result of reading the journal after some seq.
struct JournalRead {
    var changes: [LocatedChange]
    var moreComing: Bool
    /// Lines that are not journal batches (other than a torn last one), skipped.
    var malformedLines: [QuarantinedItem] = []

    /// The well-formed changes.
    var validChanges: [JournalChange] { changes.compactMap(\.change) }
    /// Everything skipped: whole lines, and single changes.
    var quarantined: [QuarantinedItem] {
        malformedLines
            + changes.compactMap {
                if case .malformed(let item) = $0.entry { return item }; return nil
            }
    }
}

/// A journal line as read: its seq range and each change, checked one by one.
struct DecodedBatch {
    let seq: Int64
    let lastSeq: Int64
    let changes: [LocatedChange.Entry]
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
    let files: FileIO
    let directory: String
    /// Appends go to a new segment once the last one reaches this size.
    let segmentSizeLimit: Int

    private static let newline = UInt8(ascii: "\n")
    private static let seqPrefix = Array("{\"seq\":".utf8)

    static func fileName(forFirstSeq seq: Int64) -> String {
        let digits = String(seq)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits + ".log"
    }

    /// Segments in seq order: names of exactly 16 digits (a seq from 1 to `BackendLimits.maxSeq`) and ".log".
    /// Other files (temporary ones, strays) are ignored.
    func segments() throws -> [JournalSegment] {
        let names = try files.listDirectory(directory) ?? []
        return names.compactMap { name -> JournalSegment? in
            guard name.utf8.count == 20, name.hasSuffix(".log"), let seq = NameRules.seq(name.prefix(16)) else { return nil }
            return JournalSegment(firstSeq: seq, path: directory + "/" + name)
        }
        .sorted { $0.firstSeq < $1.firstSeq }
    }

    func totalSize() throws -> Int {
        try segments().reduce(0) { total, segment in total + ((try files.status(segment.path))?.size ?? 0) }
    }

    /// A segment's bytes from `offset`, refusing a segment larger than any writer makes.
    private func readSegment(_ segment: JournalSegment, from offset: Int) throws -> [UInt8]? {
        try files.readFileIfExists(segment.path, from: offset, limit: BackendLimits.maxSegmentBytes)
    }

    /// The seq a segment that cannot be read (a symlink, a FIFO, oversize) may have reached: every
    /// change takes at least a byte of a segment, so none of its seqs is beyond this one.
    static func highestSeq(ofUnreadable segment: JournalSegment) -> Int64 {
        min(segment.firstSeq - 1 + Int64(BackendLimits.maxSegmentBytes), BackendLimits.maxSeq)
    }

    // MARK: Reading

    /// Committed changes with seq > `seq`, in order. With `maxChanges`, stops after that many and
    /// reports whether more exist. Starts at `hint` when it is usable, otherwise at the segment
    /// whose name says it holds `seq + 1`, so the cost follows the number of changes returned.
    func read(after seq: Int64, from hint: JournalPosition?, maxChanges: Int?, stats: inout JournalReadStats) throws -> JournalRead {
        let segments = try segments()
        if let hint, let index = segments.firstIndex(where: { $0.firstSeq == hint.segment }),
            let result = try scan(
                after: seq, segments: segments, startIndex: index, startOffset: hint.offset, usingHint: true, maxChanges: maxChanges,
                stats: &stats)
        {
            return result
        }
        let startIndex = segments.lastIndex { $0.firstSeq <= seq + 1 } ?? 0
        return try scan(
            after: seq, segments: segments, startIndex: startIndex, startOffset: 0, usingHint: false, maxChanges: maxChanges, stats: &stats)
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
        var malformedLines: [QuarantinedItem] = []
        var expectedBatchSeq: Int64?
        // Changes missing after a skipped line are explained by it: that is no gap in the journal.
        var skippedBeforeFirst = false
        for index in startIndex..<segments.count {
            let segment = segments[index]
            let offset = index == startIndex ? startOffset : 0
            // With a hint, read one byte earlier to check that it lands right after a newline.
            let readOffset = max(0, offset - 1)
            let read: [UInt8]?
            do {
                read = try readSegment(segment, from: readOffset)
            } catch BackendError.corrupt(let path, let reason) {
                // Not a plain file of a sane size: skipped and reported as a malformed line is.
                malformedLines.append(QuarantinedItem(id: nil, location: path, reason: reason))
                expectedBatchSeq = nil
                if collected.isEmpty { skippedBeforeFirst = true }
                continue
            }
            guard let bytes = read else {
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
                // Skip without decoding when the next line (or segment) still starts at or before seq + 1,
                // and after this one: a line whose seq does not increase is no guide to what it follows.
                let nextLineSeq = lineIndex + 1 < lines.count ? Self.peekSeq(bytes[lines[lineIndex + 1].bytes]) : nextSegmentSeq
                if let nextLineSeq, nextLineSeq <= seq + 1, let lineSeq = Self.peekSeq(bytes[line.bytes]), lineSeq < nextLineSeq {
                    continue
                }
                let decoded = Self.decodeBatch(bytes[line.bytes], location: Self.location(segment, line.start))
                guard case .success(let batch) = decoded else {
                    if isLastSegment && lineIndex == lines.count - 1 {
                        break  // A torn final write: it was never committed.
                    }
                    // Skipped and reported; the journal goes on at the next good line.
                    if case .failure(let problem) = decoded { malformedLines.append(problem.item) }
                    expectedBatchSeq = nil
                    if collected.isEmpty { skippedBeforeFirst = true }
                    continue
                }
                stats.batchesDecoded += 1
                stats.changesDecoded += batch.changes.count
                if let expected = expectedBatchSeq, batch.seq != expected {
                    let reason =
                        batch.seq < expected
                        ? "repeats seq \(batch.seq), already used" : "journal jumps from seq \(expected - 1) to \(batch.seq)"
                    malformedLines.append(QuarantinedItem(id: nil, location: Self.location(segment, line.start), reason: reason))
                    if collected.isEmpty { skippedBeforeFirst = true }
                    if batch.seq < expected { continue }
                }
                expectedBatchSeq = batch.lastSeq + 1
                for (changeIndex, entry) in batch.changes.enumerated() {
                    let changeSeq = batch.seq + Int64(changeIndex)
                    guard changeSeq > seq else { continue }
                    if collected.isEmpty && changeSeq != seq + 1 && !skippedBeforeFirst {
                        if usingHint { return nil }
                        throw JournalReadError.gap(after: seq, next: changeSeq)
                    }
                    let isLastInLine = changeIndex == batch.changes.count - 1
                    let resume = JournalPosition(segment: segment.firstSeq, offset: isLastInLine ? line.end : line.start)
                    collected.append(LocatedChange(seq: changeSeq, entry: entry, resume: resume))
                    if let maxChanges, collected.count > maxChanges {
                        return JournalRead(changes: Array(collected.prefix(maxChanges)), moreComing: true, malformedLines: malformedLines)
                    }
                }
            }
        }
        return JournalRead(changes: collected, moreComing: false, malformedLines: malformedLines)
    }

    /// How a journal line is named in messages: its segment and the byte it starts at.
    static func location(_ segment: JournalSegment, _ offset: Int) -> String {
        "\(segment.path), line at byte \(offset)"
    }

    // MARK: Writing (under the lock)

    /// Finds the last committed line by reading backwards from the end of the last segment.
    /// The latest seq is that of the last good line: malformed ones before it were skipped by
    /// readers, and a malformed last line is cut off like a torn one. A last segment that cannot be
    /// read (readers skip it) is left alone: the next write starts a segment after every seq it may hold.
    func tail() throws -> JournalTail {
        guard let segment = try segments().last else {
            return JournalTail(segment: nil, committedEnd: 0, fileSize: 0, latestSeq: 0)
        }
        let unreadable = JournalTail(segment: nil, committedEnd: 0, fileSize: 0, latestSeq: Self.highestSeq(ofUnreadable: segment))
        let opened: Int32?
        do { opened = try files.open(segment.path, flags: O_RDONLY) } catch BackendError.corrupt { return unreadable }
        guard let descriptor = opened else { throw JournalReadError.compactedMeanwhile }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw FileIO.error(FileSystem.fail("fstat", segment.path)) }
        let size = Int(info.st_size)
        guard size <= BackendLimits.maxSegmentBytes else { return unreadable }
        var window = 64 * 1024
        while true {
            let start = max(0, size - window)
            let bytes = try files.read(descriptor, path: segment.path, offset: start, count: size - start)
            var lines = Self.completeLines(in: bytes, from: 0, fileOffset: start)
            if start > 0 && !lines.isEmpty {
                lines.removeFirst()  // May begin mid-line.
            }
            let decoded = lines.reversed().lazy.compactMap { line in
                (try? Self.decodeBatch(bytes[line.bytes], location: "").get()).map { (line, $0) }
            }.first
            // Read further back until a good line turns up, or the whole segment is read.
            if start > 0 && decoded == nil {
                window *= 4
                continue
            }
            guard let last = lines.last else {
                return JournalTail(segment: segment, committedEnd: 0, fileSize: size, latestSeq: segment.firstSeq - 1)
            }
            let lastIsGood = decoded?.0.start == last.start
            let latestSeq = max(decoded?.1.lastSeq ?? 0, segment.firstSeq - 1)
            return JournalTail(segment: segment, committedEnd: lastIsGood ? last.end : last.start, fileSize: size, latestSeq: latestSeq)
        }
    }

    /// Cuts off an uncommitted (torn) last write so the next line starts cleanly.
    func repair(_ tail: JournalTail) throws -> JournalTail {
        guard tail.isTorn, let segment = tail.segment else { return tail }
        try files.truncate(segment.path, to: tail.committedEnd)
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
        guard let descriptor = try files.open(path, flags: O_WRONLY | O_APPEND) else { throw JournalReadError.compactedMeanwhile }
        defer { close(descriptor) }
        do {
            try files.writeAll(descriptor, line, path: path)
            try files.sync(descriptor, path: path)
        } catch {
            // Leave no partial line behind; if this fails too, the next writer truncates it.
            _ = ftruncate(descriptor, off_t(previousEnd))
            throw error
        }
    }

    /// Creates an empty segment (if absent) and makes its name durable. Returns its path.
    @discardableResult
    func createSegment(firstSeq: Int64) throws -> String {
        try files.makeDirectory(directory)
        let path = directory + "/" + Self.fileName(forFirstSeq: firstSeq)
        if let descriptor = try files.open(path, flags: O_WRONLY | O_CREAT) { close(descriptor) }
        try files.syncDirectory(directory)
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

    /// A journal line of either format: `{"seq":N,` first, so that a reader finds the seq without
    /// decoding the line (`peekSeq`), then `fields`, each value already JSON, and a newline.
    static func line(seq: Int64, _ fields: KeyValuePairs<String, [UInt8]>) -> [UInt8] {
        var line = seqPrefix + Array(String(seq).utf8)
        for (name, value) in fields { line += Array(",\"\(name)\":".utf8) + value }
        return line + Array("}\n".utf8)
    }

    /// The batch's first seq, read from the `{"seq":N,` prefix without decoding the line.
    /// Any number of digits is accepted without trapping; one beyond `BackendLimits.maxSeq` is no seq.
    static func peekSeq(_ line: ArraySlice<UInt8>) -> Int64? {
        guard line.starts(with: seqPrefix) else { return nil }
        var value: Int64 = 0
        var digits = 0
        for byte in line.dropFirst(seqPrefix.count) {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
                return digits > 0 && byte == UInt8(ascii: ",") ? value : nil
            }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            digits += 1
            guard value <= BackendLimits.maxSeq else { return nil }
        }
        return nil
    }

    /// Why a line is not a journal batch.
    struct MalformedLine: Error {
        let item: QuarantinedItem
    }

    /// Decodes a line, checking its structure (a seq in range, consecutive changes) and then each change
    /// on its own: one bad change is skipped with its reason, the others in the line still apply.
    static func decodeBatch(_ line: ArraySlice<UInt8>, location: String) -> Result<DecodedBatch, MalformedLine> {
        func malformed(_ reason: String) -> Result<DecodedBatch, MalformedLine> {
            .failure(MalformedLine(item: QuarantinedItem(id: nil, location: location, reason: reason)))
        }
        guard line.count <= BackendLimits.maxJournalLineBytes else {
            return malformed("\(line.count) bytes; a journal line is at most \(BackendLimits.maxJournalLineBytes)")
        }
        guard let json = try? JSONValue.parse(line) else { return malformed("not a valid journal batch (not JSON)") }
        guard let first = json["seq"]?.int64Value, NameRules.isSeq(first), case .array(let items)? = json["changes"], !items.isEmpty,
            Int64(items.count) <= BackendLimits.maxSeq - first + 1, json["device"]?.stringValue != nil, json["time"]?.int64Value != nil
        else {
            return malformed(
                "not a valid journal batch: it needs seq (1…\(BackendLimits.maxSeq)), device, time and a non-empty changes array")
        }
        var entries: [LocatedChange.Entry] = []
        entries.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            let seq = first + Int64(index)
            guard item["seq"]?.int64Value == seq else { return malformed("batch \(first) has a change out of sequence at \(seq)") }
            entries.append(decodeChange(item, seq: seq, location: location))
        }
        return .success(DecodedBatch(seq: first, lastSeq: first + Int64(items.count) - 1, changes: entries))
    }

    /// One change of a batch, or why it does not follow the format.
    private static func decodeChange(_ json: JSONValue, seq: Int64, location: String) -> LocatedChange.Entry {
        let type = json["recordType"]?.stringValue, name = json["recordName"]?.stringValue
        let id = type.flatMap { type in name.map { RecordID(recordType: type, recordName: $0) } }
        let validID = id.flatMap { NameRules.problem(with: $0) == nil ? $0 : nil }
        func malformed(_ reason: String) -> LocatedChange.Entry {
            .malformed(QuarantinedItem(id: validID, location: "\(location), change \(seq)", reason: reason))
        }
        let change: JournalChange
        do { change = try JSONCoding.decode(JournalChange.self, from: json) } catch { return malformed(JSONCoding.describe(error)) }
        if let problem = NameRules.problem(with: change.id) { return malformed(problem) }
        switch change.op {
        case .save:
            guard let record = change.record, record.id == change.id else { return malformed("a save must carry its record") }
            if let problem = NameRules.problem(withStored: record) { return malformed(problem) }
            guard record.recordChangeTag == String(seq) else { return malformed("the record's change tag must be its seq, \(seq)") }
        case .delete:
            guard change.record == nil else { return malformed("a delete carries no record") }
        }
        return .change(change)
    }
}

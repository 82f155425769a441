/// One change in a device's journal: a new version of a record (a save, or a tombstone for a delete).
struct DeviceChange: Codable, Equatable {
    enum Operation: String, Codable {
        case save, delete
    }

    let seq: Int64
    let op: Operation
    let recordType: String
    let recordName: String
    let version: VersionDocument

    var id: RecordID { RecordID(recordType: recordType, recordName: recordName) }
}

/// One committed batch of one device: one line of its journal.
struct DeviceBatch: Codable, Equatable {
    /// Sequence number of the first change; the device's changes are numbered without gaps.
    let seq: Int64
    let device: String
    /// The data directory that wrote it (two with one device id are clones).
    let instance: String
    let zone: String
    let time: Int64
    let changes: [DeviceChange]

    var lastSeq: Int64 { seq + Int64(changes.count) - 1 }

    /// The line, with "seq" first so that it can be found without decoding.
    func encodedLine() throws -> [UInt8] {
        var line = Array("{\"seq\":\(seq),\"changes\":".utf8)
        line += try JSONCoding.encode(changes)
        line += Array(",\"device\":".utf8) + (try JSONCoding.encode(device))
        line += Array(",\"instance\":".utf8) + (try JSONCoding.encode(instance))
        line += Array(",\"time\":\(time),\"zone\":".utf8) + (try JSONCoding.encode(zone))
        return line + Array("}\n".utf8)
    }

    /// Why this line cannot be a batch of `device`'s journal, or nil.
    func problem(device expected: String) -> String? {
        guard device == expected else { return "written by \(device), not \(expected)" }
        guard !changes.isEmpty, seq >= 1, lastSeq < VersionVector.maxSequence else { return "batch \(seq) has no changes or numbers out of range" }
        for (index, change) in changes.enumerated() {
            guard change.seq == seq + Int64(index) else { return "change \(change.seq) is out of sequence" }
            guard change.version.record.id == change.id, change.version.deleted == (change.op == .delete),
                  let version = change.version.recordVersion(writer: device) else { return "change \(change.seq) is malformed" }
            // A device's own change carries its own number; a derived merge carries none of its own.
            guard version.isDerived || version.version.entries[device] == change.seq else { return "change \(change.seq) has version \(version.version)" }
        }
        return nil
    }
}

/// A device's append-only journal, `devices/<device>/journal/<first seq>.log`, in segments named
/// as in format 1. Readers take only complete, well-formed lines, in sequence, and stop where the
/// journal has not fully replicated yet.
struct DeviceJournal {
    let files: FileIO
    let device: String
    let directory: String
    let segmentSizeLimit: Int

    /// What a read returned, and why it stopped early, if it did.
    struct Read {
        var batches: [(batch: DeviceBatch, resume: JournalPosition)] = []
        var moreComing = false
        /// The file it waits for and why: a segment not arrived, half replicated, or a malformed line.
        var waiting: (path: String, reason: String)?
    }

    /// The longest line a reader accepts (a batch of 2 MiB of records, each with a base of up to 1 MiB, and framing).
    static let maxLineBytes = 8 * 1024 * 1024

    /// A segment grows past the size limit by at most one line; a larger one is not read into memory.
    var maxSegmentBytes: Int { segmentSizeLimit + Self.maxLineBytes }

    private var segmentNames: Journal { Journal(files: files, directory: directory, segmentSizeLimit: segmentSizeLimit) }

    func segments() throws -> [JournalSegment] { try segmentNames.segments() }

    /// Batches after `seq`, oldest first, until about `maxChanges` changes. Starts at `hint` when
    /// it points into the right segment. `accept` may hold a batch back (e.g. an asset it needs has
    /// not arrived): reading stops before it, with that reason.
    func read(after seq: Int64, hint: JournalPosition?, maxChanges: Int, accept: (DeviceBatch) throws -> String? = { _ in nil }) throws -> Read {
        var result = Read()
        let segments = try segments()
        guard let first = segments.first else { return result }
        guard let startIndex = segments.lastIndex(where: { $0.firstSeq <= seq + 1 }) else {
            result.waiting = (first.path, "the segments before \(Journal.fileName(forFirstSeq: first.firstSeq)) have not arrived")
            return result
        }
        var expected = seq + 1
        var changes = 0
        for index in startIndex..<segments.count {
            let segment = segments[index]
            if index > startIndex && segment.firstSeq != expected {
                result.waiting = (segment.path, "the journal continues at \(segment.firstSeq), not \(expected): a segment has not fully arrived")
                return result
            }
            let offset = index == startIndex && hint?.segment == segment.firstSeq ? hint!.offset : 0
            if let size = try files.status(segment.path)?.size, size > maxSegmentBytes {
                result.waiting = (segment.path, "larger than \(maxSegmentBytes) bytes (quarantined)")
                return result
            }
            guard let bytes = try files.readFileIfExists(segment.path, from: offset) else { continue }
            var lineStart = 0
            for (position, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
                defer { lineStart = position + 1 }
                guard let batch = try? JSONCoding.decode(DeviceBatch.self, from: Array(bytes[lineStart..<position])),
                      batch.problem(device: device) == nil else {
                    result.waiting = (segment.path, "line at byte \(offset + lineStart) is not a valid batch of \(device) (quarantined)")
                    return result
                }
                if batch.lastSeq < expected { continue }
                guard batch.seq == expected else {
                    result.waiting = (segment.path, "line at byte \(offset + lineStart) starts at \(batch.seq), not \(expected) (quarantined)")
                    return result
                }
                if changes >= maxChanges {
                    result.moreComing = true
                    return result
                }
                if let reason = try accept(batch) {
                    result.waiting = (segment.path, reason)
                    return result
                }
                result.batches.append((batch, JournalPosition(segment: segment.firstSeq, offset: offset + position + 1)))
                changes += batch.changes.count
                expected = batch.lastSeq + 1
            }
        }
        return result
    }

    /// The device's own last committed sequence number (0 for an empty journal). Reads the last
    /// segment only. A malformed complete line in its own journal is corruption, not a wait.
    func lastSeq() throws -> Int64 {
        guard let segment = try segments().last else { return 0 }
        let read = try read(after: segment.firstSeq - 1, hint: nil, maxChanges: .max)
        if let waiting = read.waiting { throw BackendError.corrupt(path: waiting.path, reason: waiting.reason) }
        return read.batches.last?.batch.lastSeq ?? segment.firstSeq - 1
    }

    /// Appends the batch as one line, then fsyncs: once this returns it is committed. A torn last
    /// line (a write that never completed) is cut off first.
    func append(_ batch: DeviceBatch) throws {
        let line = try batch.encodedLine()
        do {
            var path = try segments().last?.path
            if let current = path, (files.tree.fileSize(current) ?? 0) >= segmentSizeLimit { path = nil }
            if path == nil { path = try segmentNames.createSegment(firstSeq: batch.seq) }
            try AppendFile(path: path!, in: files.tree).append(line)
        } catch let failure as FileSystemError {
            throw FileIO.error(failure)
        }
    }
}

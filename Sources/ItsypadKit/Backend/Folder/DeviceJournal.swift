import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// One change in a device's journal: a new version of a record (a save, or a tombstone for a
/// delete); a drop: the device removed its record file because it was superseded or, for a
/// tombstone, because every device has seen it; or a checkpoint, the first line of a compacted journal.
struct DeviceChange: Codable, Equatable {
    enum Operation: String, Codable {
        case save, delete, drop, checkpoint
    }

    let seq: Int64
    let op: Operation
    let recordType: String?
    let recordName: String?
    /// The new version, for a save or delete.
    let version: VersionDocument?
    /// What a drop removed, for a drop.
    let drop: DropDocument?
    /// What a reader starting from the record files needs, for a checkpoint.
    let checkpoint: CheckpointDocument?

    /// What `JSONCoding.encode(self)` writes (keys sorted), written by hand, the version document
    /// given already encoded (none: the change is written without one). A drop's and a
    /// checkpoint's documents, written by compaction rather than a record at a time, go
    /// through `JSONCoding`.
    func encoded(version document: [UInt8]?) throws -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity((document?.count ?? 0) + 192)
        var object = JSONMembers(opening: &bytes)
        if let checkpoint {
            object.key("checkpoint", in: &bytes)
            bytes += try JSONCoding.encode(checkpoint)
        }
        if let drop {
            object.key("drop", in: &bytes)
            bytes += try JSONCoding.encode(drop)
        }
        object.key("op", in: &bytes)
        JSONValue.writeString(op.rawValue, to: &bytes)
        if let recordName {
            object.key("recordName", in: &bytes)
            JSONValue.writeString(recordName, to: &bytes)
        }
        if let recordType {
            object.key("recordType", in: &bytes)
            JSONValue.writeString(recordType, to: &bytes)
        }
        object.key("seq", in: &bytes)
        bytes += String(seq).utf8
        if let document {
            object.key("version", in: &bytes)
            bytes += document
        }
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// The record changed; a checkpoint names none.
    var id: RecordID { RecordID(recordType: recordType ?? "", recordName: recordName ?? "") }

    init(
        seq: Int64, op: Operation, id: RecordID? = nil, version: VersionDocument? = nil, drop: DropDocument? = nil,
        checkpoint: CheckpointDocument? = nil
    ) {
        self.init(
            seq: seq, op: op, recordType: id?.recordType, recordName: id?.recordName, version: version, drop: drop, checkpoint: checkpoint)
    }

    init(
        seq: Int64, op: Operation, recordType: String?, recordName: String?, version: VersionDocument? = nil, drop: DropDocument?,
        checkpoint: CheckpointDocument?
    ) {
        self.seq = seq
        self.op = op
        self.recordType = recordType
        self.recordName = recordName
        self.version = version
        self.drop = drop
        self.checkpoint = checkpoint
    }

    /// Why this change is malformed, or nil.
    func problem(device: String) -> String? {
        let named = recordType != nil && recordName != nil && NameRules.problem(with: id) == nil
        switch op {
        case .checkpoint:
            guard let checkpoint, !named, version == nil, drop == nil, checkpoint.requires.count <= VersionVector.maxEntries,
                checkpoint.requires.allSatisfy({
                    VersionVector.isDeviceID($0.key) && $0.key != device && (1..<VersionVector.maxSequence).contains($0.value)
                })
            else { return "checkpoint \(seq) is malformed" }
        case .drop:
            guard let drop, named, version == nil, checkpoint == nil, VersionVector(tag: drop.version) != nil else {
                return "drop \(seq) is malformed"
            }
            if let source = drop.coveredBy,
                !VersionVector.isDeviceID(source.device) || source.device == device
                    || !(1..<VersionVector.maxSequence).contains(source.seq)
            {
                return "drop \(seq) names a bad source"
            }
        case .save, .delete:
            guard named, drop == nil, checkpoint == nil, let document = version, document.record.id == id,
                document.deleted == (op == .delete),
                let recordVersion = document.recordVersion(writer: device)
            else { return "change \(seq) is malformed" }
            // A device's own change carries its own number; a derived merge carries none of its own.
            guard recordVersion.isDerived || recordVersion.version.entries[device] == seq else {
                return "change \(seq) has version \(recordVersion.version)"
            }
        }
        return nil
    }
}

/// The first line of a compacted journal: the device's record files stand for everything before
/// it. `requires` says, per device, how far a reader must have read that device's journal before it
/// relies on these record files: the drops compacted away waited for that.
struct CheckpointDocument: Codable, Equatable {
    let requires: [String: Int64]
}

/// A drop: the version removed, and where the version that covers it was written (none for a
/// tombstone removed because every device has seen it). A reader does not read past a drop before
/// it has read that far in the other device's journal, so a version disappears only once what
/// replaced it is visible.
struct DropDocument: Codable, Equatable {
    /// The removed version's vector, in text form.
    let version: String
    let coveredBy: JournalSource?
}

/// A change in a device's journal: the device and the change's sequence number.
struct JournalSource: Codable, Equatable, Hashable {
    let device: String
    let seq: Int64
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
    /// The `FilesDigest` of the device's record files once this batch is applied, in hexadecimal.
    let files: String

    var lastSeq: Int64 { seq + Int64(changes.count) - 1 }

    /// The line (see `DeviceJournal.line`), and each change's version document as the line holds
    /// it: the record file of that version holds the same bytes, so each is encoded once (`given`:
    /// the caller encoded them, one for each change).
    func encoded(versions given: [[UInt8]?]? = nil) throws -> (line: [UInt8], versions: [[UInt8]?]) {
        let versions = try given ?? changes.map { change in try change.version.map { try $0.encoded() } }
        var list: [UInt8] = [UInt8(ascii: "[")]
        for (index, change) in changes.enumerated() {
            if index > 0 { list.append(UInt8(ascii: ",")) }
            list += try change.encoded(version: versions[index])
        }
        list.append(UInt8(ascii: "]"))
        let line = DeviceJournal.line(
            seq: seq,
            [
                "changes": list, "device": Self.jsonString(device), "files": Self.jsonString(files),
                "instance": Self.jsonString(instance), "time": Array(String(time).utf8), "zone": Self.jsonString(zone),
            ])
        return (line, versions)
    }

    private static func jsonString(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        JSONValue.writeString(text, to: &bytes)
        return bytes
    }

    /// Why this line cannot be a batch of `device`'s journal, or nil.
    func problem(device expected: String) -> String? {
        guard device == expected else { return "written by \(device), not \(expected)" }
        // Checked before `lastSeq` is computed: a seq near Int64.max must not trap.
        guard !changes.isEmpty, (1..<VersionVector.maxSequence).contains(seq), Int64(changes.count) <= VersionVector.maxSequence - seq
        else {
            return "batch \(seq) has no changes or numbers out of range"
        }
        guard Time.validRange.contains(time) else { return "batch \(seq) has a time out of range" }
        guard FilesDigest(hex: files) != nil else { return "batch \(seq) has a malformed files digest" }
        for (index, change) in changes.enumerated() {
            guard change.seq == seq + Int64(index) else { return "change \(change.seq) is out of sequence" }
            if change.op == .checkpoint && changes.count > 1 { return "checkpoint \(change.seq) shares its line" }
            if let problem = change.problem(device: device) { return problem }
        }
        return nil
    }

    /// The checkpoint this line is, if it is one.
    var checkpoint: CheckpointDocument? { changes.count == 1 ? changes[0].checkpoint : nil }
}

/// The XOR of the SHA-256 of `recordType/recordName/version` over a device's record files: a
/// reader that finds the same digest over the files in its copy knows they are complete.
struct FilesDigest: Equatable {
    private(set) var bytes = [UInt8](repeating: 0, count: 32)

    init() {}

    init?(hex: String) {
        guard hex.utf8.count == 64, let bytes = Hex.decode(hex) else { return nil }
        self.bytes = bytes
    }

    var hex: String { Hex.encode(bytes) }

    /// The digest of `files`.
    init(files: [(id: RecordID, version: String)]) {
        for file in files { toggle(file.id, version: file.version) }
    }

    /// Adds a file, or takes it away again (XOR is its own inverse).
    mutating func toggle(_ id: RecordID, version: String) {
        var hasher = SHA256()
        hasher.update(Array("\(id.recordType)/\(id.recordName)/\(version)".utf8))
        combine(FilesDigest(bytes: hasher.finalize()))
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    /// Adds the files of another digest (toggling those both have).
    private mutating func combine(_ other: FilesDigest) {
        for index in bytes.indices { bytes[index] ^= other.bytes[index] }
    }
}

/// A journal segment file, `<first seq, 16 digits>.log`.
struct JournalSegment: Equatable {
    let firstSeq: Int64
    let path: String
}

/// A byte position in a segment: where to resume reading. Carried in change tokens as a hint.
struct JournalPosition: Equatable, Sendable {
    let segment: Int64
    let offset: Int
}

/// A device's append-only journal, `devices/<device>/journal/<first seq>.log`, in segments named
/// by their first sequence number. Readers take only complete, well-formed lines, in sequence, and stop where the
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
        /// The file it waits for and why: a segment not arrived or half replicated, or (`malformed`)
        /// a line or segment that does not follow the format, which is quarantined.
        var waiting: (path: String, reason: String, malformed: Bool)?
    }

    /// The longest line a reader accepts (a batch of 2 MiB of records, each with a base of up to 1 MiB, and framing).
    static let maxLineBytes = 8 * 1024 * 1024

    /// A segment grows past the size limit by at most one line; a larger one is not read into memory.
    var maxSegmentBytes: Int { segmentSizeLimit + Self.maxLineBytes }

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

    /// Creates an empty segment (if absent) and makes its name durable. Returns its path.
    private func createSegment(firstSeq: Int64) throws -> String {
        try files.makeDirectory(directory)
        let path = directory + "/" + Self.fileName(forFirstSeq: firstSeq)
        if let descriptor = try files.open(path, flags: O_WRONLY | O_CREAT) { close(descriptor) }
        try files.syncDirectory(directory)
        return path
    }

    /// A journal line: `{"seq":N,` first, then `fields`, each value already JSON, and a newline.
    static func line(seq: Int64, _ fields: KeyValuePairs<String, [UInt8]>) -> [UInt8] {
        var line = Array("{\"seq\":".utf8) + Array(String(seq).utf8)
        for (name, value) in fields { line += Array(",\"\(name)\":".utf8) + value }
        return line + Array("}\n".utf8)
    }

    /// Batches after `seq` and up to `last`, oldest first, until about `maxChanges` changes. Starts at `hint` when
    /// it points into the right segment. `accept` may hold a batch back (e.g. an asset it needs has
    /// not arrived): reading stops before it, with that reason.
    func read(
        after seq: Int64, through last: Int64 = .max, hint: JournalPosition?, maxChanges: Int,
        accept: (DeviceBatch) throws -> String? = { _ in nil }
    ) throws -> Read {
        var batches: [(batch: DeviceBatch, resume: JournalPosition)] = []
        var result = try scan(after: seq, through: last, hint: hint, maxChanges: maxChanges, accept: accept) { batches.append(($0, $1)) }
        result.batches = batches
        return result
    }

    /// What `read` returns, each batch handed to `visit` with its resume position instead of kept
    /// (the result's `batches` stay empty): memory follows one segment, not the journal.
    func scan(
        after seq: Int64, through last: Int64 = .max, hint: JournalPosition?, maxChanges: Int,
        accept: (DeviceBatch) throws -> String? = { _ in nil }, visit: (DeviceBatch, JournalPosition) throws -> Void
    ) throws -> Read {
        var result = Read()
        let segments: [JournalSegment]
        do { segments = try self.segments() } catch BackendError.corrupt(let path, let reason) {
            // The journal folder is a symlink or a file: no writer makes that.
            result.waiting = (path, reason, true)
            return result
        }
        guard let first = segments.first else { return result }
        guard let startIndex = segments.lastIndex(where: { $0.firstSeq <= seq + 1 }) else {
            result.waiting = (first.path, "the segments before \(Self.fileName(forFirstSeq: first.firstSeq)) have not arrived", false)
            return result
        }
        var expected = seq + 1
        var changes = 0
        for index in startIndex..<segments.count {
            let segment = segments[index]
            if index > startIndex && segment.firstSeq != expected {
                result.waiting = (
                    segment.path, "the journal continues at \(segment.firstSeq), not \(expected): a segment has not fully arrived", false
                )
                return result
            }
            let offset = index == startIndex && hint?.segment == segment.firstSeq ? hint!.offset : 0
            let bytes: [UInt8]
            do {
                guard let read = try files.readFileIfExists(segment.path, from: offset, limit: maxSegmentBytes) else { continue }
                bytes = read
            } catch BackendError.corrupt(_, let reason) {
                // Too large, a symlink, a FIFO: no writer makes that.
                result.waiting = (segment.path, reason, true)
                return result
            }
            var lineStart = 0
            for (position, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
                defer { lineStart = position + 1 }
                guard let batch = DeviceBatch.read(bytes[lineStart..<position]),
                    batch.problem(device: device) == nil
                else {
                    result.waiting = (segment.path, "line at byte \(offset + lineStart) is not a valid batch of \(device)", true)
                    return result
                }
                if batch.lastSeq < expected { continue }
                if batch.seq > last { return result }
                guard batch.seq == expected else {
                    result.waiting = (segment.path, "line at byte \(offset + lineStart) starts at \(batch.seq), not \(expected)", true)
                    return result
                }
                if changes >= maxChanges {
                    result.moreComing = true
                    return result
                }
                if let reason = try accept(batch) {
                    result.waiting = (segment.path, reason, false)
                    return result
                }
                try visit(batch, JournalPosition(segment: segment.firstSeq, offset: offset + position + 1))
                changes += batch.changes.count
                expected = batch.lastSeq + 1
            }
        }
        return result
    }

    /// The checkpoint that starts the journal, if it was compacted: the first line of the first
    /// segment. Nil when that line is not a checkpoint or has not fully arrived.
    func checkpoint() throws -> (batch: DeviceBatch, segment: JournalSegment)? {
        let segments: [JournalSegment]
        do { segments = try self.segments() } catch BackendError.corrupt { return nil }  // Quarantined by `read`.
        guard let first = segments.first, first.firstSeq > 1 else { return nil }
        let read = try read(after: first.firstSeq - 1, through: first.firstSeq, hint: nil, maxChanges: 1)
        guard let batch = read.batches.first?.batch, batch.checkpoint != nil else { return nil }
        return (batch, first)
    }

    /// Where the journal ends: its last committed batch, the position after its line, and the
    /// segment file's inode (a segment replaced whole, by a compaction, is another file).
    struct End: Equatable {
        let batch: DeviceBatch
        let position: JournalPosition
        let inode: UInt64
    }

    /// The device's own last committed batch (nil for an empty journal). Reads the last segment
    /// only. A malformed complete line in its own journal is corruption, not a wait.
    func last() throws -> DeviceBatch? { try end()?.batch }

    /// Where the device's own journal ends. Given where an earlier call found its end (`known`),
    /// reads only the lines after it while the last segment is that same file, no shorter: a
    /// segment is appended to, so what was read stays as it was.
    func end(after known: End? = nil) throws -> End? {
        guard let segment = try segments().last, let status = try files.status(segment.path) else { return nil }
        var end: End?
        let read: Read
        if let known, known.position.segment == segment.firstSeq, known.inode == status.inode, known.position.offset <= status.size {
            end = known
            read = try scan(after: known.batch.lastSeq, hint: known.position, maxChanges: .max) { batch, position in
                end = End(batch: batch, position: position, inode: status.inode)
            }
        } else {
            read = try scan(after: segment.firstSeq - 1, hint: nil, maxChanges: .max) { batch, position in
                end = End(batch: batch, position: position, inode: status.inode)
            }
        }
        if let waiting = read.waiting { throw BackendError.corrupt(path: waiting.path, reason: waiting.reason) }
        return end
    }

    /// The device's own last committed sequence number (0 for an empty journal).
    func lastSeq() throws -> Int64 { try last()?.lastSeq ?? 0 }

    /// Appends the batch as one line, then fsyncs: once this returns it is committed. A torn last
    /// line (a write that never completed) is cut off first. Returns where the journal now ends,
    /// and each change's version document as encoded (see `DeviceBatch.encoded`; `versions`: as
    /// the caller encoded them).
    @discardableResult
    func append(
        _ batch: DeviceBatch, versions given: [[UInt8]?]? = nil, startingSegment: Bool = false
    ) throws -> (
        end: End, versions: [[UInt8]?]
    ) {
        let (line, versions) = try batch.encoded(versions: given)
        do {
            var segment = startingSegment ? nil : try segments().last
            if let current = segment, (files.tree.fileSize(current.path) ?? 0) >= segmentSizeLimit { segment = nil }
            let firstSeq = segment?.firstSeq ?? batch.seq
            let file = try AppendFile(path: try segment?.path ?? createSegment(firstSeq: firstSeq), in: files.tree)
            let offset = try file.append(line)
            let end = End(batch: batch, position: JournalPosition(segment: firstSeq, offset: offset + line.count), inode: file.inode)
            return (end, versions)
        } catch let failure as FileSystemError {
            throw FileIO.error(failure)
        }
    }
}

import ItsypadModel

/// The versions of the lines this backend committed to its own journal and no fetch has read yet,
/// as a fetch returns them: the fetch after a push takes them from here instead of reading back and
/// decoding what it just wrote. Kept in memory only, within a bound: past it (or given a line whose
/// versions it was not told, such as a drop), everything is let go and nothing more is held until a
/// fetch ends, so a long push holds at most the bound once; a fetch then reads the journal.
struct OwnEchoes {
    /// Changes held at most, and their version documents' bytes.
    static let maxChanges = 12_000
    static let maxBytes = 16 << 20

    /// One committed line: where it ends and the versions its saves and deletions wrote.
    struct Line {
        let lastSeq: Int64
        let resume: JournalPosition
        let changes: Int
        let bytes: Int
        let versions: [RecordVersion]
    }

    /// The journal's last sequence number before the first line held.
    private(set) var after: Int64
    /// The zone the lines were written in.
    let zone: String
    private(set) var lines: [Line] = []
    private var changes = 0
    private var bytes = 0
    /// Lines were let go: nothing is held until a fetch ends (see `FolderBackend.forgetEchoes`).
    private(set) var isFull = false

    init(after: Int64, zone: String) {
        self.after = after
        self.zone = zone
    }

    /// The last sequence number held.
    var through: Int64 { lines.last?.lastSeq ?? after }

    /// Adds the line committed next; lets everything go instead when it cannot be held (too much
    /// held, a line that does not follow, or `written` not one version for each save and deletion).
    mutating func add(_ batch: DeviceBatch, ending end: JournalPosition, written: [RecordVersion]?, bytes count: Int) {
        guard !isFull else { return }
        guard let written, batch.seq == through + 1, batch.zone == zone, changes + batch.changes.count <= Self.maxChanges,
            bytes + count <= Self.maxBytes, batch.changes.allSatisfy({ $0.op == .save || $0.op == .delete }),
            written.count == batch.changes.count
        else { return letGo() }
        lines.append(Line(lastSeq: batch.lastSeq, resume: end, changes: batch.changes.count, bytes: count, versions: written))
        changes += batch.changes.count
        bytes += count
    }

    /// The lines after `seq` (a line's end, or `after`), until about `maxChanges` changes as a
    /// journal read stops, and whether more follow; nil when `seq` is not where a line held ends.
    func lines(after seq: Int64, maxChanges: Int) -> (lines: ArraySlice<Line>, moreComing: Bool)? {
        guard !isFull, let start = seq == after ? lines.startIndex : lines.firstIndex(where: { $0.lastSeq == seq }).map({ $0 + 1 }) else {
            return nil
        }
        var end = start
        var taken = 0
        while end < lines.endIndex, taken < maxChanges {
            taken += lines[end].changes
            end += 1
        }
        return (lines[start..<end], end < lines.endIndex)
    }

    /// Lets go of every line, and holds none until a fetch ends.
    mutating func letGo() {
        lines = []
        changes = 0
        bytes = 0
        isFull = true
    }

    /// Lets go of the lines up to `seq`, which a fetch has read: a fetch from before them reads the journal.
    mutating func forget(through seq: Int64) {
        guard seq > after, let index = lines.firstIndex(where: { $0.lastSeq == seq }) else { return }
        for line in lines[...index] {
            changes -= line.changes
            bytes -= line.bytes
        }
        lines.removeFirst(index + 1)
        after = seq
    }
}

import ItsypadModel
import ItsypadSupport

/// Rebuilding the index from the log (after a crash left it behind, or a copy of the data directory
/// changed the log's inode) streams the log: its lines are sorted by id in spilled runs (`SortedRuns`),
/// so that each entry's lines are met together, and the slots they leave are sorted again in the
/// index's order as the index is written. A history of 1,000,000 entries is never held.
extension ClipStore {
    /// A line that does not parse in the middle of the log is reported (the log named) and the
    /// log kept as it is: nothing in it is dropped. Only a torn last line was cut, when opened.
    /// The texts of removed entries are erased (what a crash after a removal may have left) before
    /// the index that covers the log is written; `erased` is false when a line needs a compaction for it.
    /// `runLength`: records sorted in memory (see `SortedRuns`).
    static func buildIndex(
        log: AppendFile, directory: String, in tree: FileTree, runLength: Int = 1 << 16
    ) throws -> (index: ClipIndexFile, erased: Bool) {
        let lines = try SortedRuns<LogLine>(directory: directory, in: tree, runLength: runLength)
        try readLines(of: log) { try lines.append($0) }
        var header = ClipIndexHeader()
        header.logSize = UInt64(log.size)
        header.logInode = inode(of: log)
        let slots = try SortedRuns<ClipSlot>(directory: directory, in: tree, runLength: runLength)
        var removed: [ClipSlot] = []
        var erased = true
        // An entry's slot once its lines are all read (the removed ones are erased a chunk at a time).
        func keep(_ slot: ClipSlot) throws {
            try slots.append(slot)
            header.slotCount += 1
            if slot.isLive { header.liveCount += 1 } else { removed.append(slot) }
        }
        var current: ClipSlot?
        try lines.forEachSorted { line in
            if let slot = current, slot.id != line.slot.id {
                try keep(slot)
                current = nil
            }
            switch line.kind {
            case .add:
                // A second add of a live entry is a dead line; after its removal, the entry is back.
                if let slot = current, slot.isLive {
                    header.deadLines += 1
                } else {
                    if let slot = current { try keep(slot) }
                    current = line.slot
                }
            case .remove:
                header.deadLines += 2
                current?.flags |= ClipSlot.deleted
            case .pin, .unpin:
                header.deadLines += 1
                if line.kind == .pin { current?.flags |= ClipSlot.pinned } else { current?.flags &= ~ClipSlot.pinned }
            }
            if removed.count == slotChunk {
                erased = try erase(removed, in: log) && erased
                removed.removeAll(keepingCapacity: true)
            }
            return true
        }
        if let current { try keep(current) }
        erased = try erase(removed, in: log) && erased
        // Entries removed before the last compaction are gone; deleted slots
        // still in the log stay (as deleted) until the next compaction.
        let path = DataDirectoryLayout.clipIndex(in: directory)
        let index = try ClipIndexFile.create(path: path, in: tree, header: header) { body in
            try slots.forEachSorted { slot in
                try body(slot)
                return true
            }
        }
        return (index, erased)
    }

    /// Hands over every line of the log, each as the rebuild sorts it.
    private static func readLines(of log: AppendFile, _ body: (LogLine) throws -> Void) throws {
        let logPath = log.path
        // Only a line's first bytes are held: a big text is neither gathered nor parsed.
        try FileSystem.forEachLineHead(fd: log.fd, size: log.size, path: logPath, headLimit: 1 << 16) { offset, count, head in
            guard let length = UInt32(exactly: count) else {
                throw ItsypadError.corrupt(logPath, "a line of \(count) bytes at byte \(offset)")
            }
            let isWhole = head.count == count
            let last = isWhole ? head.last : try FileSystem.read(fd: log.fd, offset: offset + count - 1, count: 1, path: logPath).first
            // An add line in itsypad's own form is read from its start.
            if let header = head.withUnsafeBufferPointer(ClipLineHeader.init), last == 0x7D,
                case let timestamp = head.withUnsafeBufferPointer(header.timestamp), Time.validRange.contains(timestamp),
                let id = head.withUnsafeBufferPointer(ClipLineHeader.id)
            {
                // A text read whole is looked at for the search and the listing; a longer one is left to their general paths.
                let isText = isWhole && header.binary == nil && header.textStart <= count - 2
                let (comparesAsBytes, isOwnPreview) = head.withUnsafeBufferPointer { line in
                    let text = UnsafeBufferPointer(rebasing: line[header.textStart..<(isText ? count - 2 : header.textStart)])
                    return (isText && TextQuery.comparesAsBytes(escaped: text), isText && PreviewBuilder.isOwnPreview(escaped: text))
                }
                let flags = ClipStore.flags(
                    pinned: header.pinned, localOnly: header.localOnly, binary: header.binary != nil, comparesAsBytes: comparesAsBytes,
                    isOwnPreview: isOwnPreview)
                return try body(LogLine(.add, ClipSlot(id: id, timestamp: timestamp, offset: UInt64(offset), length: length, flags: flags)))
            }
            // Any other form is parsed whole.
            let line = isWhole ? head : try FileSystem.read(fd: log.fd, offset: offset, count: count, path: logPath)[...]
            guard let json = try? JSONValue.parse(line), let op = json["op"]?.stringValue,
                let id = json["id"]?.stringValue, let idBytes = PackedID(id)
            else {
                throw ItsypadError.corrupt(logPath, "unreadable line at byte \(offset)")
            }
            let kind: LogLine.Kind
            var timestamp: Int64 = 0
            var flags: UInt8 = 0
            switch op {
            case "add":
                guard let time = json["ts"]?.int64Value, Time.validRange.contains(time), json["text"]?.stringValue != nil,
                    json["type"] == nil || binary(in: json) != nil
                else {
                    throw ItsypadError.corrupt(logPath, "incomplete entry at byte \(offset)")
                }
                (kind, timestamp) = (.add, time)
                flags =
                    (json["pinned"]?.boolValue == true ? ClipSlot.pinned : 0) | (json["local"] != nil ? ClipSlot.localOnly : 0)
                    | (json["type"] != nil ? ClipSlot.binary : 0)
            case "rm": kind = .remove
            case "pin": kind = json["pinned"]?.boolValue == true ? .pin : .unpin
            default: throw ItsypadError.corrupt(logPath, "unknown operation \(op) at byte \(offset)")
            }
            try body(LogLine(kind, ClipSlot(id: idBytes, timestamp: timestamp, offset: UInt64(offset), length: length, flags: flags)))
        }
    }
}

/// A line of the log as the rebuild sorts it: by id, then place in the log. An add carries its
/// entry's slot; another line its id and place. Its form is a slot's, the kind in a byte of its padding.
private struct LogLine: RunRecord {
    enum Kind: UInt8 { case add, remove, pin, unpin }
    let kind: Kind
    let slot: ClipSlot

    init(_ kind: Kind, _ slot: ClipSlot) {
        self.kind = kind
        self.slot = slot
    }

    static var size: Int { ClipSlot.size }
    private static let kindByte = 41

    func encoded(into bytes: inout [UInt8]) {
        slot.encoded(into: &bytes)
        bytes[bytes.count - ClipSlot.size + LogLine.kindByte] = kind.rawValue
    }

    init(decoding bytes: UnsafeRawBufferPointer, at base: Int) {
        slot = ClipSlot(decoding: bytes, at: base)
        kind = Kind(rawValue: bytes[base + LogLine.kindByte]) ?? .add
    }

    func sortsBefore(_ other: LogLine) -> Bool {
        (slot.id.high, slot.id.low, slot.offset) < (other.slot.id.high, other.slot.id.low, other.slot.offset)
    }
}

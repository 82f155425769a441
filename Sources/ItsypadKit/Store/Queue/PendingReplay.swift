import ItsypadModel
import ItsypadSupport

extension PendingQueue {
    /// Folds log lines into the queue in one pass, in about 36 bytes a clip (a queue may hold
    /// 1,000,000). Each record the lines name gets a number, a clip its place in a `PackedIDSet`
    /// and any other record its place in `others`, and one word of state (`QueuedChange`). The
    /// queue's order is the list of numbers in the order records started waiting: a record
    /// confirmed and changed again goes to the back, and only its last place counts. A snapshot
    /// numbers the clips again by their ids, sorted (`sortedClips`), and keeps 28 bytes a clip.
    struct Replay {
        private var clips = PackedIDSet()
        /// The clips once the replay is a snapshot: no line is read after that, so no table is kept to add them.
        private var sortedClips: SortedPackedIDs?
        private var clipChanges: [QueuedChange] = []
        private var others: [RecordKey] = []
        private var otherNumbers: [RecordKey: UInt32] = [:]
        private var otherChanges: [QueuedChange] = []
        /// The tags of waiting deletions that carry one, by record number (few).
        private var tags: [UInt32: String] = [:]
        /// Record numbers in the order they started waiting, each once after `snapshot`.
        fileprivate private(set) var order: [UInt32] = []
        var version = 0
        /// The summary of the lines before these: a record's waiting version is taken from it when a
        /// line first names the record. Its records are known, and their versions, not their
        /// operations: a replay after a summary is never a `snapshot`.
        private let summary: PendingSummary?

        /// Numbers of records other than clips have this bit set; a clip's is its place in `clips`.
        private static let otherBit: UInt32 = 1 << 31

        init(expectedLines: Int = 0) {
            summary = nil
            // Capacity that is reserved but not written costs no memory: no doubling while a large queue grows.
            clipChanges.reserveCapacity(expectedLines)
            order.reserveCapacity(expectedLines)
        }

        /// The replay of the lines that `summary` does not cover.
        init(after summary: PendingSummary?) {
            self.summary = summary
            version = summary?.version ?? 0
        }

        // MARK: Records

        private func number(of key: ReplayKey) -> UInt32? {
            switch key {
            case .clip(let id): return (sortedClips.map { $0.index(of: id) } ?? clips.index(of: id)).map(UInt32.init)
            case .other(let key): return otherNumbers[key]
            }
        }

        private func key(_ number: UInt32) -> ReplayKey {
            guard number & Replay.otherBit == 0 else { return .other(others[Int(number & ~Replay.otherBit)]) }
            return .clip(sortedClips?[Int(number)] ?? clips[Int(number)])
        }

        fileprivate subscript(_ number: UInt32) -> QueuedChange {
            get { number & Replay.otherBit == 0 ? clipChanges[Int(number)] : otherChanges[Int(number & ~Replay.otherBit)] }
            set {
                if number & Replay.otherBit == 0 {
                    clipChanges[Int(number)] = newValue
                } else {
                    otherChanges[Int(number & ~Replay.otherBit)] = newValue
                }
            }
        }

        /// The record's number, given when a line first names it, with its state from the summary.
        private mutating func name(_ key: ReplayKey) -> UInt32 {
            if let number = number(of: key) { return number }
            let number: UInt32
            let waiting: Int?
            switch key {
            case .clip(let id):
                precondition(sortedClips == nil, "a snapshot names no new record")
                number = UInt32(clips.count)
                clips.insert(id)
                clipChanges.append(QueuedChange())
                waiting = summary?.clipVersion(id)
            case .other(let key):
                number = Replay.otherBit | UInt32(others.count)
                others.append(key)
                otherNumbers[key] = number
                otherChanges.append(QueuedChange())
                waiting = summary?.others[key]
            }
            if let waiting {
                self[number] = QueuedChange(.save, version: waiting, hard: false, tagged: false)
                order.append(number)
            }
            return number
        }

        // MARK: Questions

        /// Whether any line names a record.
        var namesAny: Bool { clipCount > 0 || !others.isEmpty }

        private var clipCount: Int { clipChanges.count }

        /// Each clip's number and id.
        private func forEachClip(_ body: (Int, PackedID) -> Void) {
            if let sortedClips {
                for (number, id) in sortedClips.ids.enumerated() { body(number, id) }
            } else {
                for (number, id) in clips.enumerated() { body(number, id) }
            }
        }

        /// Whether the record waits, as these lines leave it; nil when none of them names it.
        func waits(_ key: ReplayKey) -> Bool? { number(of: key).map { self[$0].waits } }

        /// The waiting change of a record, nil when it does not wait.
        func change(_ key: ReplayKey) -> PendingChange? { number(of: key).flatMap(change) }

        fileprivate func change(_ number: UInt32) -> PendingChange? {
            let queued = self[number]
            guard queued.waits else { return nil }
            return PendingChange(
                key: key(number).recordKey, operation: queued.operation, version: queued.version, tag: queued.tagged ? tags[number] : nil,
                hard: queued.hard)
        }

        /// Every record these lines name: its waiting version, or nil when it no longer waits.
        func named() -> (clips: [(id: PackedID, version: Int?)], others: [(key: RecordKey, version: Int?)]) {
            var named: (clips: [(id: PackedID, version: Int?)], others: [(key: RecordKey, version: Int?)]) = ([], [])
            named.clips.reserveCapacity(clipCount)
            forEachClip { number, id in
                let queued = clipChanges[number]
                named.clips.append((id, queued.waits ? queued.version : nil))
            }
            for (number, key) in others.enumerated() {
                let queued = otherChanges[number]
                named.others.append((key, queued.waits ? queued.version : nil))
            }
            return named
        }

        var waiting: RecordKeySet {
            var keys = RecordKeySet()
            keys.clips.reserveCapacity(clipCount)
            forEachClip { number, id in if clipChanges[number].waits { keys.clips.insert(id) } }
            for (number, key) in others.enumerated() where otherChanges[number].waits { keys.others.insert(key) }
            return keys
        }

        // MARK: Lines

        /// Replays the complete lines of the open log from `start` (a line boundary) to `size`; returns
        /// where the last of them ends, how many there were and which (counted from 1) did not parse.
        mutating func read(fd: Int32, from start: Int, size: Int, path: String) throws -> (end: Int, lines: Int, unreadable: [Int]) {
            var (end, lines, unreadable) = (start, 0, [Int]())
            try FileSystem.forEachLine(fd: fd, from: start, size: size, path: path) { offset, line in
                lines += 1
                end = offset + line.count + 1
                guard let parsed = PendingLine(line) else {
                    unreadable.append(lines)
                    return
                }
                guard let key = parsed.key else { return }
                if parsed.op == "done", let sent = parsed.version {
                    confirm(key, version: sent)
                } else if let operation = PendingChange.Operation(rawValue: parsed.op) {
                    apply(operation, key, version: parsed.version, tag: parsed.tag, hard: parsed.hard)
                }
            }
            return (end, lines, unreadable)
        }

        /// Compaction writes each change's version so that numbering survives it.
        mutating func apply(_ operation: PendingChange.Operation, _ key: ReplayKey, version explicit: Int?, tag: String?, hard: Bool) {
            let number = name(key)
            version = max(version + 1, explicit ?? 0)
            // A record confirmed earlier and changed again goes to the back of the queue.
            if !self[number].waits { order.append(number) }
            self[number] = QueuedChange(operation, version: version, hard: hard, tagged: tag != nil)
            tags[number] = tag
        }

        mutating func confirm(_ key: ReplayKey, version sent: Int) {
            confirm(name(key), version: sent)
        }

        fileprivate mutating func confirm(_ number: UInt32, version sent: Int) {
            guard self[number].waits, self[number].version <= sent else { return }
            self[number] = QueuedChange()
            tags[number] = nil
        }

        /// The waiting changes in order: each record's earlier places and the records that no longer
        /// wait leave `order`, in place.
        consuming func snapshot() -> PendingSnapshot {
            var seenClips = [UInt64](repeating: 0, count: (clips.count + 63) / 64)
            var seenOthers = Set<UInt32>()
            for position in order.indices.reversed() {
                let number = order[position]
                let first: Bool
                if number & Replay.otherBit == 0 {
                    let (word, bit) = (Int(number) / 64, UInt64(1) << (UInt64(number) % 64))
                    first = seenClips[word] & bit == 0
                    seenClips[word] |= bit
                } else {
                    first = seenOthers.insert(number).inserted
                }
                if !first || !self[number].waits { order[position] = UInt32.max }
            }
            order.removeAll { $0 == UInt32.max }
            let (sorted, places) = SortedPackedIDs.sorting(clips.takeMembers(), with: &clipChanges)
            sortedClips = sorted
            for position in order.indices where order[position] & Replay.otherBit == 0 { order[position] = places[Int(order[position])] }
            tags = Dictionary(
                uniqueKeysWithValues: tags.map { number, tag in (number & Replay.otherBit == 0 ? places[Int(number)] : number, tag) })
            return PendingSnapshot(replay: self)
        }
    }
}

/// A waiting change in one word: its version, operation and whether it is hard and carries a tag;
/// zero for a record that does not wait (a waiting version is at least 1).
struct QueuedChange {
    private var word: UInt64 = 0

    init() {}

    init(_ operation: PendingChange.Operation, version: Int, hard: Bool, tagged: Bool) {
        // Versions are at most 2^53 (`PendingLine.versions`): three bits are left below them.
        word = UInt64(version) << 3 | (operation == .delete ? 1 : 0) | (hard ? 2 : 0) | (tagged ? 4 : 0)
    }

    var waits: Bool { word != 0 }
    var version: Int { Int(word >> 3) }
    var operation: PendingChange.Operation { word & 1 != 0 ? .delete : .save }
    var hard: Bool { word & 2 != 0 }
    var tagged: Bool { word & 4 != 0 }
}

/// The waiting changes in order, as one replay of the log found them, in the replay's compact form:
/// a push of 1,000,000 changes reads the log once and makes the changes of one batch at a time. A
/// confirmation made through the queue (`PendingQueue.confirm`) reaches it, so that a change sent
/// since is passed over.
public final class PendingSnapshot {
    private var replay: PendingQueue.Replay

    fileprivate init(replay: PendingQueue.Replay) {
        self.replay = replay
    }

    /// Places in the queue's order, including those of changes confirmed since.
    public var count: Int { replay.order.count }

    /// The changes at `positions` in the queue's order that still wait.
    public func changes(_ positions: Range<Int>) -> [PendingChange] { replay.order[positions].compactMap(replay.change) }

    /// The waiting change of a record, nil when it does not wait.
    func change(for key: RecordKey) -> PendingChange? { replay.change(ReplayKey(key)) }

    func confirm(_ key: RecordKey, version sent: Int) {
        if replay.waits(ReplayKey(key)) == true { replay.confirm(ReplayKey(key), version: sent) }
    }

    var all: [PendingChange] { changes(0..<count) }

    var waiting: RecordKeySet { replay.waiting }
}

import ItsypadModel

/// Bulk changes to the history prepared on the side (see `StagedChanges`):
/// a staged log that starts as a copy of the current one and grows with the
/// new lines, and an index built for it from slots, so that nothing has to be
/// replayed once it is moved into place.
extension ClipStore {
    package final class Staging {
        private let store: ClipStore
        private let stage: StagedChanges
        private var log: StagedFile?
        private var slots: [ClipSlot]
        private var known: Set<PackedID>
        private var removedCount = 0
        /// The slots of the entries added, in the order they came.
        package private(set) var added: [ClipSlot] = []

        package init(_ store: ClipStore, in stage: StagedChanges) throws {
            self.store = store
            self.stage = stage
            slots = try storeOperation { try store.index.allSlots() }
            // A removed entry's id is not known: the entry can come back, as `insert` lets it.
            known = Set(slots.lazy.filter(\.isLive).map(\.id))
        }

        /// How many live entries the history would hold.
        var liveCount: Int { Int(store.index.header.liveCount) + added.count - removedCount }

        private func stagedLog() throws -> StagedFile {
            if let log { return log }
            let file = try stage.file("clips/log", copyingCurrent: true)
            log = file
            return file
        }

        /// Whether `entry`'s id is not live in the history.
        package func isFresh(_ entry: ClipEntry) -> Bool { PackedID(entry.id).map { !known.contains($0) } ?? false }

        /// Adds an entry unless its id is already in the history; returns whether it was added.
        @discardableResult
        package func add(_ entry: ClipEntry) throws -> Bool {
            guard let id = PackedID(entry.id), known.insert(id).inserted else { return false }
            let file = try stagedLog()
            let line = ClipStore.addLine(entry)
            added.append(
                ClipSlot(
                    id: id, timestamp: entry.timestamp, offset: UInt64(file.size), length: UInt32(line.count - 1),
                    flags: ClipStore.flags(for: entry)))
            try storeOperation { try file.append(line) }
            return true
        }

        /// Removes live entries by id; returns the ids that were present.
        package func remove(ids: [String]) throws -> [String] {
            let removal = ClipStore.markRemoved(ids, in: &slots)
            guard !removal.removed.isEmpty else { return [] }
            let file = try stagedLog()
            try storeOperation { try file.append(removal.lines) }
            removedCount += removal.removed.count
            return removal.removed
        }

        /// Stops staging (another `Staging` may start over in the same stage).
        package func abandon() throws {
            try storeOperation { try log?.close() }
            log = nil
        }

        /// Writes the staged index for the staged log.
        package func finish() throws {
            guard let log else { return }
            let combined = (slots + added).sorted { $0.sortsBefore($1) }
            var header = store.index.header
            header.logSize = UInt64(log.size)
            header.logInode = log.inode
            header.slotCount = UInt64(combined.count)
            header.liveCount = UInt64(combined.lazy.filter(\.isLive).count)
            header.evictCursor = 0
            header.deadLines += UInt64(removedCount * 2)
            try storeOperation { try log.close() }
            let index = try stage.file("clips/index")
            try storeOperation {
                try ClipIndexFile.encode(header: header, slots: combined) { try index.append($0) }
                try index.close()
            }
        }
    }
}

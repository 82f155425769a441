import ItsypadModel
import ItsypadSupport

/// Bulk changes to the history prepared on the side (see `StagedChanges`):
/// a staged log that starts as a copy of the current one and grows with the
/// new lines, and an index built for it from slots, so that nothing has to be
/// replayed once it is moved into place.
extension ClipStore {
    package final class Staging {
        private let store: ClipStore
        private let stage: StagedChanges
        private var log: StagedFile?
        /// Where the files of binary entries are staged, opened with the first.
        private var blobs: StagedDirectory?
        private var known = PackedIDSet()
        /// The index positions of the entries removed: `finish` marks their slots deleted.
        private var removedPositions = Set<Int>()
        /// The slots of the entries added, handed back in the index's order.
        private let added: SortedRuns<ClipSlot>
        /// How many entries were added.
        package var addedCount: Int { added.count }

        package init(_ store: ClipStore, in stage: StagedChanges) throws {
            self.store = store
            self.stage = stage
            added = try SortedRuns(directory: stage.scratchDirectory, in: stage.tree)
            // A removed entry's id is not known: the entry can come back, as `insert` lets it.
            try storeOperation { try store.forEachSlot { _, slot in if slot.isLive { known.insert(slot.id) } } }
        }

        private func stagedLog() throws -> StagedFile {
            if let log { return log }
            let file = try stage.file(stage.relative(store.logPath), copyingCurrent: true)
            log = file
            return file
        }

        /// Whether `entry`'s id is not live in the history.
        package func isFresh(_ entry: ClipEntry) -> Bool { PackedID(entry.id).map { !known.contains($0) } ?? false }

        /// Adds an entry unless its id is already in the history; returns whether it was added.
        /// A binary entry comes with its bytes (checked by the caller), staged as its file; when
        /// the history has the entry but not its bytes (a missing or damaged file), they repair it.
        @discardableResult
        package func add(_ entry: EscapedClip, bytes: [UInt8]? = nil) throws -> Bool {
            guard known.insert(entry.id) else {
                if let binary = entry.binary, let bytes { try repairFile(of: entry.id, binary, with: bytes) }
                return false
            }
            if entry.binary != nil {
                guard let bytes else { preconditionFailure("a binary entry is staged with its bytes") }
                if blobs == nil { blobs = try stage.directory(Staging.blobDirectory) }
                try blobs!.write(entry.id.string, bytes)
            }
            let file = try stagedLog()
            let offset = file.size
            let written = try storeOperation {
                try file.append(reserving: entry.escapedText.count + ClipStore.headerAllowance) { ClipStore.appendAddLine(entry, to: &$0) }
            }
            try added.append(
                ClipSlot(
                    id: entry.id, timestamp: entry.timestamp, offset: UInt64(offset), length: UInt32(written - 1),
                    flags: ClipStore.flags(
                        pinned: entry.pinned, localOnly: entry.localOnly, binary: entry.binary != nil,
                        comparesAsBytes: entry.binary == nil && entry.escapedText.withUnsafeBufferPointer(TextQuery.comparesAsBytes),
                        isOwnPreview: entry.binary == nil && entry.escapedText.withUnsafeBufferPointer(PreviewBuilder.isOwnPreview))))
            return true
        }

        /// Stages `bytes` as the file of the live binary entry `id` when its file does not hold
        /// them and its line describes them.
        private func repairFile(of id: PackedID, _ binary: ClipBinary, with bytes: [UInt8]) throws {
            var stored: [UInt8] = []
            if (try? store.blobReader().read(id: id.string, size: binary.size, digest: binary.sha256.utf8, into: &stored)) != nil {
                return
            }
            var slot: ClipSlot?
            try storeOperation { try store.forEachSlot { _, candidate in if candidate.id == id && candidate.isLive { slot = candidate } } }
            guard let slot, slot.isBinary, try storeOperation({ try store.entry(slot) }).binary?.sha256 == binary.sha256 else { return }
            if blobs == nil { blobs = try stage.directory(Staging.blobDirectory) }
            try blobs!.write(id.string, bytes)
        }

        /// Those of `ids` that are live entries that sync (not kept on this device).
        package func syncing(_ ids: Set<PackedID>) throws -> [PackedID] {
            var syncing: [PackedID] = []
            try storeOperation {
                try store.forEachSlot { position, slot in
                    if slot.isLive, slot.flags & ClipSlot.localOnly == 0, !removedPositions.contains(position), ids.contains(slot.id) {
                        syncing.append(slot.id)
                    }
                }
            }
            return syncing
        }

        /// Where the stage puts the files of binary entries, relative to the data directory.
        private static let blobDirectory = DataDirectoryLayout.stagedClipBlobs

        /// Removes live entries by id; returns the ids that were present.
        package func remove(ids: [String]) throws -> [String] {
            let wanted = Set(ids.compactMap { PackedID($0) })
            let removal = try storeOperation {
                try store.removal { position, slot in !removedPositions.contains(position) && wanted.contains(slot.id) }
            }
            guard !removal.slots.isEmpty else { return [] }
            removedPositions.formUnion(removal.positions)
            let file = try stagedLog()
            try storeOperation {
                try file.append(removal.lines)
                try erase(removal.slots, in: file)
            }
            for slot in removal.slots where slot.isBinary { stage.remove(Staging.blobDirectory + "/" + slot.idString) }
            return removal.slots.map(\.idString)
        }

        /// Erases the removed entries' texts in the staged copy of the log (see `ClipStore+Erasure`).
        /// The copy is moved into place whole, so a line in another form is replaced whole, by a
        /// line of the same length that changes nothing: a pin change of an entry that is not there.
        private func erase(_ removed: [ClipSlot], in file: StagedFile) throws {
            let outcome = try ClipStore.eraseTexts(of: removed, fd: store.log.fd, path: store.logPath) { bytes, offset in
                try file.overwrite(bytes, at: offset)
            }
            guard !outcome.complete else { return }
            for slot in removed where try ClipStore.textRange(of: slot, fd: store.log.fd, path: store.logPath) == nil {
                var line = try ClipStore.pinLine(id: slot.idString, false)
                line.removeLast()
                guard line.count <= Int(slot.length) else { continue }
                line += repeatElement(0x20, count: Int(slot.length) - line.count)
                try file.overwrite(line, at: Int(slot.offset))
            }
        }

        /// Stops staging (another `Staging` may start over in the same stage).
        package func abandon() throws {
            try storeOperation { try log?.close() }
            log = nil
        }

        /// Writes the staged index for the staged log: the history's slots (a chunk of its index at a
        /// time) and the added ones merged in the index's order, the header written last.
        package func finish() throws {
            guard let log else { return }
            let index = try stage.file(stage.relative(store.indexPath))
            var header = store.index.header
            let total = Int(header.slotCount)
            var (next, indexBytes) = (0, [UInt8]())
            let current = { [store, removedPositions] (chunk: inout [ClipSlot]) in
                let end = min(total, next + ClipStore.slotChunk)
                try store.index.slots(next..<end, into: &chunk, reading: &indexBytes)
                for position in chunk.indices where removedPositions.contains(next + position) { chunk[position].flags |= ClipSlot.deleted }
                next = end
            }
            var (bytes, slotCount, liveCount) = ([UInt8](), 0, 0)
            try storeOperation {
                try index.append(header.encoded())
                try added.forEachSorted(mergedWith: current) { slot in
                    slot.encoded(into: &bytes)
                    slotCount += 1
                    if slot.isLive { liveCount += 1 }
                    if bytes.count >= ClipStore.slotChunk * ClipSlot.size {
                        try index.append(bytes)
                        bytes.removeAll(keepingCapacity: true)
                    }
                    return true
                }
                try index.append(bytes)
            }
            header.logSize = UInt64(log.size)
            header.logInode = log.inode
            header.slotCount = UInt64(slotCount)
            header.liveCount = UInt64(liveCount)
            header.evictCursor = 0
            header.deadLines += UInt64(removedPositions.count * 2)
            try storeOperation {
                try log.close()
                try index.overwrite(header.encoded(), at: 0)
                try index.close()
            }
        }

        /// The added entry at `position` in the order of their times, then ids (the oldest an import
        /// admits when only the newest fit: see `DataStore.importExport`).
        package func addedEntry(at position: Int) throws -> (timestamp: Milliseconds, id: PackedID) {
            // The runs are in the order of time, then place in the log: entries of one millisecond are gathered and sorted by id.
            var (before, group): (Int, [PackedID]) = (0, [])
            var groupTime: Milliseconds?
            try added.forEachSorted { slot in
                if slot.timestamp != groupTime {
                    if before + group.count > position { return false }
                    before += group.count
                    (group, groupTime) = ([], slot.timestamp)
                }
                group.append(slot.id)
                return true
            }
            group.sort { ($0.high, $0.low) < ($1.high, $1.low) }
            return (groupTime!, group[position - before])
        }
    }
}

/// An entry as an import adds it: its text escaped already, as the log keeps
/// it (`JSONString.appendEscaped`'s form), so that an export's text is copied
/// into the log rather than decoded and escaped again.
package struct EscapedClip {
    package var id: PackedID
    package var timestamp: Milliseconds
    package var pinned: Bool
    package var localOnly: LocalOnlyReason?
    /// A binary entry's description (its text is then empty).
    package var binary: ClipBinary?
    package var escapedText: [UInt8]

    package init(
        id: PackedID, timestamp: Milliseconds, pinned: Bool, localOnly: LocalOnlyReason?, binary: ClipBinary? = nil,
        escapedText: [UInt8]
    ) {
        self.id = id
        self.timestamp = timestamp
        self.pinned = pinned
        self.localOnly = localOnly
        self.binary = binary
        self.escapedText = escapedText
    }

    /// nil when the entry's id is not a UUID.
    package init?(_ entry: ClipEntry) {
        guard let id = PackedID(entry.id) else { return nil }
        var text = entry.text
        var escaped: [UInt8] = []
        text.withUTF8 { JSONString.appendEscaped($0, to: &escaped) }
        self.init(
            id: id, timestamp: entry.timestamp, pinned: entry.pinned, localOnly: entry.localOnly, binary: entry.binary,
            escapedText: escaped)
    }
}

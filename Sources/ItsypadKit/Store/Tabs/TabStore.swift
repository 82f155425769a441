import ItsypadModel
import ItsypadSupport

/// Tabs, one JSON file each under `tabs/`, replaced atomically on every change.
/// A file-backed tab's content lives in its own file, not here.
public struct TabStore {
    public let directory: String
    /// The data directory the tabs live in (see `FileTree`).
    let tree: FileTree
    /// The tags accepted pushes left out of the tab files (nil: none are kept, as for a bare folder of tabs).
    package let tags: TabTagStore?

    public init(directory: String, tree: FileTree? = nil) {
        self.init(directory: directory, tree: tree, tags: nil)
    }

    package init(directory: String, tree: FileTree?, tags: TabTagStore?) {
        self.directory = directory
        self.tree = tree ?? FileTree(root: directory)
        self.tags = tags
    }

    /// The same tabs, the tags' log read only up to `bytes` (see `TabTagStore.readingLog`).
    package func readingTagsLog(upTo bytes: Int) -> TabStore {
        TabStore(directory: directory, tree: tree, tags: tags?.readingLog(upTo: bytes))
    }

    /// A tab's file name: its id, which must be a UUID (lowercase on disk), then ".json".
    /// nil for anything else: such a name is never turned into a path.
    static func fileName(_ id: String) -> String? {
        Identifier.isValid(id) ? id.lowercased() + ".json" : nil
    }

    package func filePath(_ id: String) -> String? { TabStore.fileName(id).map { directory + "/" + $0 } }

    /// What a tab file holds: a tab, or the record of a synced tab deleted here
    /// whose deletion has not reached the backend yet.
    public enum Entry: Equatable {
        case live(Tab)
        case deleted(TabDeletion)

        var id: String {
            switch self {
            case .live(let tab): return tab.id
            case .deleted(let deletion): return deletion.id
            }
        }
    }

    /// Every tab, most recently modified first.
    public func all() throws -> [Tab] {
        try entries().compactMap {
            if case .live(let tab) = $0 { return tab }; return nil
        }
        .sorted { ($0.lastModified, $0.id) > ($1.lastModified, $1.id) }
    }

    /// Deleted tabs whose deletion is still to be sent.
    public func deletions() throws -> [TabDeletion] {
        try entries().compactMap {
            if case .deleted(let deletion) = $0 { return deletion }; return nil
        }
    }

    /// Files whose names are not `<id>.json` are not tabs.
    private func entries() throws -> [Entry] {
        var accepted: [String: TabTagStore.Entry]?
        return try storeOperation {
            try tabFileNames().map { name in
                let path = directory + "/" + name
                guard let bytes = try tree.read(path) else { throw ItsypadError.failure("\(path) vanished while reading") }
                let read = try decode(bytes, path: path)
                guard read.stamp != nil else { return read.entry }
                if accepted == nil { accepted = tags?.all() ?? [:] }
                return TabStore.synced(read, accepted!)
            }
        }
    }

    /// The names of the tab files, `<id>.json`.
    package func tabFileNames() throws -> [String] {
        try (tree.list(directory) ?? []).filter(TabStore.isFileName)
    }

    /// Whether `name` is one `fileName` gives: a tab's id, lowercase, then ".json" (read from its
    /// bytes: a merge of the accepted tags lists every tab file).
    static func isFileName(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { bytes in
            bytes.count == 41 && bytes[36...].elementsEqual(".json".utf8)
                && PackedID(canonicalUTF8: UnsafeBufferPointer(rebasing: bytes[..<36])) != nil
        }
    }

    /// A read entry, with the tag an accepted push left for it in `accepted` when that names the file's stamp.
    private static func synced(_ read: (entry: Entry, stamp: String?), _ accepted: [String: TabTagStore.Entry]) -> Entry {
        guard case .live(var tab) = read.entry, let stamp = read.stamp, let found = accepted[tab.id.lowercased()], found.stamp == stamp
        else { return read.entry }
        tab.sync = TabSyncMetadata(
            tag: found.tag, ancestor: found.ancestor ?? tab.content, clock: found.clock.flatMap(HybridTimestamp.init))
        return .live(tab)
    }

    /// The accepted tags of the read entries that carry a stamp.
    private func acceptedTags(_ read: some Sequence<(entry: Entry, stamp: String?)>) -> [String: TabTagStore.Entry] {
        let stamped = read.filter { $0.stamp != nil }.map { $0.entry.id.lowercased() }
        return stamped.isEmpty ? [:] : tags?.entries(stamped) ?? [:]
    }

    /// The index of names and rows, rebuilt from the files when it does not match them.
    package func index() throws -> TabIndex {
        if let index = TabIndex.load(directory: directory, in: tree) { return index }
        return try rebuildIndex()
    }

    /// Writes what `tab ls` prints (`TabIndex.listing`): the index's rows, read without its records when it is current.
    package func writeListing(to write: (UnsafeRawBufferPointer) throws -> Void) throws {
        if try TabIndex.writeListing(directory: directory, in: tree, to: write) { return }
        try rebuildIndex().listing.withUnsafeBytes(write)
    }

    /// The tabs a reference may name (`TabIndex.matches`): from the index's keyed
    /// sections when they can answer, else from the whole index.
    func indexMatches(_ reference: String) throws -> [PackedID] {
        try TabIndex.lookUp(reference, directory: directory, in: tree) ?? index().matches(reference)
    }

    /// Reads every tab file and writes a fresh index.
    @discardableResult
    func rebuildIndex() throws -> TabIndex {
        let index = TabIndex(records: try all().compactMap(TabIndex.record))
        // A cache: a directory where it cannot be written still lists (more slowly).
        if (try? tree.status(directory))??.isDirectory == true { try? index.save(directory: directory, in: tree) }
        return index
    }

    /// Every write drops the index first (the directory's time may not change within
    /// the clock's granularity), so that no failure leaves it behind a change; a reader
    /// rebuilds it, or `updateIndex` carries it over.
    private func invalidateIndex() throws {
        try tree.remove(directory + "/" + TabIndex.fileName)
    }

    /// Keeps a current index current across a change to one tab (nil: removed).
    func updateIndex(id: String, to tab: Tab?, _ change: () throws -> Void) throws {
        let before = TabIndex.load(directory: directory, in: tree)
        try change()
        guard var index = before, let packed = PackedID(id) else { return }
        index.update(id: packed, with: tab.flatMap(TabIndex.record))
        try? index.save(directory: directory, in: tree)
    }

    /// The tab with this id; nil when there is none, or `id` is not an id at all.
    public func tab(id: String) throws -> Tab? {
        if case .live(let tab)? = try entry(id: id) { return tab }
        return nil
    }

    public func entry(id: String) throws -> Entry? {
        try stampedEntry(id: id)?.entry
    }

    /// The entry (see `entry(id:)`), and the stamp of the file it was read from.
    package func stampedEntry(id: String) throws -> (entry: Entry, stamp: String?)? {
        guard let path = filePath(id) else { return nil }
        guard let read = try storeOperation({ try tree.read(path).map { try decode($0, path: path) } }) else { return nil }
        return (TabStore.synced(read, acceptedTags([read])), read.stamp)
    }

    /// The entries of many tabs, their files read with the directory opened once (a first sync
    /// looks up every tab it fetches). A tab absent here is one whose file could not be read as an
    /// entry: `entry(id:)` says why. A tab without a file maps to nil.
    package func entries(ids: [String]) throws -> [String: Entry?] {
        try stampedEntries(ids: ids).mapValues { $0?.entry }
    }

    /// `entries(ids:)` with the stamp of each file read.
    private func stampedEntries(ids: [String]) throws -> [String: (entry: Entry, stamp: String?)?] {
        // A first sync to a new device: no tab has a file.
        guard try tree.status(directory) != nil else {
            return Dictionary(ids.map { ($0, nil) }, uniquingKeysWith: { first, _ in first })
        }
        var names: [String: String] = [:]
        for id in ids { if let name = TabStore.fileName(id) { names[name] = id } }
        var entries: [String: (entry: Entry, stamp: String?)?] = [:]
        try storeOperation {
            try tree.readFiles(Array(names.keys), in: directory) { name, bytes in
                guard let id = names[name], case .success(let found) = bytes else { return }
                if let found {
                    if let entry = try? decode(found, path: directory + "/" + name) { entries[id] = .some(entry) }
                } else {
                    entries[id] = .some(nil)
                }
            }
        }
        let accepted = acceptedTags(entries.values.compactMap { $0 })
        return entries.mapValues { read in read.map { (TabStore.synced($0, accepted), $0.stamp) } }
    }

    /// Looks up entries from one read of the files of `ids` (see `entries(ids:)`): an id that read
    /// could not use, or did not name, is read alone, where `entry(id:)` says why it fails.
    package func lookUp(reading ids: [String]) throws -> (String) throws -> Entry? {
        let lookUp = try stampedLookUp(reading: ids)
        return { try lookUp($0)?.entry }
    }

    /// `lookUp(reading:)` with the stamp of each file read.
    package func stampedLookUp(reading ids: [String]) throws -> (String) throws -> (entry: Entry, stamp: String?)? {
        let read = try stampedEntries(ids: ids)
        return { id in
            if let entry = read[id] { return entry }
            return try stampedEntry(id: id)
        }
    }

    /// A tab file's entry as the file holds it, and its stamp (nil for a deletion's file).
    private func decode(_ bytes: [UInt8], path: String) throws -> (entry: Entry, stamp: String?) {
        let read = try TabStore.entry(in: bytes, path: path)
        guard FileSystem.baseName(path) == TabStore.fileName(read.entry.id) else {
            throw ItsypadError.corrupt(path, "it holds tab \(read.entry.id)")
        }
        return read
    }

    /// A tab file's entry and stamp: read straight from its bytes (`read`), else parsed whole and
    /// decoded, which decides and names any fault.
    static func entry(in bytes: [UInt8], path: String) throws -> (entry: Entry, stamp: String?) {
        try read(bytes) ?? decoded(bytes, path: path)
    }

    /// A tab file's entry and stamp as the Codable types decode it: the definition `read` follows.
    static func decoded(_ bytes: [UInt8], path: String) throws -> (entry: Entry, stamp: String?) {
        let json: JSONValue
        do { json = try JSONValue.parse(bytes) } catch { throw ItsypadError.corrupt(path, "\(error)") }
        let entry: Entry
        var stamp: String?
        if json["deleted"]?.boolValue == true, let deletion = (try? JSONCoding.decode(TabDeletionFile.self, from: json))?.deletion {
            entry = .deleted(deletion)
        } else {
            guard let file = try? JSONCoding.decode(TabFile.self, from: json), let tab = file.tab else {
                throw ItsypadError.corrupt(path, "missing or invalid fields")
            }
            entry = .live(tab)
            stamp = file.stamp
        }
        return (entry, stamp)
    }

    public func save(_ tab: Tab) throws {
        let path = try checkedPath(tab.id)
        try storeOperation {
            try invalidateIndex()
            try tree.writeAtomically(path, TabStore.fileContent(tab), isChange: true)
        }
    }

    /// Saves many tabs with one sync for all of them (see `FileTree.writeAtomically(_:in:)`).
    public func save(_ tabs: [Tab]) throws {
        guard !tabs.isEmpty else { return }
        let stage = try makeStage()
        try self.stage(tabs, in: stage)
        try commit(stage)
    }

    /// A stage for tabs saved in parts, then made durable and put in place together (`commit`).
    public func makeStage() throws -> FileStage {
        try storeOperation { try FileStage(for: directory, in: tree) }
    }

    /// Writes `tabs` into `stage`; they are saved once it is committed.
    public func stage(_ tabs: [Tab], in stage: FileStage) throws {
        let names = try tabs.map { try TabStore.checkedName($0.id) }
        let files = try zip(names, tabs.map(TabStore.fileContent)).map { (name: $0, bytes: $1) }
        try storeOperation { try stage.write(files) }
    }

    /// Makes the tabs written into `stage` durable ahead of `commit` (a sync's stage, written with
    /// the lock let go, is synced so too).
    public func makeDurable(_ stage: FileStage) throws {
        try storeOperation { try stage.makeDurable() }
    }

    /// Takes the tabs of `ids` out of `stage`: they are not saved by its commit.
    public func unstage(_ ids: [String], from stage: FileStage) throws {
        let names = try ids.map { try TabStore.checkedName($0) }
        try storeOperation { try stage.drop(names) }
    }

    /// Saves the tabs written into `stage`, with one sync for all of them.
    public func commit(_ stage: FileStage) throws {
        try storeOperation {
            try invalidateIndex()
            try stage.commit()
        }
    }

    /// Replaces a synced tab by the record of its deletion (one atomic replacement:
    /// the tab is never both present and deleted).
    public func markDeleted(_ deletion: TabDeletion) throws {
        let path = try checkedPath(deletion.id)
        try storeOperation {
            try invalidateIndex()
            try tree.writeAtomically(path, TabStore.fileContent(deletion), isChange: true)
        }
    }

    /// Removes a tab, or the record of its deletion, if there is one.
    public func remove(id: String) throws {
        guard let path = filePath(id) else { return }
        try storeOperation {
            try invalidateIndex()
            try tree.remove(path)
            try FileSystemError.afterChange { try tree.syncDirectory(directory) }
        }
    }

    private func checkedPath(_ id: String) throws -> String { directory + "/" + (try TabStore.checkedName(id)) }

    private static func checkedName(_ id: String) throws -> String {
        guard let name = fileName(id) else { throw ItsypadError.failure("'\(id)' is not a tab id") }
        return name
    }

    /// A tab's file.
    /// Each write gets a new stamp: a tag kept for an earlier write no longer applies.
    package static func fileContent(_ tab: Tab) throws -> [UInt8] {
        var bytes = TabFile(tab, stamp: TabStamp.make()).prettyBytes
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// The file of a tab deleted here whose deletion is still to be sent.
    package static func fileContent(_ deletion: TabDeletion) throws -> [UInt8] { try fileContent(TabDeletionFile(deletion)) }

    private static func fileContent(_ file: some Encodable) throws -> [UInt8] {
        var bytes = try JSONCoding.encodeValue(file, keys: .asEncoded).prettySerializedBytes()
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }
}

/// A tab deleted on this device, kept until the deletion is sent: the tag of the
/// version it replaces on the backend and the edits the deleted version included
/// (so other devices can tell an edit it had seen from one it had not).
public struct TabDeletion: Equatable, Sendable {
    public var id: String
    public var tag: String?
    public var history: EditHistory

    public init(id: String, tag: String?, history: EditHistory) {
        self.id = id
        self.tag = tag
        self.history = history
    }
}

/// Tabs, one JSON file each under `tabs/`, replaced atomically on every change.
/// A file-backed tab's content lives in its own file, not here.
public struct TabStore {
    public let directory: String

    func filePath(_ id: String) -> String { directory + "/" + id + ".json" }

    /// Every tab, most recently modified first.
    public func all() throws -> [Tab] {
        try storeOperation {
            try FileSystem.list(directory)
                .filter { $0.hasSuffix(".json") }
                .map { try load(directory + "/" + $0) }
                .sorted { ($0.lastModified, $0.id) > ($1.lastModified, $1.id) }
        }
    }

    /// The index of names and rows, rebuilt from the files when it does not match them.
    func index() throws -> TabIndex {
        if let index = TabIndex.load(directory: directory) { return index }
        return try rebuildIndex()
    }

    /// Reads every tab file and writes a fresh index.
    @discardableResult
    func rebuildIndex() throws -> TabIndex {
        let index = TabIndex(records: try all().compactMap(TabIndex.record))
        // A cache: a directory where it cannot be written still lists (more slowly).
        if FileSystem.isDirectory(directory) { try? index.save(directory: directory) }
        return index
    }

    /// Every write drops the index (the directory's time may not change within
    /// the clock's granularity); a reader rebuilds it, or `updateIndex` carries it over.
    private func invalidateIndex() throws {
        try FileSystem.remove(directory + "/" + TabIndex.fileName)
    }

    /// Keeps a current index current across a change to one tab (nil: removed).
    func updateIndex(id: String, to tab: Tab?, _ change: () throws -> Void) throws {
        let before = TabIndex.load(directory: directory)
        try change()
        guard var index = before, let packed = PackedID(id) else { return }
        index.update(id: packed, with: tab.flatMap(TabIndex.record))
        try? index.save(directory: directory)
    }

    public func tab(id: String) throws -> Tab? {
        try storeOperation { try FileSystem.read(filePath(id)).map { try decode($0, path: filePath(id)) } }
    }

    private func load(_ path: String) throws -> Tab {
        guard let bytes = try FileSystem.read(path) else { throw ItsypadError.failure("\(path) vanished while reading") }
        return try decode(bytes, path: path)
    }

    private func decode(_ bytes: [UInt8], path: String) throws -> Tab {
        let json: JSONValue
        do { json = try JSONValue.parse(bytes) } catch { throw ItsypadError.corrupt(path, "\(error)") }
        guard let tab = TabStore.decode(json) else { throw ItsypadError.corrupt(path, "missing or invalid fields") }
        return tab
    }

    public func save(_ tab: Tab) throws {
        try storeOperation {
            try FileSystem.makeDirectory(directory)
            try FileSystem.writeAtomically(filePath(tab.id), TabStore.fileContent(tab))
            try invalidateIndex()
        }
    }

    /// Saves many tabs with one sync for all of them (see `FileSystem.writeAtomically(_:in:)`).
    public func save(_ tabs: [Tab]) throws {
        try storeOperation {
            try FileSystem.makeDirectory(directory)
            try FileSystem.writeAtomically(tabs.map { (filePath($0.id), TabStore.fileContent($0)) }, in: directory)
            try invalidateIndex()
        }
    }

    public func remove(id: String) throws {
        try storeOperation {
            try FileSystem.remove(filePath(id))
            try FileSystem.syncDirectory(directory)
            try invalidateIndex()
        }
    }

    /// A tab's file.
    static func fileContent(_ tab: Tab) -> [UInt8] { Array((encode(tab).prettySerialized() + "\n").utf8) }

    /// The on-disk form (content omitted for file-backed tabs).
    static func encode(_ tab: Tab) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .string(tab.id)),
            ("name", .string(tab.name)),
            ("nameLocked", .bool(tab.nameLocked)),
            ("language", .string(tab.language)),
            ("languageLocked", .bool(tab.languageLocked)),
            ("lastModified", .integer(tab.lastModified)),
            ("clock", .string(tab.clock.description)),
        ]
        if let fileURL = tab.fileURL {
            members.append(("fileURL", .string(fileURL)))
        } else {
            members.append(("content", .string(tab.content)))
        }
        if let sync = tab.sync {
            members.append(("sync", .object([("tag", .string(sync.tag)), ("ancestor", .string(sync.ancestor))])))
        }
        return .object(members)
    }

    static func decode(_ json: JSONValue) -> Tab? {
        guard let id = json["id"]?.stringValue, Identifier.isValid(id),
              let name = json["name"]?.stringValue,
              let language = json["language"]?.stringValue,
              let lastModified = json["lastModified"]?.int64Value,
              let clock = json["clock"]?.stringValue.flatMap(HybridTimestamp.init)
        else { return nil }
        let fileURL = json["fileURL"]?.stringValue
        guard let content = json["content"]?.stringValue ?? (fileURL == nil ? nil : "") else { return nil }
        var sync: TabSyncMetadata?
        if let tag = json["sync"]?["tag"]?.stringValue, let ancestor = json["sync"]?["ancestor"]?.stringValue {
            sync = TabSyncMetadata(tag: tag, ancestor: ancestor)
        }
        return Tab(id: id, name: name, nameLocked: json["nameLocked"]?.boolValue ?? false, content: content,
                   language: language, languageLocked: json["languageLocked"]?.boolValue ?? false,
                   lastModified: lastModified, fileURL: fileURL, clock: clock, sync: sync)
    }
}

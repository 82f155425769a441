import ItsypadModel
import ItsypadSupport

/// A tab's file under `tabs/` (see `TabStore`): the one place its keys and their meaning are
/// written down. Keys are written in this order, the one existing files have.
struct TabFile: Codable {
    var id: String
    var name: String
    /// Absent in files of versions before names could be locked: not locked.
    var nameLocked: Bool?
    var language: String
    var languageLocked: Bool?
    /// Milliseconds since 1970.
    var lastModified: Int64
    var clock: String
    /// `Tab.nameClock` and `languageClock`; absent when they are `clock` (and in files of versions
    /// before they were kept).
    var nameClock: String?
    var languageClock: String?
    /// A file-backed tab's file: its content is kept there, not here.
    var fileURL: String?
    var content: String?
    /// This write's name (see `TabStamp`): an accepted tag kept out of the file (`TabTagStore`) is the
    /// tab's `sync` only while the file holds the stamp it names. Absent in files of versions before.
    var stamp: String?
    var sync: Sync?
    /// Absent in files of versions before histories were kept: the tab's own edit.
    var history: [String]?

    /// `TabSyncMetadata`; `clock` is absent in files of versions before it was kept.
    struct Sync: Codable {
        var tag: String
        var ancestor: String
        var clock: String?
    }

    init(
        id: String, name: String, nameLocked: Bool?, language: String, languageLocked: Bool?, lastModified: Int64, clock: String,
        nameClock: String? = nil, languageClock: String? = nil, fileURL: String?, content: String?, stamp: String? = nil, sync: Sync? = nil,
        history: [String]?
    ) {
        self.id = id
        self.name = name
        self.nameLocked = nameLocked
        self.language = language
        self.languageLocked = languageLocked
        self.lastModified = lastModified
        self.clock = clock
        self.nameClock = nameClock
        self.languageClock = languageClock
        self.fileURL = fileURL
        self.content = content
        self.stamp = stamp
        self.sync = sync
        self.history = history
    }

    init(_ tab: Tab, stamp: String? = nil) {
        id = tab.id
        name = tab.name
        nameLocked = tab.nameLocked
        language = tab.language
        languageLocked = tab.languageLocked
        lastModified = tab.lastModified
        clock = tab.clock.description
        nameClock = tab.nameClock == tab.clock ? nil : tab.nameClock.description
        languageClock = tab.languageClock == tab.clock ? nil : tab.languageClock.description
        fileURL = tab.fileURL
        content = tab.fileURL == nil ? tab.content : nil
        self.stamp = stamp
        sync = tab.sync.map { Sync(tag: $0.tag, ancestor: $0.ancestor, clock: $0.clock?.description) }
        history = tab.history.strings
    }

    /// The tab; nil when the id, time or a clock is not valid, or a scratch tab has no content.
    var tab: Tab? {
        guard Identifier.isValid(id), Time.validRange.contains(lastModified), let clock = HybridTimestamp(clock),
            let content = content ?? (fileURL == nil ? nil : ""),
            let nameClock = nameClock.map(HybridTimestamp.init) ?? clock,
            let languageClock = languageClock.map(HybridTimestamp.init) ?? clock
        else { return nil }
        return Tab(
            id: id, name: name, nameLocked: nameLocked ?? false, content: content, language: language,
            languageLocked: languageLocked ?? false, lastModified: lastModified, fileURL: fileURL, clock: clock,
            sync: sync.map { TabSyncMetadata(tag: $0.tag, ancestor: $0.ancestor, clock: $0.clock.flatMap(HybridTimestamp.init)) },
            history: history.flatMap(EditHistory.init(strings:)), nameClock: nameClock, languageClock: languageClock)
    }
}

extension TabFile {
    /// The file's bytes as the encoder writes them (`JSONCoding.encodeValue(self, keys: .asEncoded)
    /// .prettySerializedBytes()`), without it: a first sync writes every tab, and the encoder is
    /// a large part of that work. `TabFileTests` checks that both write the same bytes.
    var prettyBytes: [UInt8] {
        var object = PrettyJSONObject(reservingCapacity: (content?.utf8.count ?? 0) + 320)
        object.add("id", id)
        object.add("name", name)
        object.add("nameLocked", nameLocked)
        object.add("language", language)
        object.add("languageLocked", languageLocked)
        object.add("lastModified", lastModified)
        object.add("clock", clock)
        object.add("nameClock", nameClock)
        object.add("languageClock", languageClock)
        object.add("fileURL", fileURL)
        object.add("content", content)
        object.add("stamp", stamp)
        if let sync {
            object.addObject("sync") {
                $0.add("tag", sync.tag)
                $0.add("ancestor", sync.ancestor)
                $0.add("clock", sync.clock)
            }
        }
        object.add("history", history)
        return object.finished()
    }
}

/// The file of a tab deleted here whose deletion is still to be sent (`TabDeletion`).
struct TabDeletionFile: Codable {
    var id: String
    /// Always true: what tells this file from a tab's.
    var deleted: Bool
    var tag: String?
    var history: [String]?

    init(id: String, deleted: Bool, tag: String?, history: [String]?) {
        self.id = id
        self.deleted = deleted
        self.tag = tag
        self.history = history
    }

    init(_ deletion: TabDeletion) {
        self.init(id: deletion.id, deleted: true, tag: deletion.tag, history: deletion.history.strings)
    }

    /// The deletion; nil when the id is not valid.
    var deletion: TabDeletion? {
        guard Identifier.isValid(id) else { return nil }
        return TabDeletion(id: id, tag: tag, history: history.flatMap(EditHistory.init(strings:)) ?? EditHistory())
    }
}

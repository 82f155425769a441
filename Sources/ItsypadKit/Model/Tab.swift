import ItsypadSupport

/// A scratch tab, with Itsypad's fields. A tab with `fileURL` is file-backed:
/// its content lives in that file and it never syncs.
public struct Tab: Equatable, Sendable {
    public var id: String
    public var name: String
    /// An explicit name sticks; otherwise the name follows the first line.
    public var nameLocked: Bool
    public var content: String
    public var language: String
    public var languageLocked: Bool
    public var lastModified: Milliseconds
    public var fileURL: String?
    /// Orders edits across devices without trusting their clocks.
    public var clock: HybridTimestamp
    /// The clock of the edit that last chose the name (or its lock), and the language (or its
    /// lock): a merge takes each from the version that chose it last, not from the newer version.
    /// A name or language that follows the content is no choice and leaves its clock.
    public var nameClock: HybridTimestamp
    public var languageClock: HybridTimestamp
    /// What the sync engine last agreed with the backend: nil until first synced.
    public var sync: TabSyncMetadata?
    /// The edits this version includes (see ``EditHistory``).
    public var history: EditHistory

    /// `history` defaults to this version's own edit, the label clocks to `clock`.
    public init(
        id: String, name: String, nameLocked: Bool, content: String, language: String, languageLocked: Bool,
        lastModified: Milliseconds, fileURL: String?, clock: HybridTimestamp, sync: TabSyncMetadata? = nil,
        history: EditHistory? = nil, nameClock: HybridTimestamp? = nil, languageClock: HybridTimestamp? = nil
    ) {
        self.id = id
        self.name = name
        self.nameLocked = nameLocked
        self.content = content
        self.language = language
        self.languageLocked = languageLocked
        self.lastModified = lastModified
        self.fileURL = fileURL
        self.clock = clock
        self.nameClock = nameClock ?? clock
        self.languageClock = languageClock ?? clock
        self.sync = sync
        self.history = history ?? EditHistory([clock])
    }

    public var isFileBacked: Bool { fileURL != nil }

    /// Whether this version differs from the one last synced (or was never synced):
    /// every local change gives a tab a new clock.
    public var hasUnsyncedChanges: Bool { sync?.clock != clock }

    /// What the user sees of a tab, without sync bookkeeping: equal for the same version on every device.
    public func sameContent(as other: Tab) -> Bool {
        (id, name, content, language, lastModified) == (other.id, other.name, other.content, other.language, other.lastModified)
            && (nameLocked, languageLocked) == (other.nameLocked, other.languageLocked)
    }

    public static let untitled = "Untitled"
    public static let titleLength = 30

    /// The name Itsypad gives a tab from its content.
    public static func derivedName(for content: String) -> String {
        Text.firstLineTitle(content, limit: titleLength) ?? untitled
    }

    /// The labels a person chooses for a tab, each with its lock; otherwise they follow the content.
    public struct Labels: OptionSet, Sendable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// A rename (a new tab's given name).
        public static let name = Labels(rawValue: 1)
        /// A language chosen, or the choice to detect it again (`--language`, `--auto-language`).
        public static let language = Labels(rawValue: 2)
    }

    /// Stamps an edit with `clock`, and the labels it `chose` with it.
    public mutating func stamp(_ clock: HybridTimestamp, choosing chosen: Labels) {
        self.clock = clock
        history.record(clock)
        if chosen.contains(.name) { nameClock = clock }
        if chosen.contains(.language) { languageClock = clock }
    }

    /// Re-derives what follows the content: the name (unless explicit) and the language (unless locked).
    public mutating func contentDidChange() {
        if !nameLocked { name = Tab.derivedName(for: content) }
        if !languageLocked { language = LanguageDetector.detect(content) }
    }
}

/// A tab's sync bookkeeping: the backend's change tag for the version this
/// device last saw, that version's content (the common ancestor for a
/// three-way merge) and its clock (a tab whose clock differs has changes to send).
public struct TabSyncMetadata: Equatable, Sendable {
    public var tag: String
    public var ancestor: String
    /// The synced version's clock; nil in files written before it was kept.
    public var clock: HybridTimestamp?

    public init(tag: String, ancestor: String, clock: HybridTimestamp? = nil) {
        self.tag = tag
        self.ancestor = ancestor
        self.clock = clock
    }
}

/// Where a clip or tab stands with respect to sync, as `--json` shows it.
public enum SyncState: String, Sendable, CaseIterable {
    case synced, pending, failed, localOnly

    /// A syncable item's state: failed after repeated failures, pending while a change waits, else synced.
    package init(failed: Bool, pending: Bool) {
        self = failed ? .failed : pending ? .pending : .synced
    }
}

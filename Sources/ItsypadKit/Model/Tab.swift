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
    /// What the sync engine last agreed with the backend: nil until first synced.
    public var sync: TabSyncMetadata? = nil

    public var isFileBacked: Bool { fileURL != nil }

    public static let untitled = "Untitled"
    public static let titleLength = 30

    /// The name Itsypad gives a tab from its content.
    public static func derivedName(for content: String) -> String {
        Text.firstLineTitle(content, limit: titleLength) ?? untitled
    }

    /// Re-derives what follows the content: the name (unless explicit) and the language (unless locked).
    public mutating func contentDidChange() {
        if !nameLocked { name = Tab.derivedName(for: content) }
        if !languageLocked { language = LanguageDetector.detect(content) }
    }
}

/// A tab's sync bookkeeping: the backend's change tag for the version this
/// device last saw, and that version's content (the common ancestor for a
/// three-way merge).
public struct TabSyncMetadata: Equatable, Sendable {
    public var tag: String
    public var ancestor: String
}

/// Where a clip or tab stands with respect to sync, as `--json` shows it.
public enum SyncState: String, Sendable, CaseIterable {
    case synced, pending, failed, localOnly

    /// A syncable item's state: failed after repeated failures, pending while a change waits, else synced.
    init(failed: Bool, pending: Bool) {
        self = failed ? .failed : pending ? .pending : .synced
    }
}

import ItsypadSupport

/// The document `itsypad export` writes and `itsypad import` reads (see `ExportFormat`): the one
/// place its keys and their meaning are written down. A tab and a clip are their `--json` forms
/// with members appended (fields are only ever appended). Export streams the document and import
/// reads it from bytes, so both stay hand-written; `ExportFileTests` checks them against this type.
package struct ExportFile: Codable, Equatable {
    /// `ExportFormat.name`.
    package var format: String
    /// `ExportFormat.version`.
    package var version: Int64
    /// The sync key in its recovery form; present only when asked for by name.
    package var syncKey: String?
    /// ISO 8601, as every time in the document.
    package var exportedAt: String
    package var tabs: [Tab]
    package var clips: [Clip]
    /// Sorted by key.
    package var settings: [Setting]

    package struct Tab: Codable, Equatable {
        package var id: String
        package var name: String
        package var content: String
        package var language: String
        package var languageLocked: Bool
        package var lastModified: String
        /// `null` for a scratch tab.
        @ExplicitNull package var fileURL: String? = nil
        package var syncState: String
        /// Appended for export: what import needs to restore the tab as it was. Read as true
        /// (a name the user chose) and as a clock from `lastModified` when absent.
        package var nameLocked: Bool?
        package var clock: String?
    }

    package struct Clip: Codable, Equatable {
        package var id: String
        /// `null` for a binary clip.
        @ExplicitNull package var text: String? = nil
        package var timestamp: String
        package var pinned: Bool
        package var localOnly: Bool
        package var syncState: String
        /// The MIME type (`text/plain` for text) and size in bytes; absent in exports from before
        /// binary clips (text).
        @ExplicitNull package var type: String? = nil
        @ExplicitNull package var size: Int64? = nil
        /// Appended for export: why the clip stays on this device (`LocalOnlyReason`); `null` when it
        /// syncs, absent in exports from before it was kept (read from `localOnly`).
        @ExplicitNull package var localReason: String? = nil
        /// Appended for export: a binary clip's bytes in base64; `null` for text.
        @ExplicitNull package var data: String? = nil
    }

    /// `value` is `null` for an unset key's tombstone.
    package struct Setting: Codable, Equatable {
        package var key: String
        @ExplicitNull package var value: JSONValue? = nil
        package var clock: String
    }
}

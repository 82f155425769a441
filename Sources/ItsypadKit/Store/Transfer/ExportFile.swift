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
        package var fileURL: String?
        package var syncState: String
        /// Appended for export: what import needs to restore the tab as it was. Read as true
        /// (a name the user chose) and as a clock from `lastModified` when absent.
        package var nameLocked: Bool?
        package var clock: String?

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(name, forKey: .name)
            try container.encode(content, forKey: .content)
            try container.encode(language, forKey: .language)
            try container.encode(languageLocked, forKey: .languageLocked)
            try container.encode(lastModified, forKey: .lastModified)
            try container.encode(fileURL, forKey: .fileURL)
            try container.encode(syncState, forKey: .syncState)
            try container.encodeIfPresent(nameLocked, forKey: .nameLocked)
            try container.encodeIfPresent(clock, forKey: .clock)
        }
    }

    package struct Clip: Codable, Equatable {
        package var id: String
        /// `null` for a binary clip.
        package var text: String?
        package var timestamp: String
        package var pinned: Bool
        package var localOnly: Bool
        package var syncState: String
        /// The MIME type (`text/plain` for text) and size in bytes; absent in exports from before
        /// binary clips (text).
        package var type: String?
        package var size: Int64?
        /// Appended for export: why the clip stays on this device (`LocalOnlyReason`); `null` when it
        /// syncs, absent in exports from before it was kept (read from `localOnly`).
        package var localReason: String?
        /// Appended for export: a binary clip's bytes in base64; `null` for text.
        package var data: String?

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(text, forKey: .text)
            try container.encode(timestamp, forKey: .timestamp)
            try container.encode(pinned, forKey: .pinned)
            try container.encode(localOnly, forKey: .localOnly)
            try container.encode(syncState, forKey: .syncState)
            try container.encode(type, forKey: .type)
            try container.encode(size, forKey: .size)
            try container.encode(localReason, forKey: .localReason)
            try container.encode(data, forKey: .data)
        }
    }

    /// `value` is `null` for an unset key's tombstone.
    package struct Setting: Codable, Equatable {
        package var key: String
        package var value: JSONValue?
        package var clock: String

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(key, forKey: .key)
            try container.encode(value ?? .null, forKey: .value)
            try container.encode(clock, forKey: .clock)
        }
    }
}

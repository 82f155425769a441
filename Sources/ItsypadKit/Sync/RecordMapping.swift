/// Converts local items to backend records and back. Field names follow the
/// Itsypad app's CloudKit schema, plus what a CLI needs (clock, pinned).
enum RecordMapping {
    /// Tab content above this many bytes travels as an asset (records are capped at 1 MiB).
    static let inlineContentLimit = 900_000

    static func record(for tab: Tab, deviceName: String, backend: SyncBackend) throws -> BackendRecord {
        var fields: [String: FieldValue] = [
            "name": .string(tab.name),
            "nameLocked": .int64(tab.nameLocked ? 1 : 0),
            "language": .string(tab.language),
            "languageLocked": .int64(tab.languageLocked ? 1 : 0),
            "lastModified": .timestamp(tab.lastModified),
            "clock": .string(tab.clock.description),
            "deviceName": .string(deviceName),
        ]
        var inline = fields
        inline["content"] = .string(tab.content)
        if try storedByteCount(of: inline, content: tab.content, backend: backend) > inlineContentLimit {
            fields["contentAsset"] = .asset(try backend.putAsset(Array(tab.content.utf8)))
        } else {
            fields = inline
        }
        return BackendRecord(recordName: tab.id, recordType: RecordType.tab.rawValue, recordChangeTag: tab.sync?.tag,
                             fields: fields, created: nil, modified: nil)
    }

    /// What the backend stores for a tab's fields with the content inline: the content's bytes,
    /// or for an encrypted backend the sealed fields' size (up to 8 times the content's bytes:
    /// JSON escapes a control character in 6, base64 adds a third), computed when it could matter.
    private static func storedByteCount(of fields: [String: FieldValue], content: String, backend: SyncBackend) throws -> Int {
        let contentBytes = content.utf8.count
        guard let encrypted = backend as? EncryptedBackend, contentBytes > inlineContentLimit / 8 else { return contentBytes }
        return try encrypted.storedByteCount(of: fields)
    }

    /// A remote tab as a local one (sync metadata set to the record's tag and content).
    static func tab(from record: BackendRecord, backend: SyncBackend) throws -> Tab? {
        let fields = record.fields
        let content: String
        if case .string(let inline)? = fields["content"] {
            content = inline
        } else if case .asset(let reference)? = fields["contentAsset"] {
            guard let text = String(validating: try backend.readAsset(reference), as: UTF8.self) else { return nil }
            content = text
        } else {
            return nil
        }
        guard Identifier.isValid(record.recordName), let tag = record.recordChangeTag,
              case .string(let name)? = fields["name"], case .timestamp(let modified)? = fields["lastModified"] else { return nil }
        let clock = string(fields["clock"]).flatMap(HybridTimestamp.init)
            ?? HybridTimestamp(physical: modified, device: record.modified?.deviceID ?? "")
        return Tab(id: record.recordName.lowercased(), name: name, nameLocked: int(fields["nameLocked"]) == 1, content: content,
                   language: string(fields["language"]).flatMap(LanguageDetector.canonical) ?? "plain",
                   languageLocked: int(fields["languageLocked"]) == 1, lastModified: modified, fileURL: nil, clock: clock,
                   sync: TabSyncMetadata(tag: tag, ancestor: content))
    }

    static func deviceName(of record: BackendRecord) -> String {
        string(record.fields["deviceName"]) ?? record.modified?.deviceID ?? "unknown device"
    }

    static func record(for entry: ClipEntry, tag: String?) -> BackendRecord {
        BackendRecord(recordName: entry.id, recordType: RecordType.clip.rawValue, recordChangeTag: tag,
                      fields: ["text": .string(entry.text), "timestamp": .timestamp(entry.timestamp), "pinned": .int64(entry.pinned ? 1 : 0)],
                      created: nil, modified: nil)
    }

    static func clip(from record: BackendRecord) -> ClipEntry? {
        guard Identifier.isValid(record.recordName), let text = string(record.fields["text"]),
              case .timestamp(let time)? = record.fields["timestamp"] else { return nil }
        return ClipEntry(id: record.recordName.lowercased(), text: text, timestamp: time, pinned: int(record.fields["pinned"]) == 1)
    }

    static func record(forSetting key: String, _ entry: SettingsStore.Entry) -> BackendRecord {
        var fields: [String: FieldValue] = ["clock": .string(entry.clock.description)]
        if let value = entry.value { fields["value"] = .string(value.serialized()) }
        return BackendRecord(recordName: key, recordType: RecordType.setting.rawValue, recordChangeTag: entry.tag,
                             fields: fields, created: nil, modified: nil)
    }

    /// A remote setting (nil value = unset), if it is one this version knows and its value is valid.
    static func setting(from record: BackendRecord) -> (String, SettingsStore.Entry)? {
        guard let definition = Settings.definition(record.recordName), definition.scope == .synced,
              let clock = string(record.fields["clock"]).flatMap(HybridTimestamp.init) else { return nil }
        var value: JSONValue?
        if let text = string(record.fields["value"]) {
            guard let parsed = try? JSONValue.parse(text), definition.kind.decode(parsed) != nil else { return nil }
            value = parsed
        }
        return (definition.key, SettingsStore.Entry(value: value, clock: clock, tag: record.recordChangeTag))
    }

    private static func string(_ value: FieldValue?) -> String? { if case .string(let s)? = value { return s }; return nil }
    private static func int(_ value: FieldValue?) -> Int64? { if case .int64(let i)? = value { return i }; return nil }
}

import ItsypadBackend
import ItsypadModel
import ItsypadStore
import ItsypadSupport

/// Converts local items to backend records and back. Field names follow the
/// Itsypad app's CloudKit schema, plus what a CLI needs (clock, pinned, history).
enum RecordMapping {
    static func record(for tab: Tab, deviceName: String, backend: SyncBackend) throws -> BackendRecord {
        var fields: [String: FieldValue] = [
            "name": .string(tab.name),
            "nameLocked": .int64(tab.nameLocked ? 1 : 0),
            "language": .string(tab.language),
            "languageLocked": .int64(tab.languageLocked ? 1 : 0),
            "lastModified": .timestamp(tab.lastModified),
            "clock": .string(tab.clock.description),
            "deviceName": .string(deviceName),
            "history": .stringList(tab.history.strings),
        ]
        var inline = fields
        inline["content"] = .string(tab.content)
        if try storedByteCount(of: inline, content: tab.content, backend: backend) > backend.limits.maxInlineValueBytes {
            fields["contentAsset"] = .asset(try backend.putAsset(Array(tab.content.utf8)))
        } else {
            fields = inline
        }
        return BackendRecord(
            recordName: tab.id, recordType: RecordType.tab.rawValue, recordChangeTag: tab.sync?.tag,
            fields: fields, created: nil, modified: nil)
    }

    /// What the backend stores for a tab's fields with the content inline: the content's bytes,
    /// or for a sealing backend the sealed fields' size (up to 8 times the content's bytes:
    /// JSON escapes a control character in 6, base64 adds a third), computed when it could matter.
    private static func storedByteCount(of fields: [String: FieldValue], content: String, backend: SyncBackend) throws -> Int {
        let contentBytes = content.utf8.count
        guard contentBytes > backend.limits.maxInlineValueBytes / 8 else { return contentBytes }
        return try backend.sealedByteCount(of: fields) ?? contentBytes
    }

    /// Why a tab record cannot become a local tab, or nil when it can.
    static func tabProblem(with record: BackendRecord) -> String? {
        let fields = record.fields
        guard Identifier.isValid(record.recordName) else { return "the record name is not a tab id" }
        guard case .string? = fields["name"] else { return "no name" }
        guard case .timestamp(let modified)? = fields["lastModified"], Time.validRange.contains(modified) else {
            return "lastModified is missing or outside 1970–9999"
        }
        switch (fields["content"], fields["contentAsset"]) {
        case (.string?, _), (nil, .asset?): break
        default: return "no content"
        }
        if let clock = string(fields["clock"]), HybridTimestamp(clock) == nil { return "clock \(Text.quoted(clock)) is not a valid clock" }
        return nil
    }

    /// Why a clip record cannot become a clipboard entry, or nil when it can.
    static func clipProblem(with record: BackendRecord) -> String? {
        guard Identifier.isValid(record.recordName) else { return "the record name is not a clip id" }
        guard string(record.fields["text"]) != nil else { return "no text" }
        guard case .timestamp(let time)? = record.fields["timestamp"], Time.validRange.contains(time) else {
            return "timestamp is missing or outside 1970–9999"
        }
        return nil
    }

    /// Why a setting record cannot be applied, or nil when it can (or is simply not for this
    /// device: an unknown or device-scoped setting).
    static func settingProblem(with record: BackendRecord) -> String? {
        guard let definition = Settings.definition(record.recordName), definition.scope == .synced else { return nil }
        guard string(record.fields["clock"]).flatMap(HybridTimestamp.init) != nil else { return "no valid clock" }
        if let text = string(record.fields["value"]) {
            guard let parsed = try? JSONValue.parse(text), definition.kind.decode(parsed) != nil else {
                return "value is not \(definition.kind.summary)"
            }
        }
        return nil
    }

    /// A remote tab as a local one (sync metadata set to the record's tag and content); nil when
    /// `tabProblem(with:)` finds one. Throws when its content asset cannot be read.
    static func tab(from record: BackendRecord, backend: SyncBackend) throws -> Tab? {
        guard tabProblem(with: record) == nil else { return nil }
        let fields = record.fields
        let content: String
        if case .string(let inline)? = fields["content"] {
            content = inline
        } else if case .asset(let reference)? = fields["contentAsset"] {
            guard let text = String(validating: try backend.readAsset(reference), as: UTF8.self) else {
                throw BackendError.corrupt(path: backend.location(of: record.id), reason: "its content asset is not UTF-8 text")
            }
            content = text
        } else {
            return nil
        }
        guard let tag = record.recordChangeTag, case .string(let name)? = fields["name"],
            case .timestamp(let modified)? = fields["lastModified"]
        else { return nil }
        let clock =
            string(fields["clock"]).flatMap(HybridTimestamp.init)
            ?? HybridTimestamp(physical: modified, device: record.modified?.deviceID ?? "")
        // Records written before histories were kept count as their own edit.
        return Tab(
            id: record.recordName.lowercased(), name: name, nameLocked: int(fields["nameLocked"]) == 1, content: content,
            language: string(fields["language"]).flatMap(LanguageDetector.canonical) ?? "plain",
            languageLocked: int(fields["languageLocked"]) == 1, lastModified: modified, fileURL: nil, clock: clock,
            sync: TabSyncMetadata(tag: tag, ancestor: content, clock: clock), history: history(of: record))
    }

    static func deviceName(of record: BackendRecord) -> String {
        string(record.fields["deviceName"]) ?? record.modified?.deviceID ?? "unknown device"
    }

    /// A clip; `history` holds the pin changes the version includes.
    static func record(for entry: ClipEntry, tag: String?, history: EditHistory) -> BackendRecord {
        BackendRecord(
            recordName: entry.id, recordType: RecordType.clip.rawValue, recordChangeTag: tag,
            fields: [
                "text": .string(entry.text), "timestamp": .timestamp(entry.timestamp), "pinned": .int64(entry.pinned ? 1 : 0),
                "history": .stringList(history.strings),
            ],
            created: nil, modified: nil)
    }

    /// A remote clip, with the pin changes it includes (none for records written before they were kept).
    static func clip(from record: BackendRecord) -> (entry: ClipEntry, history: EditHistory)? {
        guard clipProblem(with: record) == nil, let text = string(record.fields["text"]),
            case .timestamp(let time)? = record.fields["timestamp"]
        else { return nil }
        let entry = ClipEntry(id: record.recordName.lowercased(), text: text, timestamp: time, pinned: int(record.fields["pinned"]) == 1)
        return (entry, record.fields["history"] == nil ? EditHistory() : history(of: record))
    }

    static func record(forSetting key: String, _ entry: SettingsStore.Entry) -> BackendRecord {
        var fields: [String: FieldValue] = ["clock": .string(entry.clock.description)]
        if let value = entry.value { fields["value"] = .string(value.serialized()) }
        return BackendRecord(
            recordName: key, recordType: RecordType.setting.rawValue, recordChangeTag: entry.tag,
            fields: fields, created: nil, modified: nil)
    }

    /// A remote setting (nil value = unset), if it is one this version knows and its value is valid.
    static func setting(from record: BackendRecord) -> (String, SettingsStore.Entry)? {
        guard settingProblem(with: record) == nil, let definition = Settings.definition(record.recordName), definition.scope == .synced,
            let clock = string(record.fields["clock"]).flatMap(HybridTimestamp.init)
        else { return nil }
        var value: JSONValue?
        if let text = string(record.fields["value"]) {
            guard let parsed = try? JSONValue.parse(text), definition.kind.decode(parsed) != nil else { return nil }
            value = parsed
        }
        return (definition.key, SettingsStore.Entry(value: value, clock: clock, tag: record.recordChangeTag))
    }

    // MARK: Tombstones

    /// The record type of tombstones. A deletion removes the record and, in the same
    /// atomic batch, saves a tombstone named `<recordType>.<recordName>` saying which
    /// edits the deleted version included: a device that finds the record gone can then
    /// tell whether the deleter had seen its own edits, even after the journal was
    /// compacted. Devices that do not know tombstones ignore them and see a plain delete.
    static let tombstoneType = "Tombstone"

    static func tombstone(for key: RecordKey, history: EditHistory, tag: String?) -> BackendRecord {
        BackendRecord(
            recordName: key.type.rawValue + "." + key.name, recordType: tombstoneType, recordChangeTag: tag,
            fields: [
                "deletedType": .string(key.type.rawValue), "deletedName": .string(key.name),
                "history": .stringList(history.strings),
            ],
            created: nil, modified: nil)
    }

    static func tombstoneID(for key: RecordKey) -> RecordID {
        RecordID(recordType: tombstoneType, recordName: key.type.rawValue + "." + key.name)
    }

    /// The deletion a tombstone records (the record's name as written), if it is a well-formed tombstone.
    static func tombstone(from record: BackendRecord) -> (key: RecordKey, history: EditHistory)? {
        guard record.recordType == tombstoneType, let typeName = string(record.fields["deletedType"]),
            let type = RecordType(rawValue: typeName), let name = string(record.fields["deletedName"]),
            record.recordName == typeName + "." + name, let history = strings(record.fields["history"]).flatMap(EditHistory.init(strings:))
        else { return nil }
        return (RecordKey(type, name), history)
    }

    /// The edits a tab or clip version includes; a record without them counts as its own edit.
    static func history(of record: BackendRecord) -> EditHistory {
        if let history = strings(record.fields["history"]).flatMap(EditHistory.init(strings:)) { return history }
        return string(record.fields["clock"]).flatMap(HybridTimestamp.init).map { EditHistory([$0]) } ?? EditHistory()
    }

    private static func strings(_ value: FieldValue?) -> [String]? { if case .stringList(let l)? = value { return l }; return nil }
    private static func string(_ value: FieldValue?) -> String? { if case .string(let s)? = value { return s }; return nil }
    private static func int(_ value: FieldValue?) -> Int64? { if case .int64(let i)? = value { return i }; return nil }
}

import ItsypadBackend
import ItsypadModel
import ItsypadStore
import ItsypadSupport

/// Converts local items to backend records and back. Field names follow the
/// Itsypad app's CloudKit schema, plus what a CLI needs (clock, pinned, history).
enum RecordMapping {
    static func record(for tab: Tab, deviceName: String, backend: SyncBackend) throws -> BackendRecord {
        var fields = try FieldCoding.encode(TabRecordFields(tab, deviceName: deviceName, content: .inline))
        if try storedByteCount(of: fields, content: tab.content, backend: backend) > backend.limits.maxInlineValueBytes {
            let asset = try backend.putAsset(Array(tab.content.utf8))
            fields = try FieldCoding.encode(TabRecordFields(tab, deviceName: deviceName, content: .asset(asset)))
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

    /// A record's fields as `Fields`, or why they cannot be read (never, for the types here, whose
    /// fields are all optional: a field of another type reads as absent).
    private static func decode<Fields: Decodable>(_ type: Fields.Type, _ record: BackendRecord) -> Result<Fields, any Error> {
        Result { try FieldCoding.decode(type, from: record.fields) }
    }

    /// Why a tab record cannot become a local tab, or nil when it can.
    static func tabProblem(with record: BackendRecord) -> String? {
        switch decode(TabRecordFields.self, record) {
        case .success(let fields): problem(with: fields, record)
        case .failure(let error): JSONCoding.describe(error)
        }
    }

    private static func problem(with fields: TabRecordFields, _ record: BackendRecord) -> String? {
        fields.problem(recordName: record.recordName, mistypedContent: TabRecordFields.hasMistypedContent(record.fields))
    }

    /// Why a clip record cannot become a clipboard entry, or nil when it can.
    static func clipProblem(with record: BackendRecord) -> String? {
        switch decode(ClipRecordFields.self, record) {
        case .success(let fields): fields.problem(recordName: record.recordName)
        case .failure(let error): JSONCoding.describe(error)
        }
    }

    /// Why a setting record cannot be applied, or nil when it can (or is simply not for this
    /// device: an unknown or device-scoped setting).
    static func settingProblem(with record: BackendRecord) -> String? {
        switch decode(SettingRecordFields.self, record) {
        case .success(let fields): fields.problem(key: record.recordName)
        case .failure(let error): JSONCoding.describe(error)
        }
    }

    /// A remote tab as a local one (sync metadata set to the record's tag and content); nil when
    /// `tabProblem(with:)` finds one. Throws when its content asset cannot be read.
    static func tab(from record: BackendRecord, backend: SyncBackend) throws -> Tab? {
        guard case .success(let fields) = decode(TabRecordFields.self, record), problem(with: fields, record) == nil else { return nil }
        if let inline = fields.content { return tab(fields, record, content: inline) }
        guard let reference = fields.contentAsset else { return nil }
        guard let text = String(validating: try backend.readAsset(reference), as: UTF8.self) else {
            throw BackendError.corrupt(path: backend.location(of: record.id), reason: "its content asset is not UTF-8 text")
        }
        return tab(fields, record, content: text)
    }

    private static func tab(_ fields: TabRecordFields, _ record: BackendRecord, content: String) -> Tab? {
        guard let tag = record.recordChangeTag else { return nil }
        return fields.tab(id: record.recordName, content: content, tag: tag, writer: record.modified?.deviceID)
    }

    static func deviceName(of record: BackendRecord) -> String { deviceName(try? decode(TabRecordFields.self, record).get(), record) }

    private static func deviceName(_ fields: TabRecordFields?, _ record: BackendRecord) -> String {
        fields?.deviceName ?? record.modified?.deviceID ?? "unknown device"
    }

    /// A clip; `history` holds the pin changes the version includes, `content` a binary clip's bytes.
    static func record(for entry: ClipEntry, tag: String?, history: EditHistory, content: AssetReference? = nil) -> BackendRecord {
        BackendRecord(
            recordName: entry.id, recordType: RecordType.clip.rawValue, recordChangeTag: tag,
            fields: encoded(ClipRecordFields(entry, history: history, content: content)), created: nil, modified: nil)
    }

    /// A remote clip, with the pin changes it includes (none for records written before they were kept).
    static func clip(from record: BackendRecord) -> (entry: ClipEntry, history: EditHistory)? {
        guard case .success(let fields) = decode(ClipRecordFields.self, record) else { return nil }
        return fields.entry(id: record.recordName)
    }

    /// The asset holding a binary clip's bytes; nil for text.
    static func clipContent(of record: BackendRecord) -> AssetReference? {
        if case .asset(let reference)? = record.fields[ClipRecordFields.contentAssetField] { reference } else { nil }
    }

    /// A binary clip's bytes, read from the backend and checked against the record's description;
    /// the entry's description then gains what its bytes tell (an image's pixels).
    static func clipBytes(_ entry: inout ClipEntry, of record: BackendRecord, backend: SyncBackend) throws -> [UInt8] {
        guard let binary = entry.binary, let reference = clipContent(of: record) else { return [] }
        let bytes = try backend.readAsset(reference)
        guard binary.describes(bytes) else {
            throw BackendError.corrupt(path: backend.location(of: record.id), reason: "its content asset is not the clip it describes")
        }
        entry.binary = ClipBinary(describing: bytes, type: binary.type)
        return bytes
    }

    static func record(forSetting key: String, _ entry: SettingsStore.Entry) -> BackendRecord {
        BackendRecord(
            recordName: key, recordType: RecordType.setting.rawValue, recordChangeTag: entry.tag,
            fields: encoded(SettingRecordFields(entry)), created: nil, modified: nil)
    }

    /// A remote setting (nil value = unset), if it is one this version knows and its value is valid.
    static func setting(from record: BackendRecord) -> (String, SettingsStore.Entry)? {
        guard case .success(let fields) = decode(SettingRecordFields.self, record) else { return nil }
        return fields.entry(key: record.recordName, tag: record.recordChangeTag)
    }

    /// Fields of a type made only of strings, flags, times and lists of strings, which always
    /// have a field type (`FieldCoding` refuses only a property of a type it does not know).
    private static func encoded(_ fields: some Encodable) -> [String: FieldValue] {
        do { return try FieldCoding.encode(fields) } catch { preconditionFailure("\(type(of: fields)): \(error)") }
    }

    // MARK: Tombstones

    /// The record type of tombstones. A deletion removes the record and, in the same
    /// atomic batch, saves a tombstone named `<recordType>.<recordName>` saying which
    /// edits the deleted version included: a device that finds the record gone can then
    /// tell whether the deleter had seen its own edits, even after the journal was
    /// compacted. Devices that do not know tombstones ignore them and see a plain delete.
    static let tombstoneType = RecordType.tombstone.rawValue

    static func tombstone(for key: RecordKey, history: EditHistory, tag: String?) -> BackendRecord {
        BackendRecord(
            recordName: key.tombstoneName, recordType: tombstoneType, recordChangeTag: tag,
            fields: encoded(TombstoneRecordFields(deletedType: key.type.rawValue, deletedName: key.name, history: history.strings)),
            created: nil, modified: nil)
    }

    static func tombstoneID(for key: RecordKey) -> RecordID {
        RecordID(recordType: tombstoneType, recordName: key.tombstoneName)
    }

    /// The deletion a tombstone records (the record's name as written), if it is a well-formed tombstone.
    static func tombstone(from record: BackendRecord) -> (key: RecordKey, history: EditHistory)? {
        guard record.recordType == tombstoneType, case .success(let fields) = decode(TombstoneRecordFields.self, record),
            let typeName = fields.deletedType, let type = RecordType(rawValue: typeName), let name = fields.deletedName,
            record.recordName == typeName + "." + name, let history = fields.history.flatMap(EditHistory.init(strings:))
        else { return nil }
        return (RecordKey(type, name), history)
    }

    /// The edits a tab or clip version includes; a record without them counts as its own edit.
    static func history(of record: BackendRecord) -> EditHistory {
        guard case .success(let fields) = decode(VersionEditFields.self, record) else { return EditHistory() }
        return fields.edits
    }
}

import ItsypadBackend
import ItsypadModel
import ItsypadSupport

/// A clip record's fields (`ClipboardEntry`, see `FieldCoding` for how each is stored): the one
/// place their names and meaning are written down. Every field is optional here, as records of
/// other versions may lack some; `problem` says which a clip cannot do without.
struct ClipRecordFields: Codable {
    let text: String?
    let timestamp: RecordTimestamp?
    /// Absent or anything but 1: not pinned.
    let pinned: Bool?
    /// The pin changes this version includes; absent in records from before they were kept.
    let history: [String]?

    init(_ entry: ClipEntry, history: EditHistory) {
        text = entry.text
        timestamp = RecordTimestamp(entry.timestamp)
        pinned = entry.pinned
        self.history = history.strings
    }

    /// Why these fields cannot become a clipboard entry, or nil when they can.
    func problem(recordName: String) -> String? {
        guard Identifier.isValid(recordName) else { return "the record name is not a clip id" }
        guard text != nil else { return "no text" }
        guard let timestamp, Time.validRange.contains(timestamp.milliseconds) else { return "timestamp is missing or outside 1970–9999" }
        return nil
    }

    /// The clip and the pin changes it includes (none when unknown); nil when `problem` finds one.
    func entry(id: String) -> (entry: ClipEntry, history: EditHistory)? {
        guard problem(recordName: id) == nil, let text, let timestamp else { return nil }
        let entry = ClipEntry(id: id.lowercased(), text: text, timestamp: timestamp.milliseconds, pinned: pinned ?? false)
        return (entry, history.flatMap(EditHistory.init(strings:)) ?? EditHistory())
    }
}

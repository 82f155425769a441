import ItsypadBackend
import ItsypadModel
import ItsypadSupport

/// A clip record's fields (`ClipboardEntry`, see `FieldCoding` for how each is stored): the one
/// place their names and meaning are written down. Every field is optional here, as records of
/// other versions may lack some; `problem` says which a clip cannot do without.
struct ClipRecordFields: Codable {
    /// A text clip's text; absent for a binary clip.
    let text: String?
    let timestamp: RecordTimestamp?
    /// Absent or anything but 1: not pinned.
    let pinned: Bool?
    /// The pin changes this version includes; absent in records from before they were kept.
    let history: [String]?
    /// A binary clip's MIME type, size, SHA-256 (lowercase hex) and bytes (an asset, sealed when the backend is).
    let contentType: String?
    let contentSize: Int64?
    let contentSHA256: String?
    let contentAsset: AssetReference?
    static let contentAssetField = CodingKeys.contentAsset.stringValue

    /// `content`: a binary entry's bytes as an asset (nil for text).
    init(_ entry: ClipEntry, history: EditHistory, content: AssetReference?) {
        text = entry.binary == nil ? entry.text : nil
        timestamp = RecordTimestamp(entry.timestamp)
        pinned = entry.pinned
        self.history = history.strings
        contentType = entry.binary?.type
        contentSize = entry.binary.map { Int64($0.size) }
        contentSHA256 = entry.binary?.sha256
        contentAsset = entry.binary == nil ? nil : content
    }

    /// Why these fields cannot become a clipboard entry, or nil when they can.
    func problem(recordName: String) -> String? {
        guard Identifier.isValid(recordName) else { return "the record name is not a clip id" }
        if let contentType {
            guard MediaType.isValid(contentType), !MediaType.isText(contentType) else { return "contentType is not a binary MIME type" }
            guard let contentSize, contentSize > 0, contentAsset?.size != nil else { return "no content" }
            guard let contentSHA256, contentSHA256.utf8.count == 64, contentSHA256.utf8.allSatisfy({ Hex.value($0) != nil }) else {
                return "contentSHA256 is not a SHA-256"
            }
        } else if text == nil {
            return "no text"
        }
        guard let timestamp, Time.validRange.contains(timestamp.milliseconds) else { return "timestamp is missing or outside 1970–9999" }
        return nil
    }

    /// The clip and the pin changes it includes (none when unknown); nil when `problem` finds one. A binary
    /// clip's description lacks the pixels, which are read from its bytes once they are fetched.
    func entry(id: String) -> (entry: ClipEntry, history: EditHistory)? {
        guard problem(recordName: id) == nil, let timestamp else { return nil }
        let binary = contentType.map { type in
            ClipBinary(type: type.lowercased(), size: Int(contentSize ?? 0), sha256: (contentSHA256 ?? "").lowercased())
        }
        let entry = ClipEntry(
            id: id.lowercased(), text: text ?? "", timestamp: timestamp.milliseconds, pinned: pinned ?? false, binary: binary)
        return (entry, history.flatMap(EditHistory.init(strings:)) ?? EditHistory())
    }
}

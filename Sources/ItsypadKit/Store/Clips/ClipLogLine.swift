import ItsypadModel
import ItsypadSupport

/// A line of `clips/log` (see `ClipStore`): the one place its keys and their meaning are written
/// down. An entry added is `op` "add", `id`, `ts`, `pinned`, `local` when it stays on this device,
/// for a binary entry `type`, `size`, `sha256` and, for an image whose header was read, `width`
/// and `height` (its bytes are the file `blobs/<id>`), then `text` (last, so that a listing reads
/// the rest without the text; empty for a binary entry); a removal is `op` "rm"
/// and `id`; a pin change `op` "pin", `id` and `pinned`. `clip add` writes its line through this
/// type (`ClipStore.addLine`); an import, clear and the listings write and read these lines from
/// bytes (`ClipStore.appendAddLine`, `appendRemoveLine`, `ClipLineHeader`);
/// `ClipLogLineTests` checks them against this type.
struct ClipLogLine: Codable, Equatable {
    /// `add`, `rm` or `pin`.
    var op: String
    var id: String
    /// `add`: milliseconds since 1970.
    var ts: Int64?
    /// `add` and `pin`.
    var pinned: Bool?
    /// `add`: why the entry is never synced (`LocalOnlyReason`); absent when it is synced.
    var local: String?
    /// `add` of a binary entry: its MIME type, size in bytes, SHA-256 (lowercase hex) and an image's pixels.
    var type: String?
    var size: Int64?
    var sha256: String?
    var width: Int64?
    var height: Int64?
    var text: String?
}

extension ClipLogLine {
    /// The line that adds `entry`.
    init(adding entry: ClipEntry) {
        self.init(
            op: "add", id: entry.id, ts: entry.timestamp, pinned: entry.pinned, local: entry.localOnly?.rawValue,
            type: entry.binary?.type, size: entry.binary.map { Int64($0.size) }, sha256: entry.binary?.sha256,
            width: entry.binary?.width.map(Int64.init), height: entry.binary?.height.map(Int64.init), text: entry.text)
    }
}

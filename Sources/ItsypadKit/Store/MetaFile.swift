import ItsypadSupport

/// `meta.json` (see `DataStore`): the one place its keys and their meaning are written down.
/// Keys are written in this order, the one existing files have.
struct MetaFile: Codable, Equatable {
    /// The data directory's format (`DataStore.format`); a newer one is refused.
    var format: Int64
    /// This device's id, a UUID.
    var deviceID: String
    /// When the data directory was made, ISO 8601 in UTC. Informational only: a file without it,
    /// or with something else in its place, is still this device's (nil then).
    var created: String?

    /// The file's bytes: pretty-printed in key order, with a final newline.
    var bytes: [UInt8] {
        // Encoding three plain members cannot fail.
        try! JSONCoding.encodeValue(self, keys: .asEncoded).prettySerializedBytes() + Array("\n".utf8)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        format = try container.decode(Int64.self, forKey: .format)
        deviceID = try container.decode(String.self, forKey: .deviceID)
        created = try? container.decodeIfPresent(String.self, forKey: .created)
    }

    init(format: Int64, deviceID: String, created: String?) {
        self.format = format
        self.deviceID = deviceID
        self.created = created
    }
}

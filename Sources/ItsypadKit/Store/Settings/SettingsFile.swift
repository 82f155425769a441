import ItsypadModel
import ItsypadSupport

/// `settings.json` (see `SettingsStore`): the one place its keys and their meaning are written down.
/// Keys are written in this order, the one existing files have; settings are
/// written sorted by name.
struct SettingsFile: Codable {
    /// Always 1.
    var format: Int
    var values: Values

    /// One setting: `value` is written as `null` for an unset key's tombstone; `tag` and `synced`
    /// are absent until it has synced.
    struct Value: Codable {
        @ExplicitNull var value: JSONValue? = nil
        var clock: String
        /// The backend's change tag for the version last synced.
        var tag: String?
        /// The clock of the version last synced.
        var synced: String?

        init(_ entry: SettingsStore.Entry) {
            value = entry.value
            clock = entry.clock.description
            tag = entry.tag
            synced = entry.syncedClock?.description
        }

        /// The entry; nil when the clock is not one.
        var entry: SettingsStore.Entry? {
            guard let clock = HybridTimestamp(clock) else { return nil }
            return SettingsStore.Entry(
                value: value.flatMap { $0 == .null ? nil : $0 }, clock: clock, tag: tag, syncedClock: synced.flatMap(HybridTimestamp.init))
        }
    }

    /// The settings by name, written sorted (a dictionary's own order changes from run to run).
    struct Values: Codable {
        var byName: [String: Value]

        init(_ byName: [String: Value]) { self.byName = byName }

        init(from decoder: any Decoder) throws { byName = try [String: Value](from: decoder) }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: JSONCoding.NameKey.self)
            for name in byName.keys.sorted() { try container.encode(byName[name]!, forKey: JSONCoding.NameKey(stringValue: name)) }
        }
    }

    init(_ entries: [String: SettingsStore.Entry]) {
        format = 1
        values = Values(entries.mapValues(Value.init))
    }

    /// The file's bytes, decoded.
    static func read(_ bytes: [UInt8]) throws -> SettingsFile { try JSONCoding.decode(SettingsFile.self, from: bytes) }
}

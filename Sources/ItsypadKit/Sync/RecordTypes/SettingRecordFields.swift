import ItsypadBackend
import ItsypadModel
import ItsypadStore
import ItsypadSupport

/// A setting record's fields (`Setting`, named by the setting's key; see `FieldCoding` for how
/// each is stored): the one place their names and meaning are written down.
struct SettingRecordFields: Codable {
    /// The `HybridTimestamp` of the change.
    let clock: String?
    /// The value as JSON text; absent when the setting was unset (a tombstone).
    let value: String?

    init(_ entry: SettingsStore.Entry) {
        clock = entry.clock.description
        value = entry.value?.serialized()
    }

    /// Why these fields cannot be applied, or nil when they can (or are simply not for this
    /// device: an unknown or device-scoped setting).
    func problem(key: String) -> String? {
        guard let definition = Settings.definition(key), definition.scope == .synced else { return nil }
        guard clock.flatMap(HybridTimestamp.init) != nil else { return "no valid clock" }
        if value != nil, parsedValue(for: definition) == nil { return "value is not \(definition.kind.summary)" }
        return nil
    }

    /// The setting's key and entry (a nil value when unset), if it is one this version syncs and
    /// its value is valid.
    func entry(key: String, tag: String?) -> (String, SettingsStore.Entry)? {
        guard let definition = Settings.definition(key), definition.scope == .synced, let clock = clock.flatMap(HybridTimestamp.init)
        else { return nil }
        var parsed: JSONValue?
        if value != nil {
            guard let valid = parsedValue(for: definition) else { return nil }
            parsed = valid
        }
        return (definition.key, SettingsStore.Entry(value: parsed, clock: clock, tag: tag))
    }

    /// The value, when it is JSON the setting accepts.
    private func parsedValue(for definition: SettingDefinition) -> JSONValue? {
        guard let value, let parsed = try? JSONValue.parse(value), definition.kind.decode(parsed) != nil else { return nil }
        return parsed
    }
}

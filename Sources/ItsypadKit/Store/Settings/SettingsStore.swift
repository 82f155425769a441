import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Stored settings in `settings.json`. Each key keeps the clock of its last
/// change so that synced keys merge per key, last writer wins; an unset
/// synced key keeps a tombstone so that the unset travels too.
public final class SettingsStore {
    /// A stored value (nil value = unset tombstone) and when it was set.
    public struct Entry: Equatable, Sendable {
        public var value: JSONValue?
        public var clock: HybridTimestamp
        /// The backend's change tag for the version last synced.
        public var tag: String? = nil
        /// The clock of the version last synced: an entry whose clock differs has a change to send.
        public var syncedClock: HybridTimestamp? = nil

        package init(value: JSONValue?, clock: HybridTimestamp, tag: String? = nil, syncedClock: HybridTimestamp? = nil) {
            self.value = value
            self.clock = clock
            self.tag = tag
            self.syncedClock = syncedClock
        }

        public var hasUnsyncedChanges: Bool { syncedClock != clock }
    }

    public let path: String
    public private(set) var entries: [String: Entry] = [:]
    private let tree: FileTree

    init(path: String, tree: FileTree? = nil) throws {
        self.path = path
        self.tree = tree ?? .containing(path)
        guard let bytes = try storeOperation({ try self.tree.read(path) }) else { return }
        let file: SettingsFile
        do { file = try SettingsFile.read(bytes) } catch {
            throw ItsypadError.corrupt(path, JSONCoding.describe(error))
        }
        for (key, stored) in file.values.byName {
            guard let entry = stored.entry else { throw ItsypadError.corrupt(path, "setting \(key) has no clock") }
            entries[key] = entry
        }
    }

    /// The effective value: stored, else the default (device.name defaults to the host name).
    public func value(_ key: String) -> SettingValue? {
        guard let definition = Settings.definition(key) else { return nil }
        if let stored = entries[key]?.value, let value = definition.kind.decode(stored) { return value }
        if key == SettingKey.deviceName.rawValue { return .string(SettingsStore.hostName()) }
        return definition.defaultValue
    }

    public func isSet(_ key: String) -> Bool { entries[key]?.value != nil }

    public func bool(_ key: SettingKey) -> Bool { if case .bool(let b)? = value(key.rawValue) { return b }; return false }
    public func int(_ key: SettingKey) -> Int? { if case .int(let i)? = value(key.rawValue) { return i }; return nil }
    public func string(_ key: SettingKey) -> String? { if case .string(let s)? = value(key.rawValue) { return s }; return nil }
    public func list(_ key: SettingKey) -> [String] { if case .list(let l)? = value(key.rawValue) { return l }; return [] }

    /// `clipboard.maxEntries`: the most clips kept, whoever applies the cap (add, import, sync, prune).
    public var maxClipEntries: Int { int(.clipboardMaxEntries) ?? ClipLimits.defaultMaxEntries }
    /// `clipboard.maxBytes`: the largest clip `clip add` stores.
    public var maxClipBytes: Int { int(.clipboardMaxBytes) ?? ClipLimits.defaultMaxBytes }
    /// `clipboard.maxSyncBytes`: the largest binary clip that syncs.
    public var maxClipSyncBytes: Int { int(.clipboardMaxSyncBytes) ?? ClipLimits.defaultMaxSyncBytes }

    /// Sets (or with nil, unsets) a key and writes the file.
    public func set(_ key: String, _ value: SettingValue?, clock: HybridTimestamp) throws {
        entries[key] = Entry(value: value?.json, clock: clock, tag: entries[key]?.tag, syncedClock: entries[key]?.syncedClock)
        try write()
    }

    /// Stores an entry as it is (sync bookkeeping included).
    public func replace(_ key: String, _ entry: Entry) throws {
        entries[key] = entry
        try write()
    }

    /// Applies an entry from elsewhere (import or sync) when it is newer; returns whether it changed anything.
    @discardableResult
    public func merge(_ key: String, _ entry: Entry) throws -> Bool {
        guard mergeWithoutWriting(key, entry) else { return false }
        try write()
        return true
    }

    /// `merge` in memory only: an import stages the file itself (`encoded`).
    package func mergeWithoutWriting(_ key: String, _ entry: Entry) -> Bool {
        if let current = entries[key], current.clock >= entry.clock { return false }
        entries[key] = Entry(value: entry.value, clock: entry.clock, tag: entries[key]?.tag, syncedClock: entries[key]?.syncedClock)
        return true
    }

    func write() throws {
        try storeOperation { try tree.writeAtomically(path, encoded(), isChange: true) }
    }

    /// The file's content.
    package func encoded() -> [UInt8] {
        // Nothing in the file is beyond what JSON can hold, so encoding cannot fail.
        var bytes = try! JSONCoding.encodeValue(SettingsFile(entries), keys: .asEncoded).prettySerializedBytes()
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        return String(cString: buffer)
    }
}

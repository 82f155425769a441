import ItsypadModel
import ItsypadSupport

/// What the engine remembers between runs (`sync/state.json`, replaced
/// atomically): the zone it synced with, the change token, the last
/// successes, the items that keep failing, the identity of the pending queue
/// (to notice a lost one), whether a full fetch is under way, and what it quarantined.
public struct EngineState: Equatable, Sendable {
    /// Why every record is being fetched.
    public enum FullFetch: String, Sendable {
        /// A first sync, or a replaced backend: nothing local to compare.
        case initial
        /// The token expired: local items missing from the backend were deleted there.
        case expired
    }

    /// An item that failed to send, and why.
    public struct Failure: Equatable, Sendable {
        public var attempts: Int
        public var error: String

        package init(attempts: Int, error: String) {
            self.attempts = attempts
            self.error = error
        }
    }

    /// Something from the backend that does not follow the format and was skipped. A record stays
    /// here, and is read again on every sync, until a good version or its deletion arrives, so that
    /// a token moving past it never loses it; a journal line that names no record is listed until
    /// the next full fetch.
    public struct Quarantined: Equatable, Sendable {
        /// The record, when its type and name are known.
        public var key: RecordKey?
        public var location: String
        public var reason: String
        /// When it was first found.
        public var since: Milliseconds

        package init(key: RecordKey?, location: String, reason: String, since: Milliseconds) {
            self.key = key
            self.location = location
            self.reason = reason
            self.since = since
        }
    }

    /// A file of the backend that a fetch waits for (not replicated completely yet), and since when.
    public struct Waiting: Equatable, Sendable {
        public var path: String
        public var reason: String
        public var since: Milliseconds
    }

    /// Attempts after which an item shows as `failed`.
    public static let failureThreshold = 5
    /// Attempts are counted up to this (a number read back from the file cannot overflow).
    static let maxAttempts = 1_000_000

    public var zoneID: String?
    /// What the zone said about itself when this device joined it: under the same zone id none
    /// of it may change (someone who can write the backend but is no device could change it).
    public var zoneIdentity: ZoneIdentity?
    public var token: String?
    public var lastPush: Milliseconds?
    public var lastPull: Milliseconds?
    public var lastError: String?
    public var failures: [RecordKey: Failure] = [:]
    /// The identity of `sync/pending.log` when the engine last wrote it.
    public var queueID: String?
    /// Set while a full fetch runs: one interrupted is started again, since what it saw is not kept.
    public var fullFetch: FullFetch?
    public var quarantine: [Quarantined] = []
    /// What the last fetch waited for; empty when everything had arrived.
    public var waiting: [Waiting] = []
    /// Record types met on the backend that this version does not sync (written by a newer one):
    /// their records were skipped, so a version that syncs one of them fetches everything again.
    public var unknownTypes = Set<String>()
    /// When a sync last swept the data directory of the temporary files crashes left (see
    /// `DataStore.removeAbandonedTemporaryFiles(lastSweep:now:)`).
    public var lastTemporaryFileSweep: Milliseconds?
    /// Why `sync/state.json` could not be read, when it could not: the engine then starts over
    /// as for a replaced backend (fetch everything, send everything again). Never saved.
    public var damage: String?

    public init() {}

    /// The parts of `zone.json` that say how to read a zone: its format, when it was made, and
    /// which key opens it.
    public struct ZoneIdentity: Equatable, Sendable {
        public var format: Int
        public var created: Int64
        public var keyCheckValue: String?

        public init(format: Int, created: Int64, keyCheckValue: String?) {
            self.format = format
            self.created = created
            self.keyCheckValue = keyCheckValue
        }
    }

    /// Reads the state. A damaged file (not JSON, not a regular file, a value of the wrong type, an
    /// invalid zone ID) gives a fresh state with `damage` set rather than an error: sync must recover
    /// from it by itself.
    public static func load(from store: DataStore) throws -> EngineState {
        let path = store.layout.engineState
        let bytes: [UInt8]?
        do {
            bytes = try store.tree.read(path, limit: 64 << 20)
        } catch let error as FileSystemError where error.isMalformed {
            return EngineState(damage: error.description)
        } catch let error as FileSystemError {
            throw ItsypadError.from(error)
        }
        guard let bytes else { return EngineState() }
        guard let json = try? JSONValue.parse(bytes), case .object = json else { return EngineState(damage: "\(path) is not valid JSON") }
        let file: EngineStateFile
        do { file = try JSONCoding.decode(EngineStateFile.self, from: json) } catch {
            return EngineState(damage: "\(path): \(JSONCoding.describe(error))")
        }
        return file.state(now: Time.now()) ?? EngineState(damage: "\(path) holds an invalid zone ID")
    }

    private init(damage: String) {
        self.damage = damage
    }

    public func save(to store: DataStore) throws {
        var bytes = try JSONCoding.encodeValue(EngineStateFile(self), keys: .asEncoded).prettySerializedBytes()
        bytes.append(UInt8(ascii: "\n"))
        let path = store.layout.engineState
        // Saved unchanged (after each batch of a push, most often): the file, written atomically
        // by the save that made it, already holds these bytes, so its two fsyncs are spared.
        if let stored = try? store.tree.read(path, limit: bytes.count), stored == bytes { return }
        try storeOperation { try store.tree.writeAtomically(path, bytes) }
    }

    /// Items that failed often enough to show as `failed`.
    public var failedKeys: Set<RecordKey> {
        Set(failures.filter { $0.value.attempts >= EngineState.failureThreshold }.keys)
    }

    /// Adds or refreshes a quarantined item (one entry per record, or per location when no record is known).
    package mutating func quarantine(_ item: Quarantined) {
        var item = item
        if let index = quarantine.firstIndex(where: { item.key != nil ? $0.key == item.key : $0.location == item.location }) {
            item.since = quarantine[index].since
            quarantine[index] = item
        } else {
            quarantine.append(item)
        }
    }

    /// What a fetch waited for, each file keeping the time it was first waited for.
    package mutating func noteWaits(_ waits: [(path: String, reason: String)], now: Milliseconds) {
        let earlier = Dictionary(waiting.map { ($0.path, $0.since) }, uniquingKeysWith: min)
        var seen = Set<String>()
        waiting = waits.filter { seen.insert($0.path).inserted }.map {
            Waiting(path: $0.path, reason: $0.reason, since: earlier[$0.path] ?? now)
        }
    }

    /// A good version (or the deletion) of a quarantined record arrived.
    package mutating func release(_ key: RecordKey) {
        quarantine.removeAll { $0.key == key }
    }
}

extension EngineState.Quarantined {
    /// The form in `sync status --json`.
    package var json: JSONValue {
        .object([
            ("type", key.map { .string($0.type.rawValue) } ?? .null), ("id", key.map { .string($0.name) } ?? .null),
            ("location", .string(location)), ("reason", .string(reason)), ("since", .integer(since)),
        ])
    }

    /// One line for people: where, and why (both may hold names a peer chose, so escaped).
    package var summary: String { Text.escapingControls("\(location): \(reason)", limit: 500) }
}

extension EngineState.Waiting {
    /// The form in `sync status --json`.
    package var json: JSONValue {
        .object([("path", .string(path)), ("reason", .string(reason)), ("since", .integer(since))])
    }

    /// One line for people (the path and reason come from the backend, so escaped).
    package var summary: String { Text.escapingControls("\(path): \(reason)", limit: 500) }
}

/// The capped activity log of sync attempts (`sync/log.jsonl`).
public struct ActivityLog {
    public struct Entry: Equatable, Sendable {
        public var time: Milliseconds
        public var direction: String
        public var pulled: Int
        public var pushed: Int
        public var conflicts: Int
        public var result: String
        public var error: String?
        /// What this run skipped as malformed: "location: reason" each.
        public var quarantined: [String] = []

        package init(
            time: Milliseconds, direction: String, pulled: Int, pushed: Int, conflicts: Int, result: String, error: String?,
            quarantined: [String] = []
        ) {
            self.time = time
            self.direction = direction
            self.pulled = pulled
            self.pushed = pushed
            self.conflicts = conflicts
            self.result = result
            self.error = error
            self.quarantined = quarantined
        }

        package var json: JSONValue {
            .object([
                ("time", .string(Time.iso8601(time))), ("direction", .string(direction)), ("pulled", .integer(Int64(pulled))),
                ("pushed", .integer(Int64(pushed))), ("conflicts", .integer(Int64(conflicts))),
                ("result", .string(result)), ("error", error.map { .string($0) } ?? .null),
                ("quarantined", .array(quarantined.map { .string($0) })),
            ])
        }
    }

    /// The log keeps the newest `capacity` entries.
    public static let capacity = 500

    let path: String
    private let tree: FileTree

    package init(store: DataStore) {
        path = store.layout.activityLog
        tree = store.tree
    }

    public func append(_ entry: Entry) throws {
        try storeOperation {
            try tree.makeDirectory(FileSystem.directoryName(path))
            let file = try AppendFile(path: path, in: tree)
            try file.append(Array((entry.json.serialized() + "\n").utf8))
            // Trim by rewriting once the log holds twice its capacity: amortised O(1).
            if file.size > ActivityLog.capacity * 2 * 160 {
                let lines = try entries().suffix(ActivityLog.capacity)
                let text = lines.map { $0.json.serialized() + "\n" }.joined()
                try tree.writeAtomically(path, Array(text.utf8))
            }
        }
    }

    /// Oldest first.
    public func entries() throws -> [Entry] {
        let bytes = try storeOperation { try tree.read(path) } ?? []
        return bytes.split(separator: 0x0A).compactMap { line in
            guard let json = try? JSONValue.parse(line), let time = json["time"]?.stringValue.flatMap(Time.parseISO8601) else { return nil }
            func count(_ key: String) -> Int { Int(clamping: json[key]?.int64Value ?? 0) }
            return Entry(
                time: time, direction: json["direction"]?.stringValue ?? "?", pulled: count("pulled"),
                pushed: count("pushed"), conflicts: count("conflicts"),
                result: json["result"]?.stringValue ?? "?", error: json["error"]?.stringValue,
                quarantined: (json["quarantined"]?.arrayValue ?? []).compactMap(\.stringValue))
        }
    }
}

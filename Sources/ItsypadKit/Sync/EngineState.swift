/// What the engine remembers between runs (`sync/state.json`, replaced
/// atomically): the zone it synced with, the change token, the last
/// successes, the items that keep failing, the identity of the pending queue
/// (to notice a lost one) and whether a full fetch is under way.
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
    }

    /// Attempts after which an item shows as `failed`.
    public static let failureThreshold = 5

    public var zoneID: String?
    public var token: String?
    public var lastPush: Milliseconds?
    public var lastPull: Milliseconds?
    public var lastError: String?
    public var failures: [RecordKey: Failure] = [:]
    /// The identity of `sync/pending.log` when the engine last wrote it.
    public var queueID: String?
    /// Set while a full fetch runs: one interrupted is started again, since what it saw is not kept.
    public var fullFetch: FullFetch?

    public init() {}

    static func path(in store: DataStore) -> String { store.path + "/sync/state.json" }

    public static func load(from store: DataStore) throws -> EngineState {
        let path = path(in: store)
        guard let bytes = try storeOperation({ try FileSystem.read(path) }) else { return EngineState() }
        let json: JSONValue
        do { json = try JSONValue.parse(bytes) } catch { throw ItsypadError.corrupt(path, "\(error)") }
        var state = EngineState()
        state.zoneID = json["zoneID"]?.stringValue
        state.token = json["token"]?.stringValue
        state.lastPush = json["lastPush"]?.int64Value
        state.lastPull = json["lastPull"]?.int64Value
        state.lastError = json["lastError"]?.stringValue
        state.queueID = json["queueID"]?.stringValue
        state.fullFetch = json["fullFetch"]?.stringValue.flatMap(FullFetch.init(rawValue:))
        for item in json["failures"]?.arrayValue ?? [] {
            guard let type = item["type"]?.stringValue.flatMap(RecordType.init(rawValue:)), let id = item["id"]?.stringValue,
                  let attempts = item["attempts"]?.int64Value, let error = item["error"]?.stringValue else { continue }
            state.failures[RecordKey(type, id)] = Failure(attempts: Int(attempts), error: error)
        }
        return state
    }

    public func save(to store: DataStore) throws {
        let failures = self.failures.sorted { ($0.key.type.rawValue, $0.key.name) < ($1.key.type.rawValue, $1.key.name) }.map {
            JSONValue.object([("type", .string($0.key.type.rawValue)), ("id", .string($0.key.name)),
                              ("attempts", .integer(Int64($0.value.attempts))), ("error", .string($0.value.error))])
        }
        func optional<T>(_ value: T?, _ wrap: (T) -> JSONValue) -> JSONValue { value.map(wrap) ?? .null }
        let json = JSONValue.object([
            ("zoneID", optional(zoneID) { .string($0) }),
            ("token", optional(token) { .string($0) }),
            ("lastPush", optional(lastPush) { .integer($0) }),
            ("lastPull", optional(lastPull) { .integer($0) }),
            ("lastError", optional(lastError) { .string($0) }),
            ("failures", .array(failures)),
            ("queueID", optional(queueID) { .string($0) }),
            ("fullFetch", optional(fullFetch) { .string($0.rawValue) }),
        ])
        let path = EngineState.path(in: store)
        try storeOperation {
            try FileSystem.makeDirectory(FileSystem.directoryName(path))
            try FileSystem.writeAtomically(path, Array((json.prettySerialized() + "\n").utf8))
        }
    }

    /// Items that failed often enough to show as `failed`.
    public var failedKeys: Set<RecordKey> {
        Set(failures.filter { $0.value.attempts >= EngineState.failureThreshold }.keys)
    }
}

/// The capped activity log of sync attempts (`sync/log.jsonl`, seed 004).
public struct ActivityLog {
    public struct Entry: Equatable, Sendable {
        public var time: Milliseconds
        public var direction: String
        public var pulled: Int
        public var pushed: Int
        public var conflicts: Int
        public var result: String
        public var error: String?

        var json: JSONValue {
            .object([("time", .string(Time.iso8601(time))), ("direction", .string(direction)), ("pulled", .integer(Int64(pulled))),
                     ("pushed", .integer(Int64(pushed))), ("conflicts", .integer(Int64(conflicts))),
                     ("result", .string(result)), ("error", error.map { .string($0) } ?? .null)])
        }
    }

    /// The log keeps the newest `capacity` entries.
    public static let capacity = 500

    let path: String

    init(store: DataStore) { path = store.path + "/sync/log.jsonl" }

    public func append(_ entry: Entry) throws {
        try storeOperation {
            try FileSystem.makeDirectory(FileSystem.directoryName(path))
            let file = try AppendFile(path: path)
            try file.append(Array((entry.json.serialized() + "\n").utf8))
            // Trim by rewriting once the log holds twice its capacity: amortised O(1).
            if file.size > ActivityLog.capacity * 2 * 160 {
                let lines = try entries().suffix(ActivityLog.capacity)
                let text = lines.map { $0.json.serialized() + "\n" }.joined()
                try FileSystem.writeAtomically(path, Array(text.utf8))
            }
        }
    }

    /// Oldest first.
    public func entries() throws -> [Entry] {
        let bytes = try storeOperation { try FileSystem.read(path) } ?? []
        return bytes.split(separator: 0x0A).compactMap { line in
            guard let json = try? JSONValue.parse(line), let time = json["time"]?.stringValue.flatMap(Time.parseISO8601) else { return nil }
            return Entry(time: time, direction: json["direction"]?.stringValue ?? "?", pulled: Int(json["pulled"]?.int64Value ?? 0),
                         pushed: Int(json["pushed"]?.int64Value ?? 0), conflicts: Int(json["conflicts"]?.int64Value ?? 0),
                         result: json["result"]?.stringValue ?? "?", error: json["error"]?.stringValue)
        }
    }
}

import ItsypadModel
import ItsypadSupport

/// `sync/state.json` (see `EngineState`): the one place its keys and their meaning are written
/// down. Keys are written in this order, the one existing files have; an unset
/// value is written as `null`. Lists absent in files of versions before they were kept
/// read as empty.
struct EngineStateFile: Codable {
    var zoneID: String?
    var zone: Zone?
    var token: String?
    /// Milliseconds since 1970, as the other times.
    var lastPush: Int64?
    var lastPull: Int64?
    var lastError: String?
    /// Sorted by record type, then id.
    var failures: [Failure]?
    var queueID: String?
    /// `EngineState.FullFetch`'s raw value.
    var fullFetch: String?
    var quarantine: [Quarantined]?
    var waiting: [Waiting]?
    /// Sorted.
    var unknownTypes: [String]?
    /// Absent until the first sweep.
    var lastTemporaryFileSweep: Int64?

    struct Failure: Codable {
        var type: String
        var id: String
        /// Clamped to `EngineState.maxAttempts` when read.
        var attempts: Int64
        var error: String
    }

    /// `type` and `id` are `null` for a journal line that names no record.
    struct Quarantined: Codable {
        @ExplicitNull var type: String? = nil
        @ExplicitNull var id: String? = nil
        var location: String
        var reason: String
        /// When it was first found; read as now when absent.
        var since: Int64?
    }

    /// `EngineState.ZoneIdentity`.
    struct Zone: Codable {
        var format: Int
        var created: Int64
        var keyCheckValue: String?
    }

    struct Waiting: Codable {
        var path: String
        var reason: String
        var since: Int64
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(zoneID, forKey: .zoneID)
        try container.encodeIfPresent(zone, forKey: .zone)
        try container.encode(token, forKey: .token)
        try container.encode(lastPush, forKey: .lastPush)
        try container.encode(lastPull, forKey: .lastPull)
        try container.encode(lastError, forKey: .lastError)
        try container.encode(failures ?? [], forKey: .failures)
        try container.encode(queueID, forKey: .queueID)
        try container.encode(fullFetch, forKey: .fullFetch)
        try container.encode(quarantine ?? [], forKey: .quarantine)
        try container.encode(waiting ?? [], forKey: .waiting)
        try container.encode(unknownTypes ?? [], forKey: .unknownTypes)
        try container.encodeIfPresent(lastTemporaryFileSweep, forKey: .lastTemporaryFileSweep)
    }

    init(_ state: EngineState) {
        zoneID = state.zoneID
        zone = state.zoneIdentity.map { Zone(format: $0.format, created: $0.created, keyCheckValue: $0.keyCheckValue) }
        token = state.token
        lastPush = state.lastPush
        lastPull = state.lastPull
        lastError = state.lastError
        failures = state.failures.sorted { ($0.key.type.rawValue, $0.key.name) < ($1.key.type.rawValue, $1.key.name) }.map {
            Failure(type: $0.key.type.rawValue, id: $0.key.name, attempts: Int64($0.value.attempts), error: $0.value.error)
        }
        queueID = state.queueID
        fullFetch = state.fullFetch?.rawValue
        quarantine = state.quarantine.map {
            Quarantined(type: $0.key?.type.rawValue, id: $0.key?.name, location: $0.location, reason: $0.reason, since: $0.since)
        }
        waiting = state.waiting.map { Waiting(path: $0.path, reason: $0.reason, since: $0.since) }
        unknownTypes = state.unknownTypes.sorted()
        lastTemporaryFileSweep = state.lastTemporaryFileSweep
    }

    /// The state, or nil when the zone ID is not one. Times out of range, record types that are not
    /// names and failures or waits with such values are dropped, one by one, rather than damaging the
    /// whole state; `now` stands for a quarantined item's unknown first sighting.
    func state(now: Milliseconds) -> EngineState? {
        if let zoneID, !NameRules.isZoneID(zoneID) { return nil }
        func inRange(_ time: Int64?) -> Milliseconds? { time.flatMap { Time.validRange.contains($0) ? $0 : nil } }
        var state = EngineState()
        state.zoneID = zoneID
        state.zoneIdentity = zone.map { EngineState.ZoneIdentity(format: $0.format, created: $0.created, keyCheckValue: $0.keyCheckValue) }
        state.token = token
        state.lastPush = inRange(lastPush)
        state.lastPull = inRange(lastPull)
        state.lastTemporaryFileSweep = inRange(lastTemporaryFileSweep)
        state.lastError = lastError
        state.queueID = queueID
        state.fullFetch = fullFetch.flatMap(EngineState.FullFetch.init(rawValue:))
        for failure in failures ?? [] {
            guard let type = RecordType(rawValue: failure.type) else { continue }
            let attempts = Int(min(max(failure.attempts, 0), Int64(EngineState.maxAttempts)))
            state.failures[RecordKey(type, failure.id)] = EngineState.Failure(attempts: attempts, error: failure.error)
        }
        for item in quarantine ?? [] {
            let key = item.type.flatMap(RecordType.init(rawValue:)).flatMap { type in item.id.map { RecordKey(type, $0) } }
            state.quarantine.append(
                EngineState.Quarantined(key: key, location: item.location, reason: item.reason, since: inRange(item.since) ?? now))
        }
        for item in waiting ?? [] {
            guard let since = inRange(item.since) else { continue }
            state.waiting.append(EngineState.Waiting(path: item.path, reason: item.reason, since: since))
        }
        state.unknownTypes = Set((unknownTypes ?? []).filter { RecordType(rawValue: $0) != nil })
        return state
    }
}

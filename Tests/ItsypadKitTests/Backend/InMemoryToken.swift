import ItsypadModel

@testable import ItsypadBackend

/// What a change token of `InMemoryBackend` encodes. Two shapes, both starting with the token
/// version and zone:
/// - `1:<zoneID>:<seq>`: every change up to `seq` was seen.
/// - `1:<zoneID>:<seq>:after:<recordType>/<recordName>`: part-way through a full fetch that started
///   at `seq`; the next page lists current records after that ID.
struct InMemoryToken: Equatable {
    private static let version = "1"

    let zoneID: String
    let seq: Int64
    var fullFetchCursor: RecordID?

    init(zoneID: String, seq: Int64, fullFetchCursor: RecordID? = nil) {
        self.zoneID = zoneID
        self.seq = seq
        self.fullFetchCursor = fullFetchCursor
    }

    var token: ChangeToken {
        var parts = [Self.version, zoneID, String(seq)]
        if let fullFetchCursor {
            parts += ["after", "\(fullFetchCursor.recordType)/\(fullFetchCursor.recordName)"]
        }
        return ChangeToken(rawValue: parts.joined(separator: ":"))
    }

    /// Decodes a token for the zone `zoneID`. A token of another zone throws `.zoneChanged`;
    /// one that cannot be understood throws `.tokenExpired`, which makes the engine start over from nil.
    init(decoding token: ChangeToken, zoneID expectedZoneID: String) throws {
        let parts = token.rawValue.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3, parts[0] == Self.version, let seq = NameRules.seq(parts[2], allowingZero: true) else {
            throw BackendError.tokenExpired
        }
        guard parts[1] == expectedZoneID else { throw BackendError.zoneChanged }
        self.init(zoneID: parts[1], seq: seq)
        switch parts.count {
        case 3:
            break
        case 5 where parts[3] == "after":
            let idParts = parts[4].split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard idParts.count == 2 else { throw BackendError.tokenExpired }
            let cursor = RecordID(recordType: idParts[0], recordName: idParts[1])
            guard NameRules.problem(with: cursor) == nil else { throw BackendError.tokenExpired }
            fullFetchCursor = cursor
        default:
            throw BackendError.tokenExpired
        }
    }
}

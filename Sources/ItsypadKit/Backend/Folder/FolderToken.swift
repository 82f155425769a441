/// What a change token encodes: for every device read, how far its journal was read.
/// Text form: `2:<zoneID>:` then `<device>.<seq>.<segment>.<offset>` per device, joined by "/".
struct FolderToken: Equatable {
    struct Position: Equatable {
        /// Every change of the device up to this sequence number was read.
        var seq: Int64
        /// Where to resume reading (a hint; reading falls back to the segment names).
        var resume: JournalPosition?
    }

    let zoneID: String
    var positions: [String: Position]

    init(zoneID: String, positions: [String: Position] = [:]) {
        self.zoneID = zoneID
        self.positions = positions
    }

    var token: ChangeToken {
        let entries = positions.sorted { $0.key < $1.key }.map { device, position in
            "\(device).\(position.seq).\(position.resume?.segment ?? 0).\(position.resume?.offset ?? 0)"
        }
        return ChangeToken(rawValue: "2:\(zoneID):" + entries.joined(separator: "/"))
    }

    /// Decodes a token of the zone `zoneID`. Another zone's token throws `.zoneChanged`; anything
    /// else that does not parse throws `.tokenExpired`.
    init(decoding token: ChangeToken, zoneID expected: String) throws {
        let parts = token.rawValue.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "2" else { throw BackendError.tokenExpired }
        guard parts[1] == expected else { throw BackendError.zoneChanged }
        var positions: [String: Position] = [:]
        for entry in parts[2].split(separator: "/") {
            let fields = entry.split(separator: ".", omittingEmptySubsequences: false)
            guard fields.count == 4, VersionVector.isDeviceID(fields[0]), positions[String(fields[0])] == nil,
                let seq = Int64(fields[1]), (0..<VersionVector.maxSequence).contains(seq),
                let segment = Int64(fields[2]), segment >= 0, let offset = Int(fields[3]), offset >= 0
            else {
                throw BackendError.tokenExpired
            }
            positions[String(fields[0])] = Position(seq: seq, resume: segment > 0 ? JournalPosition(segment: segment, offset: offset) : nil)
        }
        self.init(zoneID: expected, positions: positions)
    }
}

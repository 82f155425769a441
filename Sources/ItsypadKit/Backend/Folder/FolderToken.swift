/// What a change token encodes: for every device read, how far its journal was read.
/// Text form: `2:<zoneID>:` then `<device>.<seq>.<segment>.<offset>` per device, joined by "/"; a device
/// part way through a read of its record files adds `.<folder>.<file>.<digest>` (see `RecordFilesCursor`).
struct FolderToken: Equatable {
    struct Position: Equatable {
        /// Every change of the device up to this sequence number was read.
        var seq: Int64
        /// Where to resume reading (a hint; reading falls back to the segment names).
        var resume: JournalPosition?
        /// How far a read of the device's record files has come, while one is under way.
        var restart: RecordFilesCursor? = nil
    }

    let zoneID: String
    var positions: [String: Position]

    init(zoneID: String, positions: [String: Position] = [:]) {
        self.zoneID = zoneID
        self.positions = positions
    }

    var token: ChangeToken {
        let entries = positions.sorted { $0.key < $1.key }.map { device, position in
            let restart = position.restart.map { ".\($0.folder).\($0.file).\($0.digest.hex)" } ?? ""
            return "\(device).\(position.seq).\(position.resume?.segment ?? 0).\(position.resume?.offset ?? 0)" + restart
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
            guard fields.count == 4 || fields.count == 7, VersionVector.isDeviceID(fields[0]), positions[String(fields[0])] == nil,
                let seq = Int64(fields[1]), (0..<VersionVector.maxSequence).contains(seq),
                let segment = Int64(fields[2]), segment >= 0, let offset = Int(fields[3]), offset >= 0
            else {
                throw BackendError.tokenExpired
            }
            var position = Position(seq: seq, resume: segment > 0 ? JournalPosition(segment: segment, offset: offset) : nil)
            if fields.count == 7 {
                guard let folder = Int(fields[4]), folder >= 0, let file = Int(fields[5]), file >= 0,
                    let digest = FilesDigest(hex: String(fields[6]))
                else { throw BackendError.tokenExpired }
                position.restart = RecordFilesCursor(folder: folder, file: file, digest: digest)
            }
            positions[String(fields[0])] = position
        }
        self.init(zoneID: expected, positions: positions)
    }
}

/// Where a read of a device's record files, a page at a time, goes on: the record folders in the
/// order of `FolderBackend.recordFolders()` (types, then buckets, sorted), the device's files in a
/// folder sorted by name. A file added or removed meanwhile shifts the order, which the digest
/// then shows, as the files read no longer match any journal line.
struct RecordFilesCursor: Equatable {
    /// Record folders read whole.
    var folder = 0
    /// The device's files read in the next folder.
    var file = 0
    /// The digest of the files read so far.
    var digest = FilesDigest()
}

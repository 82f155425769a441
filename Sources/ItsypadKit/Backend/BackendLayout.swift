/// Paths inside the backend directory (format 1).
struct BackendLayout {
    let root: String

    var zoneFile: String { root + "/zone.json" }
    var stateFile: String { root + "/state.json" }
    var lockFile: String { root + "/lock" }
    var recordsDirectory: String { root + "/records" }
    var assetsDirectory: String { root + "/assets" }
    var journalDirectory: String { root + "/journal" }

    func assetFile(_ checksum: String) -> String { assetsDirectory + "/" + checksum }
}

/// Contents of zone.json.
struct ZoneDocument: Codable {
    static let currentFormat = 1

    let format: Int
    let zoneID: String
    let created: Int64
    /// Present only in an encrypted zone: the cipher's name and the key check value.
    var encryption: String? = nil
    var keyCheckValue: String? = nil

    /// The one encryption this format knows (RecordCipher's sealed records).
    static let encryptionName = "xchacha20poly1305-v1"

    /// Parses zone.json, refusing formats newer than this code understands before anything else.
    static func parse(_ bytes: [UInt8], path: String) throws -> ZoneInfo {
        struct FormatOnly: Decodable { let format: Int }
        let format: Int
        do {
            format = try JSONCoding.decode(FormatOnly.self, from: bytes).format
        } catch {
            throw BackendError.corrupt(path: path, reason: JSONCoding.describe(error))
        }
        guard format <= currentFormat else { throw BackendError.newerFormat(found: format) }
        let document: ZoneDocument
        do {
            document = try JSONCoding.decode(ZoneDocument.self, from: bytes)
        } catch {
            throw BackendError.corrupt(path: path, reason: JSONCoding.describe(error))
        }
        // Tokens use ":" as a separator, so a zone ID containing one could not round-trip.
        guard format >= 1, !document.zoneID.isEmpty, !document.zoneID.contains(":") else {
            throw BackendError.corrupt(path: path, reason: "format must be 1 and zoneID a non-empty string without ':'")
        }
        switch (document.encryption, document.keyCheckValue) {
        case (nil, nil):
            return ZoneInfo(zoneID: document.zoneID, format: format, created: document.created)
        case (encryptionName?, let check?) where Hex.isEncoded(check, count: 32):
            return ZoneInfo(zoneID: document.zoneID, format: format, created: document.created, keyCheckValue: check)
        default:
            throw BackendError.corrupt(path: path, reason: "encryption must be \"\(encryptionName)\" with a keyCheckValue of 32 hex digits")
        }
    }
}

/// Contents of state.json: how far the journal has been applied to records/, and compacted.
struct BackendState: Codable, Equatable {
    /// Every journal change up to this seq is reflected in records/.
    var appliedSeq: Int64
    /// Journal changes up to this seq may have been dropped; older tokens are expired.
    var compactedThrough: Int64

    static let empty = BackendState(appliedSeq: 0, compactedThrough: 0)

    /// Reads state.json; a missing file means nothing was applied yet.
    static func read(from path: String) throws -> BackendState {
        guard let bytes = try FileIO.readFileIfExists(path) else { return .empty }
        do {
            return try JSONCoding.decode(BackendState.self, from: bytes)
        } catch {
            throw BackendError.corrupt(path: path, reason: JSONCoding.describe(error))
        }
    }

    func write(to path: String) throws {
        try FileIO.writeAtomically(try JSONCoding.encode(self), to: path)
    }
}

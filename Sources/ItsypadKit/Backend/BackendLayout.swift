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

/// Contents of zone.json, in both formats (format 2 keeps format 1's fields).
struct ZoneDocument: Codable {
    static let currentFormat = 1
    /// Format 1's layout with end-to-end encrypted records. Its own number, so that an itsypad
    /// that does not know encryption takes it for a newer format and writes nothing to it.
    static let encryptedFormat = 3

    /// The format of a zone created encrypted (with a key check value) or not.
    static func format(keyCheckValue: String?) -> Int { keyCheckValue == nil ? currentFormat : encryptedFormat }

    let format: Int
    let zoneID: String
    let created: Int64
    /// Present only in an encrypted zone: the cipher's name and the key check value.
    var encryption: String? = nil
    var keyCheckValue: String? = nil

    /// The one encryption this format knows (RecordCipher's sealed records).
    static let encryptionName = "xchacha20poly1305-v1"

    init(_ zone: ZoneInfo) {
        format = zone.format
        zoneID = zone.zoneID
        created = zone.created
        encryption = zone.isEncrypted ? Self.encryptionName : nil
        keyCheckValue = zone.keyCheckValue
    }

    /// Parses zone.json of any format from 1 to `newestFormat` (the newest the reader understands),
    /// refusing a newer one before anything else is read.
    static func parse(_ bytes: [UInt8], path: String, newestFormat: Int = currentFormat) throws -> ZoneInfo {
        struct FormatOnly: Decodable { let format: Int }
        let format: Int
        do {
            format = try JSONCoding.decode(FormatOnly.self, from: bytes).format
        } catch {
            throw BackendError.corrupt(path: path, reason: JSONCoding.describe(error))
        }
        // Format 3 is format 1's layout, encrypted: only a format 1 reader opens it.
        guard format <= newestFormat || (format == encryptedFormat && newestFormat == currentFormat) else {
            throw BackendError.newerFormat(found: format)
        }
        let document: ZoneDocument
        do {
            document = try JSONCoding.decode(ZoneDocument.self, from: bytes)
        } catch {
            throw BackendError.corrupt(path: path, reason: JSONCoding.describe(error))
        }
        guard format >= 1, NameRules.isZoneID(document.zoneID) else {
            throw BackendError.corrupt(path: path, reason: "format must be \(newestFormat == 1 ? "1" : "1…\(newestFormat)") and zoneID 1–\(NameRules.maxZoneIDLength) characters of A-Z a-z 0-9 _ -")
        }
        switch (format == encryptedFormat, document.encryption, document.keyCheckValue) {
        case (false, nil, nil):
            return ZoneInfo(zoneID: document.zoneID, format: format, created: document.created)
        case (true, encryptionName?, let check?) where Hex.decode(check)?.count == 16:
            return ZoneInfo(zoneID: document.zoneID, format: format, created: document.created, keyCheckValue: check)
        default:
            throw BackendError.corrupt(path: path, reason: "only format 3 is encrypted, with encryption \"\(encryptionName)\" and a keyCheckValue of 32 hex digits")
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
    static func read(from path: String, files: FileIO) throws -> BackendState {
        guard let bytes = try files.readFileIfExists(path, limit: BackendLimits.maxSmallFileBytes) else { return .empty }
        let state: BackendState
        do {
            state = try JSONCoding.decode(BackendState.self, from: bytes)
        } catch {
            throw BackendError.corrupt(path: path, reason: JSONCoding.describe(error))
        }
        guard NameRules.isSeq(state.appliedSeq, allowingZero: true), NameRules.isSeq(state.compactedThrough, allowingZero: true),
              state.compactedThrough <= state.appliedSeq else {
            throw BackendError.corrupt(path: path, reason: "appliedSeq and compactedThrough must be 0…\(BackendLimits.maxSeq), compactedThrough not above appliedSeq")
        }
        return state
    }

    func write(to path: String, files: FileIO) throws {
        try files.writeAtomically(try JSONCoding.encode(self), to: path)
    }
}

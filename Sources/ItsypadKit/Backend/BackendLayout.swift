import ItsypadSupport

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

/// Contents of zone.json, in every format (formats 2 and 4 keep format 1's fields; format 3 adds
/// the encryption members and the layout it uses).
package struct ZoneDocument: Codable {
    static let currentFormat = 1
    /// An end-to-end encrypted zone. Its own number, so that an itsypad that does not know
    /// encryption takes it for a newer format and writes nothing to it; its `layout` member
    /// names the format whose files it uses.
    static let encryptedFormat = 3
    /// The layouts an encrypted zone may name: format 1's, format 2's, and format 4's (what new
    /// encrypted zones use). An itsypad before format 4 refuses layout 4 as a malformed `zone.json`
    /// (it writes nothing); a layout above these is refused as `.unsupportedLayout`.
    static let encryptedLayouts = [1, 2, 4]
    /// The one encryption this format knows (RecordCipher's sealed records).
    static let encryptionName = "xchacha20poly1305-v1"

    /// The format of a zone created encrypted (with a key check value) or not.
    static func format(keyCheckValue: String?) -> Int { keyCheckValue == nil ? currentFormat : encryptedFormat }

    let format: Int
    let zoneID: String
    let created: Int64
    /// Present only in an encrypted zone: the format whose layout it uses, the cipher's name and
    /// the key check value.
    var layout: Int? = nil
    var encryption: String? = nil
    var keyCheckValue: String? = nil

    /// The document of `zone`; an encrypted zone names `layout`, the format whose files it uses.
    init(_ zone: ZoneInfo, layout: Int = currentFormat) {
        format = zone.format
        zoneID = zone.zoneID
        created = zone.created
        if zone.isEncrypted {
            self.layout = layout
            encryption = Self.encryptionName
            keyCheckValue = zone.keyCheckValue
        }
    }

    /// Parses zone.json of any format from 1 to the newest of `layouts` (the formats whose files the
    /// reader opens), refusing a newer one before anything else is read; returns the zone and the
    /// format whose files it uses. An encrypted zone (format 3) is opened only by a reader of its
    /// layout: a format 1 reader refuses format 2's and 4's with `.unsupportedLayout`, a reader of
    /// formats 2 and 4 refuses format 1's as a newer format.
    static func parse(_ bytes: [UInt8], path: String, layouts: [Int] = [currentFormat]) throws -> (zone: ZoneInfo, layout: Int) {
        let newestFormat = layouts.max() ?? currentFormat
        let (zone, layout) = try read(bytes, path: path, newestFormat: newestFormat)
        guard zone.isEncrypted, !layouts.contains(layout) else { return (zone, layout) }
        if layout > newestFormat { throw BackendError.unsupportedLayout(format: zone.format, layout: layout) }
        throw BackendError.newerFormat(found: zone.format)
    }

    /// The zone zone.json describes and the format whose files it uses (its own format, or an
    /// encrypted zone's layout), whichever reader that takes: for choosing the reader.
    package static func read(
        _ bytes: [UInt8], path: String, newestFormat: Int = ReplicatedLayout.format
    ) throws -> (zone: ZoneInfo, layout: Int) {
        struct FormatOnly: Decodable { let format: Int }
        let format: Int
        do {
            format = try JSONCoding.decode(FormatOnly.self, from: bytes).format
        } catch {
            throw BackendError.corrupt(path: path, reason: JSONCoding.describe(error))
        }
        guard format <= newestFormat || format == encryptedFormat else { throw BackendError.newerFormat(found: format) }
        let document: ZoneDocument
        do {
            document = try JSONCoding.decode(ZoneDocument.self, from: bytes)
        } catch {
            throw BackendError.corrupt(path: path, reason: JSONCoding.describe(error))
        }
        guard format >= 1, NameRules.isZoneID(document.zoneID) else {
            throw BackendError.corrupt(
                path: path,
                reason:
                    "format must be \(newestFormat == 1 ? "1" : "1…\(newestFormat)") or 3 and zoneID 1–\(NameRules.maxZoneIDLength) characters of A-Z a-z 0-9 _ -"
            )
        }
        if format == encryptedFormat, let layout = document.layout, layout > encryptedLayouts.max() ?? 0 {
            throw BackendError.unsupportedLayout(format: format, layout: layout)
        }
        switch (format == encryptedFormat, document.layout, document.encryption, document.keyCheckValue) {
        case (false, nil, nil, nil):
            return (ZoneInfo(zoneID: document.zoneID, format: format, created: document.created), format)
        case (true, let layout?, encryptionName?, let check?) where encryptedLayouts.contains(layout) && isKeyCheckValue(check):
            return (ZoneInfo(zoneID: document.zoneID, format: format, created: document.created, keyCheckValue: check), layout)
        default:
            throw BackendError.corrupt(
                path: path,
                reason:
                    "only format 3 is encrypted, with layout 1, 2 or 4, encryption \"\(encryptionName)\" and a keyCheckValue of 32 hex digits"
            )
        }
    }

    /// Whether `text` has the form of a key check value (16 bytes in hex).
    static func isKeyCheckValue(_ text: String) -> Bool { Hex.decode(text)?.count == 16 }
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
            state.compactedThrough <= state.appliedSeq
        else {
            throw BackendError.corrupt(
                path: path,
                reason: "appliedSeq and compactedThrough must be 0…\(BackendLimits.maxSeq), compactedThrough not above appliedSeq")
        }
        return state
    }

    func write(to path: String, files: FileIO) throws {
        try files.writeAtomically(try JSONCoding.encode(self), to: path)
    }
}

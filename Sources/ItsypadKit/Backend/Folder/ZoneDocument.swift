import ItsypadModel
import ItsypadSupport

/// Contents of zone.json. A plain zone's format is `FolderBackend.format`. An encrypted zone has a
/// format number of its own (`encryptedFormat`), so that an itsypad that does not know encryption
/// takes it for a newer format and writes nothing; it names the format of its files in the key
/// `layout` (`filesFormat`), with the cipher's name and the key check value.
package struct ZoneDocument: Codable {
    /// A plain zone.
    static let plainFormat = FolderBackend.format
    /// An end-to-end encrypted zone.
    static let encryptedFormat = 3
    /// The one encryption this format knows (RecordCipher's sealed records).
    static let encryptionName = "xchacha20poly1305-v1"

    /// The format of a zone created encrypted (with a key check value) or not.
    static func format(keyCheckValue: String?) -> Int { keyCheckValue == nil ? plainFormat : encryptedFormat }

    let format: Int
    let zoneID: String
    let created: Int64
    /// Present only in an encrypted zone: the format whose files it uses (key `layout`), the
    /// cipher's name and the key check value.
    var filesFormat: Int? = nil
    var encryption: String? = nil
    var keyCheckValue: String? = nil
    /// In an encrypted zone: the zone key's authentication code of every member above, so that
    /// someone who can write the backend but has no key cannot change them.
    var mac: String? = nil

    enum CodingKeys: String, CodingKey {
        case format, zoneID, created, filesFormat = "layout", encryption, keyCheckValue, mac
    }

    /// The document of `zone`; an encrypted one is authenticated with `cipher`, its key.
    init(_ zone: ZoneInfo, cipher: RecordCipher?) {
        format = zone.format
        zoneID = zone.zoneID
        created = zone.created
        if zone.isEncrypted {
            filesFormat = FolderBackend.format
            encryption = Self.encryptionName
            keyCheckValue = zone.keyCheckValue
            mac = cipher?.zoneAuthenticationCode(of: authenticatedParts)
        }
    }

    private var authenticatedParts: [String] {
        [zoneID, String(format), String(created), filesFormat.map(String.init) ?? "", encryption ?? "", keyCheckValue ?? ""]
    }

    /// Throws `.corrupt` unless the encrypted zone.json in `bytes` carries `cipher`'s authentication
    /// code of what it says (read with `read` first: its form is known to be right).
    static func authenticate(_ bytes: [UInt8], path: String, cipher: RecordCipher) throws {
        let document = try JSONCoding.decode(ZoneDocument.self, from: bytes)
        guard let mac = document.mac, cipher.verifiesZone(mac, of: document.authenticatedParts) else {
            throw BackendError.corrupt(
                path: path, reason: "it does not verify with this device's key: someone who can write the backend but has no key changed it"
            )
        }
    }

    /// The zone zone.json at `path` describes. Any other format, or format of an encrypted zone's
    /// files (an older itsypad's, or a newer one), is refused with `.unsupportedFormat` before anything else is read.
    package static func read(_ bytes: [UInt8], path: String) throws -> ZoneInfo {
        struct FormatOnly: Decodable {
            let format: Int
            let filesFormat: Int?
            enum CodingKeys: String, CodingKey { case format, filesFormat = "layout" }
        }
        let backend = FileSystem.directoryName(path)
        let found: FormatOnly
        do {
            found = try JSONCoding.decode(FormatOnly.self, from: bytes)
        } catch {
            throw BackendError.corrupt(path: path, reason: JSONCoding.describe(error))
        }
        switch (found.format, found.filesFormat) {
        case (plainFormat, _), (encryptedFormat, FolderBackend.format?): break
        case (encryptedFormat, let filesFormat?):
            throw BackendError.unsupportedFormat(path: backend, format: found.format, filesFormat: filesFormat)
        default: throw BackendError.unsupportedFormat(path: backend, format: found.format, filesFormat: nil)
        }
        let document: ZoneDocument
        do {
            document = try JSONCoding.decode(ZoneDocument.self, from: bytes)
        } catch {
            throw BackendError.corrupt(path: path, reason: JSONCoding.describe(error))
        }
        guard NameRules.isZoneID(document.zoneID) else {
            throw BackendError.corrupt(path: path, reason: "zoneID must be 1–\(NameRules.maxZoneIDLength) characters of A-Z a-z 0-9 _ -")
        }
        switch (document.format == encryptedFormat, document.filesFormat, document.encryption, document.keyCheckValue) {
        case (false, nil, nil, nil):
            return ZoneInfo(zoneID: document.zoneID, format: document.format, created: document.created)
        case (true, _?, encryptionName?, let check?) where isKeyCheckValue(check):
            return ZoneInfo(zoneID: document.zoneID, format: document.format, created: document.created, keyCheckValue: check)
        default:
            throw BackendError.corrupt(
                path: path,
                reason: "only format 3 is encrypted, with encryption \"\(encryptionName)\" and a keyCheckValue of 32 hex digits")
        }
    }

    /// Whether `text` has the form of a key check value (16 bytes in hex).
    static func isKeyCheckValue(_ text: String) -> Bool { Hex.decode(text)?.count == 16 }
}

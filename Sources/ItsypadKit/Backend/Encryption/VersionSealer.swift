import ItsypadSupport

/// Seals the record versions an encrypted backend writes, and opens the ones it reads, with
/// `RecordCipher`'s record key.
///
/// A sealed version keeps in the clear what replication needs: the zone, its vector, whether it
/// is derived or a tombstone, its base's vector, the record's type, name, change tag (the vector) and stamps,
/// and its asset references (checksums of sealed assets, so that readers wait for them to arrive).
/// The record's fields and its base's fields travel together in the one `sealed` field, and the
/// associated data binds them to all of the above and to the writing device (the folder the file
/// is in): a version moved to another record, device, vector or zone does not open, and neither
/// does a tombstone made from a live version or the reverse.
struct VersionSealer: Sendable {
    let cipher: RecordCipher

    /// What is sealed: the record's fields, and its base's when it has one.
    struct Content: Codable, Equatable {
        let fields: [String: FieldValue]
        let base: [String: FieldValue]?

        /// The content in `bytes` read without the decoder (every version of an encrypted first
        /// sync is opened, and the decoder would be much of that work), as the decoder reads it; nil to
        /// leave the bytes to the decoder (see `JSONReader`).
        static func read(_ bytes: [UInt8]) -> Content? {
            bytes.withUnsafeBufferPointer { bytes in
                JSONReader.read(bytes) { reader -> Content? in
                    var fields: [String: FieldValue]?, base: [String: FieldValue]?
                    let read = reader.object { reader, key in
                        switch key {
                        case "fields": fields = FieldValue.fields(reader: &reader); return fields != nil
                        case "base":
                            if reader.null() { return true }
                            base = FieldValue.fields(reader: &reader)
                            return base != nil
                        default: return reader.skip()
                        }
                    }
                    guard read, let fields else { return nil }
                    return Content(fields: fields, base: base)
                }
            }
        }

        init(fields: [String: FieldValue], base: [String: FieldValue]?) {
            self.fields = fields
            self.base = base
        }

        /// `JSONCoding.encode(self)`, written by hand (see `BackendRecord.appendJSON`).
        func encodedJSON() throws -> [UInt8] {
            var bytes: [UInt8] = []
            var object = JSONMembers(opening: &bytes)
            if let base {
                object.key("base", in: &bytes)
                try FieldValue.appendJSON(base, to: &bytes)
            }
            object.key("fields", in: &bytes)
            try FieldValue.appendJSON(fields, to: &bytes)
            bytes.append(UInt8(ascii: "}"))
            return bytes
        }
    }

    /// Bytes of the `sealed` field that holds these fields (the base64 of the sealed JSON), to
    /// decide what fits in a record.
    static func sealedFieldByteCount(of fields: [String: FieldValue]) throws -> Int {
        let sealed = RecordCipher.sealedByteCount(plaintextCount: try FieldValue.encodedJSON(fields).count)
        return (sealed + 2) / 3 * 4
    }

    /// The zone's key check value for this key.
    var keyCheckValue: String { cipher.keyCheckValue }

    /// `document` as `writer` stores it.
    func seal(_ document: VersionDocument, writer: String) throws -> VersionDocument {
        var plaintext = try Content(fields: document.record.fields, base: document.base?.fields).encodedJSON()
        defer { SecureMemory.zero(&plaintext) }
        var sealed = document
        sealed.record.fields = Self.assetFields(of: document.record.fields)
        sealed.record.fields[RecordCipher.sealedFieldName] = .string(
            try cipher.sealRecordContent(plaintext, context: Self.context(of: document, writer: writer)))
        sealed.base?.fields = [:]
        return sealed
    }

    /// The document as it was before `writer` sealed it; throws when it does not open, or when its
    /// asset references in the clear are not the sealed ones.
    func open(_ document: VersionDocument, writer: String) throws(RecordCipherError) -> VersionDocument {
        guard case .string(let text)? = document.record.fields[RecordCipher.sealedFieldName], document.base?.fields.isEmpty ?? true else {
            throw .notSealed
        }
        var plaintext = try cipher.openRecordContent(text, context: Self.context(of: document, writer: writer))
        defer { SecureMemory.zero(&plaintext) }
        let content: Content
        do {
            // The decoder runs only for content the reader leaves to it (and says what is wrong).
            content = try Content.read(plaintext) ?? JSONCoding.decode(Content.self, from: plaintext)
        } catch {
            throw .invalidContent(JSONCoding.describe(error))
        }
        var clear = document.record.fields
        clear[RecordCipher.sealedFieldName] = nil
        guard Self.assetFields(of: content.fields) == clear else {
            throw .invalidContent("the asset references in the clear are not the encrypted ones")
        }
        guard (content.base == nil) == (document.base == nil) else { throw .invalidContent("the base's fields do not match its version") }
        var opened = document
        opened.record.fields = content.fields
        opened.base?.fields = content.base ?? [:]
        return opened
    }

    /// Associated data of a version: everything about it that is stored in the clear and says
    /// which version of which record it is, each part length-prefixed.
    private static func context(of document: VersionDocument, writer: String) -> [UInt8] {
        let record = document.record
        return RecordCipher.lengthPrefixed([
            "itsypad record version", String(RecordCipher.formatVersion), document.zone, record.recordType, record.recordName,
            writer, document.version, document.derived ? "derived" : "written", document.deleted ? "deleted" : "live",
            document.base?.version ?? "", stamp(record.created), stamp(record.modified),
        ])
    }

    private static func stamp(_ stamp: Stamp?) -> String {
        stamp.map { "\($0.timestamp) \($0.deviceID)" } ?? ""
    }

    private static func assetFields(of fields: [String: FieldValue]) -> [String: FieldValue] {
        fields.filter { if case .asset = $0.value { true } else { false } }
    }
}

import ItsypadSupport

/// Sealing whole backend records: the cipher itself knows bytes and contexts, the backend its records.
extension RecordCipher {
    /// The record with all its fields replaced by the `sealed` field. Throws only when the
    /// kernel cannot supply a nonce or the fields cannot be encoded.
    public func seal(_ record: BackendRecord, zoneID: String) throws -> BackendRecord {
        var plaintext = try JSONCoding.encode(record.fields)
        defer { SecureMemory.zero(&plaintext) }
        var sealed = record
        sealed.fields = [
            Self.sealedFieldName: .string(
                try sealRecordContent(
                    plaintext,
                    context: Self.recordContext(
                        zoneID: zoneID, recordType: record.recordType,
                        recordName: record.recordName)))
        ]
        return sealed
    }

    /// The record with its fields decrypted and verified. Every failure means the record
    /// is not what this key sealed for this zone, type and name: malformed input, never applied.
    public func open(_ record: BackendRecord, zoneID: String) throws(RecordCipherError) -> BackendRecord {
        guard record.fields.count == 1, case .string(let text)? = record.fields[Self.sealedFieldName] else { throw .notSealed }
        var plaintext = try openRecordContent(
            text, context: Self.recordContext(zoneID: zoneID, recordType: record.recordType, recordName: record.recordName))
        defer { SecureMemory.zero(&plaintext) }
        var opened = record
        do {
            opened.fields = try JSONCoding.decode([String: FieldValue].self, from: plaintext)
        } catch {
            throw .invalidContent(JSONCoding.describe(error))
        }
        if let problem = NameRules.problem(with: opened) { throw .invalidContent(problem) }
        return opened
    }

    /// Bytes of the `sealed` field that holds these fields (the base64 of the sealed JSON), to
    /// decide what fits in a record.
    package static func sealedFieldByteCount(of fields: [String: FieldValue]) throws -> Int {
        let sealed = sealedByteCount(plaintextCount: try JSONCoding.encode(fields).count)
        return (sealed + 2) / 3 * 4
    }
}

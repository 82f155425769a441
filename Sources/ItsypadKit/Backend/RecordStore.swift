import ItsypadSupport

/// The `records/<recordType>/<recordName>.json` tree: the current version of every record,
/// as of `BackendState.appliedSeq`.
struct RecordStore {
    let files: FileIO
    let directory: String

    private static let fileExtension = ".json"

    /// Only for checked types (`NameRules`): the name becomes a path.
    func typeDirectory(_ recordType: String) -> String { directory + "/" + recordType }

    /// Only for checked IDs (`NameRules`): the names become a path.
    func path(for id: RecordID) -> String {
        typeDirectory(id.recordType) + "/" + id.recordName + Self.fileExtension
    }

    /// The stored record, or nil if there is none. A file that does not follow the format (too large,
    /// unparseable, another record's, a bad name or field, not a regular file) throws `.corrupt` and is left alone.
    func record(_ id: RecordID) throws -> BackendRecord? {
        if let problem = NameRules.problem(with: id) { throw BackendError.corrupt(path: "\(directory)/\(id)", reason: problem) }
        let path = path(for: id)
        guard let bytes = try files.readFileIfExists(path, limit: BackendLimits.cloudKit.maxRecordBytes) else { return nil }
        let record: BackendRecord
        do {
            record = try JSONCoding.decode(BackendRecord.self, from: bytes)
        } catch {
            throw BackendError.corrupt(path: path, reason: JSONCoding.describe(error))
        }
        if let problem = NameRules.problem(withStored: record) { throw BackendError.corrupt(path: path, reason: problem) }
        guard record.id == id else {
            throw BackendError.corrupt(path: path, reason: "file holds record \(record.id), not \(id)")
        }
        return record
    }

    /// The stored record for a writer checking a save or delete against it: a malformed one counts as
    /// absent (a save replaces it) and is reported through `malformed`.
    func recordForWriting(_ id: RecordID, malformed: inout Bool) throws -> BackendRecord? {
        do {
            return try record(id)
        } catch BackendError.corrupt {
            malformed = true
            return nil
        }
    }

    /// Every stored record's ID, from directory listings only (no record file is opened), and the entries
    /// that cannot be records (names outside the grammar, a type that is not a directory), which are skipped.
    func ids() throws -> (ids: [RecordID], strays: [QuarantinedItem]) {
        var ids: [RecordID] = []
        var strays: [QuarantinedItem] = []
        for recordType in try listing(directory) {
            let typePath = directory + "/" + recordType
            guard NameRules.isSafeFileName(recordType, maxLength: NameRules.maxRecordTypeLength) else {
                strays.append(QuarantinedItem(id: nil, location: typePath, reason: "not a record type name"))
                continue
            }
            let fileNames: [String]
            do {
                fileNames = try listing(typePath)
            } catch BackendError.corrupt(_, let reason) {
                strays.append(QuarantinedItem(id: nil, location: typePath, reason: reason))
                continue
            }
            for fileName in fileNames {
                let recordName = fileName.hasSuffix(Self.fileExtension) ? String(fileName.dropLast(Self.fileExtension.count)) : ""
                let id = RecordID(recordType: recordType, recordName: recordName)
                if let problem = NameRules.problem(with: id) {
                    strays.append(
                        QuarantinedItem(id: nil, location: typePath + "/" + fileName, reason: "not a record file name: \(problem)"))
                } else {
                    ids.append(id)
                }
            }
        }
        return (ids, strays)
    }

    /// Writes the record file. The caller syncs the touched directories (once per batch, not per file).
    func write(_ record: BackendRecord) throws {
        if let problem = NameRules.problem(with: record.id) {
            throw BackendError.corrupt(path: "\(directory)/\(record.id)", reason: problem)
        }
        try files.makeDirectory(typeDirectory(record.recordType))
        try files.writeAtomically(try JSONCoding.encode(record), to: path(for: record.id), syncingDirectory: false)
    }

    /// Removes the record file if present. The caller syncs the directory.
    func remove(_ id: RecordID) throws {
        if let problem = NameRules.problem(with: id) { throw BackendError.corrupt(path: "\(directory)/\(id)", reason: problem) }
        try files.removeFile(path(for: id))
    }

    /// Directories touched by writing or removing these records, to fsync once.
    func directories(touchedBy ids: some Sequence<RecordID>) -> Set<String> {
        Set(ids.filter { NameRules.problem(with: $0) == nil }.map { typeDirectory($0.recordType) })
    }

    /// Sum of the record files' sizes.
    func totalSize() throws -> Int {
        try ids().ids.reduce(0) { total, id in total + ((try files.status(path(for: id)))?.size ?? 0) }
    }

    /// Names in a directory that are not temporary (dot) files; none when it does not exist.
    private func listing(_ path: String) throws -> [String] {
        (try files.listDirectory(path) ?? []).filter { !$0.hasPrefix(".") }
    }
}

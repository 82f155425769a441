/// The `records/<recordType>/<recordName>.json` tree: the current version of every record,
/// as of `BackendState.appliedSeq`.
struct RecordStore {
    let directory: String

    private static let fileExtension = ".json"

    func typeDirectory(_ recordType: String) -> String { directory + "/" + recordType }

    func path(for id: RecordID) -> String {
        typeDirectory(id.recordType) + "/" + id.recordName + Self.fileExtension
    }

    /// The stored record, or nil if there is none. Unparseable files throw `.corrupt` and are left alone.
    func record(_ id: RecordID) throws -> BackendRecord? {
        let path = path(for: id)
        guard let bytes = try FileIO.readFileIfExists(path) else { return nil }
        let record: BackendRecord
        do {
            record = try JSONCoding.decode(BackendRecord.self, from: bytes)
        } catch {
            throw BackendError.corrupt(path: path, reason: JSONCoding.describe(error))
        }
        guard record.id == id else {
            throw BackendError.corrupt(path: path, reason: "file holds record \(record.id), not \(id)")
        }
        return record
    }

    /// Every stored record's ID, from directory listings only (no file is opened).
    func ids() throws -> [RecordID] {
        var ids: [RecordID] = []
        for recordType in try listing(directory) where NameRules.isSafeFileName(recordType, maxLength: NameRules.maxRecordTypeLength) {
            for fileName in try listing(typeDirectory(recordType)) where fileName.hasSuffix(Self.fileExtension) {
                let recordName = String(fileName.dropLast(Self.fileExtension.count))
                let id = RecordID(recordType: recordType, recordName: recordName)
                if NameRules.problem(with: id) == nil {
                    ids.append(id)
                }
            }
        }
        return ids
    }

    /// Writes the record file. The caller syncs the touched directories (once per batch, not per file).
    func write(_ record: BackendRecord) throws {
        try FileIO.makeDirectory(directory)
        try FileIO.makeDirectory(typeDirectory(record.recordType))
        try FileIO.writeAtomically(try JSONCoding.encode(record), to: path(for: record.id), syncingDirectory: false)
    }

    /// Removes the record file if present. The caller syncs the directory.
    func remove(_ id: RecordID) throws {
        try FileIO.removeFile(path(for: id))
    }

    /// Directories touched by writing or removing these records, to fsync once.
    func directories(touchedBy ids: some Sequence<RecordID>) -> Set<String> {
        Set(ids.map { typeDirectory($0.recordType) })
    }

    /// Sum of the record files' sizes.
    func totalSize() throws -> Int {
        try ids().reduce(0) { total, id in total + ((try FileIO.status(path(for: id)))?.size ?? 0) }
    }

    /// Names in a directory that are not temporary (dot) files.
    private func listing(_ path: String) throws -> [String] {
        (try FileIO.listDirectory(path) ?? []).filter { !$0.hasPrefix(".") }
    }
}

import ItsypadModel

/// A tombstone record's fields (see `RecordMapping.tombstoneType`); each is needed.
struct TombstoneRecordFields: Codable {
    /// The deleted record's type and name.
    let deletedType: String?
    let deletedName: String?
    /// The edits the deleted version included.
    let history: [String]?
}

/// The fields by which a version of any record type says which edits it includes: its history,
/// else its clock (the version's own edit).
struct VersionEditFields: Codable {
    let history: [String]?
    let clock: String?

    var edits: EditHistory {
        history.flatMap(EditHistory.init(strings:)) ?? clock.flatMap(HybridTimestamp.init).map { EditHistory([$0]) } ?? EditHistory()
    }
}

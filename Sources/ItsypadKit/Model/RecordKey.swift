/// A type of synced record, named as on the backend. The types this version syncs are the
/// handlers of `SyncedTypes.standard`; a key of any other well-named type (written by a newer
/// version) is kept as it is, never dropped.
public struct RecordType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// nil for a name the backend could not store (see `NameRules`).
    public init?(rawValue: String) {
        guard NameRules.isSafeFileName(rawValue, maxLength: NameRules.maxRecordTypeLength) else { return nil }
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static let tab = RecordType(rawValue: "ScratchTab")!
    public static let clip = RecordType(rawValue: "ClipboardEntry")!
    public static let setting = RecordType(rawValue: "Setting")!
}

/// Identifies one synced record.
public struct RecordKey: Hashable, Sendable {
    public let type: RecordType
    public let name: String

    public init(_ type: RecordType, _ name: String) {
        self.type = type
        self.name = name
    }
}

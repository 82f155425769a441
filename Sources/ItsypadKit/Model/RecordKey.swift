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
    /// A deletion saves, in the same batch, a tombstone named after the record (`RecordKey.tombstoneName`).
    public static let tombstone = RecordType(rawValue: "Tombstone")!
}

/// Identifies one synced record.
public struct RecordKey: Hashable, Sendable {
    public let type: RecordType
    public let name: String

    public init(_ type: RecordType, _ name: String) {
        self.type = type
        self.name = name
    }

    /// The name of the tombstone that records this record's deletion: `<recordType>.<recordName>`.
    public var tombstoneName: String { type.rawValue + "." + name }
}

/// Naming rules that keep record names and types usable as file names on every file system.
package enum NameRules {
    /// Longest record name: "<name>.json" must fit in 255 bytes.
    package static let maxRecordNameLength = 250
    package static let maxRecordTypeLength = 255

    /// 1…maxLength characters of [A-Za-z0-9._-], not starting with "." (dot files are temporary files).
    package static func isSafeFileName(_ name: String, maxLength: Int) -> Bool {
        var name = name
        // Over the contiguous bytes: far cheaper than a walk of the String's UTF8View.
        return name.withUTF8 { bytes in
            guard (1...maxLength).contains(bytes.count), bytes.first != UInt8(ascii: ".") else { return false }
            return bytes.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
        }
    }

    /// CloudKit field names: a letter, then letters, digits or "_", at most 255 characters.
    package static func isFieldName(_ name: String) -> Bool {
        let bytes = name.utf8
        guard (1...255).contains(bytes.count), let first = bytes.first, isLetter(first) else { return false }
        return bytes.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "_") }
    }

    /// Longest zone ID.
    package static let maxZoneIDLength = 64

    /// Zone IDs: 1–64 characters of [A-Za-z0-9_-] (they travel inside tokens, separated by ":").
    package static func isZoneID(_ text: String) -> Bool {
        let bytes = text.utf8
        return (1...maxZoneIDLength).contains(bytes.count)
            && bytes.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

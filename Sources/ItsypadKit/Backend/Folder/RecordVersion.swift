import ItsypadModel
import ItsypadSupport

/// One version of a record in a replicated backend: what a device wrote in its record file
/// `records/<type>/<bucket>/<name>.<device>.json` and in its journal.
public struct RecordVersion: Equatable, Sendable {
    /// The record; its `recordChangeTag` is `version.tag`. A tombstone has no fields.
    public var record: BackendRecord
    /// The version's causal history.
    public var version: VersionVector
    /// The device whose file holds this version.
    public var writer: String
    /// A tombstone: the record was deleted.
    public var isDeleted: Bool
    /// A merge written as a function of the siblings alone: its vector is their join, with no entry
    /// of its own, so every device that writes the same merge writes the same version.
    public var isDerived: Bool
    /// The version this one started from, kept to find common ancestors for three-way merges.
    public var base: RecordBase?

    public init(
        record: BackendRecord, version: VersionVector, writer: String, isDeleted: Bool = false, isDerived: Bool = false,
        base: RecordBase? = nil
    ) {
        self.record = record
        self.version = version
        self.writer = writer
        self.isDeleted = isDeleted
        self.isDerived = isDerived
        self.base = base
    }

    /// This version as an ancestor of later ones.
    public var asBase: RecordBase { RecordBase(version: version, fields: record.fields) }

    /// Whether the two versions store the same thing (what `digest` covers).
    func hasSameContents(as other: RecordVersion) -> Bool {
        isDeleted == other.isDeleted && record == other.record
    }

    /// Decides between two versions with equal vectors (two releases that merged differently):
    /// the lowercase hex SHA-256 of the record's encoding, the smaller one being the version.
    var digest: String {
        let encoded = (try? record.encodedJSON()) ?? []
        return SHA256.hexDigest(of: encoded + [isDeleted ? 1 : 0])
    }
}

/// The version a change started from: its vector and its fields.
public struct RecordBase: Equatable, Sendable {
    public var version: VersionVector
    public var fields: [String: FieldValue]

    public init(version: VersionVector, fields: [String: FieldValue]) {
        self.version = version
        self.fields = fields
    }
}

/// The rules every device applies to a record's versions, so that all devices see the same
/// siblings, merge from the same ancestor and name the same conflict copies.
public enum VersionHistory {
    /// The versions no other covers, one per vector, in canonical order (by vector text):
    /// a record's siblings. Versions with equal vectors are one version; if their contents differ,
    /// the one with the smaller digest is it.
    public static func siblings(_ versions: [RecordVersion]) -> [RecordVersion] {
        var byVector: [VersionVector: RecordVersion] = [:]
        for version in versions {
            // The digest costs an encoding and a hash: equal contents need none.
            if let existing = byVector[version.version], existing.hasSameContents(as: version) || existing.digest <= version.digest {
                continue
            }
            byVector[version.version] = version
        }
        let distinct = Array(byVector.values)
        let maximal = distinct.filter { candidate in
            !distinct.contains { $0.version != candidate.version && $0.version.covers(candidate.version) }
        }
        return maximal.sorted { $0.version.tag < $1.version.tag }
    }

    /// The common ancestor of two siblings: whichever of them and their bases has the vector both
    /// share (the entry-wise minimum). Nil when none has: then there is no ancestor to merge against.
    public static func commonAncestor(of first: RecordVersion, _ second: RecordVersion) -> RecordBase? {
        let shared = first.version.meet(with: second.version)
        let (a, b) = first.version.tag <= second.version.tag ? (first, second) : (second, first)
        return [a.asBase, b.asBase, a.base, b.base].compactMap { $0 }.first { $0.version == shared }
    }

    /// The record name of the conflict copy a merge makes of `recordName`'s losing version: a UUID
    /// made from the SHA-256 of both, so every device that makes the copy makes the same record.
    public static func conflictCopyName(of recordName: String, losing version: VersionVector) -> String {
        var hasher = SHA256()
        hasher.update(Array("conflict copy\n\(recordName)\n\(version.tag)".utf8))
        var bytes = Array(hasher.finalize().prefix(16))
        // RFC 9562 version 8 (custom), variant 10.
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return Identifier.format(bytes)
    }
}

import ItsypadSupport

/// One clipboard history entry. Text is immutable once added; only the pin changes.
public struct ClipEntry: Equatable, Sendable {
    public var id: String
    public var text: String
    public var timestamp: Milliseconds
    public var pinned: Bool
    /// Why the entry never leaves this device, or nil when it may sync.
    public var localOnly: LocalOnlyReason?

    public init(id: String, text: String, timestamp: Milliseconds, pinned: Bool = false, localOnly: LocalOnlyReason? = nil) {
        self.id = id
        self.text = text
        self.timestamp = timestamp
        self.pinned = pinned
        self.localOnly = localOnly
    }
}

/// The reasons a clip is kept local-only (the filters that keep secrets and oversized clips off the backend).
public enum LocalOnlyReason: String, Sendable, CaseIterable {
    /// `clip add --local`
    case requested = "local"
    /// matched a `clipboard.ignore` pattern
    case ignored
    /// matched a built-in secret detector
    case secret
    /// larger than a backend record may be
    case oversized

    public var explanation: String {
        switch self {
        case .requested: return "added with --local"
        case .ignored: return "matching clipboard.ignore"
        case .secret: return "looking like a secret (clipboard.ignoreSecrets)"
        case .oversized: return "larger than the 1 MiB record limit"
        }
    }
}

/// Sizes that match CloudKit's limits.
public enum ClipLimits {
    /// A record may not exceed 1 MiB; leave room for the record's other fields.
    public static let maxSyncedBytes = 1_000_000
    /// `clipboard.maxBytes` unless set: 16 MiB.
    public static let defaultMaxBytes = 16 << 20
    /// `clipboard.maxEntries` unless set.
    public static let defaultMaxEntries = 1000
}

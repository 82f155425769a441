import ItsypadSupport

/// One clipboard history entry: text, or bytes of another type (`binary`). Its content is
/// immutable once added; only the pin changes.
public struct ClipEntry: Equatable, Sendable {
    public var id: String
    /// Empty for a binary entry.
    public var text: String
    /// What a binary entry holds (its bytes are kept beside the history); nil for text.
    public var binary: ClipBinary?
    public var timestamp: Milliseconds
    public var pinned: Bool
    /// Why the entry never leaves this device, or nil when it may sync.
    public var localOnly: LocalOnlyReason?

    public init(
        id: String, text: String, timestamp: Milliseconds, pinned: Bool = false, localOnly: LocalOnlyReason? = nil,
        binary: ClipBinary? = nil
    ) {
        self.id = id
        self.text = text
        self.binary = binary
        self.timestamp = timestamp
        self.pinned = pinned
        self.localOnly = localOnly
    }

    /// The MIME type of the entry's content.
    public var type: String { binary?.type ?? MediaType.text }
}

/// A binary entry's description, which the history keeps in the entry's line so that listing it
/// never reads its bytes.
public struct ClipBinary: Equatable, Sendable {
    /// A MIME type (`MediaType.isValid`), never `text/plain`.
    public var type: String
    public var size: Int
    /// The bytes' SHA-256 in lowercase hex: how a repeat is recognised and the bytes are checked when read.
    public var sha256: String
    /// An image's size in pixels, when its header could be read.
    public var width: Int?
    public var height: Int?

    public init(type: String, size: Int, sha256: String, width: Int? = nil, height: Int? = nil) {
        self.type = type
        self.size = size
        self.sha256 = sha256
        self.width = width
        self.height = height
    }

    /// The description of `bytes` of `type`, their image header read once here.
    public init(describing bytes: [UInt8], type: String) {
        let dimensions = ImageHeader.dimensions(of: bytes, type: type)
        self.init(
            type: type, size: bytes.count, sha256: SHA256.hexDigest(of: bytes), width: dimensions?.width, height: dimensions?.height)
    }

    /// Whether `bytes` are the ones described.
    public func describes(_ bytes: [UInt8]) -> Bool { bytes.count == size && SHA256.hexDigest(of: bytes) == sha256 }

    /// `[[ image/png 640×480 24 KiB ]]`: what a listing shows.
    public var summary: String {
        var line: [UInt8] = []
        ClipBinary.appendSummary(type: type.utf8, size: size, width: width, height: height, to: &line)
        return String(decoding: line, as: UTF8.self)
    }

    /// `summary` of a binary entry whose line a listing holds, appended to `line` (digits written
    /// in place: a listing describes thousands of images).
    public static func appendSummary(
        type: some Collection<UInt8>, size: Int, width: Int?, height: Int?, to line: inout [UInt8]
    ) {
        line += "[[ ".utf8
        line += type
        if let width, let height {
            line.append(0x20)
            appendDecimal(width, to: &line)
            line += "×".utf8
            appendDecimal(height, to: &line)
        }
        line.append(0x20)
        if size < 1024 {
            appendDecimal(size, to: &line)
            line += " B ]]".utf8
        } else if size < 1 << 20 {
            appendDecimal((size + 512) / 1024, to: &line)
            line += " KiB ]]".utf8
        } else {
            let tenths = (size * 10 + (1 << 19)) >> 20
            appendDecimal(tenths / 10, to: &line)
            line.append(0x2E)
            appendDecimal(tenths % 10, to: &line)
            line += " MiB ]]".utf8
        }
    }

    private static func appendDecimal(_ value: Int, to line: inout [UInt8]) {
        let start = line.count
        var rest = max(value, 0)
        repeat {
            line.append(UInt8(0x30 + rest % 10))
            rest /= 10
        } while rest > 0
        line[start...].reverse()
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
    /// binary, and larger than `clipboard.maxSyncBytes`
    case large

    public var explanation: String {
        switch self {
        case .requested: return "added with --local"
        case .ignored: return "matching clipboard.ignore"
        case .secret: return "looking like a secret (clipboard.ignoreSecrets)"
        case .oversized: return "larger than the 1 MiB record limit"
        case .large: return "binary and larger than clipboard.maxSyncBytes"
        }
    }
}

/// Sizes that match CloudKit's limits.
public enum ClipLimits {
    /// A record may not exceed 1 MiB; leave room for the record's other fields.
    public static let maxSyncedBytes = 1_000_000
    /// `clipboard.maxBytes` unless set: 16 MiB.
    public static let defaultMaxBytes = 16 << 20
    /// `clipboard.maxSyncBytes` unless set: binary entries up to 5 MiB sync.
    public static let defaultMaxSyncBytes = 5 << 20
    /// `clipboard.maxEntries` unless set.
    public static let defaultMaxEntries = 1000
}

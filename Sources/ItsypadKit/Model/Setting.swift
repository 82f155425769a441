import ItsypadSupport

/// Whether a setting travels to other devices (synced) or stays on this one (device-only).
public enum SettingScope: String, Sendable {
    case synced, device
}

/// A typed setting value.
public enum SettingValue: Equatable, Sendable, CustomStringConvertible {
    case bool(Bool)
    case int(Int)
    case string(String)
    case list([String])

    /// How `settings get` prints it: lists one item per line.
    public var description: String {
        switch self {
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .string(let s): return s
        case .list(let items): return items.joined(separator: "\n")
        }
    }

    public var json: JSONValue {
        switch self {
        case .bool(let b): return .bool(b)
        case .int(let i): return .integer(Int64(i))
        case .string(let s): return .string(s)
        case .list(let items): return .array(items.map { .string($0) })
        }
    }
}

/// The kinds of value a setting takes; each parses and validates user input.
public enum SettingKind: Sendable, Equatable {
    case bool
    case integer(ClosedRange<Int>)
    case duration
    case path
    /// A directory path, `git:` and a URL, or `rclone:` and an rclone remote (see `BackendLocation`).
    case backendLocation
    case text
    case patternList

    public var summary: String {
        switch self {
        case .bool: return "true or false"
        case .integer(let range): return "a whole number from \(range.lowerBound) to \(range.upperBound)"
        case .duration: return "a duration such as 90s, 30m, 12h, 7d, 2w or never"
        case .path: return "a directory path"
        case .backendLocation: return "a directory path, git:URL or rclone:REMOTE:PATH"
        case .text: return "text"
        case .patternList: return "one or more regular expressions"
        }
    }

    /// Values for shell completion.
    public var suggestions: [String] {
        switch self {
        case .bool: return ["true", "false"]
        case .duration: return RetentionDuration.examples
        default: return []
        }
    }

    /// Parses the words given to `settings set`; nil when they are not valid.
    public func parse(_ words: [String]) -> SettingValue? {
        switch self {
        case .patternList:
            guard !words.isEmpty, SearchPatternList(words).refused.isEmpty else { return nil }
            return .list(words)
        default:
            guard words.count == 1, let word = words.first else { return nil }
            return parse(word)
        }
    }

    func parse(_ word: String) -> SettingValue? {
        switch self {
        case .bool:
            switch word.lowercased() {
            case "true", "yes", "on", "1": return .bool(true)
            case "false", "no", "off", "0": return .bool(false)
            default: return nil
            }
        case .integer(let range):
            guard let value = Int(word), range.contains(value) else { return nil }
            return .int(value)
        case .duration:
            return RetentionDuration(word).map { .string($0.description) }
        case .path:
            return word.isEmpty ? nil : .string(word)
        case .backendLocation:
            return BackendLocation(word).map { .string($0.value) }
        case .text:
            return word.isEmpty ? nil : .string(word)
        case .patternList:
            return parse([word])
        }
    }

    /// Why `settings set` refuses these words, when there is more to say than the summary.
    public func problem(with words: [String]) -> String? {
        guard self == .patternList else { return nil }
        let refused = SearchPatternList(words).refused
        guard !refused.isEmpty else { return nil }
        return refused.map { "\(JSONValue.string($0.source).serialized()): \($0.reason)" }.joined(separator: "; ")
    }

    /// Reads a stored JSON value, rejecting one of the wrong type.
    public func decode(_ json: JSONValue) -> SettingValue? {
        switch (self, json) {
        case (.bool, .bool(let b)): return .bool(b)
        case (.integer(let range), _):
            guard let value = json.int64Value, range.contains(Int(value)) else { return nil }
            return .int(Int(value))
        case (.duration, .string(let s)): return RetentionDuration(s) == nil ? nil : .string(s)
        case (.path, .string(let s)), (.backendLocation, .string(let s)), (.text, .string(let s)): return .string(s)
        case (.patternList, .array(let items)):
            // Patterns this version cannot use (a peer's newer syntax, say) are kept,
            // and set aside with a warning where they are used.
            let strings = items.compactMap(\.stringValue)
            return strings.count == items.count ? .list(strings) : nil
        default: return nil
        }
    }
}

/// One known setting: its key, type, default, scope and help.
public struct SettingDefinition: Sendable {
    public let key: String
    public let kind: SettingKind
    public let scope: SettingScope
    public let help: String
    /// nil: no default (unset until the user sets it), or computed at run time.
    public let defaultValue: SettingValue?
}

/// A known setting's key as code names it: code that reads or writes one
/// particular setting says `.syncBackend`, never the string, so a misspelt key
/// does not compile. Keys typed by a user or read from a backend stay strings
/// (``Settings/definition(_:)-(String)``).
public enum SettingKey: String, CaseIterable, Sendable {
    case clipboardFollow = "clipboard.follow"
    case clipboardFollowWindow = "clipboard.followWindow"
    case clipboardIgnore = "clipboard.ignore"
    case clipboardIgnoreSecrets = "clipboard.ignoreSecrets"
    case clipboardMaxBytes = "clipboard.maxBytes"
    case clipboardMaxEntries = "clipboard.maxEntries"
    case clipboardMaxSyncBytes = "clipboard.maxSyncBytes"
    case clipboardRetention = "clipboard.retention"
    case deviceName = "device.name"
    case editor
    case syncBackend = "sync.backend"
    case syncEnabled = "sync.enabled"
}

/// The table of every setting itsypad knows: one row per ``SettingKey``, in its order.
public enum Settings {
    public static let all: [SettingDefinition] = SettingKey.allCases.map(definition)

    public static var keys: [String] { all.map(\.key) }

    public static func definition(_ key: String) -> SettingDefinition? { all.first { $0.key == key } }

    /// The row of a known setting.
    public static func definition(_ key: SettingKey) -> SettingDefinition {
        switch key {
        case .clipboardFollow:
            SettingDefinition(
                key: key.rawValue, kind: .bool, scope: .device,
                help:
                    "Whether clip watch puts on this desktop's clipboard a clip that sync brings from another device (as clip watch --follow does).",
                defaultValue: .bool(false))
        case .clipboardFollowWindow:
            SettingDefinition(
                key: key.rawValue, kind: .integer(1...86_400), scope: .device,
                help:
                    "How recent, in seconds, a clip from another device must be to be followed (default 120): an older one never overwrites the clipboard.",
                defaultValue: .int(120))
        case .clipboardIgnore:
            SettingDefinition(
                key: key.rawValue, kind: .patternList, scope: .synced,
                help:
                    "Regular expressions searched for anywhere in a clip; matching clips are stored but never synced. ^ and $ are the ends of the whole clip ((?m) for lines, (?i) to ignore case). Patterns are matched in linear time, so backreferences and lookaround are refused.",
                defaultValue: .list([]))
        case .clipboardIgnoreSecrets:
            SettingDefinition(
                key: key.rawValue, kind: .bool, scope: .synced,
                help: "Keep clips that look like private keys or API tokens local-only.", defaultValue: .bool(true))
        case .clipboardMaxBytes:
            SettingDefinition(
                key: key.rawValue, kind: .integer(1...(1 << 30)), scope: .device,
                help: "Largest clip clip add accepts, in bytes (default 16 MiB); larger input is refused and nothing is stored.",
                defaultValue: .int(ClipLimits.defaultMaxBytes))
        case .clipboardMaxEntries:
            SettingDefinition(
                key: key.rawValue, kind: .integer(1...10_000_000), scope: .synced,
                help: "Most clipboard entries kept; clip add evicts the oldest unpinned ones.",
                defaultValue: .int(ClipLimits.defaultMaxEntries))
        case .clipboardMaxSyncBytes:
            SettingDefinition(
                key: key.rawValue, kind: .integer(0...(50 << 20)), scope: .synced,
                help:
                    "Largest image or other binary clip that syncs, in bytes (default 5 MiB, at most 50 MiB; 0: none). Larger ones are kept on the device that added them.",
                defaultValue: .int(ClipLimits.defaultMaxSyncBytes))
        case .clipboardRetention:
            SettingDefinition(
                key: key.rawValue, kind: .duration, scope: .synced,
                help: "Default age for clip prune (never, 90s, 30m, 12h, 7d, 2w).", defaultValue: .string("never"))
        case .deviceName:
            SettingDefinition(
                key: key.rawValue, kind: .text, scope: .device,
                help: "This device's name in sync status and conflict copies (default: the host name).", defaultValue: nil)
        case .editor:
            SettingDefinition(
                key: key.rawValue, kind: .text, scope: .device,
                help: "Editor command for tab new/edit (default: $VISUAL, then $EDITOR, then vi).", defaultValue: nil)
        case .syncBackend:
            SettingDefinition(
                key: key.rawValue, kind: .backendLocation, scope: .device,
                help: "The sync backend shared by your devices: a directory, git: and a git remote's URL, or rclone: and an rclone remote.",
                defaultValue: nil)
        case .syncEnabled:
            SettingDefinition(
                key: key.rawValue, kind: .bool, scope: .device,
                help: "Whether this device syncs.", defaultValue: .bool(false))
        }
    }
}

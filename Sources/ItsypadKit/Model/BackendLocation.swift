import ItsypadSupport

/// Where a device's sync backend is, as the `sync.backend` setting names it: a directory path,
/// or a remote written `KIND:ADDRESS` (`git:URL`), whose mirror in the data directory is then the
/// directory the engine works on. Which kinds exist is the Backend layer's registration
/// (`RemoteKinds`): here a value is only told apart by its form. A directory whose relative path
/// holds ':' is written with a slash before the colon (`./a:b`).
public enum BackendLocation: Equatable, Sendable, CustomStringConvertible {
    case directory(String)
    /// `scheme:address`, as a remote kind of that scheme takes it.
    case remote(scheme: String, address: String)

    /// A git remote at `url` (a URL git accepts).
    public static func git(url: String) -> BackendLocation { .remote(scheme: "git", address: url) }

    /// Parses a setting value; nil for one that names nothing (empty, or a scheme alone).
    /// Relative paths are made absolute, in a remote's address too (by git's rule, see
    /// `isLocalPath`), so that the value means the same from any working directory.
    public init?(_ value: String) {
        if let colon = BackendLocation.schemeEnd(value) {
            let address = String(value[value.index(after: colon)...])
            guard !address.isEmpty else { return nil }
            self = .remote(
                scheme: String(value[..<colon]), address: BackendLocation.isLocalPath(address) ? FileSystem.absolute(address) : address)
        } else {
            guard !value.isEmpty else { return nil }
            self = .directory(FileSystem.absolute(value))
        }
    }

    /// The colon ending a scheme that `value` starts with: a lowercase letter, then lowercase
    /// letters, digits, '+', '-' or '.' (as in a URL). A path's first component that looks so is
    /// a scheme: such a directory is written `./name:…`.
    private static func schemeEnd(_ value: String) -> String.Index? {
        guard let colon = value.firstIndex(of: ":"), let first = value.unicodeScalars.first, ("a"..."z").contains(first) else { return nil }
        let allowed = value[..<colon].unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0)
        }
        return allowed ? colon : nil
    }

    /// The remote kind's scheme; nil for a directory.
    public var scheme: String? {
        if case .remote(let scheme, _) = self { scheme } else { nil }
    }

    /// The setting's value, secrets included: only ever stored or handed to the remote's tool.
    public var value: String {
        switch self {
        case .directory(let path): path
        case .remote(let scheme, let address): scheme + ":" + address
        }
    }

    /// The location as messages, `sync status` and logs show it: `value` with each secret the
    /// address holds (see `secrets`) replaced with `***`.
    public var description: String { redacting(value) }

    /// `text` (a message, a tool's output) with every secret of the address replaced with `***`.
    public func redacting(_ text: String) -> String {
        secrets.reduce(text) { text, secret in text.replacing(secret, with: "***") }
    }

    /// The secrets written in a remote's address, longest first: a URL's password
    /// (`https://user:SECRET@host/`), and the values of the options of an rclone connection string
    /// whose names say they are secret (`:webdav,url=…,pass=SECRET:path`, `remote,token='SECRET':`),
    /// quoted and unquoted.
    var secrets: [String] {
        guard case .remote(_, let address) = self else { return [] }
        var found: [String] = []
        for scheme in address.ranges(of: "://") {
            let authority = address[scheme.upperBound...].prefix { $0 != "/" }
            guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { continue }
            found.append(String(authority[authority.index(after: colon)..<at]))
        }
        for option in BackendLocation.options(in: address) where BackendLocation.isSecretName(option.name) {
            found += [option.value, BackendLocation.unquoted(option.value)]
        }
        return Set(found.filter { !$0.isEmpty }).sorted { ($0.count, $0) > ($1.count, $1) }
    }

    /// The `name=value` options of an rclone connection string, each after a comma; a value ends
    /// at a comma or colon unless quoted (`'…'` or `"…"`, the quote doubled inside).
    private static func options(in address: String) -> [(name: Substring, value: String)] {
        var found: [(name: Substring, value: String)] = []
        var index = address.startIndex
        while let comma = address[index...].firstIndex(of: ",") {
            let nameStart = address.index(after: comma)
            guard let equals = address[nameStart...].firstIndex(where: { !($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }),
                address[equals] == "=", equals > nameStart
            else {
                index = nameStart
                continue
            }
            var end = address.index(after: equals)
            if end < address.endIndex, let quote = address[end] == "'" || address[end] == "\"" ? address[end] : nil {
                end = address.index(after: end)
                while end < address.endIndex {
                    if address[end] == quote {
                        let next = address.index(after: end)
                        guard next < address.endIndex, address[next] == quote else {
                            end = next
                            break
                        }
                        end = address.index(after: next)
                    } else {
                        end = address.index(after: end)
                    }
                }
            } else {
                end = address[end...].firstIndex { $0 == "," || $0 == ":" } ?? address.endIndex
            }
            found.append((address[nameStart..<equals], String(address[address.index(after: equals)..<end])))
            index = end
        }
        return found
    }

    /// An option value without its quotes (a doubled quote inside stands for one).
    private static func unquoted(_ value: String) -> String {
        guard let quote = value.first, quote == "'" || quote == "\"", value.count >= 2, value.last == quote else { return value }
        return String(value.dropFirst().dropLast()).replacing(String([quote, quote]), with: String(quote))
    }

    /// Whether an option's name says its value is a secret: a password, a token, a key, a
    /// signed URL, credentials.
    private static func isSecretName(_ name: Substring) -> Bool {
        let lowered = name.lowercased()
        return ["pass", "secret", "token", "key", "credential", "auth", "sas", "session", "signature"].contains { lowered.contains($0) }
    }

    /// How git itself tells a local path from a URL: `scheme://…` is a URL, and `host:path` is
    /// ssh unless a slash comes before the colon.
    package static func isLocalPath(_ url: String) -> Bool {
        if url.contains("://") { return false }
        guard let colon = url.firstIndex(of: ":") else { return true }
        return url[..<colon].contains("/")
    }
}

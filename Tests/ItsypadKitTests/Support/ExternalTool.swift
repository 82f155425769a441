import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The programs tests run, and the one place that decides what a test does when one is missing: it
/// is skipped with the reason recorded, except under `CI=true` for a program `.ci/run` installs, where
/// the test fails (CI must not pass by skipping). A test states its tools with `.needs([…])`, or, when only
/// part of it (one case) needs them, calls `ExternalTool.require(…)` there.
enum ExternalTool {
    /// The Debian package of each program whose package has another name (the others are their own).
    static let packages = [
        "Xvfb": "xvfb", "wl-copy": "wl-clipboard", "wl-paste": "wl-clipboard", "man": "man-db", "ssh": "openssh-client",
        "ssh-keygen": "openssh-client", "sshd": "openssh-server", "htpasswd": "apache2-utils", "systemd-analyze": "systemd",
    ]

    /// Whether `name` is an executable on PATH or in the sbin folders a user's PATH may lack.
    static func installed(_ name: String) -> Bool {
        let path = (getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin") + ":/usr/sbin:/sbin"
        return path.split(separator: ":").contains { access("\($0)/\(name)", X_OK) == 0 }
    }

    /// The packages `.ci/run` installs, from its `apt-get install` line.
    static let installedByCI: Set<String> = {
        let script = (try? FileSystem.read(GeneratedFiles.root + "/.ci/run")).map { String(decoding: $0, as: UTF8.self) } ?? ""
        let line = script.split(separator: "\n").first { $0.contains("apt-get install") } ?? ""
        return Set(line.split(separator: " ").map(String.init).filter { !$0.hasPrefix("-") && $0 != ">/dev/null" })
    }()

    static var onCI: Bool { getenv("CI").map { String(cString: $0) == "true" } ?? false }

    struct MissingOnCI: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason + ", which .ci/run installs: CI must have it" }
    }

    /// The one decision: returns `reason`, the test's cause to skip, or under `CI=true` throws
    /// `MissingOnCI` when `.ci/run` installs one of `packages`.
    static func unavailable(_ reason: String, packages: [String], onCI: Bool = onCI) throws -> String {
        if onCI && packages.contains(where: installedByCI.contains) { throw MissingOnCI(reason: reason) }
        return reason
    }

    /// Why `tools` cannot run here ("not installed: …"), or nil when they all can.
    static func missing(_ tools: [String]) throws -> String? {
        let absent = tools.filter { !installed($0) }
        guard !absent.isEmpty else { return nil }
        return try unavailable("not installed: " + absent.joined(separator: ", "), packages: absent.map { packages[$0] ?? $0 })
    }

    /// Inside a test: skips the running test (or test case) when one of `tools` is missing.
    static func require(_ tools: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        if let reason = try missing(tools) { try Test.cancel(Comment(rawValue: reason), sourceLocation: sourceLocation) }
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test where every one of `tools` is installed; otherwise it is skipped, or fails on CI
    /// (see `ExternalTool`).
    static func needs(_ tools: [String]) -> Self {
        .enabled("needs \(tools.joined(separator: ", "))") { try ExternalTool.missing(tools) == nil }
    }
}

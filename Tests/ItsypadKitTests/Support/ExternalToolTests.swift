import Testing

@testable import ItsypadSupport

/// The one decision on a missing tool: a recorded skip with its reason, a failure on CI for what `.ci/run` installs.
@Suite struct ExternalToolTests {
    @Test func readsThePackagesCIInstalls() {
        #expect(ExternalTool.installedByCI.isSuperset(of: ["strace", "xvfb", "wl-clipboard", "python3-xlib", "git"]))
        #expect(!ExternalTool.installedByCI.contains { $0.hasPrefix("-") || $0.hasPrefix(">") })
    }

    @Test func aToolCIInstallsFailsOnCIAndIsSkippedElsewhere() throws {
        #expect(throws: ExternalTool.MissingOnCI.self) {
            try ExternalTool.unavailable("not installed: Xvfb", packages: ["xvfb"], onCI: true)
        }
        #expect(try ExternalTool.unavailable("not installed: Xvfb", packages: ["xvfb"], onCI: false) == "not installed: Xvfb")
        #expect(try ExternalTool.unavailable("not installed: zz", packages: ["zz"], onCI: true) == "not installed: zz")
    }

    @Test func aMissingToolIsNamed() throws {
        #expect(try ExternalTool.missing(["sh", "itsypad-no-such-tool"]) == "not installed: itsypad-no-such-tool")
        #expect(try ExternalTool.missing(["sh"]) == nil)
        #expect(ExternalTool.packages["Xvfb"].map(ExternalTool.installedByCI.contains) == true)
    }

    /// `systemd-analyze verify` checks the installed units offline, without systemd running (as in
    /// CI's container): CI installs it, so the check cannot pass there by skipping.
    @Test func unitsAreVerifiedOnCI() {
        #expect(ExternalTool.packages["systemd-analyze"].map(ExternalTool.installedByCI.contains) == true)
    }

    /// A test that decides by itself whether a program is there (`.enabled(if:)` on a look at PATH or
    /// at a file) skips on CI where `ExternalTool` would fail it: every such decision goes through
    /// `.needs` or `ExternalTool.require`.
    @Test func noTestDecidesOnAToolByItself() throws {
        let root = GeneratedFiles.root + "/Tests/ItsypadKitTests/"
        for path in try LayeringTests.swiftFiles(in: root)
        where !path.hasSuffix("/ExternalTool.swift") && !path.hasSuffix("/ExternalToolTests.swift") {
            let source = String(decoding: try #require(try FileSystem.read(path)), as: UTF8.self)
            for (number, line) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where Self.decidesOnATool(line) {
                Issue.record("\(path.dropFirst(root.count)):\(number + 1) decides on a tool itself: \(line.trimmingPrefix(" "))")
            }
        }
    }

    /// Whether `line` looks for a program outside `ExternalTool`.
    static func decidesOnATool(_ line: Substring) -> Bool {
        line.contains("ExternalTool.installed(") || (line.contains(".enabled(if:") && line.contains("FileSystem.exists(\"/usr/"))
    }

    @Test func aDecisionOutsideExternalToolIsCaught() {
        #expect(Self.decidesOnATool(#".enabled(if: ExternalTool.installed("strace"), "strace is not installed"))"#))
        #expect(Self.decidesOnATool(#"@Test(.enabled(if: FileSystem.exists("/usr/bin/time"), "not installed"))"#))
        #expect(!Self.decidesOnATool(#"@Test(.needs(["time"]))"#))
    }
}

import Testing

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
}

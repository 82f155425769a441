import Testing

@testable import ItsypadSupport

/// The Swift runtime reads a command's arguments from /proc/self/cmdline: where that cannot be opened
/// (every file descriptor in use under `ulimit -n 3`, or no /proc) it sees none, and `itsypad clip add x`
/// printed the help and exited 0, adding nothing. It fails instead, saying why.
@Suite struct UnreadableArgumentsTests {
    /// A user and mount namespace where /proc is an empty file system: the runtime's read fails as under
    /// `ulimit -n 3` (which a debug build cannot show: its dynamic loader needs a descriptor first).
    static let canHideProc = (try? Process.run("/usr/bin/unshare", ["-rm", "/bin/sh", "-c", "mount -t tmpfs none /proc"]))?.status == 0

    @Test(.enabled(if: canHideProc, "unshare cannot make a user and mount namespace here"))
    func argumentsThatCannotBeReadFailTheCommand() throws {
        let device = Device()
        let result = try Process.run(
            "/usr/bin/unshare",
            [
                "-rm", "/bin/sh", "-c", "mount -t tmpfs none /proc && exec \"$0\" --data-dir \"$1\" clip add x", Process.itsypad,
                device.dataDir,
            ])
        #expect(result.status == 1, "\(result.stdout)")
        #expect(result.stderr.contains("cannot read the command's arguments (/proc/self/cmdline"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(try device.run("clip", "ls").stdout.isEmpty)
    }
}

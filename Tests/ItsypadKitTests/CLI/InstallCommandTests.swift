import Testing

@testable import ItsypadCLI
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// `itsypad install` and `uninstall` with a prefix, run as the built binary
/// (install copies the running executable).
@Suite struct InstallCommandTests {
    let scratch = TemporaryDirectory()

    func run(_ script: String, environment extra: [String: String] = [:]) throws -> RunResult {
        var environment = Process.baseEnvironment
        environment["HOME"] = scratch.path + "/home"
        for (key, value) in extra { environment[key] = value }
        return try Process.run("/bin/sh", ["-c", script], environment: environment)
    }

    /// Every file the layout names, relative to the prefix.
    static let relativePaths = Installation(prefix: "").paths

    @Test func prefixOptionCreatesTheDirectoriesAndSetsExactModes() throws {
        let prefix = scratch.path + "/opt/itsypad"
        // A strict umask must not make the binary unreadable to others, as install(1) does not.
        let result = try run(
            "umask 077; exec '\(Process.itsypad)' install --prefix '\(prefix)'",
            environment: ["PATH": prefix + "/bin/:/usr/bin:/bin"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "the bin directory is on PATH: \(result.stderr)")
        for path in InstallCommandTests.relativePaths {
            var info = stat()
            #expect(stat(prefix + path, &info) == 0, "\(path) missing")
            #expect(info.st_mode & 0o7777 == (path == "/bin/itsypad" ? 0o755 : 0o644), "\(path)")
        }
        #expect(InstallCommandTests.relativePaths.contains("/share/man/man5/itsypad-backend.5"))
        #expect(InstallCommandTests.relativePaths.contains("/share/man/man1/itsypad-clip.1"))
        #expect(
            try FileSystem.read(prefix + "/share/zsh/site-functions/_itsypad")
                == Array(CompletionScript.generate(for: .zsh, root: CommandTable.root).utf8))
    }

    @Test func prefixComesFromTheEnvironmentToo() throws {
        let prefix = scratch.path + "/from-env"
        let result = try run("PREFIX='\(prefix)' '\(Process.itsypad)' -q install")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "-q silences the PATH advice")
        #expect(FileSystem.isRegularFile(prefix + "/bin/itsypad"))
        #expect(!FileSystem.exists(scratch.path + "/home/.local"))
    }

    /// Installing again replaces each file atomically and leaves no temporary files.
    @Test func reinstallingLeavesNoTemporaryFiles() throws {
        let prefix = scratch.path + "/p"
        for _ in 0..<2 {
            #expect(try run("'\(Process.itsypad)' install --prefix '\(prefix)' 2>/dev/null").status == 0)
        }
        let hidden = try Process.run("/usr/bin/find", [prefix, "-name", ".*", "-type", "f"])
        #expect(hidden.stdout.isEmpty, "\(hidden.stdout)")
        let files = try Process.run("/usr/bin/find", [prefix, "-type", "f"])
        #expect(files.stdout.split(separator: "\n").count == InstallCommandTests.relativePaths.count)
    }

    @Test func uninstallRemovesEverythingInstallWrote() throws {
        let prefix = scratch.path + "/p"
        #expect(try run("'\(Process.itsypad)' -q install --prefix '\(prefix)'").status == 0)
        #expect(InstallCommandTests.relativePaths.contains("/share/systemd/user/itsypad-sync-watch.service"))
        let result = try run("'\(Process.itsypad)' uninstall --prefix '\(prefix)'")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try Process.run("/usr/bin/find", [prefix, "-type", "f"]).stdout.isEmpty)
    }

    /// A symlinked directory at any depth below the prefix is never followed: what it leads to stays.
    @Test(arguments: ["share/man/man1", "share/man", "share", "bin", "share/systemd/user"])
    func uninstallNeverFollowsASymlinkBelowThePrefix(_ linked: String) throws {
        let prefix = scratch.path + "/p"
        #expect(try run("'\(Process.itsypad)' -q install --prefix '\(prefix)'").status == 0)
        // Outside the prefix, a copy of the linked directory's tree: the same file names.
        let outside = scratch.path + "/outside"
        #expect(try Process.run("/bin/cp", ["-a", prefix + "/" + linked, outside]).status == 0)
        #expect(try Process.run("/bin/rm", ["-rf", prefix + "/" + linked]).status == 0)
        #expect(symlink(outside, prefix + "/" + linked) == 0)
        let before = try Process.run("/usr/bin/find", [outside, "-type", "f"]).stdout
        #expect(!before.isEmpty)
        let result = try run("'\(Process.itsypad)' uninstall --prefix '\(prefix)'")
        #expect(result.status == 1 && result.stderr.contains("symbolic link"), "\(result.stderr)")
        #expect(try Process.run("/usr/bin/find", [outside, "-type", "f"]).stdout == before)
        // Everything not behind the link is removed.
        #expect(try Process.run("/usr/bin/find", [prefix, "-type", "f"]).stdout.isEmpty)
    }

    /// Each file's mode is set on the open file before it is renamed into place, never by path
    /// after (a symlink planted there in between would be followed). A umask of 077 takes the
    /// bits the installed files need from every new file, so each one needs its mode set.
    @Test(.needs(["strace"]))
    func installSetsEachModeOnTheOpenFileBeforeTheRename() throws {
        let prefix = scratch.path + "/p"
        let trace = scratch.path + "/trace"
        let result = try run(
            "umask 077 && strace -f -o '\(trace)' -e trace=chmod,fchmod,fchmodat,rename,renameat,renameat2 '\(Process.itsypad)' -q install --prefix '\(prefix)'"
        )
        #expect(result.status == 0, "\(result.stderr)")
        let calls = (scratch.read("trace") ?? "").split(separator: "\n").filter { $0.contains("chmod") || $0.contains("rename") }
        #expect(!calls.contains { $0.contains(" chmod(") || $0.contains("fchmodat(") }, "\(calls)")
        #expect(calls.filter { $0.contains("rename") }.count == InstallCommandTests.relativePaths.count, "\(calls)")
        var modeSet = false
        for call in calls {
            if call.contains("fchmod(") { modeSet = true }
            if call.contains("rename") {
                #expect(modeSet, "renamed before its mode was set: \(call)")
                modeSet = false
            }
        }
    }

    @Test func uninstallWithNothingInstalledRemovesNothing() throws {
        let prefix = scratch.path + "/empty"
        try FileSystem.makeDirectory(prefix + "/bin")
        try FileSystem.writeAtomically(prefix + "/bin/keep", Array("x".utf8))
        #expect(try run("'\(Process.itsypad)' uninstall --prefix '\(prefix)'").status == 0)
        #expect(FileSystem.exists(prefix + "/bin/keep"))
    }
}

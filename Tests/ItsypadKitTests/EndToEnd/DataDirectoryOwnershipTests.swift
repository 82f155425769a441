import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A data directory another user could change is refused, as ssh refuses a loose ~/.ssh: its
/// settings name the command `tab edit` runs and where sync sends everything.
@Suite struct DataDirectoryOwnershipTests {
    /// The data directory itself ("") and what itsypad reads from it, after a sync.
    static let paths = [
        "", "meta.json", "lock", "settings.json", "tabs", "tabs/TAB.json", "clips", "clips/log", "clips/index", "sync",
        "sync/state.json", "sync/pending.log", "sync/log.jsonl",
    ]

    /// How another user gets to change a path.
    enum Opening: String, CaseIterable {
        case groupWritable, othersWritable, otherOwner
    }

    let device = Device()
    var backend: String { device.directory.path + "/backend" }

    /// A device with a tab, a clip, an editor setting and a sync behind it; returns its tab's id.
    func setUp() throws -> String {
        let tab = try device.run("tab", "new", "a tab").stdout.trimmingNewline
        for command in [["clip", "add", "a clip"], ["settings", "set", "editor", "true"], ["sync", "enable", backend], ["sync"]] {
            let result = try device.runArguments(command)
            try #require(result.status == 0, "\(command): \(result.stderr)")
        }
        return tab
    }

    @Test(arguments: paths, Opening.allCases)
    func aDataDirectoryOtherUsersCouldChangeIsRefused(_ relative: String, _ opening: Opening) throws {
        guard opening != .otherOwner || geteuid() == 0 else { return }
        let tab = try setUp()
        let path = relative.isEmpty ? device.dataDir : device.dataDir + "/" + relative.replacing("TAB", with: tab)
        var info = stat()
        try #require(lstat(path, &info) == 0, "\(path)")
        let isDirectory = info.st_mode & S_IFMT == S_IFDIR
        switch opening {
        case .groupWritable: try #require(chmod(path, info.st_mode & 0o7777 | 0o020) == 0)
        case .othersWritable: try #require(chmod(path, info.st_mode & 0o7777 | 0o002) == 0)
        case .otherOwner: try #require(chown(path, 65534, 65534) == 0)
        }
        let fix = opening == .otherOwner ? "chown \(geteuid()) \(path)" : "chmod \(isDirectory ? 700 : 600) \(path)"
        for command in [["tab", "edit", tab], ["settings", "get", "editor"], ["sync"], ["sync", "status"]] {
            let result = try device.runArguments(command)
            #expect(result.status == 1, "\(command)")
            #expect(result.stderr.contains("is not private") && result.stderr.contains("\n  " + fix + "\n"), "\(command): \(result.stderr)")
        }
        // The fix it names is enough.
        switch opening {
        case .otherOwner: try #require(chown(path, geteuid(), getegid()) == 0)
        default: try #require(chmod(path, isDirectory ? 0o700 : 0o600) == 0)
        }
        let result = try device.run("settings", "get", "editor")
        #expect(result.status == 0 && result.stdout == "true\n", "\(result.stderr)")
    }

    @Test func everyFixIsNamedAtOnce() throws {
        let tab = try setUp()
        try #require(chmod(device.dataDir, 0o777) == 0)
        try #require(chmod(device.dataDir + "/settings.json", 0o666) == 0)
        try #require(chmod(device.dataDir + "/tabs/\(tab).json", 0o664) == 0)
        let result = try device.run("clip", "ls")
        #expect(result.status == 1 && result.stdout.isEmpty)
        for fix in [
            "chmod 700 \(device.dataDir)", "chmod 600 \(device.dataDir)/settings.json", "chmod 600 \(device.dataDir)/tabs/\(tab).json",
        ] {
            #expect(result.stderr.contains("\n  " + fix + "\n"), "\(result.stderr)")
        }
    }

    @Test func aPathIsQuotedForTheShell() {
        #expect(Text.shellQuoted("/home/a/.local/share/itsypad") == "/home/a/.local/share/itsypad")
        #expect(Text.shellQuoted("/tmp/it's here") == "'/tmp/it'\\''s here'")
    }

    /// Whatever the umask, what itsypad makes is 0700 and 0600, and a fresh --data-dir just works.
    @Test(arguments: ["0277", "0000", "0022"])
    func modesDoNotDependOnTheUmask(_ mask: String) throws {
        let fresh = device.directory.path + "/fresh"
        let script = """
            umask \(mask) && '\(Process.itsypad)' --data-dir '\(fresh)' tab new x >/dev/null && \
            '\(Process.itsypad)' --data-dir '\(fresh)' clip add y && '\(Process.itsypad)' --data-dir '\(fresh)' settings set editor vi && \
            '\(Process.itsypad)' --data-dir '\(fresh)' sync enable '\(backend)' && '\(Process.itsypad)' --data-dir '\(fresh)' sync
            """
        let result = try Process.shell(script)
        #expect(result.status == 0, "\(result.stderr)")
        let listing = try Process.run("/usr/bin/find", [fresh, "-path", fresh + "/sync/git", "-prune", "-o", "-printf", "%m %y %p\\n"])
        let entries = listing.stdout.split(separator: "\n")
        #expect(entries.count > 8, "\(listing.stdout)")
        for entry in entries {
            let parts = entry.split(separator: " ", maxSplits: 2)
            #expect(parts[0] == (parts[1] == "d" ? "700" : "600"), "\(entry)")
        }
    }
}

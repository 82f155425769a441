import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

@Suite struct BackendLocationTests {
    @Test(arguments: [
        ("/srv/itsypad", BackendLocation.directory("/srv/itsypad")),
        ("git:ssh://me@host/srv/notes.git", .git(url: "ssh://me@host/srv/notes.git")),
        ("git:me@host:notes.git", .git(url: "me@host:notes.git")),
        ("git:https://example.com/me/notes.git", .git(url: "https://example.com/me/notes.git")),
        ("git:file:///srv/notes.git", .git(url: "file:///srv/notes.git")),
        ("git:/srv/notes.git", .git(url: "/srv/notes.git")),
        ("git:./a:b", .git(url: FileSystem.absolute("./a:b"))),
        ("git:notes.git", .git(url: FileSystem.absolute("notes.git"))),
        ("relative/dir", .directory(FileSystem.absolute("relative/dir"))),
        ("rclone:dav:itsypad", .remote(scheme: "rclone", address: "dav:itsypad")),
        ("./a:b", .directory(FileSystem.absolute("./a:b"))),
        ("Notes:2024", .directory(FileSystem.absolute("Notes:2024"))),
    ])
    func parsesPathsAndGitURLs(_ value: String, _ expected: BackendLocation) {
        #expect(BackendLocation(value) == expected)
        #expect(BackendLocation(expected.description) == expected, "the setting's value reads back")
    }

    @Test(arguments: ["", "git:"])
    func refusesValuesThatNameNothing(_ value: String) {
        #expect(BackendLocation(value) == nil)
    }

    @Test func theSettingTakesGitURLsAndRefusesAnEmptyOne() {
        let device = Device()
        #expect(device.inProcess(["settings", "set", "sync.backend", "git:me@host:notes.git"]).0 == 0)
        #expect(device.inProcess(["settings", "get", "sync.backend"]).1 == "git:me@host:notes.git\n")
        let (status, _, err) = device.inProcess(["settings", "set", "sync.backend", "git:"])
        #expect(status == 64)
        #expect(err.contains("a directory path, git:URL"), "\(err)")
    }

    @Test func theFactoryWorksOnTheCloneOfAGitRemote() throws {
        let git = try ConfiguredBackend(.git(url: "me@host:notes.git"), mirrors: DataDirectoryLayout(root: "/data").sync, environment: [:])
        #expect(git.remote?.location == .git(url: "me@host:notes.git"))
        #expect(git.path == "/data/sync/git/backend")
        let directory = try ConfiguredBackend(.directory("/srv/b"), mirrors: DataDirectoryLayout(root: "/data").sync, environment: [:])
        #expect(directory.remote == nil && directory.path == "/srv/b")
    }

    /// A location of a kind this version does not know is refused before anything is made, naming
    /// the kinds it knows and how a directory with ':' in its path is written.
    @Test func anUnknownSchemeIsRefusedWithExitSixtyFourNamingTheKnownOnes() throws {
        let device = Device()
        let scratch = TemporaryDirectory()
        func enable(_ value: String) throws -> RunResult {
            try Process.shell(
                "cd '\(scratch.path)' && ITSYPAD_DATA_DIR='\(device.dataDir)' '\(Process.itsypad)' sync enable \(value) --no-encrypt")
        }
        let refused = try enable("dropbox:itsypad")
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("git:URL") && refused.stderr.contains("./dropbox:itsypad"), "\(refused.stderr)")
        #expect(!FileSystem.exists(scratch.path + "/dropbox:itsypad"))
        let (status, _, err) = device.inProcess(["settings", "set", "sync.backend", "dropbox:itsypad"])
        #expect(status == 64 && err.contains("git:URL"), "\(err)")
        let directory = try enable("./dropbox:itsypad")
        #expect(directory.status == 0, "\(directory.stderr)")
        #expect(FileSystem.exists(scratch.path + "/dropbox:itsypad/zone.json"))
    }
}

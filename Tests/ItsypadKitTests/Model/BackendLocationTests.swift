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

    /// A location as shown (messages, status, logs) leaves out the secrets its address holds: the
    /// values of an rclone connection string's secret options, quoted or not, and a URL's
    /// password; the setting's value keeps them.
    @Test func secretsInAnAddressAreLeftOutOfWhatIsShown() throws {
        let written = "rclone::webdav,url='http://me:URLPASS@127.0.0.1:8/',user=me,pass=OBSCURED1,bearer_token='to''ken':itsypad"
        let location = try #require(BackendLocation(written))
        #expect(location.value == written)
        #expect(location.description == "rclone::webdav,url='http://me:***@127.0.0.1:8/',user=me,pass=***,bearer_token=***:itsypad")
        let echoed = "Failed to create file system for \":webdav,…,pass=OBSCURED1:itsypad\": token to'ken refused"
        #expect(location.redacting(echoed) == "Failed to create file system for \":webdav,…,pass=***:itsypad\": token *** refused")
        #expect(BackendLocation("rclone:dav,pass=S3CRET:")?.description == "rclone:dav,pass=***:")
        #expect(BackendLocation("git:https://me:T0KEN@example.com/n.git")?.description == "git:https://me:***@example.com/n.git")
        for plain in ["rclone:dav:itsypad", "git:ssh://me@host/srv/notes.git", "git:me@host:notes.git", "rclone::sftp,host=h,user=me:x"] {
            #expect(BackendLocation(plain)?.description == plain)
        }
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

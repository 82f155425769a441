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
        #expect(err.contains("a directory path or git:URL"), "\(err)")
    }

    @Test func theFactoryWorksOnTheCloneOfAGitRemote() throws {
        let git = try ConfiguredBackend(.git(url: "me@host:notes.git"), mirrors: DataDirectoryLayout(root: "/data").sync, environment: [:])
        #expect(git.remote?.location == .git(url: "me@host:notes.git"))
        #expect(git.path == "/data/sync/git/backend")
        let directory = try ConfiguredBackend(.directory("/srv/b"), mirrors: DataDirectoryLayout(root: "/data").sync, environment: [:])
        #expect(directory.remote == nil && directory.path == "/srv/b")
    }
}

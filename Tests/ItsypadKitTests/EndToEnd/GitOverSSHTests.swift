import Testing

/// `sync enable git:ssh://…` against a real sshd on the loopback address.
@Suite(.tags(.git), .needs(["sshd", "ssh-keygen", "git"]))
struct GitOverSSHTests {
    @Test func twoDevicesSyncOverSSHAndAStrangersKeyIsRefusedWithExitOne() throws {
        let server = try LoopbackSSHServer()
        let remote = try BareRepository()
        let laptop = Device(), desktop = Device()
        let url = server.url(remote.path)
        let key = server.environment(key: server.clientKey)

        #expect(try laptop.run("clip", "add", "over ssh").status == 0)
        let enabled = try laptop.runArguments(["sync", "enable", url], environment: key)
        try #require(enabled.status == 0, "\(enabled.stderr)\n\(server.directory.read("sshd.log") ?? "")")
        // The remote's backend is encrypted by default: the desktop joins with the laptop's recovery key.
        let recoveryKey = try laptop.run("sync", "key", "show").stdout
        let joined = try desktop.runArguments(["sync", "enable", url, "--key", "-"], stdin: Array(recoveryKey.utf8), environment: key)
        try #require(joined.status == 0, "\(joined.stderr)")
        #expect(try desktop.run("clip", "ls").stdout.contains("over ssh"))

        #expect(try laptop.run("clip", "add", "kept when refused").status == 0)
        let refused = try laptop.runArguments(["sync"], environment: server.environment(key: server.strangerKey))
        #expect(refused.status == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("Permission denied"), "\(refused.stderr)")
        #expect(try laptop.run("sync", "status").stdout.contains("pending:    0 tabs, 1 clip, 0 settings"))
        #expect(try laptop.runArguments(["sync"], environment: key).status == 0)
        #expect(try desktop.runArguments(["sync"], environment: key).status == 0)
        #expect(try desktop.run("clip", "ls").stdout.contains("kept when refused"))
    }
}

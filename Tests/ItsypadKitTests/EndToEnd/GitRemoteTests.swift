import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

extension Tag {
    /// Runs the real `git` against a bare repository on the local disk.
    @Tag static var git: Self
}

/// A bare repository on the local disk, and the git commands a test uses on it.
final class BareRepository {
    let directory = TemporaryDirectory()
    var path: String { directory.path + "/remote.git" }

    init() throws {
        try BareRepository.git(["init", "-q", "--bare", path])
    }

    /// Runs git (the real one), failing the test on an error.
    @discardableResult
    static func git(_ arguments: [String], in directory: String? = nil) throws -> String {
        let result = try Process.run("/usr/bin/git", (directory.map { ["-C", $0] } ?? []) + arguments, timeout: 60)
        try #require(result.status == 0, "git \(arguments.joined(separator: " ")): \(result.stderr)")
        return result.stdout
    }

    /// Subjects of the itsypad branch's commits, newest first.
    func log() throws -> [String] {
        try BareRepository.git(["--git-dir=" + path, "log", "--format=%s", "itsypad"]).split(separator: "\n").map(String.init)
    }

    /// A plain clone of the itsypad branch, for changing the remote as someone else would.
    func clone() throws -> String {
        let target = directory.path + "/clone-\(Identifier.make())"
        try BareRepository.git(["clone", "-q", "-b", "itsypad", path, target])
        try BareRepository.git(["config", "user.email", "someone@example.com"], in: target)
        try BareRepository.git(["config", "user.name", "someone"], in: target)
        return target
    }
}

/// A directory of scripts put first on PATH in place of git, each ending in the real one.
final class GitWrapper {
    let directory = TemporaryDirectory()

    /// `script` runs in sh before the real git, with "$@" git's arguments (`--git-dir=…` first) and
    /// `$cmd` its command (fetch, push, …).
    init(_ script: String) throws {
        directory.write(
            "git",
            """
            #!/bin/sh
            for a in "$@"; do case "$a" in --*) ;; *) cmd="$a"; break;; esac; done
            gitdir="${1#--git-dir=}"
            \(script)
            exec /usr/bin/git "$@"
            """, mode: 0o755)
    }

    var environment: [String: String] { ["PATH": directory.path + ":/usr/bin:/bin"] }
}

/// `sync enable git:URL` against a bare repository on the local disk, run with the built binary
/// as a user runs it. Each device is a data directory with its own clone.
@Suite(.tags(.git), .needs(["git"]))
struct GitRemoteTests {
    let remote: BareRepository
    let laptop = Device()
    let desktop = Device()

    init() throws {
        remote = try BareRepository()
    }

    @discardableResult
    func succeed(_ device: Device, _ arguments: String..., environment: [String: String] = [:]) throws -> String {
        let result = try device.runArguments(arguments, environment: environment)
        try #require(result.status == 0, "\(arguments.joined(separator: " ")): exit \(result.status): \(result.stderr)")
        return result.stdout
    }

    func clips(_ device: Device) throws -> String { try succeed(device, "clip", "ls") }

    func pending(_ device: Device) throws -> String {
        try succeed(device, "sync", "status").split(separator: "\n").first { $0.hasPrefix("pending:") }.map(String.init) ?? ""
    }

    @Test(arguments: ["plain path", "file URL"])
    func twoDevicesSyncThroughABareRepository(_ form: String) throws {
        let url = "git:" + (form == "file URL" ? "file://" : "") + remote.path
        try succeed(laptop, "clip", "add", "copied on the laptop")
        try succeed(laptop, "sync", "enable", url, "--no-encrypt")
        try succeed(desktop, "tab", "new", "--name", "todo", "written on the desktop")
        try succeed(desktop, "sync", "enable", url, "--no-encrypt")
        #expect(try clips(desktop).contains("copied on the laptop"))
        try succeed(laptop, "sync")
        #expect(try succeed(laptop, "tab", "show", "todo") == "written on the desktop")
        #expect(try succeed(laptop, "settings", "get", "sync.backend") == url + "\n")

        let subjects = try remote.log()
        let desktopID = try succeed(desktop, "sync", "status", "--json")
        #expect(subjects.contains { $0.hasPrefix("itsypad sync on ") && $0.contains("pushed 1") }, "\(subjects)")
        #expect(subjects.contains { $0.hasPrefix("itsypad sync enable on ") })
        #expect(
            subjects.contains { subject in
                desktopID.contains(subject.split(separator: "(").last?.split(separator: ")").first.map(String.init) ?? "-")
            })
        let status = try succeed(laptop, "sync", "status")
        #expect(status.contains("remote:     fetched 20") && status.contains(", pushed 20"), "\(status)")
        #expect(!status.contains("git error"))
    }

    @Test func threeDevicesConvergeOneAfterAnother() throws {
        let third = Device()
        let devices = [laptop, desktop, third]
        for (index, device) in devices.enumerated() {
            try succeed(device, "clip", "add", "clip \(index)")
            try succeed(device, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        }
        for device in devices { try succeed(device, "sync") }
        for device in devices {
            let listed = try clips(device)
            #expect((0..<3).allSatisfy { listed.contains("clip \($0)") }, "\(listed)")
        }
    }

    @Test func aDeviceOfflineForManyCommitsCatchesUp() throws {
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(desktop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        for round in 0..<15 {
            try succeed(desktop, "clip", "add", "while the laptop was away \(round)")
            try succeed(desktop, "sync")
        }
        #expect(try remote.log().count >= 16)
        try succeed(laptop, "sync")
        let listed = try clips(laptop)
        #expect((0..<15).allSatisfy { listed.contains("while the laptop was away \($0)") }, "\(listed)")
    }

    @Test func anEmptyRemoteGetsTheBackendCreatedAndPushed() throws {
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        let checkout = try remote.clone()
        #expect(FileSystem.exists(checkout + "/zone.json"))
        #expect(!FileSystem.exists(checkout + "/lock"), "the backend's lock file is not committed")
    }

    @Test func aMissingGitExitsOneAndKeepsPendingWork() throws {
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(laptop, "clip", "add", "kept")
        let noGit = TemporaryDirectory()
        let result = try laptop.run("sync", environment: ["PATH": noGit.path])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("git is not installed"), "\(result.stderr)")
        #expect(try pending(laptop).contains("1 clip"))
        try succeed(laptop, "sync")
        #expect(try pending(laptop).contains("0 clips"))
    }

    @Test func anUnreachableRemoteExitsSeventyFiveWithGitsMessage() throws {
        // Port 1 on the loopback address: nothing listens there, so ssh is refused at once.
        let result = try laptop.run("sync", "enable", "git:ssh://git@127.0.0.1:1/nothing.git")
        #expect(result.status == 75, "\(result.stderr)")
        #expect(result.stderr.contains("Connection refused"), "\(result.stderr)")
        #expect(result.stderr.contains("try again later"), "\(result.stderr)")
    }

    /// Retrying cannot create a repository: exit 1, git's lines quoted as git wrote them, and how to create it.
    @Test(arguments: ["", "file://"])
    func aMissingRepositoryExitsOneAndSaysHowToCreateIt(_ scheme: String) throws {
        let path = remote.directory.path + "/not-there.git"
        let missing = try desktop.run("sync", "enable", "git:" + scheme + path)
        #expect(missing.status == 1, "\(missing.stderr)")
        #expect(missing.stderr.contains("\n  fatal: Could not read from remote repository.\n"), "\(missing.stderr)")
        #expect(!missing.stderr.contains("; "), "git's lines are not joined: \(missing.stderr)")
        #expect(missing.stderr.contains("git init --bare \(path)'"), "\(missing.stderr)")
        #expect(!missing.stderr.contains("try again later"), "\(missing.stderr)")
        // A sync's log entry stays one line.
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(laptop, "settings", "set", "sync.backend", "git:" + scheme + path)
        #expect(try laptop.run("sync").status == 1)
        let log = try succeed(laptop, "sync", "log").split(separator: "\n")
        #expect(log.count == 2 && log[1].contains("does not appear to be a git repository"), "\(log)")
    }

    @Test(arguments: [
        (
            "ssh: connect to host example.com port 22: Connection refused\nfatal: Could not read from remote repository.",
            GitFailure.transient
        ),
        ("fatal: unable to access 'https://h/r.git/': Could not resolve host: h", .transient),
        ("fatal: unable to access 'https://h/r.git/': The requested URL returned error: 503", .transient),
        ("error: cannot lock ref 'refs/heads/itsypad': Unable to create '/r.git/refs/heads/itsypad.lock': File exists.", .transient),
        ("fatal: '/r.git' does not appear to be a git repository\nfatal: Could not read from remote repository.", .missingRepository),
        ("remote: Repository not found.\nfatal: repository 'https://h/r.git/' not found", .missingRepository),
        ("git@h: Permission denied (publickey).\nfatal: Could not read from remote repository.", .permanent),
        ("fatal: Authentication failed for 'https://h/r.git/'", .permanent),
        ("fatal: unable to access 'https://h/r.git/': The requested URL returned error: 403", .permanent),
        ("fatal: transport 'ext' not allowed", .protocolNotAllowed),
        ("fatal: unable to access 'https://h/': SSL certificate problem: self-signed certificate", .permanent),
        ("! [remote rejected] itsypad -> itsypad (pre-receive hook declined)", .permanent),
    ])
    func gitFailuresAreTemporaryOnlyWhenRetryingCanFixThem(_ message: String, _ kind: GitFailure) {
        #expect(GitFailure(message) == kind, "\(message)")
    }

    /// A remote names a transport; only those that carry data are used, whatever the environment allows.
    @Test func aRemoteHelperThatRunsACommandIsNeverRun() throws {
        let marker = laptop.directory.path + "/pwned"
        let result = try laptop.run(
            "sync", "enable", "git:ext::sh -c touch% \(marker)", environment: ["GIT_ALLOW_PROTOCOL": "ext", "GIT_PROTOCOL_FROM_USER": "1"])
        #expect(result.status == 1 || result.status == 64, "\(result.stderr)")
        #expect(!FileSystem.exists(marker), "the ext:: command ran")
        #expect(result.stderr.contains("only over file, ssh, git, http, https"), "\(result.stderr)")
    }

    /// Nothing the remote or the user's git configuration chooses runs in the clone: the remote's
    /// `.gitattributes` names filters, a diff and a merge driver the user's configuration defines,
    /// the bare repository has hooks (a push to a local path runs them here), and the user has hooks
    /// of their own and a file system monitor. None of them runs, and the devices still sync.
    @Test func nothingTheRemoteOrTheUsersConfigurationChoosesRuns() throws {
        let scripts = TemporaryDirectory()
        let marker = scripts.file("ran")
        let record = { (what: String) in "#!/bin/sh\necho \(what) >> \(marker)\n" }
        mkdir(scripts.file("hooks"), 0o700)
        for hook in ["pre-push", "pre-commit", "post-commit", "post-checkout", "post-merge", "post-rewrite", "reference-transaction"] {
            scripts.write("hooks/" + hook, record("user hook " + hook), mode: 0o755)
        }
        scripts.write("fsmonitor", record("fsmonitor") + "exit 1\n", mode: 0o755)
        scripts.write(
            "gitconfig",
            """
            [filter "evil"]
            \tclean = echo clean >> \(marker); cat
            \tsmudge = echo smudge >> \(marker); cat
            [diff "evil"]
            \ttextconv = echo textconv >> \(marker); cat
            [merge "evil"]
            \tdriver = echo merge >> \(marker); false
            [core]
            \thooksPath = \(scripts.path)/hooks
            \tfsmonitor = \(scripts.path)/fsmonitor

            """)
        for hook in ["pre-receive", "update", "post-receive", "post-update", "reference-transaction"] {
            try FileSystem.writeAtomically(remote.path + "/hooks/" + hook, Array(record("remote hook " + hook).utf8), mode: 0o755)
        }
        let work = remote.directory.path + "/work"
        try BareRepository.git(["init", "-q", "-b", "itsypad", work])
        try FileSystem.writeAtomically(work + "/.gitattributes", Array("* filter=evil diff=evil merge=evil\n".utf8))
        try BareRepository.git(["add", ".gitattributes"], in: work)
        try BareRepository.git(
            ["-c", "user.name=someone", "-c", "user.email=someone@example.com", "commit", "-q", "-m", "attributes"], in: work)
        try BareRepository.git(["push", "-q", "--no-verify", remote.path, "itsypad"], in: work)
        try? FileSystem.remove(marker)

        let environment = ["GIT_CONFIG_GLOBAL": scripts.file("gitconfig")]
        let url = "git:" + remote.path
        try succeed(laptop, "clip", "add", "copied on the laptop")
        try succeed(laptop, "sync", "enable", url, "--no-encrypt", environment: environment)
        try succeed(desktop, "sync", "enable", url, "--no-encrypt", environment: environment)
        try succeed(desktop, "tab", "new", "written on the desktop")
        try succeed(desktop, "sync", environment: environment)
        try succeed(laptop, "sync", environment: environment)
        #expect(try clips(desktop).contains("copied on the laptop"))
        #expect(try succeed(laptop, "tab", "ls").contains("written on the desktop"))
        #expect(!FileSystem.exists(marker), "ran: \(scripts.read("ran") ?? "")")
    }

    /// The user's choice of ssh program is kept (core.sshCommand, GIT_SSH, GIT_SSH_COMMAND); with none,
    /// itsypad's ssh runs in batch mode.
    @Test(arguments: ["core.sshCommand", "GIT_SSH", "GIT_SSH_COMMAND", "none"])
    func theUsersSSHCommandIsUsedAsItIs(_ setting: String) throws {
        let scripts = TemporaryDirectory()
        let calls = scripts.file("calls")
        let fake = "#!/bin/sh\necho \"$0 $*\" >> \(calls)\necho 'git@127.0.0.1: Permission denied (publickey).' >&2\nexit 255\n"
        // Named ssh, as git tells OpenSSH by the program's name.
        mkdir(scripts.file("user"), 0o700)
        scripts.write("user/ssh", fake, mode: 0o755)
        scripts.write("ssh", fake, mode: 0o755)
        var environment = ["PATH": scripts.path + ":/usr/bin:/bin", "GIT_CONFIG_GLOBAL": scripts.path + "/gitconfig"]
        scripts.write("gitconfig", setting == "core.sshCommand" ? "[core]\n\tsshCommand = \(scripts.path)/user/ssh\n" : "")
        if setting.hasPrefix("GIT_SSH") { environment[setting] = scripts.path + "/user/ssh" }
        let result = try laptop.runArguments(["sync", "enable", "git:ssh://git@127.0.0.1:1/repo.git"], environment: environment)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("Permission denied (publickey)"), "\(result.stderr)")
        let called = scripts.read("calls") ?? ""
        if setting == "none" {
            #expect(called.hasPrefix(scripts.path + "/ssh ") && called.contains("-o BatchMode=yes"), "\(called)")
        } else {
            #expect(called.hasPrefix(scripts.path + "/user/ssh ") && !called.contains("BatchMode"), "\(called)")
        }
    }

    @Test func aRejectedKeyExitsOneWithGitsMessage() throws {
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(laptop, "settings", "set", "sync.backend", "git:ssh://git@127.0.0.1:1/repo.git")
        try succeed(laptop, "clip", "add", "kept")
        let fakeSSH = TemporaryDirectory()
        fakeSSH.write("ssh", "#!/bin/sh\necho 'git@127.0.0.1: Permission denied (publickey).' >&2\nexit 255\n", mode: 0o755)
        let result = try laptop.run("sync", environment: ["GIT_SSH_COMMAND": fakeSSH.file("ssh")])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("Permission denied (publickey)"), "\(result.stderr)")
        #expect(try pending(laptop).contains("1 clip"))
        let status = try succeed(laptop, "sync", "status")
        #expect(status.contains("git error:  git could not fetch from git:ssh://git@127.0.0.1:1/repo.git"), "\(status)")
    }

    @Test func aGitThatHangsIsKilledAtTheTimeOutWithSeventyFive() throws {
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(laptop, "clip", "add", "kept")
        let hanging = try GitWrapper(#"[ "$cmd" = fetch ] && sleep 30"#)
        var environment = hanging.environment
        environment["ITSYPAD_GIT_TIMEOUT"] = "1"
        let result = try laptop.runArguments(["sync"], environment: environment)
        #expect(result.status == 75, "\(result.stderr)")
        #expect(result.stderr.contains("within 1 s"), "\(result.stderr)")
        #expect(try pending(laptop).contains("1 clip"))
    }

    @Test func aKillDuringFetchLosesNothingAndTheNextSyncRecovers() throws {
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(desktop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(desktop, "clip", "add", "from the desktop")
        try succeed(desktop, "sync")
        try succeed(laptop, "clip", "add", "from the laptop")
        // Git's lock files left as a killed fetch leaves them, then itsypad killed with -9.
        let killer = try GitWrapper(
            #"""
            if [ "$cmd" = fetch ]; then
              touch "$gitdir/packed-refs.lock" "$gitdir/index.lock"; mkdir -p "$gitdir/refs/remotes/origin"; touch "$gitdir/refs/remotes/origin/itsypad.lock"
              kill -9 $PPID; exit 137
            fi
            """#)
        let killed = try laptop.runArguments(["sync"], environment: killer.environment)
        #expect(killed.signal == SIGKILL, "\(killed.status) \(killed.stderr)")
        try succeed(laptop, "sync")
        #expect(try clips(laptop).contains("from the desktop"))
        try succeed(desktop, "sync")
        #expect(try clips(desktop).contains("from the laptop"))
    }

    @Test(arguments: ["before", "after"])
    func aKillDuringPushLosesNothingAndTheNextSyncRecovers(_ moment: String) throws {
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(desktop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(laptop, "clip", "add", "pushed when killed")
        // Killed before the push reached the remote, or after it did but before itsypad heard.
        let killer = try GitWrapper(
            moment == "before"
                ? #"[ "$cmd" = push ] && { touch "$gitdir/index.lock"; kill -9 $PPID; exit 137; }"#
                : #"[ "$cmd" = push ] && { /usr/bin/git "$@"; kill -9 $PPID; exit 137; }"#)
        let killed = try laptop.runArguments(["sync"], environment: killer.environment)
        #expect(killed.signal == SIGKILL, "\(killed.status) \(killed.stderr)")
        try succeed(laptop, "sync")
        let status = try succeed(laptop, "sync", "status")
        #expect(!status.contains("not pushed yet"), "\(status)")
        try succeed(desktop, "sync")
        #expect(try clips(desktop).contains("pushed when killed"))
    }

    /// Killed after the engine wrote the working tree but before the commit: the next sync commits
    /// what it left before it fetches, and the peer gets it.
    @Test func aKillBeforeTheCommitLosesNothingAndTheNextSyncCommitsWhatWasLeft() throws {
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(desktop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(laptop, "clip", "add", "written when killed")
        let killer = try GitWrapper(#"[ "$cmd" = write-tree ] && { kill -9 $PPID; exit 137; }"#)
        let killed = try laptop.runArguments(["sync"], environment: killer.environment)
        #expect(killed.signal == SIGKILL, "\(killed.status) \(killed.stderr)")
        try succeed(desktop, "clip", "add", "meanwhile on the desktop")
        try succeed(desktop, "sync")
        try succeed(laptop, "sync")
        #expect(try remote.log().contains("itsypad: changes left by an interrupted sync"))
        #expect(try clips(laptop).contains("meanwhile on the desktop"))
        try succeed(desktop, "sync")
        #expect(try clips(desktop).contains("written when killed"))
    }

    /// `sync/git/committed` lets a sync skip the `git add -A` that commits what an interrupted sync
    /// left: it names HEAD exactly when git itself finds nothing to commit in the clone.
    @Test func theCommittedMarkerNamesHEADOnlyWhenGitFindsNothingToCommit() throws {
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        let clone = laptop.dataDir + "/sync/git"
        let git = ["--git-dir=" + clone + "/repository", "--work-tree=" + clone + "/backend"]
        func marker() -> String? { (try? FileSystem.read(clone + "/committed")).flatMap { $0 }.map { String(decoding: $0, as: UTF8.self) } }
        func head() throws -> String { Text.trim(try BareRepository.git(git + ["rev-parse", "HEAD"])) }
        func uncommitted() throws -> String { try BareRepository.git(git + ["status", "--porcelain"]) }

        try succeed(laptop, "clip", "add", "synced")
        try succeed(laptop, "sync")
        #expect(try marker() == head() && uncommitted().isEmpty)

        try succeed(laptop, "clip", "add", "written when killed")
        let killer = try GitWrapper(#"[ "$cmd" = write-tree ] && { kill -9 $PPID; exit 137; }"#)
        #expect(try laptop.runArguments(["sync"], environment: killer.environment).signal == SIGKILL)
        #expect(try marker() == nil && !uncommitted().isEmpty)

        try succeed(laptop, "sync")
        #expect(try marker() == head() && uncommitted().isEmpty)
        #expect(try remote.log().contains("itsypad: changes left by an interrupted sync"))
    }

    /// Without local commits, `update` fast-forwards (`merge --ff-only`) where the general path
    /// rebases: on a copy of the same clone, the rebase leaves the same commit and files.
    @Test func aFastForwardLeavesWhatTheRebaseWould() throws {
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(desktop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(desktop, "clip", "add", "pulled by a fast-forward")
        try succeed(desktop, "sync")
        let clone = laptop.dataDir + "/sync/git"
        let copy = TemporaryDirectory()
        let copied = try Process.run("/bin/cp", ["-a", clone + "/repository", clone + "/backend", copy.path])
        try #require(copied.status == 0, "\(copied.stderr)")

        let commands = TemporaryDirectory()
        let logger = try GitWrapper(#"echo "$cmd" >>"# + commands.file("log"))
        #expect(
            try GitRemote(url: remote.path, clone: clone, environment: logger.environment.merging(["HOME": commands.path]) { $1 }).update()
                == .current)
        #expect((try FileSystem.read(commands.file("log"))).map { String(decoding: $0, as: UTF8.self) }?.contains("merge\n") == true)

        let copyGit = ["--git-dir=" + copy.path + "/repository", "--work-tree=" + copy.path + "/backend"]
        try BareRepository.git(copyGit + ["fetch", "-q", remote.path, "itsypad"])
        try BareRepository.git(copyGit + ["-c", "user.name=t", "-c", "user.email=t@t", "rebase", "-q", "FETCH_HEAD"])
        let cloneGit = ["--git-dir=" + clone + "/repository", "--work-tree=" + clone + "/backend"]
        #expect(try BareRepository.git(cloneGit + ["rev-parse", "HEAD"]) == BareRepository.git(copyGit + ["rev-parse", "HEAD"]))
        #expect(try BareRepository.git(cloneGit + ["status", "--porcelain"]).isEmpty)
        #expect(try BareRepository.git(copyGit + ["status", "--porcelain"]).isEmpty)
        let files = try Process.run("/usr/bin/diff", ["-r", clone + "/backend", copy.path + "/backend"])
        #expect(files.status == 0, "\(files.stdout)")
    }

    /// Record files are packed without a search for deltas (`records/** -delta` in the clone's
    /// attributes): tabs much alike, sent unencrypted so that git would find deltas between them,
    /// reach the remote's pack whole, and the remote holds them as they were written.
    @Test func recordFilesArePushedWithoutADeltaSearch() throws {
        // The remote keeps the pack it receives as it was sent, where it would unpack a small push.
        try BareRepository.git(["--git-dir=" + remote.path, "config", "receive.unpackLimit", "1"])
        let alike = String(repeating: "a line every one of these tabs holds\n", count: 80)
        let tabs = (0..<20).map { index in
            JSONValue.object([
                ("id", .string(Identifier.make())), ("content", .string(alike + "tab \(index)\n")),
                ("lastModified", .string(Time.iso8601(1_767_400_000_000 + Int64(index)))),
            ])
        }
        let document = JSONValue.object([("format", .string("itsypad-export")), ("version", .integer(1)), ("tabs", .array(tabs))])
        #expect(laptop.inProcess(["import", "-"], stdin: document.serialized()).0 == 0)
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")

        let records = try BareRepository.git(["--git-dir=" + remote.path, "ls-tree", "-r", "itsypad", "records/ScratchTab"])
            .split(separator: "\n").map { String($0.split(separator: " ")[2].prefix(40)) }
        try #require(records.count == 20)
        let packs = try FileSystem.list(remote.path + "/objects/pack").filter { $0.hasSuffix(".idx") }
        try #require(!packs.isEmpty)
        // verify-pack names a delta's base after its size in the pack and offset.
        var deltas: Set<String> = []
        for pack in packs {
            for line in try BareRepository.git(["verify-pack", "-v", remote.path + "/objects/pack/" + pack]).split(separator: "\n") {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                if fields.count == 7 { deltas.insert(String(fields[0])) }
            }
        }
        #expect(deltas.intersection(records).isEmpty, "\(deltas.intersection(records).count) of 20 record files pushed as deltas")
        let clone = laptop.dataDir + "/sync/git/backend"
        let pushed = try remote.clone()
        let files = try Process.run("/usr/bin/diff", ["-r", clone + "/records", pushed + "/records"])
        #expect(files.status == 0, "\(files.stdout)")
    }

    /// `git add` puts the record files' contents straight into one pack (git's bulk check-in), not
    /// one loose object file each, which the push then read and deflated again: after a first push of
    /// 300 tabs the clone holds no loose blob but empty ones, its pack holds them all, and git finds
    /// the clone whole. Before, each was a loose object.
    @Test func newFilesGoStraightIntoAPack() throws {
        FirstPushTests.importing("tabs", count: 300, into: laptop, fields: FirstPushTests.tab)
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        let repository = laptop.dataDir + "/sync/git/repository"
        let loose = try Process.shell(
            "cd \(repository)/objects && ls -d ?? | grep -v pack | while read d; do ls $d | sed \"s/^/$d/\"; done"
                + " | git --git-dir=\(repository) cat-file --batch-check='%(objecttype) %(objectsize)'")
        try #require(loose.status == 0, "\(loose.stderr)")
        let blobs = loose.stdout.split(separator: "\n").filter { $0.hasPrefix("blob ") && $0 != "blob 0" }
        #expect(blobs.isEmpty, "\(blobs.count) loose blobs after the first push")
        let counted = try BareRepository.git(["--git-dir=" + repository, "count-objects", "-v"])
        let packed = counted.split(separator: "\n").first { $0.hasPrefix("in-pack: ") }.flatMap { Int($0.dropFirst(9)) } ?? 0
        #expect(packed >= 300, "\(counted)")
        try BareRepository.git(["--git-dir=" + repository, "fsck", "--no-progress", "--no-dangling"])
        try succeed(desktop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        #expect(try succeed(desktop, "tab", "ls").split(separator: "\n").count == 300)
    }

    /// Git runs as background work (nice 10, or the sync's own when higher; the threads and programs
    /// it starts inherit it), so that a command the user runs meanwhile gets a processor first; git
    /// never holds the data directory's lock, so nothing the user runs waits for it. `sync status`
    /// counts the commits not pushed at the user's own priority: the user waits for that. Before,
    /// git ran at the sync's priority.
    @Test func gitRunsInTheBackground() throws {
        let programs = TemporaryDirectory()
        let log = programs.file("log")
        let wrapper = try GitWrapper(#"echo "$cmd $(cut -d' ' -f19 /proc/$$/stat)" >> "# + log)
        func run(_ arguments: String...) throws -> [(program: String, nice: Int32)] {
            try? FileSystem.remove(log)
            let result = try laptop.runArguments(arguments, environment: wrapper.environment)
            try #require(result.status == 0, "\(arguments.joined(separator: " ")): exit \(result.status): \(result.stderr)")
            return (programs.read("log") ?? "").split(separator: "\n").map { line in
                (String(line.split(separator: " ").first ?? ""), Int32(line.split(separator: " ").last ?? "") ?? -99)
            }
        }
        errno = 0
        let own = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        try #require(errno == 0)
        FirstPushTests.importing("tabs", count: 20, into: laptop, fields: FirstPushTests.tab)
        let enabled = try run("sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(laptop, "tab", "new", "--name", "later", "a tab to send")
        let synced = try run("sync")
        for (command, ran) in [("sync enable", enabled), ("sync", synced)] {
            #expect(ran.contains { $0.program == "add" } && ran.contains { $0.program == "push" }, "\(command) ran \(ran)")
            let foreground = ran.filter { $0.nice != max(own, Subprocess.backgroundNice) }
            #expect(foreground.isEmpty, "\(command): \(foreground.count) of \(ran.count) git programs at another priority: \(foreground)")
        }
        let status = try run("sync", "status")
        #expect(!status.isEmpty && status.allSatisfy { $0.nice == own }, "sync status ran \(status)")
    }

    @Test func aPushRefusedBecauseTheRemoteMovedIsRetriedAfterAnotherFetch() throws {
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(laptop, "clip", "add", "sent on the second try")
        // The first push finds someone else's commit (a file beside the backend) on the remote.
        let checkout = try remote.clone()
        let mover = try GitWrapper(
            """
            if [ "$cmd" = push ] && [ ! -e '\(checkout)/moved' ]; then
              touch '\(checkout)/moved'; /usr/bin/git -C '\(checkout)' add moved; /usr/bin/git -C '\(checkout)' commit -qm moved
              /usr/bin/git -C '\(checkout)' push -q origin itsypad
            fi
            """)
        try succeed(laptop, "sync", environment: mover.environment)
        let subjects = try remote.log()
        #expect(subjects.contains("moved") && subjects.first?.hasPrefix("itsypad sync on ") == true, "\(subjects)")
        try succeed(desktop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        #expect(try clips(desktop).contains("sent on the second try"))
    }

    @Test func aRemoteThatKeepsMovingEndsWithSeventyFiveAndKeepsTheCommit() throws {
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(laptop, "clip", "add", "waits in the clone")
        let checkout = try remote.clone()
        let mover = try GitWrapper(
            """
            if [ "$cmd" = push ]; then
              date +%N >> '\(checkout)/moved'; /usr/bin/git -C '\(checkout)' add moved; /usr/bin/git -C '\(checkout)' commit -qm moved
              /usr/bin/git -C '\(checkout)' push -q origin itsypad
            fi
            """)
        let result = try laptop.runArguments(["sync"], environment: mover.environment)
        #expect(result.status == 75, "\(result.stderr)")
        #expect(result.stderr.contains("kept changing"), "\(result.stderr)")
        #expect(try succeed(laptop, "sync", "status").contains("not pushed yet"))
        try succeed(laptop, "sync")
        try succeed(desktop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        #expect(try clips(desktop).contains("waits in the clone"))
    }

    /// Someone force-pushes an older state: the laptop, whose history holds that tip, pushes its
    /// own again; the desktop, whose last sync is no longer below the new tip, keeps its commits
    /// under refs/itsypad/kept and sends everything again.
    @Test func aRewrittenRemoteIsTreatedAsAReplacedBackend() throws {
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(desktop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        let start = try BareRepository.git(["--git-dir=" + remote.path, "rev-parse", "itsypad"]).split(separator: "\n")[0]
        try succeed(laptop, "clip", "add", "from the laptop")
        try succeed(laptop, "sync")
        try succeed(desktop, "clip", "add", "from the desktop")
        try succeed(desktop, "sync")
        try BareRepository.git(["--git-dir=" + remote.path, "update-ref", "refs/heads/itsypad", String(start)])
        try succeed(laptop, "clip", "add", "after the rewrite")

        try succeed(laptop, "sync")
        try succeed(desktop, "sync")
        try succeed(laptop, "sync")
        for device in [laptop, desktop] {
            let listed = try clips(device)
            #expect(["from the laptop", "from the desktop", "after the rewrite"].allSatisfy(listed.contains), "\(listed)")
        }
        let kept = try BareRepository.git(["--git-dir=" + desktop.dataDir + "/sync/git/repository", "for-each-ref", "refs/itsypad/kept"])
        #expect(!kept.isEmpty)
    }

    /// The remote replaced by a new repository with another device's new backend in it.
    @Test func aRemoteReplacedByAnotherBackendGetsEverythingSentAgain() throws {
        try succeed(laptop, "clip", "add", "from the laptop")
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        _ = try Process.run("/bin/rm", ["-rf", remote.path])
        try BareRepository.git(["init", "-q", "--bare", remote.path])
        try succeed(desktop, "clip", "add", "from the desktop")
        try succeed(desktop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(laptop, "sync")
        try succeed(desktop, "sync")
        for device in [laptop, desktop] {
            let listed = try clips(device)
            #expect(listed.contains("from the laptop") && listed.contains("from the desktop"), "\(listed)")
        }
    }

    func keptRefs(_ device: Device) throws -> String {
        try BareRepository.git(["--git-dir=" + device.dataDir + "/sync/git/repository", "for-each-ref", "refs/itsypad/kept"])
    }

    /// A compaction squashes the history older than the previous compaction point. The desktop
    /// synced after that point: it moves onto the new history as if nothing happened. The third
    /// device last synced before it: it takes the rewrite for a replaced backend, keeps its
    /// commits aside and sends everything again. Nothing is lost either way.
    @Test func compactionSquashesTheHistoryBeforeThePreviousCompaction() throws {
        let third = Device()
        for device in [laptop, desktop, third] { try succeed(device, "sync", "enable", "git:" + remote.path, "--no-encrypt") }
        try succeed(laptop, "clip", "add", "before the first compaction")
        try succeed(laptop, "sync")
        try succeed(laptop, "sync", "compact")
        #expect(try remote.log().count > 2, "the first compaction has no earlier point to squash at")
        for round in 0..<3 {
            try succeed(laptop, "clip", "add", "between compactions \(round)")
            try succeed(laptop, "sync")
        }
        try succeed(desktop, "sync")
        try succeed(desktop, "clip", "add", "added on the desktop after its last sync")

        try succeed(laptop, "sync", "compact")
        let after = try remote.log()
        // The second compaction, the four syncs since the first (the laptop's three and the desktop's, which
        // records its device's progress in format 2), and the history through the first as one commit.
        #expect(after.count == 6 && after.first?.hasPrefix(GitRemote.compactionSubject) == true, "\(after)")
        #expect(after.last?.hasPrefix("itsypad: the history through the compaction point ") == true, "\(after)")
        try succeed(desktop, "sync")
        #expect(try keptRefs(desktop).isEmpty, "the desktop's last sync is in the new history: nothing to set aside")
        try succeed(third, "clip", "add", "queued on the third device")
        try succeed(third, "sync")
        #expect(try !keptRefs(third).isEmpty)
        try succeed(laptop, "sync")
        try succeed(desktop, "sync")
        let expected =
            ["before the first compaction", "added on the desktop after its last sync", "queued on the third device"]
            + (0..<3).map { "between compactions \($0)" }
        for device in [laptop, desktop, third] {
            let listed = try clips(device)
            #expect(expected.allSatisfy(listed.contains), "\(listed)")
        }
    }

    @Test func aCompactionWhoseRemoteMovedMeanwhileSquashesNothing() throws {
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(desktop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(laptop, "clip", "add", "before compaction")
        try succeed(laptop, "sync")
        try succeed(laptop, "sync", "compact")
        try succeed(laptop, "clip", "add", "after the first compaction")
        try succeed(laptop, "sync")
        // The desktop pushes between the laptop's compaction commit and its squash.
        let mover = try GitWrapper(
            """
            for a in "$@"; do case "$a" in --force-with-lease*) ITSYPAD_DATA_DIR='\(desktop.dataDir)' '\(Process.itsypad)' clip add 'pushed meanwhile' >/dev/null; \
              ITSYPAD_DATA_DIR='\(desktop.dataDir)' PATH=/usr/bin:/bin '\(Process.itsypad)' sync;; esac; done
            """)
        let result = try laptop.runArguments(["sync", "compact"], environment: mover.environment)
        #expect(result.status == 75, "\(result.stderr)")
        #expect(result.stderr.contains("squashed by the next compaction"), "\(result.stderr)")
        #expect(try remote.log().contains { $0.hasPrefix("itsypad sync on ") && $0.contains("pushed 1") })
        try succeed(laptop, "sync")
        #expect(try clips(laptop).contains("pushed meanwhile"))
    }

    /// A peer's push sends no notification: the watcher polls every --interval seconds.
    @Test func syncWatchPollsAGitRemote() throws {
        try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        try succeed(desktop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        let watch = try RunningWatcher(laptop, ["--interval", "1"])
        #expect(eventually { watch.stderr.contains("synced:") }, "\(watch.stderr)")
        try succeed(desktop, "clip", "add", "pushed by the desktop")
        try succeed(desktop, "sync")
        #expect(eventually(within: 30) { try clips(laptop).contains("pushed by the desktop") }, "\(watch.stderr)")
        try succeed(laptop, "clip", "add", "added while watching")
        #expect(eventually(within: 30) { try succeed(desktop, "sync") != "-" && clips(desktop).contains("added while watching") })
        #expect(watch.stop(SIGTERM) == 0, "\(watch.stderr)")
        #expect(watch.stderr.contains("watching \(laptop.dataDir) and git:\(remote.path)"), "\(watch.stderr)")
    }

    /// Programs (`execve`) that a run of `arguments` on `device` started while it held the data
    /// directory's lock, from `strace -f -y`: each named by its command line. A hold runs from the
    /// lock's `flock(LOCK_EX)` that succeeded to its `LOCK_UN`, in the itsypad process.
    static func programsRunHoldingTheDataLock(_ device: Device, _ arguments: [String]) throws -> (programs: [String], holds: Int) {
        let run = try programsRun(device, arguments)
        return (run.holdingTheDataLock, run.holds)
    }

    /// The programs a run of `arguments` started (`strace -f` of flock and execve): those started
    /// while the itsypad process held the data directory's lock, those started while it did not
    /// hold the sync lock (`sync/lock`), and how many times it took the data directory's lock.
    static func programsRun(
        _ device: Device, _ arguments: [String]
    ) throws -> (
        holdingTheDataLock: [String], withoutTheSyncLock: [String], holds: Int
    ) {
        let dataLock = "<\(device.dataDir)/lock>", syncLock = "<\(device.dataDir)/sync/lock>"
        var itsypad: Substring?, held = false, syncHeld = false, holds = 0
        var run: (holdingTheDataLock: [String], withoutTheSyncLock: [String], holds: Int) = ([], [], 0)
        for line in try FirstPushTests.traced(device, arguments, strace: ["-y", "-s", "300", "-e", "trace=flock,execve"]) {
            let pid = line.prefix { $0 != " " }
            if itsypad == nil { itsypad = pid }
            if pid == itsypad, line.contains("flock("), line.contains(dataLock) || line.contains(syncLock) {
                let taken = line.contains("LOCK_EX") && line.hasSuffix("= 0")
                guard taken || line.contains("LOCK_UN") else { continue }
                if line.contains(syncLock) {
                    syncHeld = taken
                } else {
                    held = taken
                    if taken { holds += 1 }
                }
            } else if pid != itsypad, line.contains("execve(") {
                // `execve("/usr/bin/git", ["/usr/bin/git", "--git-dir=…", "--work-tree=…", "add", "-A"], …`: git add -A.
                let words = line.drop { $0 != "[" }.prefix { $0 != "]" }.split(separator: ", ").map {
                    $0.trimmingPrefix("[").filter { $0 != "\"" }
                }
                let program = words.filter { !$0.hasPrefix("--git-dir=") && !$0.hasPrefix("--work-tree=") }.joined(separator: " ")
                if held { run.holdingTheDataLock.append(program) }
                if !syncHeld { run.withoutTheSyncLock.append(program) }
            }
        }
        run.holds = holds
        return run
    }

    /// A `clip add` during a first push to git waits for the engine's short steps only: git runs
    /// with the data directory's lock released (the mirror is the sync's, held by the sync lock),
    /// in `sync enable` as in every sync, and `sync status` counts the commits not pushed without
    /// it. Before, `sync enable git:` ran git init, eight git config, and the checkpoint's add and
    /// commit holding it (two holds of 0.3 and 0.6 s at load 10), `sync status` rev-parse and rev-list.
    /// A key rotation likewise (it ran `git reset --hard` holding the lock, to adopt the new zone),
    /// and it is one sync from its first program to its last: each runs holding the sync lock, so
    /// that no sync started meanwhile works in the same clone (before, the new zone was sent and
    /// adopted with the sync lock let go).
    @Test(.needs(["strace"]), arguments: [["sync", "enable"], ["sync"], ["sync", "status"], ["sync", "key", "rotate"]])
    func gitNeverRunsHoldingTheDataDirectorysLock(_ command: [String]) throws {
        FirstPushTests.importing("tabs", count: 300, into: laptop, fields: FirstPushTests.tab)
        let url = "git:" + remote.path
        if command != ["sync", "enable"] {
            try succeed(laptop, "sync", "enable", url)
            try succeed(laptop, "tab", "new", "--name", "later", "a tab to send")
        }
        let rotating = command == ["sync", "key", "rotate"]
        let key = rotating ? try succeed(laptop, "sync", "key", "show") : ""
        let run = try Self.programsRun(laptop, command + (command == ["sync", "enable"] ? [url] : []))
        #expect(run.holds > 0, "the trace saw \(run.holds) holds of the data directory's lock")
        #expect(
            run.holdingTheDataLock.isEmpty,
            "\(run.holdingTheDataLock.count) programs run holding the data directory's lock: \(run.holdingTheDataLock)")
        if command != ["sync", "status"] {
            #expect(try remote.log().count >= 1)
            #expect(
                run.withoutTheSyncLock.isEmpty,
                "\(run.withoutTheSyncLock.count) programs run without the sync lock: \(run.withoutTheSyncLock)")
        }
        guard rotating else { return }
        #expect(try succeed(laptop, "sync", "key", "show") != key, "the key was not rotated")
        try succeed(laptop, "sync")
        #expect(try succeed(laptop, "tab", "ls").contains("later"))
    }

    /// Format 2: each device writes only its own files, so two devices' commits rebase onto each
    /// other; plain, and encrypted (the default: format 3 in format 2's layout).
    @Test(arguments: [false, true])
    func concurrentPushesFromTwoDevicesConverge(encrypted: Bool) throws {
        if encrypted {
            try succeed(laptop, "sync", "enable", "git:" + remote.path)
            let key = try succeed(laptop, "sync", "key", "show")
            let joined = try desktop.runArguments(["sync", "enable", "git:" + remote.path, "--key", "-"], stdin: Array(key.utf8))
            try #require(joined.status == 0, "\(joined.stderr)")
            let zone = try BareRepository.git(["--git-dir=" + remote.path, "show", "itsypad:zone.json"])
            let members = try JSONValue.parse(Array(zone.utf8))
            #expect(members["layout"]?.int64Value == 4 && members["encryption"] == .string(ZoneDocument.encryptionName), "\(zone)")
        } else {
            try succeed(laptop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
            try succeed(desktop, "sync", "enable", "git:" + remote.path, "--no-encrypt")
        }
        for round in 0..<5 {
            try succeed(laptop, "clip", "add", "laptop \(round)")
            try succeed(desktop, "clip", "add", "desktop \(round)")
            let a = try Process.spawn(
                Process.itsypad, ["sync"], stdin: "/dev/null", stdout: "/dev/null", stderr: "/dev/null",
                environment: Process.baseEnvironment.merging(["ITSYPAD_DATA_DIR": laptop.dataDir]) { $1 })
            try succeed(desktop, "sync")
            var status: Int32 = 0
            while waitpid(a, &status, 0) < 0 && errno == EINTR {}
        }
        for _ in 0..<2 { for device in [laptop, desktop] { try succeed(device, "sync") } }
        for device in [laptop, desktop] {
            let listed = try clips(device)
            #expect((0..<5).allSatisfy { listed.contains("laptop \($0)") && listed.contains("desktop \($0)") }, "\(listed)")
        }
        guard encrypted else { return }
        let objects = try BareRepository.git(["--git-dir=" + remote.path, "cat-file", "--batch-all-objects", "--batch"])
        #expect(objects.contains("zone.json"), "the scan reads the repository's objects")
        #expect(!objects.contains("laptop 0") && !objects.contains("desktop 4"), "typed text reached the remote in the clear")
    }
}

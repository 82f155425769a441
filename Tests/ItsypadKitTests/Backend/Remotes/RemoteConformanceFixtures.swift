import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

/// A remote of one registered kind, on this machine, as the conformance suite drives it.
protocol RemoteFixture: AnyObject {
    /// How `sync enable` names the remote.
    var location: String { get }
    /// What a device needs in its environment to reach `location` (credentials, a time-out).
    var environment: [String: String] { get }
    /// A location of this kind on 127.0.0.1 where nothing answers.
    var unreachable: String { get }
    /// Whether a copy of a data directory syncing through this remote is told and takes a new
    /// device id (as with a replicated folder); either way nothing may be lost.
    var tellsACopiedDataDirectory: Bool { get }
    /// The same remote reached with credentials it refuses: the location and the environment.
    func refusingCredentials() throws -> (location: String, environment: [String: String])
    /// An environment in which the sync is killed with -9 in the middle of sending to the remote.
    func killedMidSend() throws -> [String: String]
    /// Changes the backend on the remote directly, as a writer without itsypad or the key would:
    /// `edit` gets a directory holding the backend's files and changes them there.
    func editBackend(_ edit: (String) throws -> Void) throws
}

/// Each registered remote kind's fixture: adding a remote is one entry here (and the suite then
/// requires it, see `everyRegisteredRemoteHasAFixture`).
enum RemoteFixtures {
    static let all: [String: @Sendable () throws -> any RemoteFixture] = [
        "git": { try GitFixture() },
        "rclone": { try RcloneFixture() },
    ]

    /// The programs the fixtures run (see `ExternalTool`).
    static let tools: [String] = GitFixture.tools + RcloneFixture.tools

    static var schemes: [String] { all.keys.sorted() }

    static func make(_ scheme: String) throws -> any RemoteFixture {
        let make = try #require(all[scheme], "no fixture for \(scheme)")
        return try make()
    }
}

/// A bare repository on the local disk; refused credentials are a stranger's key to an `sshd` on 127.0.0.1.
final class GitFixture: RemoteFixture {
    static let tools = ["git", "sshd", "ssh-keygen"]
    let repository: BareRepository
    /// Kept as long as the fixture: the test uses them after they were handed out.
    private var servers: [LoopbackSSHServer] = []
    private var wrappers: [GitWrapper] = []

    init() throws {
        repository = try BareRepository()
    }

    var location: String { "git:" + repository.path }
    var environment: [String: String] { [:] }
    var unreachable: String { "git:ssh://git@127.0.0.1:1/nothing.git" }
    /// Told by the mirror's identity (its working tree is another directory), as for every remote.
    var tellsACopiedDataDirectory: Bool { true }

    func refusingCredentials() throws -> (location: String, environment: [String: String]) {
        let server = try LoopbackSSHServer()
        servers.append(server)
        return (server.url(repository.path), server.environment(key: server.strangerKey))
    }

    func killedMidSend() throws -> [String: String] {
        // git's pack reaches the remote, then itsypad dies before it hears.
        let wrapper = try GitWrapper(#"[ "$cmd" = push ] && { /usr/bin/git "$@"; kill -9 $PPID; exit 137; }"#)
        wrappers.append(wrapper)
        return wrapper.environment
    }

    func editBackend(_ edit: (String) throws -> Void) throws {
        let clone = try repository.clone()
        try edit(clone)
        try BareRepository.git(["add", "-A"], in: clone)
        try BareRepository.git(["commit", "-q", "-m", "a keyless writer"], in: clone)
        try BareRepository.git(["push", "-q", "origin", "itsypad"], in: clone)
    }
}

/// `rclone serve webdav` on 127.0.0.1 with a password (see `RcloneServer`); refused credentials
/// are a wrong password, and the unreachable remote a second section of the same rclone.conf
/// whose URL is a port where nothing listens.
final class RcloneFixture: RemoteFixture {
    static let tools = RcloneServer.Kind.rcloneWebDAV.tools
    let server: RcloneServer
    let environment: [String: String]
    /// Kept as long as the fixture: the test uses its rclone after it was handed out.
    private let wrapper = TemporaryDirectory()

    init() throws {
        server = try RcloneServer(.rcloneWebDAV)
        var environment = try server.environment()
        let configuration = try #require(environment["RCLONE_CONFIG"])
        let server = try #require(try FileSystem.read(configuration))
        let down = "[down]\ntype = webdav\nurl = http://127.0.0.1:1/\n"
        wrapper.write("rclone.conf", String(decoding: server, as: UTF8.self) + down, mode: 0o600)
        environment["RCLONE_CONFIG"] = wrapper.file("rclone.conf")
        self.environment = environment
    }

    var location: String { server.location }
    var unreachable: String { "rclone:down:itsypad" }
    var tellsACopiedDataDirectory: Bool { true }

    func refusingCredentials() throws -> (location: String, environment: [String: String]) {
        (server.location, try server.environment(rightCredentials: false))
    }

    func killedMidSend() throws -> [String: String] {
        // A file of the upload (a PUT to the server, then rclone's "Copied") reaches the server, then
        // itsypad dies before it hears; rclone's log goes on to itsypad only where it says where it serves.
        wrapper.write(
            "rclone",
            """
            #!/bin/sh
            itsypad=$PPID
            /usr/bin/rclone "$@" --log-level DEBUG --dump headers 2>&1 | while IFS= read -r line; do
                case "$line" in
                *"Serving remote control"*) printf '%s\\n' "$line" >&2 ;;
                *"PUT /"*) put=1 ;;
                *": Copied ("*) [ -n "$put" ] && { kill -9 "$itsypad"; exit 137; } ;;
                esac
            done
            """, mode: 0o755)
        return ["PATH": wrapper.path + ":/usr/bin:/bin"]
    }

    func editBackend(_ edit: (String) throws -> Void) throws {
        // The server keeps no directory cache: what changes on its disk is what it serves.
        try edit(server.backend)
    }
}

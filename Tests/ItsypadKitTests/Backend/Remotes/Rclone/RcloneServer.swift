@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A server on 127.0.0.1 that rclone reaches, with its files in a temporary directory: started
/// for a test, stopped (and started again on the same port) when a test asks, killed with it.
/// The devices reach it as `rclone:server:itsypad` through an rclone.conf of its own (RCLONE_CONFIG).
final class RcloneServer {
    enum Kind: String, CaseIterable, Sendable {
        /// `rclone serve webdav`, with a user and password.
        case rcloneWebDAV
        /// `rclone serve sftp`, with a user and password.
        case rcloneSFTP
        /// A real sshd (see `LoopbackSSHServer`) through rclone's sftp backend, with a key.
        case sshd
        /// Apache's mod_dav, which is not rclone, with basic authentication.
        case apacheWebDAV

        /// The programs a server of this kind and its devices run (see `ExternalTool`).
        var tools: [String] {
            switch self {
            case .rcloneWebDAV, .rcloneSFTP: ["rclone"]
            case .sshd: ["rclone", "sshd", "ssh-keygen"]
            case .apacheWebDAV: ["rclone", "apache2", "htpasswd"]
            }
        }
    }

    static let apache = "/usr/sbin/apache2"
    static let user = "itsypad"
    static let password = "correct horse"

    let kind: Kind
    let directory = TemporaryDirectory()
    /// The folder the server serves.
    var served: String { directory.file("served") }
    /// The backend's files, as the server stores them.
    var backend: String { served + "/itsypad" }
    /// Where the devices sync: sshd serves the whole file system, the others `served` as their root.
    var location: String { "rclone:server:" + (kind == .sshd ? backend : "itsypad") }
    private(set) var port = 0
    private var pid: pid_t = 0
    private var ssh: LoopbackSSHServer?

    init(_ kind: Kind) throws {
        self.kind = kind
        mkdir(served, 0o700)
        if kind == .apacheWebDAV {
            // Apache's workers run as www-data: they must reach and write the served folder.
            chmod(directory.path, 0o755)
            chmod(served, 0o777)
            mkdir(directory.file("locks"), 0o777)
            chmod(directory.file("locks"), 0o777)
            _ = try Process.run("/usr/bin/htpasswd", ["-bc", directory.file("users"), RcloneServer.user, RcloneServer.password])
        }
        if kind == .sshd { ssh = try LoopbackSSHServer() }
        try start()
    }

    deinit { stop() }

    /// What the devices run with: the server's rclone.conf, with the right credentials or wrong ones.
    func environment(rightCredentials: Bool = true) throws -> [String: String] {
        let name = rightCredentials ? "rclone.conf" : "wrong.conf"
        let secret = rightCredentials ? RcloneServer.password : "wrong password"
        let obscured = Text.trim(try Process.run("rclone", ["obscure", secret]).stdout)
        var lines = ["[server]"]
        switch kind {
        case .rcloneWebDAV, .apacheWebDAV:
            lines += ["type = webdav", "url = http://127.0.0.1:\(port)/", "user = \(RcloneServer.user)", "pass = \(obscured)"]
        case .rcloneSFTP:
            lines += ["type = sftp", "host = 127.0.0.1", "port = \(port)", "user = \(RcloneServer.user)", "pass = \(obscured)"]
        case .sshd:
            let ssh = ssh!
            lines += [
                "type = sftp", "host = 127.0.0.1", "port = \(ssh.port)", "user = \(String(cString: getpwuid(geteuid()).pointee.pw_name))",
                "key_file = \(rightCredentials ? ssh.clientKey : ssh.strangerKey)", "shell_type = none",
            ]
        }
        directory.write(name, lines.joined(separator: "\n") + "\n", mode: 0o600)
        return ["RCLONE_CONFIG": directory.file(name), "ITSYPAD_RCLONE_TIMEOUT": "60"]
    }

    /// Starts the server (on the port it had, if it ran before) and waits until it answers.
    func start() throws {
        if let ssh {
            port = ssh.port
            return
        }
        var lastError = ""
        for _ in 0..<5 {
            // Below Linux's ephemeral ports (32768 and up): a client's connection elsewhere never holds the
            // port while the server is stopped, so it can start again on it.
            let port = self.port != 0 ? self.port : Int.random(in: 10_000..<32_768)
            let (program, arguments) = command(port: port)
            let pid = try Process.spawn(
                program, arguments, stdin: "/dev/null", stdout: directory.file("server.out"), stderr: directory.file("server.log"),
                environment: ["PATH": "/usr/bin:/bin", "HOME": directory.path])
            if LoopbackSSHServer.listens(pid, on: port, tries: 200) {
                self.port = port
                self.pid = pid
                return
            }
            lastError = (directory.read("server.log") ?? "") + (directory.read("error.log") ?? "")
        }
        throw ItsypadError.failure("the \(kind) server did not start: \(lastError)")
    }

    /// Stops the server and waits until it is gone (its port refuses connections): SIGTERM, then
    /// SIGKILL when it is still there after 10 s, so that a stop never hangs.
    func stop() {
        guard pid != 0 else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        var exited = false
        for _ in 0..<200 {
            if waitpid(pid, &status, WNOHANG) == pid {
                exited = true
                break
            }
            usleep(50_000)
        }
        if !exited {
            kill(pid, SIGKILL)
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        pid = 0
        // Apache's workers are its children: they leave with it, the port closing when the last does.
        for _ in 0..<200 where LoopbackSSHServer.isListening(port) { usleep(50_000) }
    }

    private func command(port: Int) -> (String, [String]) {
        // No directory cache: a keyless writer changes the served files behind the server's back.
        let credentials = ["--user", RcloneServer.user, "--pass", RcloneServer.password, "--dir-cache-time", "0s"]
        switch kind {
        case .rcloneWebDAV: return ("/usr/bin/rclone", ["serve", "webdav", served, "--addr", "127.0.0.1:\(port)"] + credentials)
        case .rcloneSFTP:
            return ("/usr/bin/rclone", ["serve", "sftp", served, "--addr", "127.0.0.1:\(port)", "--config", "/dev/null"] + credentials)
        case .apacheWebDAV:
            writeApacheConfiguration(port: port)
            return (RcloneServer.apache, ["-f", directory.file("httpd.conf"), "-DFOREGROUND"])
        case .sshd: preconditionFailure("sshd is LoopbackSSHServer's")
        }
    }

    private func writeApacheConfiguration(port: Int) {
        let modules = ["mpm_event", "authz_core", "authz_user", "authn_core", "authn_file", "auth_basic", "dav", "dav_fs"].map {
            "LoadModule \($0)_module /usr/lib/apache2/modules/mod_\($0).so"
        }
        let runAs = geteuid() == 0 ? ["User www-data", "Group www-data"] : []
        let lines =
            [
                "ServerRoot \(directory.path)", "Listen 127.0.0.1:\(port)", "ServerName 127.0.0.1",
                "PidFile \(directory.file("httpd.pid"))", "ErrorLog \(directory.file("error.log"))",
            ] + runAs + modules + [
                "DavLockDB \(directory.file("locks"))/DavLock", "DocumentRoot \(served)", "<Directory \(served)>", "  Dav On",
                "  AuthType Basic", "  AuthName itsypad", "  AuthUserFile \(directory.file("users"))", "  Require valid-user",
                "</Directory>",
            ]
        directory.write("httpd.conf", lines.joined(separator: "\n") + "\n")
    }
}

import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// An `sshd` of its own on 127.0.0.1 (a random port, a throwaway host key and client key, its
/// own sshd_config in a temporary directory), serving the bare repositories of this user, and
/// its files over sftp (for rclone).
final class LoopbackSSHServer {
    static let sshd = "/usr/sbin/sshd"

    let directory = TemporaryDirectory()
    let port: Int
    private let pid: pid_t
    var clientKey: String { directory.file("client") }
    var strangerKey: String { directory.file("stranger") }

    init() throws {
        let user = String(cString: getpwuid(geteuid()).pointee.pw_name)
        for name in ["host", "client", "stranger"] {
            _ = try Process.run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", directory.file(name)])
        }
        _ = try Process.shell("cp '\(directory.file("client.pub"))' '\(directory.file("authorized_keys"))'")
        if geteuid() == 0 { mkdir("/run/sshd", 0o755) }
        var lastError = ""
        for _ in 0..<5 {
            let port = Int.random(in: 20_000..<60_000)
            directory.write(
                "sshd_config",
                """
                ListenAddress 127.0.0.1
                Port \(port)
                HostKey \(directory.file("host"))
                AuthorizedKeysFile \(directory.file("authorized_keys"))
                PidFile none
                StrictModes no
                UsePAM no
                PasswordAuthentication no
                KbdInteractiveAuthentication no
                PubkeyAuthentication yes
                PermitRootLogin prohibit-password
                AllowUsers \(user)
                Subsystem sftp internal-sftp
                """)
            let pid = try Process.spawn(
                LoopbackSSHServer.sshd, ["-D", "-e", "-f", directory.file("sshd_config")], stdin: "/dev/null",
                stdout: directory.file("sshd.out"), stderr: directory.file("sshd.log"), environment: nil)
            if LoopbackSSHServer.listens(pid, on: port, tries: 100) {
                self.port = port
                self.pid = pid
                return
            }
            lastError = directory.read("sshd.log") ?? ""
        }
        throw ItsypadError.failure("sshd did not start: \(lastError)")
    }

    deinit {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    /// Whether the server `pid` listens on `port` within `tries` checks 50 ms apart; when it
    /// does not (it exited, or never answered), it is killed and reaped.
    static func listens(_ pid: pid_t, on port: Int, tries: Int) -> Bool {
        for _ in 0..<tries {
            if isListening(port) { return true }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { return false }
            usleep(50_000)
        }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return false
    }

    static func isListening(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// What git needs to reach this server with `key`: the host is new to it, so not checked.
    func environment(key: String) -> [String: String] {
        [
            "GIT_SSH_COMMAND":
                "ssh -i \(key) -o IdentitiesOnly=yes -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -o LogLevel=ERROR"
        ]
    }

    func url(_ path: String) -> String {
        "git:ssh://\(String(cString: getpwuid(geteuid()).pointee.pw_name))@127.0.0.1:\(port)\(path)"
    }
}

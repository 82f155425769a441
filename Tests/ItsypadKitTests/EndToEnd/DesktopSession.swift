import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

extension Tag {
    /// Runs a real compositor or X server (a headless sway, an Xvfb): seconds per test.
    @Tag static var desktop: Self
}

/// A desktop of its own for a test: a headless sway (run as nobody, since sway
/// refuses root) or an Xvfb, and the environment its clients need. Stopped, with
/// every client still connected to it, when the value goes away.
final class DesktopSession {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case wayland, x11
        var testDescription: String { rawValue }
        /// The programs a session of this kind and its tests run.
        var tools: [String] { self == .wayland ? ["sway", "setpriv", "wl-copy", "wl-paste"] : ["Xvfb", "xclip"] }
    }

    let kind: Kind
    /// WAYLAND_DISPLAY (an absolute path) and XDG_RUNTIME_DIR, or DISPLAY.
    let environment: [String: String]
    private let server: pid_t
    private var stopped = false
    private let directory = TemporaryDirectory()
    /// The compositor's own XDG_RUNTIME_DIR, owned by nobody.
    private let runtime: String?
    /// The MIT-MAGIC-COOKIE-1 (hex) an Xvfb listening on TCP requires of every client.
    let cookie = (0..<16).map { _ in
        let byte = UInt8.random(in: 0...255)
        return (byte < 16 ? "0" : "") + String(byte, radix: 16)
    }.joined()

    /// With `overTCP`, an Xvfb also listens on TCP (port 6000 + its number) and requires `cookie`.
    init(_ kind: Kind, overTCP: Bool = false) throws {
        self.kind = kind
        let directory = self.directory
        let log = directory.file("server.log")
        switch kind {
        case .wayland:
            var template = Array("/tmp/itsypad-sway-XXXXXX".utf8CString)
            try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) } != nil)
            let runtime = String(cString: template)
            self.runtime = runtime
            FileSystem.writeText(runtime + "/config", "xwayland disable\n")
            #expect(chown(runtime, 65534, 65534) == 0 && chmod(runtime, 0o700) == 0)
            let nobody = [
                "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": runtime, "XDG_RUNTIME_DIR": runtime, "WLR_BACKENDS": "headless",
                "WLR_RENDERER": "pixman", "WLR_LIBINPUT_NO_DEVICES": "1",
            ]
            server = try Process.spawn(
                "setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "sway", "-c", runtime + "/config"],
                stdin: "/dev/null", stdout: log, stderr: log, environment: nobody)
            var socket: String?
            _ = eventually {
                socket = try FileSystem.list(runtime).first { $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") }
                return socket != nil
            }
            let clients = directory.file("runtime")
            try FileSystem.makeDirectory(clients)
            environment = ["WAYLAND_DISPLAY": runtime + "/" + (socket ?? "wayland-missing"), "XDG_RUNTIME_DIR": clients]
            try #require(socket != nil, "sway did not start: \(directory.read("server.log") ?? "")")
        case .x11:
            runtime = nil
            let number = directory.file("display")
            var listening = ["-nolisten", "tcp"]
            if overTCP {
                // The server takes every cookie of its file, whatever display the entry names.
                let cookies = directory.file("server.xauth")
                let added = try Process.run("xauth", ["-f", cookies, "add", ":0", "MIT-MAGIC-COOKIE-1", cookie])
                try #require(added.status == 0, "\(added.stderr)")
                listening = ["-listen", "tcp", "-auth", cookies]
            }
            server = try Process.spawn(
                "Xvfb", ["-displayfd", "1"] + listening + ["-screen", "0", "640x480x24"], stdin: "/dev/null", stdout: number,
                stderr: log, environment: nil)
            _ = eventually { directory.read("display")?.hasSuffix("\n") == true }
            let display = String((directory.read("display") ?? "").filter(\.isNumber))
            environment = ["DISPLAY": ":" + display]
            try #require(!display.isEmpty, "Xvfb did not start: \(directory.read("server.log") ?? "")")
        }
    }

    /// A path in the session's own directory.
    func file(_ name: String) -> String { directory.file(name) }

    /// The compositor or X server goes away, as when the session ends.
    func stop() {
        guard !stopped else { return }
        stopped = true
        kill(server, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<500 where waitpid(server, &status, WNOHANG) == 0 { usleep(10_000) }
        kill(server, SIGKILL)
        while waitpid(server, &status, 0) < 0 && errno == EINTR {}
    }

    deinit {
        for pid in offers {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        stop()
        if let runtime { _ = try? Process.run("/bin/rm", ["-rf", runtime]) }
    }

    /// Runs a client of this desktop (wl-copy, xclip …) to its end, at most 20 s.
    @discardableResult
    func client(_ program: String, _ arguments: [String], stdin: [UInt8]? = nil) throws -> RunResult {
        var env = Process.baseEnvironment
        for (key, value) in environment { env[key] = value }
        // The output goes to files: a forking client (wl-copy, xclip) must not be waited for.
        return try Process.run(program, arguments, stdin: stdin, environment: env, timeout: 20)
    }

    /// Puts `bytes` on the clipboard (or the primary selection) as `type`, the way a user's copy does.
    func copy(_ bytes: [UInt8], type: String? = nil, primary: Bool = false) throws {
        let result: RunResult
        switch kind {
        case .wayland:
            result = try client("wl-copy", (primary ? ["--primary"] : []) + (type.map { ["--type", $0] } ?? []), stdin: bytes)
        case .x11:
            let selection = ["-selection", primary ? "primary" : "clipboard"]
            result = try client("xclip", ["-i"] + selection + (type.map { ["-t", $0] } ?? []), stdin: bytes)
        }
        try #require(result.status == 0, "copying failed: \(result.stderr)")
    }

    /// What the clipboard offers: its types, and its content in `type`.
    func paste(_ type: String? = nil) throws -> (types: [String], content: [UInt8]) {
        let types: RunResult
        let content: RunResult
        switch kind {
        case .wayland:
            types = try client("wl-paste", ["--list-types"])
            content = try client("wl-paste", ["--no-newline"] + (type.map { ["--type", $0] } ?? []))
        case .x11:
            types = try client("xclip", ["-o", "-selection", "clipboard", "-t", "TARGETS"])
            content = try client("xclip", ["-o", "-selection", "clipboard"] + (type.map { ["-t", $0] } ?? []))
        }
        return (types.stdout.split(separator: "\n").map(String.init), content.stdoutBytes)
    }

    /// Starts the fixture that offers several types at once (as a password manager does) and
    /// waits until it owns the clipboard; it exits when another client takes it, or after 60 s.
    func offer(_ types: [(String, String)], options: [String] = []) throws -> pid_t {
        let script = GeneratedFiles.root + "/Tests/Fixtures/Desktop/" + (kind == .wayland ? "wayland-offer.py" : "x11-offer.py")
        var env = Process.baseEnvironment
        for (key, value) in environment { env[key] = value }
        let ready = directory.file("offer-\(UInt32.random(in: 0...UInt32.max))")
        let pid = try Process.spawn(
            "/usr/bin/python3", [script] + options + types.map { "\($0.0)=\($0.1)" }, stdin: "/dev/null", stdout: ready,
            stderr: ready + ".err", environment: env)
        try #require(
            eventually { (try? FileSystem.read(ready))??.isEmpty == false },
            "the offering client did not start: \(((try? FileSystem.read(ready + ".err")) ?? nil).map { String(decoding: $0, as: UTF8.self) } ?? "")"
        )
        offers.append(pid)
        return pid
    }

    private var offers: [pid_t] = []

    /// The processes serving this desktop's clipboard now: the child that wl-copy or xclip leaves
    /// behind, found in /proc by its name and this session's display in its environment.
    func copyingClients() -> [pid_t] {
        let program = kind == .wayland ? "wl-copy" : "xclip"
        let variable = kind == .wayland ? "WAYLAND_DISPLAY" : "DISPLAY"
        let displayEntry = variable + "=" + (environment[variable] ?? "")
        return ((try? FileSystem.list("/proc")) ?? []).compactMap { name in
            guard let pid = pid_t(name), DesktopSession.isRunning(pid),
                RcloneFleet.readProcFile("/proc/\(name)/comm") == Array((program + "\n").utf8),
                let variables = RcloneFleet.readProcFile("/proc/\(name)/environ")
            else { return nil }
            return variables.split(separator: 0).contains { $0.elementsEqual(displayEntry.utf8) } ? pid : nil
        }
    }

    /// Whether `pid` is a process that has not ended (a zombie has: it waits only to be reaped).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = RcloneFleet.readProcFile("/proc/\(pid)/stat") else { return false }
        return String(decoding: stat, as: UTF8.self).split(separator: ")").last?.split(separator: " ").first != "Z"
    }

    /// Whether the fixture can run: python3, and python3-xlib for X11.
    var offerMissing: String? {
        get throws {
            if let reason = try ExternalTool.missing(["python3"]) { return reason }
            guard kind == .x11, (try? Process.run("/usr/bin/python3", ["-c", "import Xlib"]))?.status != 0 else { return nil }
            return try ExternalTool.unavailable("not installed: python3-xlib", packages: ["python3-xlib"])
        }
    }
}

extension FileSystem {
    /// A test's small text file.
    static func writeText(_ path: String, _ text: String) {
        try? FileSystem.writeAtomically(path, Array(text.utf8), mode: 0o644)
    }
}

import Testing

@testable import ItsypadCLI
@testable import ItsypadDesktop
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The desktop and the tools itsypad runs are input too: an X server that answers wrongly,
/// wl-paste, xclip and copyq stand-ins that flood their standard error, never exit or offer a
/// type list too long to read. No real desktop is needed: the X server is a Python fake, the
/// tools are scripts first on PATH. Every wait is bounded: a run's time-out, `eventually`.
@Suite struct HostileDesktopTests {
    static let python = "/usr/bin/python3"

    /// A fake X server (Tests/Fixtures/Desktop/x11-fake-server.py) serving one connection in `mode`.
    final class FakeXServer {
        let display: String
        private let pid: pid_t
        private let directory = TemporaryDirectory()

        init(_ mode: String, _ argument: String? = nil) throws {
            let script = GeneratedFiles.root + "/Tests/Fixtures/Desktop/x11-fake-server.py"
            let directory = self.directory
            pid = try Process.spawn(
                HostileDesktopTests.python, [script, mode] + (argument.map { [$0] } ?? []), stdin: "/dev/null",
                stdout: directory.file("number"), stderr: directory.file("server.err"), environment: nil)
            _ = eventually { directory.read("number")?.hasSuffix("\n") == true }
            let read = (directory.read("number") ?? "").filter(\.isNumber)
            display = ":" + read
            try #require(!read.isEmpty, "the fake X server did not start: \(directory.read("server.err") ?? "")")
        }

        deinit {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
    }

    /// Scripts standing in for wl-paste (with a WAYLAND_DISPLAY) or xclip (with a fake X server's
    /// DISPLAY): `types` and `content` are shell commands printing the offer's type list and its content.
    struct FakeTools {
        let directory = TemporaryDirectory()
        let environment: [String: String]
        let server: FakeXServer?

        init(_ kind: DesktopSession.Kind, types: String, content: String) throws {
            let script: String
            switch kind {
            case .wayland:
                script = """
                    case " $* " in
                    *" --watch "*) echo; exec sleep 120 ;;
                    *" --list-types "*) \(types) ;;
                    *) \(content) ;;
                    esac
                    """
                server = nil
                environment = ["WAYLAND_DISPLAY": "wayland-fake", "PATH": directory.path + ":/usr/bin:/bin"]
            case .x11:
                script = """
                    case " $* " in
                    *" -t TARGETS "*) \(types) ;;
                    *) \(content) ;;
                    esac
                    """
                let server = try FakeXServer("serve")
                self.server = server
                environment = ["DISPLAY": server.display, "PATH": directory.path + ":/usr/bin:/bin"]
            }
            directory.write(kind == .wayland ? "wl-paste" : "xclip", "#!/bin/sh\n" + script + "\n", mode: 0o755)
        }
    }

    // MARK: - B1, B2: an X server's replies

    /// A success with a body too short for its fields (none, 8 or 20 bytes): a clear error naming
    /// the display, exit 1; never a trap (SIGILL).
    @Test(arguments: [0, 8, 20])
    func aShortSetupReplyIsAMalformedReply(_ bytes: Int) throws {
        try ExternalTool.require(["python3"])
        let server = try FakeXServer("short-setup", String(bytes))
        let result = try Device().run("clip", "watch", environment: ["DISPLAY": server.display])
        #expect(result.signal == nil && result.status == 1, "\(result.status): \(result.stderr)")
        #expect(result.stderr.contains("the X server at DISPLAY \(server.display) sent a malformed setup reply"), "\(result.stderr)")
    }

    /// A reply announcing 512 MiB or 16 GiB, then silence: refused before anything is allocated for
    /// it (in 48 MiB of data), at once.
    @Test(arguments: ["0x08000000", "0xFFFFFFFF"])
    func aHugeReplyLengthIsRefusedUnallocated(_ words: String) throws {
        try ExternalTool.require(["python3"])
        let server = try FakeXServer("huge-reply", words)
        let result = try Self.run(Device(), ["clip", "watch"], environment: ["DISPLAY": server.display], timeout: 20)
        #expect(!result.timedOut && result.signal == nil && result.status == 1, "\(result.status): \(result.stderr)")
        #expect(result.stderr.contains("the X server at DISPLAY \(server.display) sent a malformed reply"), "\(result.stderr)")
    }

    /// A reply that comes a byte a second is given up on at the deadline: try again later (75).
    @Test func aReplyThatDripsIsGivenUpOnAtItsDeadline() throws {
        try ExternalTool.require(["python3"])
        let server = try FakeXServer("drip")
        let result = try Self.run(Device(), ["clip", "watch"], environment: ["DISPLAY": server.display], timeout: 20)
        #expect(!result.timedOut && result.status == 75, "\(result.status): \(result.stderr)")
        #expect(result.stderr.contains("the X server at DISPLAY \(server.display) did not answer within 5 s"), "\(result.stderr)")
    }

    /// An X server over TCP that never accepts (its listener's queue is full) or accepts and never
    /// answers: clip watch gives up at its deadline with exit 75, as for a server gone, and so does
    /// clip copy (through xclip, killed at its time-out).
    @Test(arguments: [true, false])
    func aSilentXServerOverTCPIsGivenUpOnAtItsDeadline(neverAccepts: Bool) throws {
        let listener = try SilentListener(fillingItsQueue: neverAccepts)
        let display = "127.0.0.1:\(listener.displayNumber)"
        let device = Device()
        let started = Monotonic.seconds()
        let watch = try Self.run(device, ["clip", "watch"], environment: ["DISPLAY": display], timeout: 30)
        #expect(!watch.timedOut && watch.status == 75, "\(watch.status): \(watch.stderr)")
        #expect(Monotonic.seconds() - started < 15, "gave up after \(Monotonic.seconds() - started) s")
        #expect(watch.stderr.contains("127.0.0.1:\(listener.displayNumber)"), "\(watch.stderr)")
        let id = try #require(try device.run("clip", "add", "to copy").stdout.split(separator: "\n").last.map(String.init))
        let copy = try Self.run(device, ["clip", "copy", id], environment: ["DISPLAY": display], timeout: 30)
        #expect(!copy.timedOut && copy.status == 75, "\(copy.status): \(copy.stderr)")
    }

    /// A TCP listener on 127.0.0.1 at an X display's port (6000 + N) that never calls accept; with
    /// `fillingItsQueue`, its one-place queue is taken, so the kernel drops every further connection attempt.
    final class SilentListener {
        let displayNumber: Int
        private var descriptors: [Int32] = []

        init(fillingItsQueue: Bool) throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            try #require(listener >= 0)
            descriptors.append(listener)
            var number: Int?
            for candidate in 60..<100 where number == nil {
                if Self.atDisplayPort(candidate, { bind(listener, $0, $1) }) == 0 { number = candidate }
            }
            displayNumber = try #require(number, "no free port in 6060..<6100")
            try #require(listen(listener, 0) == 0)
            guard fillingItsQueue else { return }
            // A backlog of 0 holds one connection the listener never accepts; a second makes sure it is taken.
            for _ in 0..<2 {
                let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                try #require(client >= 0)
                descriptors.append(client)
                _ = Self.atDisplayPort(displayNumber) { connect(client, $0, $1) }
            }
        }

        /// `body` (a bind or a connect) with the address of display `number` on 127.0.0.1.
        private static func atDisplayPort(_ number: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(6000 + number).bigEndian
            address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }

        deinit { descriptors.forEach { close($0) } }
    }

    // MARK: - B3, B4: a tool's standard error, and a tool that never exits

    /// 16 MiB of blank lines on a tool's stderr: the watcher keeps only its end, says its last
    /// line, stays small, and still stops at once on SIGTERM.
    @Test func aToolsFloodOfStderrIsCutToItsLastLines() throws {
        let tools = try FakeTools(
            .wayland, types: "echo 'text/plain;charset=utf-8'",
            content: "head -c 16777216 /dev/zero | tr '\\0' '\\n' >&2; echo 'the last words of wl-paste' >&2; echo >&2; exit 1")
        let device = Device()
        let watcher = try RunningWatcher(device, [], environment: tools.environment, command: ["clip", "watch"])
        #expect(
            eventually(within: 60) { watcher.stderr.contains("could not record a clip: wl-paste failed: ") },
            "\(watcher.stderr.suffix(2000))")
        #expect(watcher.stderr.contains("the last words of wl-paste"), "\(watcher.stderr.suffix(2000))")
        let peak = Self.peakMemory(of: watcher.pid)
        #expect(peak < 48 << 10, "peak resident memory \(peak) KiB")
        let stopping = Monotonic.seconds()
        #expect(watcher.stop(SIGTERM) == 0, "\(watcher.stderr.suffix(2000))")
        #expect(Monotonic.seconds() - stopping < 10, "SIGTERM answered after \(Monotonic.seconds() - stopping) s")
    }

    /// wl-paste --watch ending with escape sequences on its stderr (a title, a screen clear, a bell):
    /// the watcher quotes its words in its own message, exit 75, and no escape reaches the terminal.
    @Test func aWatchToolsEscapeSequencesReachNoTerminal() throws {
        let device = Device()
        let script = #"""
            #!/bin/sh
            case " $* " in
            *" --watch "*) printf 'wl-paste: \033]0;owned\007\033[2Jthe compositor is gone\n' >&2; exit 1 ;;
            esac
            exit 1
            """#
        device.directory.write("wl-paste", script + "\n", mode: 0o755)
        let result = try Self.run(
            device, ["clip", "watch"], environment: ["WAYLAND_DISPLAY": "wayland-fake", "PATH": device.directory.path + ":/usr/bin:/bin"],
            timeout: 20)
        #expect(!result.timedOut && result.status == 75, "\(result.status): \(result.stderr)")
        #expect(result.stderr.contains("went away") && result.stderr.contains("the compositor is gone"), "\(result.stderr)")
        #expect(!result.stderr.utf8.contains(0x1B) && !result.stderr.utf8.contains(0x07), "\(Array(result.stderr.utf8))")
    }

    /// 64 MiB of blank lines from copyq: the import fails with its last line, in bounded memory (48 MiB of data) and time.
    @Test func copyqsFloodOfStderrIsCutToItsLastLines() throws {
        let device = Device()
        device.directory.write(
            "copyq", "#!/bin/sh\nhead -c 67108864 /dev/zero | tr '\\0' '\\n' >&2\necho 'copyq: the last words' >&2\nexit 1\n", mode: 0o755)
        let result = try Self.run(device, ["import", "--from", "copyq"], environment: ["PATH": device.directory.path + ":/usr/bin:/bin"])
        #expect(!result.timedOut && result.status == 1, "\(result.status): \(result.stderr.suffix(2000))")
        #expect(result.stderr.contains("copyq exited with status 1: copyq: the last words"), "\(result.stderr.suffix(2000))")
    }

    /// A copyq that closes its output and keeps running is stopped a few seconds later: exit 75, nothing imported.
    @Test func aCopyQThatOutlivesItsOutputIsStopped() throws {
        let device = Device()
        device.directory.write("copyq", "#!/bin/sh\nexec >/dev/null 2>&1\nexec sleep 100\n", mode: 0o755)
        let started = Monotonic.seconds()
        let result = try Self.run(device, ["import", "--from", "copyq"], environment: ["PATH": device.directory.path + ":/usr/bin:/bin"])
        #expect(!result.timedOut && result.status == 75, "\(result.status): \(result.stderr)")
        #expect(result.stderr.contains("copyq ended its output but was still running 5 s later"), "\(result.stderr)")
        #expect(Monotonic.seconds() - started < 30)
        #expect(try device.run("clip", "ls").stdout.isEmpty)
    }

    /// An offer whose owner does not answer the first time (or whose tool is starved on a busy machine):
    /// the watcher says so and reads it again, rather than dropping the copy without a word.
    @Test(arguments: DesktopSession.Kind.allCases)
    func anOfferNotAnsweredAtFirstIsReadAgain(_ kind: DesktopSession.Kind) throws {
        if kind == .x11 { try ExternalTool.require(["python3"]) }
        let text = kind == .wayland ? "text/plain;charset=utf-8" : "UTF8_STRING"
        let firstTime = "[ -e \"$0.asked\" ] || { : > \"$0.asked\"; exec sleep 30; }; "
        let tools = try FakeTools(kind, types: firstTime + "echo '\(text)'", content: "printf 'copied while busy'")
        let device = Device()
        let watcher = try RunningWatcher(device, [], environment: tools.environment, command: ["clip", "watch"])
        #expect(eventually(within: 60) { watcher.stderr.contains(" recorded ") }, "\(watcher.stderr)")
        #expect(watcher.stop(SIGTERM) == 0, "\(watcher.stderr)")
        #expect(watcher.stderr.contains("could not read a clip yet: its owner did not answer in 3 s; asking again"), "\(watcher.stderr)")
        #expect(try device.run("clip", "ls").stdout.hasSuffix("\tcopied while busy\n"))
    }

    // MARK: - B5: a type list too long to read whole

    /// A password manager's mark last in a type list longer than 1 MiB: the offer is skipped, never stored.
    @Test(arguments: DesktopSession.Kind.allCases)
    func aMarkAfterAHugeTypeListStillKeepsTheClipOut(_ kind: DesktopSession.Kind) throws {
        if kind == .x11 { try ExternalTool.require(["python3"]) }
        let text = kind == .wayland ? "text/plain;charset=utf-8" : "UTF8_STRING"
        let types =
            "echo '\(text)'; awk 'BEGIN { for (i = 0; i < 40000; i++) printf \"application/x-padding-%020d\\n\", i }'; "
            + "echo \(DesktopClipboard.passwordManagerHint)"
        let tools = try FakeTools(kind, types: types, content: "printf hunter2-the-password")
        let device = Device()
        let watcher = try RunningWatcher(device, [], environment: tools.environment, command: ["clip", "watch"])
        #expect(eventually { watcher.stderr.contains("skipped a clip: its list of types is longer than 1 MiB") }, "\(watcher.stderr)")
        #expect(watcher.stop(SIGTERM) == 0, "\(watcher.stderr)")
        #expect(try device.run("clip", "ls").stdout.isEmpty)
        let data = try Process.run("/bin/grep", ["-r", "-l", "hunter2", device.dataDir])
        #expect(data.stdout.isEmpty, "found in the data directory: \(data.stdout)")
    }

    // MARK: - B6: text from the desktop in the watcher's lines

    /// An offered type with ESC, BEL, a C1 CSI and DEL in it reaches the log as U+FFFD.
    @Test func anOfferedTypeIsShownSafely() throws {
        let type = "image/x-\u{1B}]52;c;aGk=\u{07}-\u{9B}2J-\u{7F}"
        let tools = try FakeTools(.wayland, types: "printf '%s\\n' '\(type)'", content: "printf 0123456789")
        let device = Device()
        try device.run("settings", "set", "clipboard.maxBytes", "4")
        let watcher = try RunningWatcher(device, [], environment: tools.environment, command: ["clip", "watch"])
        #expect(eventually { watcher.stderr.contains("larger than clipboard.maxBytes") }, "\(watcher.stderr)")
        #expect(watcher.stop(SIGTERM) == 0, "\(watcher.stderr)")
        #expect(watcher.stderr.contains("skipped a clip (image/x-\u{FFFD}]52;c;aGk=\u{FFFD}-\u{FFFD}2J-\u{FFFD})"), "\(watcher.stderr)")
        #expect(!Self.hasControls(watcher.stderr), "\(Array(watcher.stderr.utf8))")
    }

    /// Errors are made safe through a pipe too: a DISPLAY that is no display is named with U+FFFD for its controls.
    @Test func anErrorNamesADisplaySafelyThroughAPipe() throws {
        let device = Device()
        device.directory.write("xclip", "#!/bin/sh\nexit 1\n", mode: 0o755)
        let result = try device.run(
            "clip", "watch", environment: ["DISPLAY": "\u{1B}]52;c;aGk=\u{07}\u{9B}2J", "PATH": device.directory.path + ":/usr/bin:/bin"])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("DISPLAY \u{FFFD}]52;c;aGk=\u{FFFD}\u{FFFD}2J is not an X display"), "\(result.stderr)")
        #expect(!Self.hasControls(result.stderr), "\(Array(result.stderr.utf8))")
    }

    // MARK: - Helpers

    /// Whether `text` holds a control character a terminal acts on (C0 but tab and newline, DEL, C1).
    static func hasControls(_ text: String) -> Bool {
        text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t" && $0 != "\n") || (0x7F...0x9F).contains($0.value) }
    }

    /// A running process's peak resident memory (VmHWM, KiB).
    static func peakMemory(of pid: pid_t) -> Int {
        let status = (try? Process.run("/bin/cat", ["/proc/\(pid)/status"]))?.stdout ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return Int(line.filter(\.isNumber)) ?? Int.max
    }

    /// Runs `itsypad` as `Device.runArguments` does, killed after `timeout` seconds (a hang), its data
    /// segment limited to `dataLimit` KiB (RLIMIT_DATA): one that needs more memory fails to allocate.
    /// (Its ru_maxrss would not tell: a process spawned from this one starts with this one's.)
    static func run(
        _ device: Device, _ arguments: [String], environment: [String: String], timeout: Double = 60, dataLimit: Int = 48 << 10
    ) throws -> RunResult {
        var env = Process.baseEnvironment
        env["ITSYPAD_DATA_DIR"] = device.dataDir
        env["TMPDIR"] = device.directory.path
        for (key, value) in environment { env[key] = value }
        return try Process.run(
            "/bin/sh", ["-c", "ulimit -d \(dataLimit) && exec \"$0\" \"$@\"", Process.itsypad] + arguments, environment: env,
            timeout: timeout)
    }
}

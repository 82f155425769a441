import Testing

@testable import ItsypadDesktop
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// `clip copy` without a desktop (or with --osc52): the entry goes to the controlling terminal as
/// OSC 52. Under a pseudo-terminal (python3's pty) the exact bytes are checked; inside a real tmux
/// with set-clipboard on, tmux's paste buffer must hold the text.
@Suite
struct TerminalClipboardTests {
    static let ptyRun = GeneratedFiles.root + "/Tests/Fixtures/Terminal/pty-run.py"
    /// No desktop: clip copy falls back to the terminal.
    static let noDesktop = ["WAYLAND_DISPLAY": "", "DISPLAY": ""]

    /// `ESC ] 52 ; c ; BASE64 BEL`.
    static func osc52(_ text: String, selection: String = "c") -> [UInt8] {
        Array("\u{1B}]52;\(selection);\(Base64.encode(Array(text.utf8)))\u{07}".utf8)
    }

    /// Runs itsypad on `device` with a pty as its controlling terminal: its result, and what reached the terminal.
    static func underPTY(
        _ device: Device, _ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String] = noDesktop
    )
        throws -> (result: RunResult, terminal: [UInt8])
    {
        let output = device.directory.file("terminal-\(UInt32.random(in: 0...UInt32.max))")
        var env = Process.baseEnvironment
        env["ITSYPAD_DATA_DIR"] = device.dataDir
        for (key, value) in environment { env[key] = value }
        let result = try Process.run(
            "/usr/bin/python3", [ptyRun, output, Process.itsypad] + arguments, stdin: stdin, environment: env, timeout: 20)
        return (result, try FileSystem.read(output) ?? [])
    }

    static func added(_ device: Device, _ text: String) throws -> String {
        try device.runArguments(["clip", "add"], stdin: Array(text.utf8))
        return String(try device.run("clip", "ls").stdout.prefix(8))
    }

    @Test(.needs(["python3"]))
    func withoutADesktopTheTerminalGetsTheExactBytes() throws {
        let device = Device()
        let id = try Self.added(device, "héllo, wörld\n\tindented")
        let (result, terminal) = try Self.underPTY(device, ["clip", "copy", id])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(terminal == Self.osc52("héllo, wörld\n\tindented"))
        let (primary, selection) = try Self.underPTY(device, ["clip", "copy", "--primary", id])
        #expect(primary.status == 0 && selection == Self.osc52("héllo, wörld\n\tindented", selection: "p"), "\(primary.stderr)")
    }

    /// The ssh use: `itsypad clip ls | fzf | cut -f1 | itsypad clip copy`, the id on standard input.
    @Test(.needs(["python3"]))
    func anIdPipedInIsCopiedToTheTerminal() throws {
        let device = Device()
        let id = try Self.added(device, "from the server")
        let (result, terminal) = try Self.underPTY(device, ["clip", "copy"], stdin: Array((id + "\n").utf8))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(terminal == Self.osc52("from the server"))
    }

    /// --osc52 writes to the terminal even with a display (here one nobody serves: no tool is run).
    @Test(.needs(["python3"]))
    func osc52IsForcedEvenWithADisplay() throws {
        let device = Device()
        let id = try Self.added(device, "forced")
        let environment = ["WAYLAND_DISPLAY": "wayland-404", "DISPLAY": ":4049", "PATH": "/nonexistent"]
        let (result, terminal) = try Self.underPTY(device, ["clip", "copy", "--osc52", id], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(terminal == Self.osc52("forced"))
    }

    /// Inside GNU screen (STY, or TERM=screen… outside tmux) the sequence goes in DCS strings screen passes on.
    @Test(.needs(["python3"]))
    func insideScreenItIsWrappedInPieces() throws {
        let device = Device()
        let text = String(repeating: "screen ", count: 200)
        let id = try Self.added(device, text)
        let (result, terminal) = try Self.underPTY(
            device, ["clip", "copy", id], environment: Self.noDesktop.merging(["STY": "1.pts-0"]) { $1 })
        #expect(result.status == 0, "\(result.stderr)")
        #expect(terminal == TerminalClipboard.sequence(Array(text.utf8), primary: false, form: .screen))
        #expect(terminal != Self.osc52(text))
    }

    @Test func theFormFollowsTheMultiplexer() {
        #expect(TerminalClipboard.form(in: ["TERM": "xterm-256color"]) == .plain)
        #expect(TerminalClipboard.form(in: ["TERM": "screen-256color", "TMUX": "/tmp/tmux-0/default,1,0"]) == .plain)
        #expect(TerminalClipboard.form(in: ["TERM": "screen.xterm-256color"]) == .screen)
        #expect(TerminalClipboard.form(in: ["TERM": "xterm", "STY": "12.pts-1.host"]) == .screen)
    }

    /// Every piece is one DCS string of at most 768 bytes; together they are the plain sequence.
    @Test func screenPiecesAreShortAndWhole() {
        let text = Array(repeating: UInt8(ascii: "x"), count: 5000)
        let wrapped = TerminalClipboard.sequence(text, primary: false, form: .screen)
        var pieces: [[UInt8]] = []
        var rest = wrapped[...]
        while !rest.isEmpty {
            #expect(Array(rest.prefix(2)) == [0x1B, 0x50])
            guard let end = rest.indices.dropFirst().first(where: { rest[$0] == 0x1B && rest[$0 + 1] == 0x5C }) else { break }
            pieces.append(Array(rest[(rest.startIndex + 2)..<end]))
            rest = rest[(end + 2)...]
        }
        #expect(pieces.allSatisfy { $0.count + 4 <= 768 })
        #expect(pieces.flatMap { $0 } == TerminalClipboard.sequence(text, primary: false, form: .plain))
    }

    @Test(.needs(["python3"]))
    func anImageIsRefusedAndNothingIsWritten() throws {
        let device = Device()
        try device.runArguments(["clip", "add", "--type", "image/png"], stdin: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3])
        let id = String(try device.run("clip", "ls").stdout.prefix(8))
        let (result, terminal) = try Self.underPTY(device, ["clip", "copy", id])
        #expect(result.status == 1)
        #expect(result.stderr.contains("OSC 52 carries text only, and this entry is image/png"), "\(result.stderr)")
        #expect(terminal.isEmpty)
    }

    /// 74,994 bytes (100,000 bytes of escape) is copied; one more is refused, naming the limit.
    @Test(.needs(["python3"]))
    func aTextAboveTheLimitIsRefused() throws {
        let device = Device()
        let fits = try Self.added(device, String(repeating: "a", count: 74_994))
        let (copied, sequence) = try Self.underPTY(device, ["clip", "copy", fits])
        #expect(copied.status == 0 && sequence.count == 100_000, "\(copied.stderr)")
        let large = try Self.added(device, String(repeating: "b", count: 74_995))
        let (refused, nothing) = try Self.underPTY(device, ["clip", "copy", large])
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains("the entry is 74995 bytes, more than the 74994 bytes terminals accept by OSC 52"), "\(refused.stderr)")
        #expect(nothing.isEmpty)
    }

    /// No desktop and no controlling terminal (a service, setsid): a clear failure.
    @Test(.needs(["setsid"]))
    func withoutATerminalEitherItFails() throws {
        let device = Device()
        let id = try Self.added(device, "nowhere to go")
        var env = Process.baseEnvironment.merging(Self.noDesktop) { $1 }
        env["ITSYPAD_DATA_DIR"] = device.dataDir
        for (arguments, message) in [
            (
                ["clip", "copy", id],
                "neither WAYLAND_DISPLAY nor DISPLAY is set, and there is no controlling terminal to copy to by OSC 52"
            ),
            (["clip", "copy", "--osc52", id], "there is no controlling terminal to copy to by OSC 52"),
        ] {
            let result = try Process.run("setsid", ["-w", Process.itsypad] + arguments, environment: env, timeout: 20)
            #expect(result.status == 1 && result.stderr.contains(message), "\(result.stderr)")
        }
    }

    /// Inside a real tmux with set-clipboard on, the plain sequence becomes tmux's paste buffer
    /// (which tmux also passes on to the terminal it runs in).
    @Test(.needs(["tmux"]))
    func insideTmuxTheBufferHoldsIt() throws {
        let device = Device()
        let id = try Self.added(device, "through tmux")
        let socket = device.directory.file("tmux.sock")
        let environment = Process.baseEnvironment.merging(["TERM": "xterm-256color"]) { $1 }
        func tmux(_ arguments: String...) throws -> RunResult {
            try Process.run("tmux", ["-S", socket, "-f", "/dev/null"] + arguments, environment: environment, timeout: 20)
        }
        defer { _ = try? tmux("kill-server") }
        #expect(try tmux("new-session", "-d", "-x", "80", "-y", "24", "sleep 60").status == 0)
        #expect(try tmux("set", "-g", "set-clipboard", "on").status == 0)
        #expect(try tmux("set", "-g", "remain-on-exit", "on").status == 0)
        let command = "ITSYPAD_DATA_DIR=\(device.dataDir) \(Process.itsypad) clip copy \(id) 2>\(device.directory.file("copy.err"))"
        #expect(try tmux("new-window", "-d", command).status == 0)
        #expect(
            eventually { (try? tmux("show-buffer"))?.stdout == "through tmux" },
            "buffer: \((try? tmux("show-buffer"))?.stdout ?? ""), stderr: \(device.directory.read("copy.err") ?? "")")
    }
}

import ItsypadSupport

/// A Wayland compositor's clipboard, through wl-clipboard (wl-paste, wl-copy).
struct WaylandClipboard: ClipboardSource {
    let primary: Bool
    let tools: ClipboardTools

    static func isPresent(in environment: [String: String]) -> Bool { environment["WAYLAND_DISPLAY"].map { !$0.isEmpty } == true }

    init(environment: [String: String], primary: Bool) {
        self.primary = primary
        tools = ClipboardTools(environment: environment, package: "wl-clipboard")
    }

    var name: String { "the Wayland " + (primary ? "primary selection" : "clipboard") }
    private var selection: [String] { primary ? ["--primary"] : [] }

    func checkTools() throws { _ = try tools.path("wl-paste") }

    func offeredTypes() throws -> [String]? { try tools.typeList("wl-paste", selection + ["--list-types"]) }

    func content(_ type: String, limit: Int) throws -> [UInt8]? {
        try tools.content("wl-paste", selection + ["--no-newline", "--type", type], limit: limit)
    }

    func copy(_ bytes: [UInt8], type: String, scratchDirectory: String) throws {
        try tools.copy(bytes, "wl-copy", selection + ["--type", type], scratchDirectory: scratchDirectory)
    }

    /// `wl-paste --watch` running `signalCommand`: a line per new offer.
    func changeSignal() throws -> any ClipboardChangeSignal {
        let timeout = Subprocess.find("timeout", searchPath: "/usr/bin:/bin")
        let count = Subprocess.find("wc", searchPath: "/usr/bin:/bin") ?? "/usr/bin/wc"
        return try Subprocess(
            executable: tools.path("wl-paste"), arguments: selection + ["--watch"] + Self.signalCommand(timeout: timeout, count: count),
            environment: tools.environment
        ).start()
    }

    /// How long the command reads an offer's content before it gives up on its owner.
    static let drainSeconds = 10

    /// What wl-paste runs for each new offer, with the content it asked the owner for on standard input: `wc -c`
    /// reads that content to its end, then prints a line for the watcher. An owner that finds the pipe closed
    /// before it has written may be killed by SIGPIPE (wl-copy 2.1 is), and its copy is then gone unrecorded.
    /// wl-paste waits for the command, so an owner that never finishes is given up on after `drainSeconds`
    /// (with `timeout`, where there is one): it must not hold back the signals of later copies.
    static func signalCommand(timeout: String?, count: String) -> [String] {
        (timeout.map { [$0, String(drainSeconds)] } ?? []) + [count, "-c"]
    }
}

extension Subprocess.Running: ClipboardChangeSignal {
    package var descriptor: Int32 { output }
    package func consume() -> Bool { readAvailable() != nil }
}

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

    /// `wl-paste --watch echo`: a line per new offer.
    func changeSignal() throws -> any ClipboardChangeSignal {
        let echo = Subprocess.find("echo", searchPath: "/usr/bin:/bin") ?? "/bin/echo"
        return try Subprocess(executable: tools.path("wl-paste"), arguments: selection + ["--watch", echo], environment: tools.environment)
            .start()
    }
}

extension Subprocess.Running: ClipboardChangeSignal {
    package var descriptor: Int32 { output }
    package func consume() -> Bool { readAvailable() != nil }
}

import ItsypadSupport

/// An X server's clipboard, through xclip; its changes come as XFixes events (`X11SelectionEvents`).
struct X11Clipboard: ClipboardSource {
    let primary: Bool
    let tools: ClipboardTools

    static func isPresent(in environment: [String: String]) -> Bool { environment["DISPLAY"].map { !$0.isEmpty } == true }

    init(environment: [String: String], primary: Bool) {
        self.primary = primary
        tools = ClipboardTools(environment: environment, package: "xclip")
    }

    var name: String { "the X11 " + (primary ? "primary selection" : "clipboard") }
    private var selection: [String] { ["-selection", primary ? "primary" : "clipboard"] }

    func checkTools() throws { _ = try tools.path("xclip") }

    func offeredTypes() throws -> [String]? { try tools.typeList("xclip", ["-o"] + selection + ["-t", "TARGETS"]) }

    func content(_ type: String, limit: Int) throws -> [UInt8]? {
        try tools.content("xclip", ["-o"] + selection + ["-t", type], limit: limit)
    }

    /// xclip offers its default text target (UTF8_STRING) unless told another.
    func copy(_ bytes: [UInt8], type: String, scratchDirectory: String) throws {
        let target = type == DesktopClipboard.textType ? [] : ["-t", type]
        try tools.copy(bytes, "xclip", ["-i"] + selection + target, scratchDirectory: scratchDirectory)
    }

    func changeSignal() throws -> any ClipboardChangeSignal {
        let environment = tools.environment
        let xauthority = environment["XAUTHORITY"] ?? environment["HOME"].map { $0 + "/.Xauthority" }
        return try X11SelectionEvents(
            display: environment["DISPLAY"] ?? "", selection: primary ? "PRIMARY" : "CLIPBOARD", xauthority: xauthority)
    }
}

/// Its connection closes when the value goes away: nothing to stop; no tool to quote.
extension X11SelectionEvents: ClipboardChangeSignal {
    package func stop() {}
    package var errorText: String { "" }
}

import ItsypadSupport

/// The desktop's clipboard (or primary selection), through wl-clipboard on
/// Wayland and xclip on X11: what it offers, its content in one type, and
/// putting bytes on it. Every tool runs as a process, without a shell.
struct DesktopClipboard {
    enum Kind { case wayland, x11 }

    let kind: Kind
    let primary: Bool
    let environment: [String: String]

    /// The type a password manager adds to what it offers (KeePassXC, KDE's).
    static let passwordManagerHint = "x-kde-passwordManagerHint"
    /// The type of a text entry.
    static let textType = "text/plain;charset=utf-8"
    /// Types that hold text, best first (Wayland's and X11's names).
    static let textTypes = ["text/plain;charset=utf-8", "UTF8_STRING", "text/plain", "STRING"]
    /// Image types, best first; any other image/… after them.
    static let imageTypes = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/tiff"]
    /// How long one read, list or copy may take: an owner that never answers is given up on.
    static let toolTimeout = 3.0

    /// Wayland when WAYLAND_DISPLAY is set, else X11 when DISPLAY is; neither fails.
    init(environment: [String: String], primary: Bool) throws {
        self.environment = environment
        self.primary = primary
        if environment["WAYLAND_DISPLAY"].map({ !$0.isEmpty }) == true {
            kind = .wayland
        } else if environment["DISPLAY"].map({ !$0.isEmpty }) == true {
            kind = .x11
        } else {
            throw ItsypadError.failure(
                "no desktop: neither WAYLAND_DISPLAY nor DISPLAY is set (a Wayland compositor or an X server is needed)")
        }
    }

    var name: String {
        (kind == .wayland ? "the Wayland " : "the X11 ") + (primary ? "primary selection" : "clipboard")
    }

    /// The program `name`, or a failure naming the package that has it.
    func tool(_ name: String) throws -> String {
        if let path = Subprocess.find(name, searchPath: environment["PATH"]) { return path }
        let package = kind == .wayland ? "wl-clipboard" : "xclip"
        throw ItsypadError.failure("\(name) is not on PATH: install \(package)")
    }

    private func run(_ name: String, _ arguments: [String], limit: Int = 1 << 20) throws -> Subprocess.Output {
        try Subprocess(executable: tool(name), arguments: arguments, environment: environment).run(
            timeout: DesktopClipboard.toolTimeout, outputLimit: limit)
    }

    private var x11Selection: [String] { ["-selection", primary ? "primary" : "clipboard"] }

    /// The longest list of offered types read (a real one is a few hundred bytes).
    static let typeListLimit = 1 << 20

    /// The types on offer now; empty when nothing is (or the owner did not answer); nil when the
    /// list is longer than `typeListLimit`: cut, it could not tell whether a password manager marked the offer.
    func offeredTypes() throws -> [String]? {
        let limit = DesktopClipboard.typeListLimit + 1
        let output =
            kind == .wayland
            ? try run("wl-paste", (primary ? ["--primary"] : []) + ["--list-types"], limit: limit)
            : try run("xclip", ["-o"] + x11Selection + ["-t", "TARGETS"], limit: limit)
        guard output.status == 0, !output.timedOut else { return [] }
        guard output.standardOutput.count < limit else { return nil }
        return output.outputText.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    }

    /// The content in `type`; nil when it is more than `limit` bytes.
    func content(_ type: String, limit: Int) throws -> [UInt8]? {
        let program = kind == .wayland ? "wl-paste" : "xclip"
        let output =
            kind == .wayland
            ? try run(program, (primary ? ["--primary"] : []) + ["--no-newline", "--type", type], limit: limit + 1)
            : try run(program, ["-o"] + x11Selection + ["-t", type], limit: limit + 1)
        if output.timedOut { throw ItsypadError.failure("its owner did not answer in \(Int(DesktopClipboard.toolTimeout)) s") }
        guard output.status == 0 else {
            throw ItsypadError.failure("\(program) failed: \(output.errorText.isEmpty ? "exit \(output.status)" : output.errorText)")
        }
        return output.standardOutput.count <= limit ? output.standardOutput : nil
    }

    /// The type worth recording from an offer: text first, then an image; nil for anything else.
    static func bestType(_ offered: [String]) -> String? {
        textTypes.first { offered.contains($0) } ?? imageTypes.first { offered.contains($0) }
            ?? offered.first { $0.hasPrefix("image/") }
    }

    static func isText(_ type: String) -> Bool { textTypes.contains(type) }

    /// Puts `bytes` on the clipboard as `type`. wl-copy and xclip fork a child that serves
    /// it until something else is copied; only the program itself is waited for.
    func copy(_ bytes: [UInt8], type: String, scratchDirectory: String) throws {
        let arguments: [String]
        switch kind {
        case .wayland: arguments = (primary ? ["--primary"] : []) + ["--type", type]
        // xclip offers its default text target (UTF8_STRING) unless told another.
        case .x11: arguments = ["-i"] + x11Selection + (type == DesktopClipboard.textType ? [] : ["-t", type])
        }
        let program = kind == .wayland ? "wl-copy" : "xclip"
        let output = try Subprocess(executable: tool(program), arguments: arguments, environment: environment)
            .runLeavingChildren(input: bytes, scratchDirectory: scratchDirectory, timeout: DesktopClipboard.toolTimeout)
        guard output.status == 0, !output.timedOut else {
            let reason = output.timedOut ? "it did not finish in \(Int(DesktopClipboard.toolTimeout)) s" : output.errorText
            throw ItsypadError.temporary("\(program) failed: \(reason.isEmpty ? "exit \(output.status)" : reason)")
        }
    }

    /// What wakes the watcher: readable whenever the selection may have changed, ended when
    /// the compositor or the X server went away.
    enum ChangeSignal {
        /// `wl-paste --watch echo`: a line per new offer.
        case watcher(Subprocess.Running)
        /// XFixes events on a connection to the X server.
        case x11(X11SelectionEvents)

        var descriptor: Int32 {
            switch self {
            case .watcher(let process): return process.output
            case .x11(let events): return events.descriptor
            }
        }

        /// Takes what came; false once the source has ended.
        func consume() -> Bool {
            switch self {
            case .watcher(let process): return process.readAvailable() != nil
            case .x11(let events): return events.consume()
            }
        }

        func stop() {
            if case .watcher(let process) = self { process.stop() }
        }
    }

    func changeSignal() throws -> ChangeSignal {
        switch kind {
        case .wayland:
            let echo = Subprocess.find("echo", searchPath: "/usr/bin:/bin") ?? "/bin/echo"
            let watcher = Subprocess(
                executable: try tool("wl-paste"), arguments: (primary ? ["--primary"] : []) + ["--watch", echo], environment: environment)
            return .watcher(try watcher.start())
        case .x11:
            let xauthority = environment["XAUTHORITY"] ?? environment["HOME"].map { $0 + "/.Xauthority" }
            return .x11(
                try X11SelectionEvents(
                    display: environment["DISPLAY"] ?? "", selection: primary ? "PRIMARY" : "CLIPBOARD", xauthority: xauthority))
        }
    }
}

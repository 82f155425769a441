import ItsypadSupport

/// The one place a clipboard source is chosen, and the names of the types that every source shares.
package enum DesktopClipboard {
    /// The desktops a clipboard is read from and written to, in the order they are tried.
    package static var sources: [any ClipboardSource.Type] { [WaylandClipboard.self, X11Clipboard.self] }

    private static func desktop(in environment: [String: String]) -> (any ClipboardSource.Type)? {
        sources.first { $0.isPresent(in: environment) }
    }

    /// An owner that did not answer in time (or a tool that did not start in time on a busy machine): worth asking again.
    package static let unanswered = ItsypadError.temporary("its owner did not answer in \(Int(ClipboardTools.timeout)) s")

    static let noDesktop = "no desktop: neither WAYLAND_DISPLAY nor DISPLAY is set"

    /// The clipboard (or primary selection) of the first desktop that `environment` names; none fails.
    package static func source(environment: [String: String], primary: Bool) throws -> any ClipboardSource {
        guard let source = desktop(in: environment) else {
            throw ItsypadError.failure(noDesktop + " (a Wayland compositor or an X server is needed)")
        }
        return source.init(environment: environment, primary: primary)
    }

    /// Where `clip copy` puts an entry: the desktop's clipboard, else (or with `osc52`) the
    /// controlling terminal's by OSC 52; neither fails.
    package static func writer(environment: [String: String], primary: Bool, osc52: Bool) throws -> any ClipboardWriter {
        if !osc52, let source = desktop(in: environment) {
            return source.init(environment: environment, primary: primary)
        }
        guard let terminal = TerminalClipboard(environment: environment, primary: primary) else {
            throw ItsypadError.failure(
                (osc52 ? "" : noDesktop + ", and ") + "there is no controlling terminal to copy to by OSC 52")
        }
        return terminal
    }

    /// The type a password manager adds to what it offers (KeePassXC, KDE's).
    package static let passwordManagerHint = "x-kde-passwordManagerHint"
    /// The type of a text entry.
    package static let textType = "text/plain;charset=utf-8"
    /// Types that hold text, best first (Wayland's and X11's names).
    static let textTypes = ["text/plain;charset=utf-8", "UTF8_STRING", "text/plain", "STRING"]
    /// Image types, best first; any other image/… after them.
    static let imageTypes = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp", "image/tiff"]
    /// The longest list of offered types read (a real one is a few hundred bytes).
    package static let typeListLimit = 1 << 20

    /// The type worth recording from an offer: text first, then an image; nil for anything else.
    package static func bestType(_ offered: [String]) -> String? {
        textTypes.first { offered.contains($0) } ?? imageTypes.first { offered.contains($0) }
            ?? offered.first { $0.hasPrefix("image/") }
    }

    package static func isText(_ type: String) -> Bool { textTypes.contains(type) }
}

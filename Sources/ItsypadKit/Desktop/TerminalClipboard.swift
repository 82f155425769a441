import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The clipboard of the terminal itsypad runs in, reached by the OSC 52 escape written to the
/// controlling terminal (/dev/tty): on a host reached by ssh, where there is no desktop, the
/// user's own terminal puts the text on its desktop's clipboard. Write-only, text only.
package final class TerminalClipboard: ClipboardWriter {
    /// How the escape reaches the terminal.
    enum Form: Equatable {
        /// `ESC ] 52 ; c ; BASE64 BEL`, as terminals read it. Inside tmux too: with `set-clipboard on`
        /// tmux keeps it as a paste buffer and sets the clipboard of the terminal it runs in.
        case plain
        /// GNU screen passes OSC 52 on only inside a DCS string (`ESC P … ESC \`), of at most 768 bytes each.
        case screen
    }

    /// The longest OSC 52 sequence written: 100,000 bytes, the limit of hterm and of Chromium's osc52.sh,
    /// the smallest that terminals document (tmux reads up to 1 MiB, xterm and kitty more).
    static let sequenceLimit = 100_000
    /// The most text that fits in it: 74,994 bytes, base64 with `ESC ] 52 ; c ;` and BEL around it.
    package static let textLimit = (sequenceLimit - 8) / 4 * 3
    /// The longest string screen passes on (since 4.2.1), `ESC P` and `ESC \` included.
    static let screenStringLimit = 768

    private let terminal: Int32
    let primary: Bool
    let form: Form

    /// The controlling terminal; nil when there is none (a service, `setsid`).
    package init?(environment: [String: String], primary: Bool) {
        terminal = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC)
        guard terminal >= 0 else { return nil }
        self.primary = primary
        form = TerminalClipboard.form(in: environment)
    }

    deinit { close(terminal) }

    package var name: String { "the terminal's " + (primary ? "primary selection" : "clipboard") + " (OSC 52)" }

    /// tmux sets TERM to screen… too, so TMUX is asked first.
    static func form(in environment: [String: String]) -> Form {
        func isSet(_ name: String) -> Bool { environment[name].map { !$0.isEmpty } == true }
        if isSet("TMUX") { return .plain }
        return isSet("STY") || environment["TERM"]?.hasPrefix("screen") == true ? .screen : .plain
    }

    /// The bytes that put `text` on the clipboard (`c`) or the primary selection (`p`).
    static func sequence(_ text: [UInt8], primary: Bool, form: Form) -> [UInt8] {
        let osc = Array("\u{1B}]52;\(primary ? "p" : "c");".utf8) + Array(Base64.encode(text).utf8) + [0x07]
        guard form == .screen else { return osc }
        let piece = screenStringLimit - 4
        return stride(from: 0, to: osc.count, by: piece).flatMap { start in
            [0x1B, 0x50] + osc[start..<min(start + piece, osc.count)] + [0x1B, 0x5C]
        }
    }

    package func copy(_ bytes: [UInt8], type: String, scratchDirectory: String) throws {
        guard type == DesktopClipboard.textType else {
            throw ItsypadError.failure(
                "OSC 52 carries text only, and this entry is \(Text.escapingControls(type, limit: 100)): "
                    + "copy it on a desktop, or write it to a file with 'itsypad clip show'")
        }
        guard bytes.count <= TerminalClipboard.textLimit else {
            throw ItsypadError.failure(
                "the entry is \(Text.counted(bytes.count, "byte")), more than the \(TerminalClipboard.textLimit) bytes "
                    + "terminals accept by OSC 52: copy it on a desktop, or write it to a file with 'itsypad clip show'")
        }
        try TerminalClipboard.sequence(bytes, primary: primary, form: form).withUnsafeBytes {
            try FileSystem.writeAll(fd: terminal, $0, path: "the terminal")
        }
    }
}

import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Somewhere a clip can be put: a desktop's clipboard, or a terminal's by OSC 52.
package protocol ClipboardWriter {
    /// How messages name it ("the Wayland clipboard").
    var name: String { get }
    /// Puts `bytes` on it as `type` (a MIME type, or `DesktopClipboard.textType`).
    func copy(_ bytes: [UInt8], type: String, scratchDirectory: String) throws
}

/// A desktop's clipboard (or primary selection): what it offers, its content in one type,
/// putting bytes on it, and a signal when it changes. A new desktop conforms and is
/// listed in `DesktopClipboard.sources`.
package protocol ClipboardSource: ClipboardWriter {
    /// Whether `environment` names a desktop of this kind (its display variable is set).
    static func isPresent(in environment: [String: String]) -> Bool
    init(environment: [String: String], primary: Bool)
    /// Fails, naming the package to install, when a program that watching needs is missing.
    func checkTools() throws
    /// The types on offer now; empty when nothing is; nil when the list is longer than
    /// `DesktopClipboard.typeListLimit`: cut, it could not tell whether a password manager marked the offer.
    /// An owner that does not answer is a temporary failure (`DesktopClipboard.unanswered`).
    func offeredTypes() throws -> [String]?
    /// The content in `type`; nil when it is more than `limit` bytes; an owner that does not answer as above.
    func content(_ type: String, limit: Int) throws -> [UInt8]?
    /// What wakes a watcher when the selection may have changed.
    func changeSignal() throws -> any ClipboardChangeSignal
}

/// Readable whenever the selection may have changed; ended when the compositor or the X server went away.
package protocol ClipboardChangeSignal {
    var descriptor: Int32 { get }
    /// Takes what came; false once the source has ended.
    func consume() -> Bool
    func stop()
    /// Once it has ended, what its tool said (the end of its standard error, escaped), or "".
    var errorText: String { get }
}

extension ClipboardChangeSignal {
    /// Whether a change (or the end) is waiting to be consumed.
    package var isPending: Bool {
        var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        return poll(&fds, 1, 0) > 0
    }
}

/// The programs a desktop's clipboard is used through, found on the environment's PATH and run
/// without a shell, each for at most `timeout` seconds: an owner that never answers is given up on.
struct ClipboardTools {
    let environment: [String: String]
    /// The package that has them, named when one is missing.
    let package: String
    static let timeout = 3.0

    /// The program `name`, or a failure naming the package that has it.
    func path(_ name: String) throws -> String {
        if let path = Subprocess.find(name, searchPath: environment["PATH"]) { return path }
        throw ItsypadError.failure("\(name) is not on PATH: install \(package)")
    }

    private func run(_ name: String, _ arguments: [String], limit: Int) throws -> Subprocess.Output {
        try Subprocess(executable: path(name), arguments: arguments, environment: environment).run(
            timeout: ClipboardTools.timeout, outputLimit: limit)
    }

    /// The lines `program` lists (the offered types), as `ClipboardSource.offeredTypes` returns them.
    func typeList(_ program: String, _ arguments: [String]) throws -> [String]? {
        let limit = DesktopClipboard.typeListLimit + 1
        let output = try run(program, arguments, limit: limit)
        if output.timedOut { throw DesktopClipboard.unanswered }
        guard output.status == 0 else { return [] }
        guard output.standardOutput.count < limit else { return nil }
        return output.outputText.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    }

    /// What `program` writes (the content in one type); nil when it is more than `limit` bytes.
    func content(_ program: String, _ arguments: [String], limit: Int) throws -> [UInt8]? {
        let output = try run(program, arguments, limit: limit + 1)
        if output.timedOut { throw DesktopClipboard.unanswered }
        guard output.status == 0 else {
            throw ItsypadError.failure("\(program) failed: \(output.errorText.isEmpty ? "exit \(output.status)" : output.errorText)")
        }
        return output.standardOutput.count <= limit ? output.standardOutput : nil
    }

    /// Gives `bytes` to `program` (wl-copy, xclip), which forks a child that serves them until
    /// something else is copied; only the program itself is waited for.
    func copy(_ bytes: [UInt8], _ program: String, _ arguments: [String], scratchDirectory: String) throws {
        let output = try Subprocess(executable: path(program), arguments: arguments, environment: environment)
            .runLeavingChildren(input: bytes, scratchDirectory: scratchDirectory, timeout: ClipboardTools.timeout)
        guard output.status == 0, !output.timedOut else {
            let reason = output.timedOut ? "it did not finish in \(Int(ClipboardTools.timeout)) s" : output.errorText
            throw ItsypadError.temporary("\(program) failed: \(reason.isEmpty ? "exit \(output.status)" : reason)")
        }
    }
}

import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Runs the user's editor on a private temp file and returns what was saved.
struct Editor {
    let invocation: Invocation

    /// The editor command: the `editor` setting, else $VISUAL, else $EDITOR, else vi.
    func command() -> String { resolved().command }

    /// The editor command and where it comes from, as `settings get editor` explains it.
    func resolved() -> (command: String, source: String) {
        let environment = invocation.context.environment
        if let configured = try? invocation.store().settings().string(.editor) { return (configured, "the editor setting") }
        for name in ["VISUAL", "EDITOR"] {
            if let value = environment[name], !value.isEmpty { return (value, "$" + name) }
        }
        return ("vi", "the default: neither $VISUAL nor $EDITOR is set")
    }

    /// nil when the editor failed (non-zero exit): the caller then changes nothing. The file is
    /// named after `language` (`itsypad-….md`), so that the editor highlights it.
    func edit(_ initial: String, language: String) throws -> String? {
        let editorCommand = command()
        invocation.close()
        let directory = invocation.context.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let suffix = "." + LanguageDetector.fileExtension(for: language)
        var template = Array((directory + "/itsypad-XXXXXX" + suffix).utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, Int32(suffix.utf8.count)) }
        if fd < 0 { throw FileSystem.fail("create a temporary file in", directory) }
        let path = String(cString: template)
        try Array(initial.utf8).withUnsafeBytes { try FileSystem.writeAll(fd: fd, $0, path: path) }
        close(fd)

        let status = try run(editorCommand, path: path)
        guard status == 0 else {
            unlink(path)
            return nil
        }
        let bytes = try FileSystem.read(path) ?? []
        guard let text = Text.decodeUTF8(bytes) else {
            throw ItsypadError.failure("the edited text is not valid UTF-8; it was kept in \(path)")
        }
        unlink(path)
        return text
    }

    /// Runs `sh -c 'EDITOR "$1"' sh FILE` on the terminal, ignoring Ctrl-C in
    /// itsypad meanwhile (the editor handles it), as git does.
    private func run(_ editor: String, path: String) throws -> Int32 {
        let shell = Subprocess(
            executable: "/bin/sh", arguments: ["-c", editor + " \"$1\"", "sh", path],
            environment: invocation.context.environment)
        do {
            return try shell.runAttached()
        } catch let error as ItsypadError {
            throw ItsypadError.failure("cannot start the editor '\(editor)': \(error.message)")
        }
    }
}

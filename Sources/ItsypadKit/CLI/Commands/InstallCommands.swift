import ItsypadStore
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// `itsypad install` and `itsypad uninstall`: the running binary, its man
/// pages and its completion scripts under a prefix, where man, bash-completion,
/// zsh and fish look for them.
enum InstallCommands {
    static func install(_ invocation: Invocation) throws -> Int32 {
        let prefix = try installPrefix(invocation)
        let files = try Installation(prefix: prefix).files()
        try storeOperation {
            for file in files {
                try FileSystem.makeDirectory(FileSystem.directoryName(file.path), mode: 0o755)
                try FileSystem.writeAtomically(file.path, file.bytes, mode: file.mode)
                // The exact mode, whatever the umask, as install(1) sets it.
                if chmod(file.path, file.mode) != 0 { throw FileSystem.fail("set the mode of", file.path) }
            }
        }
        invocation.note("installed \(Text.counted(files.count, "file")) under \(prefix)")
        let bin = prefix + "/bin"
        let environment = invocation.context.environment
        if !invocation.quiet, !isOnPath(bin, environment["PATH"] ?? "") {
            // Said the way ~/.profile would say it.
            let home = environment["HOME"].map { withoutTrailingSlash($0) + "/" }
            let spelled = home.flatMap { bin.hasPrefix($0) ? "$HOME/" + bin.dropFirst($0.count) : nil } ?? bin
            invocation.warn("\(bin) is not on your PATH; add it, e.g. in ~/.profile: export PATH=\"\(spelled):$PATH\"")
        }
        return ExitCode.success
    }

    static func uninstall(_ invocation: Invocation) throws -> Int32 {
        let prefix = try installPrefix(invocation)
        var removed = 0
        try storeOperation {
            for path in Installation(prefix: prefix).paths where FileSystem.exists(path) {
                try FileSystem.remove(path)
                removed += 1
            }
        }
        invocation.note("removed \(Text.counted(removed, "file")) under \(prefix)")
        return ExitCode.success
    }

    /// `--prefix`, else `$PREFIX`, else `~/.local`.
    static func installPrefix(_ invocation: Invocation) throws -> String {
        let environment = invocation.context.environment
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 + "/.local" }
        guard let prefix = invocation.value(.prefix) ?? environment["PREFIX"].flatMap({ $0.isEmpty ? nil : $0 }) ?? home else {
            throw ItsypadError.failure("no prefix: pass --prefix DIR or set HOME")
        }
        return withoutTrailingSlash(FileSystem.absolute(prefix))
    }

    /// Whether `directory` is one of PATH's entries (compared as real paths where they exist).
    static func isOnPath(_ directory: String, _ path: String) -> Bool {
        let wanted = realPath(directory)
        return path.split(separator: ":").contains { !$0.isEmpty && realPath(String($0)) == wanted }
    }

    private static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return withoutTrailingSlash(path) }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func withoutTrailingSlash(_ path: String) -> String {
        path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    }
}

/// Where everything goes under a prefix, and what it holds.
struct Installation {
    let prefix: String

    /// Every file, in the order it is written: the binary last, so that a
    /// failed install does not leave a new binary without its pages.
    var paths: [String] { layout.map(\.path) }

    private var layout: [(path: String, mode: mode_t, content: Content)] {
        let root = CommandTable.root
        var files: [(path: String, mode: mode_t, content: Content)] = []
        for page in ManPage.pages(root: root) + [ManPage.backend] {
            let section = page.name.split(separator: ".").last.map(String.init) ?? "1"
            files.append((prefix + "/share/man/man\(section)/" + page.name, 0o644, .text(page.text)))
        }
        let completions = [
            (Shell.bash, "/share/bash-completion/completions/" + root.name),
            (Shell.zsh, "/share/zsh/site-functions/" + Shell.zsh.scriptName(for: root.name)),
            (Shell.fish, "/share/fish/vendor_completions.d/" + Shell.fish.scriptName(for: root.name)),
        ]
        for (shell, path) in completions {
            files.append((prefix + path, 0o644, .text(CompletionScript.generate(for: shell, root: root))))
        }
        files.append((prefix + "/bin/" + root.name, 0o755, .runningExecutable))
        return files
    }

    private enum Content {
        case text(String)
        case runningExecutable
    }

    /// The files with their bytes; the binary is the one running now.
    func files() throws -> [(path: String, mode: mode_t, bytes: [UInt8])] {
        try layout.map { file in
            switch file.content {
            case .text(let text): return (file.path, file.mode, Array(text.utf8))
            case .runningExecutable:
                guard let bytes = try FileSystem.read("/proc/self/exe"), !bytes.isEmpty else {
                    throw ItsypadError.failure("cannot read the running executable (/proc/self/exe)")
                }
                return (file.path, file.mode, bytes)
            }
        }
    }
}

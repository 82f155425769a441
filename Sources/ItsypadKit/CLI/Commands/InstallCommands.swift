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
                // The exact mode, whatever the umask, as install(1) sets it: on the new file, before it is renamed into place.
                try FileSystem.writeAtomically(file.path, file.bytes, mode: file.mode)
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

    /// Never follows a symlink below the prefix: a file reached through a linked directory is left, and named.
    static func uninstall(_ invocation: Invocation) throws -> Int32 {
        let prefix = try installPrefix(invocation)
        let tree = FileTree(root: prefix)
        var removed = 0
        var left: [String] = []
        try storeOperation {
            for path in Installation(prefix: prefix).paths {
                do {
                    if try tree.remove(path) { removed += 1 }
                } catch let error as FileSystemError where error.code == FileSystemError.notRegularFile {
                    left.append(path)
                }
            }
        }
        invocation.note("removed \(Text.counted(removed, "file")) under \(prefix)")
        guard left.isEmpty else {
            throw ItsypadError.failure(
                "left \(left.joined(separator: ", ")): a directory on the way is a symbolic link (or not a directory), which uninstall does not follow"
            )
        }
        return ExitCode.success
    }

    /// `--prefix`, else `$PREFIX`, else `~/.local`.
    static func installPrefix(_ invocation: Invocation) throws -> String {
        let environment = invocation.context.environment
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 + "/.local" }
        guard let prefix = invocation.value(.prefix) ?? environment["PREFIX"].flatMap({ $0.isEmpty ? nil : $0 }) ?? home else {
            throw ItsypadError.failure("no prefix: pass --prefix DIR or set HOME")
        }
        // The systemd unit names the binary on one line.
        guard !prefix.contains(where: { $0 == "\n" || $0 == "\r" }) else {
            throw ItsypadError.failure("the prefix must not hold a line break")
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
        let binary = prefix + "/bin/" + root.name
        files.append((prefix + "/share/systemd/user/" + SystemdUnit.syncWatchName, 0o644, .text(SystemdUnit.syncWatch(binary: binary))))
        files.append((prefix + "/share/systemd/user/" + SystemdUnit.clipWatchName, 0o644, .text(SystemdUnit.clipWatch(binary: binary))))
        files.append((binary, 0o755, .runningExecutable))
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

/// The systemd user unit `install` puts in PREFIX/share/systemd/user, where `systemctl --user`
/// finds it for ~/.local (XDG_DATA_HOME) and /usr/local (XDG_DATA_DIRS).
enum SystemdUnit {
    static let syncWatchName = "itsypad-sync-watch.service"

    /// Runs `binary sync watch`.
    static func syncWatch(binary: String) -> String {
        """
        # Live sync for itsypad: a systemd user service running `itsypad sync watch`, installed by `itsypad install`.
        #   systemctl --user enable --now \(syncWatchName)
        [Unit]
        Description=itsypad live sync (itsypad sync watch)
        Documentation=man:itsypad-sync(1)

        [Service]
        Type=exec
        ExecStart=\(quoted(binary)) sync watch
        # A failing sync does not stop the watcher (it logs and retries); it exits 1 only when
        # sync is not enabled or another watcher runs: try again now and then.
        Restart=on-failure
        RestartSec=60

        [Install]
        WantedBy=default.target

        """
    }

    static let clipWatchName = "itsypad-clip-watch.service"

    /// Runs `binary clip watch` with the graphical session, which puts WAYLAND_DISPLAY or
    /// DISPLAY in the user manager's environment (sway and GNOME do; see systemctl import-environment).
    static func clipWatch(binary: String) -> String {
        """
        # Clipboard history for itsypad: a systemd user service running `itsypad clip watch`, installed by `itsypad install`.
        #   systemctl --user enable --now \(clipWatchName)
        [Unit]
        Description=itsypad clipboard history (itsypad clip watch)
        Documentation=man:itsypad-clip(1)
        PartOf=graphical-session.target
        After=graphical-session.target

        [Service]
        Type=exec
        ExecStart=\(quoted(binary)) clip watch
        # Exit 75 when the compositor or X server went away: tried again. Exit 1 (no desktop, no
        # wl-clipboard or xclip) would fail the same way again: the next session starts it.
        Restart=on-failure
        RestartSec=5
        RestartPreventExitStatus=1 64

        [Install]
        WantedBy=graphical-session.target

        """
    }

    /// A path as ExecStart reads it back: specifiers (%) and variables ($) doubled, in double quotes
    /// when it holds a space, a quote or a backslash.
    static func quoted(_ path: String) -> String {
        let escaped = path.replacing("%", with: "%%").replacing("$", with: "$$")
        guard escaped.contains(where: { $0 == " " || $0 == "\"" || $0 == "'" || $0 == "\\" || $0 == "\t" }) else { return escaped }
        return "\"" + escaped.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
    }
}

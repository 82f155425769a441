import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// The command-line entry point: parses, dispatches through the command table,
/// reports errors with sysexits codes. The executable only calls `main`.
public enum Itsypad {
    public static let version = "0.1.0"

    /// Runs with the process's real streams and returns the exit status.
    public static func main(_ argv: [String]) -> Int32 {
        // The umask keeps its say over group and others, never over the owner: what itsypad makes is
        // 0700 and 0600 (a umask such as 0277 would make it unusable), and a user's file what it would be.
        umask(umask(0) & 0o077)
        let context = Context.process()
        let status: Int32
        if argv.count <= 1, let reason = unreadableCommandLine() {
            report(
                .failure("cannot read the command's arguments (/proc/self/cmdline: \(reason)); nothing was done"), names: [],
                context: context)
            status = ExitCode.failure
        } else {
            status = run(Array(argv.dropFirst()), context: context)
        }
        context.standardOutput.flush()
        context.standardError.flush()
        return status
    }

    /// Why the Swift runtime saw no arguments when it may have been given some: on Linux it reads them
    /// from /proc/self/cmdline, and sees none when that cannot be opened (every file descriptor in use
    /// under `ulimit -n 3`, no /proc). nil when it can be: the runtime read the same.
    private static func unreadableCommandLine() -> String? {
        let fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC)
        guard fd < 0 else {
            close(fd)
            return nil
        }
        return String(cString: strerror(errno))
    }

    /// Runs one command line in `context` (in-process tests call this).
    public static func run(_ arguments: [String], context: Context) -> Int32 {
        let root = CommandTable.root
        var names: [String] = []
        do {
            let parsed = try Parser(root: root).parse(arguments)
            names = parsed.names
            // The parser takes --version only before a subcommand: `itsypad --version clip ls` prints the version, as git does.
            if parsed.options[OptionName.version.rawValue] != nil, !parsed.wantsHelp {
                context.standardOutput.line(version)
                return ExitCode.success
            }
            guard !parsed.wantsHelp, let action = parsed.command.action else {
                context.standardOutput.write(HelpRenderer(root: root, width: context.columns).render(parsed.path))
                return ExitCode.success
            }
            let invocation = Invocation(parsed: parsed, context: context)
            defer { invocation.close() }
            return try action(invocation)
        } catch {
            let failure = ItsypadError.wrapping(error)
            report(failure, names: names, context: context)
            return failure.exitCode
        }
    }

    static func report(_ error: ItsypadError, names: [String], context: Context) {
        let err = context.standardError
        let label = context.stderrUsesColor ? "\u{1B}[1;31mError:\u{1B}[0m" : "Error:"
        // Messages quote names and paths that may come from elsewhere: made safe wherever they go (a log
        // read later on a terminal too); the lines of a tool's own message are kept.
        var message = Array(error.message.utf8)
        Text.makeTerminalSafe(&message, keepingNewlines: true)
        err.line("\(label) \(String(decoding: message, as: UTF8.self))")
        guard case .usage(_, let command) = error else { return }
        var path = [CommandTable.root]
        for name in command {
            guard let next = path.last?.subcommand(name) else { break }
            path.append(next)
        }
        err.line("Usage: " + HelpRenderer.usage(path))
        err.line("  See '\(HelpRenderer.fullName(path)) --help' for more information.")
    }
}

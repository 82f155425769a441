import ItsypadStore
import ItsypadSupport

/// The result of parsing a command line against the command table.
public struct ParsedCommand {
    /// Root first, the command to run last.
    public var path: [CommandSpec]
    /// Option values by long name; a flag given once has one empty value.
    public var options = OptionValues()
    public var arguments: [String] = []
    public var wantsHelp = false

    public var command: CommandSpec { path[path.count - 1] }
    /// The command names after the root, e.g. ["clip", "add"].
    public var names: [String] { path.dropFirst().map(\.name) }
}

/// The values given for each option, by long name, in the order the options first appear.
/// (Pairs in an array, not a dictionary: the first `[String: [String]]` of a run pays for a run-time
/// search for `String: Hashable` among the binary's conformances, at every start-up.)
public struct OptionValues {
    private var entries: [(name: String, values: [String])] = []

    /// The values given for `name`; nil when the option was not given.
    public subscript(name: String) -> [String]? {
        entries.first { $0.name == name }?.values
    }

    mutating func append(_ value: String, for name: String) {
        if let index = entries.firstIndex(where: { $0.name == name }) {
            entries[index].values.append(value)
        } else {
            entries.append((name, [value]))
        }
    }
}

/// Parses argv against the command table: git-style subcommands, `--long`,
/// `--long=value`, `-s value`, clustered short flags, `--` to end options.
/// The root command's global options are accepted at any depth; its others
/// (`--version`) only before a subcommand.
public struct Parser {
    public let root: CommandSpec

    public init(root: CommandSpec) { self.root = root }

    public func parse(_ tokens: [String]) throws -> ParsedCommand {
        var parsed = ParsedCommand(path: [root])
        var index = 0
        var endOfOptions = false
        while index < tokens.count {
            let token = tokens[index]
            index += 1
            if endOfOptions || token == "-" || !token.hasPrefix("-") {
                let command = parsed.command
                if !endOfOptions, parsed.arguments.isEmpty, let sub = command.subcommand(token) {
                    parsed.path.append(sub)
                } else if !command.subcommands.isEmpty, command.arguments.isEmpty, parsed.arguments.isEmpty, !parsed.wantsHelp {
                    let names = command.visibleSubcommands.map(\.name)
                    var message = "Unknown command '\(token)'."
                    if let suggestion = Text.suggestion(for: token, among: names) { message += " Did you mean '\(suggestion)'?" }
                    throw ItsypadError.usage(message, command: parsed.names)
                } else {
                    parsed.arguments.append(token)
                }
                continue
            }
            if token == "--" { endOfOptions = true; continue }
            if token.hasPrefix("--") {
                var name = String(token.dropFirst(2))
                var inline: String?
                if let equals = name.firstIndex(of: "=") {
                    inline = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
                let option = try lookup(long: name, in: parsed)
                try record(option, inline: inline, tokens: tokens, index: &index, into: &parsed)
            } else {
                var characters = Array(token.dropFirst())
                while !characters.isEmpty {
                    let letter = characters.removeFirst()
                    let option = try lookup(short: letter, in: parsed)
                    if option.isFlag {
                        try record(option, inline: nil, tokens: tokens, index: &index, into: &parsed)
                    } else {
                        try record(
                            option, inline: characters.isEmpty ? nil : String(characters), tokens: tokens, index: &index, into: &parsed)
                        characters = []
                    }
                }
            }
        }
        if !parsed.wantsHelp { try checkArguments(parsed) }
        return parsed
    }

    private func candidates(_ parsed: ParsedCommand) -> [OptionSpec] {
        parsed.path.count > 1 ? parsed.command.options + root.options.filter(\.isGlobal) : root.options
    }

    private func lookup(long name: String, in parsed: ParsedCommand) throws -> OptionSpec {
        let options = candidates(parsed)
        if let option = options.first(where: { $0.long == name }) { return option }
        var message = "Unknown option '--\(name)'."
        if let suggestion = Text.suggestion(for: name, among: options.map(\.long)) { message += " Did you mean '--\(suggestion)'?" }
        throw ItsypadError.usage(message, command: parsed.names)
    }

    private func lookup(short letter: Character, in parsed: ParsedCommand) throws -> OptionSpec {
        if let option = candidates(parsed).first(where: { $0.short == letter }) { return option }
        throw ItsypadError.usage("Unknown option '-\(letter)'.", command: parsed.names)
    }

    private func record(_ option: OptionSpec, inline: String?, tokens: [String], index: inout Int, into parsed: inout ParsedCommand) throws
    {
        if option.long == OptionName.help.rawValue { parsed.wantsHelp = true; return }
        if option.isFlag {
            if inline != nil { throw ItsypadError.usage("The flag '--\(option.long)' takes no value.", command: parsed.names) }
            parsed.options.append("", for: option.long)
            return
        }
        if let inline {
            parsed.options.append(inline, for: option.long)
        } else if index < tokens.count {
            parsed.options.append(tokens[index], for: option.long)
            index += 1
        } else {
            throw ItsypadError.usage("Missing value for '\(option.synopsis)'.", command: parsed.names)
        }
    }

    private func checkArguments(_ parsed: ParsedCommand) throws {
        let specs = parsed.command.arguments
        let required = specs.filter { $0.arity == .required || $0.arity == .requiredVariadic }
        if parsed.arguments.count < required.count {
            let missing = required[parsed.arguments.count]
            throw ItsypadError.usage("Missing expected argument '\(missing.synopsis)'.", command: parsed.names)
        }
        let unbounded = specs.contains { $0.arity == .variadic || $0.arity == .requiredVariadic }
        if !unbounded, parsed.arguments.count > specs.count {
            let extra = parsed.arguments[specs.count]
            throw ItsypadError.usage("Unexpected argument '\(extra)'.", command: parsed.names)
        }
    }
}

/// A parsed command line with its context: what a command's action receives.
public final class Invocation {
    public let parsed: ParsedCommand
    public let context: Context
    private var openedStore: DataStore?
    private var warnedAboutExposure = false

    init(parsed: ParsedCommand, context: Context) {
        self.parsed = parsed
        self.context = context
    }

    public var arguments: [String] { parsed.arguments }
    public func flag(_ option: OptionName) -> Bool { values(option) != nil }
    /// The last value given for an option.
    public func value(_ option: OptionName) -> String? { values(option)?.last }

    /// An integer option within `range`; a usage error otherwise.
    public func integer(_ option: OptionName, in range: ClosedRange<Int>) throws -> Int? {
        guard let text = value(option) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw usage("'--\(option.rawValue)' takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'.")
        }
        return number
    }

    /// Every option the action has asked about, given or not: a test checks
    /// each against the command's entry in the table, since reading an option
    /// the entry lacks would silently see it unset.
    /// (An array: a `Set` of a type of ours costs every command a run-time conformance search at start-up.)
    private(set) var optionsRead: [OptionName] = []

    private func values(_ option: OptionName) -> [String]? {
        if !optionsRead.contains(option) { optionsRead.append(option) }
        return parsed.options[option.rawValue]
    }

    public func usage(_ message: String) -> ItsypadError { .usage(message, command: parsed.names) }

    public var quiet: Bool { flag(.quiet) }

    public var out: OutputBuffer { context.standardOutput }

    /// A message for a person on stderr: only on a terminal and without -q,
    /// so that cron mails only failures. Like every message, made safe for a terminal.
    public func note(_ message: String) {
        if !quiet && context.stderrIsTerminal { context.standardError.line(message, terminalSafe: true) }
    }

    public func warn(_ message: String) { context.standardError.line("warning: " + message, terminalSafe: true) }

    /// Long work's progress on stderr, one line redrawn in place (`ProgressLine`): only when stderr
    /// is a terminal and without -q, so that nothing of it goes through a pipe or into cron's mail.
    package func progress(_ label: String, done: Int, of total: Int?, unit: ProgressLine.Unit = .records) {
        guard !quiet, context.stderrIsTerminal else { return }
        progressLine.update(label, done: done, of: total, unit: unit)
    }

    /// Erases the progress line, at once: standard output, written later, must
    /// not land on the line the progress used.
    public func endProgress() { progressLine.finish() }

    private lazy var progressLine = ProgressLine(draw: { [context] text in
        context.standardError.write(text)
        context.standardError.flush()
    })

    /// The data directory's path, as given or by default.
    public func dataDirectory() throws -> String {
        // An empty --data-dir would make the current directory a data directory.
        if value(.dataDirectory)?.isEmpty == true { throw usage("'--data-dir' needs a directory, not an empty string.") }
        guard let path = value(.dataDirectory) ?? DataStore.defaultPath(variable: context.variable) else {
            throw ItsypadError.failure("no data directory: set HOME, ITSYPAD_DATA_DIR or pass --data-dir")
        }
        return FileSystem.absolute(path)
    }

    /// The data directory, opened and locked on first use (`lockTimeout` overrides ITSYPAD_LOCK_TIMEOUT).
    public func store(lockTimeout: Double? = nil) throws -> DataStore {
        if let openedStore { return openedStore }
        let timeout = lockTimeout ?? context.variable("ITSYPAD_LOCK_TIMEOUT").flatMap(Double.init) ?? 10
        let store = try DataStore(path: try dataDirectory(), lockTimeout: timeout, warn: { [weak self] in self?.warn($0) })
        if let mode = store.exposure, !warnedAboutExposure {
            warnedAboutExposure = true
            warn(Invocation.exposureWarning("the data directory", store.path, mode))
        }
        openedStore = store
        return store
    }

    /// One line on stderr, the way ssh treats a private key others can read.
    static func exposureWarning(_ what: String, _ path: String, _ mode: UInt32) -> String {
        "\(what) \(path) is accessible by other users (mode \(String(mode, radix: 8))); run 'chmod 700 \(path)'"
    }

    /// Releases the data directory's lock.
    func close() {
        openedStore?.close()
        openedStore = nil
    }
}

/// What a shell should offer when completing a value.
public enum CompletionKind: Sendable, Equatable {
    case none
    case file
    case directory
    case values([String])
    /// Asked of the binary at completion time (`itsypad __complete KIND`).
    case dynamic(DynamicCompletion)
    /// Command names as `help` takes them: the subcommands of the command the
    /// arguments before this one name.
    case commandPath
    /// A value for the setting that the first argument names (`settings set KEY VALUE`).
    case settingValue
}

/// Candidates only the data directory knows.
public enum DynamicCompletion: String, Sendable, CaseIterable {
    case tabs, clips, settingKeys = "setting-keys", languages
}

/// An option: `--long`, optional `-s`, and a value unless it is a flag.
public struct OptionSpec: Sendable {
    public let long: String
    public let short: Character?
    /// The value's placeholder (e.g. "NAME"); nil for a flag.
    public let valueName: String?
    public let help: String
    public let completion: CompletionKind
    /// For an option of the root command: whether it is also accepted after a
    /// subcommand (`--data-dir`), or only before one (`--version`, as git does).
    public let isGlobal: Bool

    public init(
        _ long: String, short: Character? = nil, value: String? = nil, help: String, completion: CompletionKind = .none,
        isGlobal: Bool = true
    ) {
        self.long = long
        self.short = short
        self.valueName = value
        self.help = help
        self.completion = completion
        self.isGlobal = isGlobal
    }

    public var isFlag: Bool { valueName == nil }

    /// `-s, --long <VALUE>` as help shows it.
    public var synopsis: String {
        let names = (short.map { "-\($0), " } ?? "") + "--" + long
        return valueName.map { names + " <\($0.lowercased())>" } ?? names
    }
}

/// A positional argument.
public struct ArgumentSpec: Sendable {
    public enum Arity: Sendable { case required, optional, variadic, requiredVariadic }

    public let name: String
    public let help: String
    public let arity: Arity
    public let completion: CompletionKind

    public init(_ name: String, _ arity: Arity = .required, help: String, completion: CompletionKind = .none) {
        self.name = name
        self.arity = arity
        self.help = help
        self.completion = completion
    }

    public var synopsis: String {
        let base = "<\(name)>"
        switch arity {
        case .required: return base
        case .optional: return "[\(base)]"
        case .variadic: return "[\(base) ...]"
        case .requiredVariadic: return "\(base) ..."
        }
    }
}

/// A worked example shown in help and man pages.
public struct Example: Sendable {
    public let command: String
    public let explanation: String

    public init(_ command: String, _ explanation: String) {
        self.command = command
        self.explanation = explanation
    }
}

/// What a command does when run.
public typealias CommandAction = @Sendable (Invocation) throws -> Int32

/// One node of the command table. The same table drives parsing, help,
/// completions and man pages, so they cannot drift apart.
public struct CommandSpec: Sendable {
    public let name: String
    /// Other names the command is run by (`ls` for `list`): parsed, completed and shown beside the name.
    public let aliases: [String]
    public let abstract: String
    public let discussion: String?
    public let arguments: [ArgumentSpec]
    public let options: [OptionSpec]
    public let subcommands: [CommandSpec]
    public let examples: [Example]
    public let hidden: Bool
    public let action: CommandAction?

    public init(
        _ name: String, aliases: [String] = [], abstract: String, discussion: String? = nil, arguments: [ArgumentSpec] = [],
        options: [OptionSpec] = [], subcommands: [CommandSpec] = [], examples: [Example] = [],
        hidden: Bool = false, action: CommandAction? = nil
    ) {
        self.name = name
        self.aliases = aliases
        self.abstract = abstract
        self.discussion = discussion
        self.arguments = arguments
        self.options = options
        self.subcommands = subcommands
        self.examples = examples
        self.hidden = hidden
        self.action = action
    }

    public func subcommand(_ name: String) -> CommandSpec? { subcommands.first { $0.name == name || $0.aliases.contains(name) } }

    /// The name and its aliases, as help and man pages show them: "list, ls".
    public var names: String { ([name] + aliases).joined(separator: ", ") }

    /// The same command under one of its aliases, for the completion scripts.
    func named(_ alias: String) -> CommandSpec {
        CommandSpec(
            alias, abstract: abstract, discussion: discussion, arguments: arguments, options: options, subcommands: subcommands,
            examples: examples, hidden: hidden, action: action)
    }

    public var visibleSubcommands: [CommandSpec] { subcommands.filter { !$0.hidden } }
}

import ItsypadSupport

/// Renders help from the command table, laid out like swift-argument-parser.
public struct HelpRenderer {
    public let root: CommandSpec
    public let width: Int

    static let labelWidth = 26

    public init(root: CommandSpec, width: Int) {
        self.root = root
        self.width = max(width, 40)
    }

    /// The full command name, e.g. "itsypad clip add".
    static func fullName(_ path: [CommandSpec]) -> String { path.map(\.name).joined(separator: " ") }

    /// The synopsis after "USAGE:".
    public static func usage(_ path: [CommandSpec]) -> String {
        let command = path[path.count - 1]
        var parts = [fullName(path)]
        let options = path.count == 1 ? command.options.filter { $0.long != "help" } : command.options
        if options.count > 4 {
            parts.append("[<options>]")
        } else {
            for option in options {
                parts.append("[" + (option.isFlag ? "--\(option.long)" : "--\(option.long) <\(option.valueName!.lowercased())>") + "]")
            }
        }
        parts += command.arguments.map(\.synopsis)
        if !command.visibleSubcommands.isEmpty {
            parts.append(command.action == nil ? "<subcommand>" : "[<subcommand>]")
        }
        return parts.joined(separator: " ")
    }

    public func render(_ path: [CommandSpec]) -> String {
        let command = path[path.count - 1]
        var sections: [String] = []
        sections.append(wrapped("OVERVIEW: " + command.abstract, indent: 0))
        if let discussion = command.discussion {
            sections.append(
                discussion.split(separator: "\n", omittingEmptySubsequences: false)
                    .map { wrapped(String($0), indent: 0) }.joined(separator: "\n"))
        }
        sections.append(wrapped("USAGE: " + HelpRenderer.usage(path), indent: 7, first: 0))
        if !command.arguments.isEmpty {
            sections.append("ARGUMENTS:\n" + command.arguments.map { row("<\($0.name)>", $0.help) }.joined(separator: "\n"))
        }
        var options = command.options
        if path.count > 1 { options.append(HelpRenderer.helpOption) }
        if !options.isEmpty {
            sections.append("OPTIONS:\n" + options.map { row($0.synopsis, $0.help) }.joined(separator: "\n"))
        }
        let subcommands = command.visibleSubcommands
        if !subcommands.isEmpty {
            let rows = subcommands.map { row($0.names, $0.abstract) }
            // `help` takes the whole path: "itsypad help tab <subcommand>".
            let helpPath = ([root.name, "help"] + path.dropFirst().map(\.name)).joined(separator: " ")
            sections.append("SUBCOMMANDS:\n" + rows.joined(separator: "\n") + "\n\n  See '\(helpPath) <subcommand>' for detailed help.")
        }
        if !command.examples.isEmpty {
            sections.append(
                "EXAMPLES:\n"
                    + command.examples.map {
                        wrapped($0.command, indent: 4, first: 2) + "\n" + wrapped($0.explanation, indent: 6)
                    }.joined(separator: "\n"))
        }
        return sections.joined(separator: "\n\n") + "\n"
    }

    static let helpOption = OptionSpec("help", short: "h", help: "Show help information.")

    private func row(_ label: String, _ help: String) -> String {
        let column = HelpRenderer.labelWidth
        let lines = Text.wrap(help, width: width - column).split(separator: "\n").map(String.init)
        let body = lines.joined(separator: "\n" + String(repeating: " ", count: column))
        let labelColumn = "  " + label
        if labelColumn.count < column {
            return labelColumn + String(repeating: " ", count: column - labelColumn.count) + body
        }
        return labelColumn + "\n" + String(repeating: " ", count: column) + body
    }

    private func wrapped(_ text: String, indent: Int, first: Int? = nil) -> String {
        Text.wrap(text, width: width, indent: indent, firstIndent: first ?? indent)
    }
}

/// The shells itsypad writes completion scripts for.
public enum Shell: String, CaseIterable, Sendable {
    case bash, zsh, fish

    /// The name the script is installed and committed under (`completions/…`).
    public func scriptName(for command: String) -> String {
        switch self {
        case .bash: return command + ".bash"
        case .zsh: return "_" + command
        case .fish: return command + ".fish"
        }
    }
}

/// Completion scripts generated from the command table.
///
/// Every script has the same two halves: lookup functions generated from the
/// table (a command's subcommands, options, option values and positional
/// arguments, keyed by the command's path such as "clip ls"), and a fixed
/// engine that walks the words typed so far to find that path. Ids, names and
/// setting keys are asked of the binary at completion time through the hidden
/// `__complete KIND` command, passing `--data-dir` on when it was typed.
public enum CompletionScript {
    /// The script for `shell`, completing `root` and everything under it.
    public static func generate(for shell: Shell, root: CommandSpec) -> String {
        let nodes = CompletionNode.walk(root)
        switch shell {
        case .bash: return bash(root.name, nodes)
        case .zsh: return zsh(root.name, nodes)
        case .fish: return fish(root.name, nodes)
        }
    }

    /// The global option the engines pass on to `__complete`, so that ids come
    /// from the data directory the command line names.
    static let dataDirectory = "--data-dir"

    // MARK: bash

    static func bash(_ name: String, _ nodes: [CompletionNode]) -> String {
        let subcommands = nodes.filter { !$0.subcommands.isEmpty }.map {
            "\(quote($0.path))) REPLY=\(quote($0.subcommands.map(\.name).joined(separator: " "))) ;;"
        }
        let options = nodes.map {
            "\(quote($0.path))) REPLY=\(quote(optionWords($0.options).joined(separator: " "))) ;;"
        }
        return header(name, .bash) + """

            # The subcommands of command $1.
            _\(name)_subcommands() {
                case $1 in
            \(arms(subcommands))
                esac
            }

            # The options of command $1, global ones included.
            _\(name)_options() {
                case $1 in
            \(arms(options))
                esac
            }

            \(kindFunctions(name, nodes))

            """ + #"""

            # Adds the candidates of kind $1 that start with $cur to COMPREPLY.
            _\#(name)_add() {
                local line
                case ${1%% *} in
                    file) compopt -o filenames 2>/dev/null; mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur") ;;
                    directory) compopt -o filenames 2>/dev/null; mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -- "$cur") ;;
                    words) mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -W "${1#words }" -- "$cur") ;;
                    dynamic)
                        # The binary prints "value<TAB>description" lines; bash shows values only. A value
                        # may hold spaces (a tab's name): after an opening quote it is offered as it is
                        # (readline closes the quote), otherwise escaped as the shell reads it back.
                        local quote='' prefix=$cur
                        [[ $cur == [\'\"]* ]] && quote=${cur:0:1} prefix=${cur:1}
                        while IFS=$'\t' read -r line _; do
                            [[ -z $quote ]] && printf -v line '%q' "$line"
                            [[ $line == "$prefix"* ]] && COMPREPLY+=("$line")
                        done < <("${COMP_WORDS[0]}" "${data_dir[@]}" __complete "${1#dynamic }" 2>/dev/null) ;;
                    command-path) _\#(name)_subcommands "${positional[*]}" && _\#(name)_add "words $REPLY" ;;
                    setting-value) _\#(name)_setting_value "${positional[0]}" && _\#(name)_add "$REPLY" ;;
                esac
            }

            _\#(name)() {
                local cur=${COMP_WORDS[COMP_CWORD]} cmd='' word
                local -a data_dir=() positional=()
                local -i i args=0 ended=0
                COMPREPLY=()
                for ((i = 1; i < COMP_CWORD; i++)); do
                    word=${COMP_WORDS[i]}
                    if ((ended)) || [[ $word != -?* ]]; then
                        # A subcommand's name descends into it, unless an argument came first.
                        if ((!ended && args == 0)) && _\#(name)_subcommands "$cmd" && [[ " $REPLY " == *" $word "* ]]; then
                            cmd=${cmd:+$cmd }$word
                        else
                            args+=1
                            positional+=("$word")
                        fi
                    elif [[ $word == -- ]]; then
                        ended=1
                    elif [[ $word == \#(dataDirectory)=* ]]; then
                        data_dir=("$word")
                    elif _\#(name)_option_value "$cmd" "$word"; then
                        # Bash splits "--option=value" into three words at the "=".
                        [[ ${COMP_WORDS[i + 1]} == = ]] && i+=1
                        if ((i + 1 >= COMP_CWORD)); then
                            [[ $cur == = ]] && cur=''
                            _\#(name)_add "$REPLY"
                            return
                        fi
                        i+=1
                        [[ $word == \#(dataDirectory) ]] && data_dir=(\#(dataDirectory) "${COMP_WORDS[i]/#\~/$HOME}")
                    fi
                done
                if ((!ended)) && [[ $cur == -* ]]; then
                    _\#(name)_options "$cmd" && _\#(name)_add "words $REPLY"
                    return
                fi
                ((!ended && args == 0)) && _\#(name)_subcommands "$cmd" && _\#(name)_add "words $REPLY"
                _\#(name)_argument "$cmd" "$args" && _\#(name)_add "$REPLY"
            }

            complete -F _\#(name) \#(name)

            """#
    }

    // MARK: zsh

    static func zsh(_ name: String, _ nodes: [CompletionNode]) -> String {
        let subcommands = nodes.filter { !$0.subcommands.isEmpty }.map {
            "\(quote($0.path))) reply=(\($0.subcommands.map { quote(describe($0.name, $0.abstract)) }.joined(separator: " "))) ;;"
        }
        let options = nodes.map { node in
            let entries = node.options.flatMap { option in optionWords([option]).map { quote(describe($0, option.help)) } }
            return "\(quote(node.path))) reply=(\(entries.joined(separator: " "))) ;;"
        }
        return "#compdef \(name)\n" + header(name, .zsh) + """

            # The subcommands of command $1, as "name:description".
            _\(name)_subcommands() {
                case $1 in
            \(arms(subcommands))
                esac
            }

            # The options of command $1, global ones included, as "option:description".
            _\(name)_options() {
                case $1 in
            \(arms(options))
                esac
            }

            \(kindFunctions(name, nodes))

            """ + #"""

            # Offers the candidates of kind $1.
            _\#(name)_add() {
                local -a candidates
                local line
                case ${1%% *} in
                    file) _files ;;
                    directory) _files -/ ;;
                    words) candidates=(${=1#words }); compadd -a candidates ;;
                    dynamic)
                        # The binary prints "value<TAB>description" lines; _describe wants "value:description".
                        for line in "${(@f)$("${words[1]}" "${data_dir[@]}" __complete "${1#dynamic }" 2>/dev/null)}"; do
                            [[ -n $line ]] && candidates+=("${${line%%$'\t'*}//:/\\:}:${line#*$'\t'}")
                        done
                        _describe -t values value candidates ;;
                    command-path) _\#(name)_subcommands "${positional[*]}" && _describe -t commands command reply ;;
                    setting-value) _\#(name)_setting_value "$positional[1]" && _\#(name)_add "$REPLY" ;;
                esac
            }

            _\#(name)() {
                local cmd='' word REPLY
                local -a reply data_dir positional
                integer i args=0 ended=0
                for ((i = 2; i < CURRENT; i++)); do
                    word=$words[i]
                    if ((ended)) || [[ $word != -?* ]]; then
                        # A subcommand's name descends into it, unless an argument came first.
                        if ((!ended && args == 0)) && _\#(name)_subcommands "$cmd" && ((${reply[(I)${(b)word}:*]})); then
                            cmd=${cmd:+$cmd }$word
                        else
                            ((args += 1))
                            positional+=("$word")
                        fi
                    elif [[ $word == -- ]]; then
                        ended=1
                    elif [[ $word == \#(dataDirectory)=* ]]; then
                        data_dir=("$word")
                    elif _\#(name)_option_value "$cmd" "$word"; then
                        if ((i + 1 == CURRENT)); then
                            _\#(name)_add "$REPLY"
                            return
                        fi
                        ((i += 1))
                        [[ $word == \#(dataDirectory) ]] && data_dir=(\#(dataDirectory) "${words[i]/#\~/$HOME}")
                    fi
                done
                if ((!ended)) && [[ $PREFIX == -* ]]; then
                    if [[ $PREFIX == --*=* ]] && _\#(name)_option_value "$cmd" "${PREFIX%%=*}"; then
                        compset -P '*='
                        _\#(name)_add "$REPLY"
                    elif _\#(name)_options "$cmd"; then
                        _describe -t options option reply
                    fi
                    return
                fi
                ((!ended && args == 0)) && _\#(name)_subcommands "$cmd" && _describe -t commands command reply
                _\#(name)_argument "$cmd" "$args" && _\#(name)_add "$REPLY"
            }

            # Autoloaded from $fpath the file is the function's body; sourced, it registers itself.
            if [[ $funcstack[1] == _\#(name) ]]; then
                _\#(name) "$@"
            else
                compdef _\#(name) \#(name)
            fi

            """#
    }

    /// An `_describe` entry: colons in the name would end it early.
    private static func describe(_ name: String, _ description: String) -> String {
        name.replacing(":", with: "\\:") + ":" + description
    }

    // MARK: bash and zsh

    /// The two lookups bash and zsh share (their `case` syntax is the same): the
    /// kind of an option's value and of a positional argument. A kind is
    /// "none", "file", "directory", "words WORD…", "dynamic KIND", "command-path"
    /// (the subcommands of the arguments typed so far) or "setting-value"
    /// (looked up by the first argument, a setting's key).
    private static func kindFunctions(_ name: String, _ nodes: [CompletionNode]) -> String {
        var values: [String] = []
        for node in nodes {
            // The root's options are global: one arm matches them under every command.
            for option in node.ownOptions where !option.isFlag {
                let labels = optionWords([option]).map { node.path.isEmpty ? "*:" + $0 : quote(node.path + ":" + $0) }
                values.append("\(labels.joined(separator: " | "))) REPLY=\(quote(kindWord(option.completion))) ;;")
            }
        }
        var arguments: [String] = []
        // A command whose arguments complete nothing needs no arm; otherwise each
        // argument has one, in order, so that a variadic last one only catches the rest.
        for node in nodes where node.arguments.contains(where: { $0.completion != .none }) {
            for (index, argument) in node.arguments.enumerated() {
                let label = argument.isVariadic ? quote(node.path + ":") + "*" : quote(node.path + ":\(index)")
                arguments.append("\(label)) REPLY=\(quote(kindWord(argument.completion))) ;;")
            }
        }
        let settingValues = settingCompletions.map { "\($0.keys.map(quote).joined(separator: " | "))) REPLY=\(quote(kindWord($0.kind))) ;;" }
        return """
            # The kind of the value of option $2 of command $1; fails for a flag.
            _\(name)_option_value() {
                case $1:$2 in
            \(arms(values))
                esac
            }

            # The kind of a value for setting $1.
            _\(name)_setting_value() {
                case $1 in
            \(arms(settingValues))
                esac
            }

            # The kind of positional argument $2 (from 0) of command $1.
            _\(name)_argument() {
                case $1:$2 in
            \(arms(arguments))
                esac
            }
            """
    }

    private static func kindWord(_ kind: CompletionKind) -> String {
        switch kind {
        case .none: return "none"
        case .file: return "file"
        case .directory: return "directory"
        case .values(let words): return (["words"] + words).joined(separator: " ")
        case .dynamic(let dynamic): return "dynamic " + dynamic.rawValue
        case .commandPath: return "command-path"
        case .settingValue: return "setting-value"
        }
    }

    /// What to offer as each setting's value, settings grouped by it (in table order).
    static var settingCompletions: [(keys: [String], kind: CompletionKind)] {
        var groups: [(keys: [String], kind: CompletionKind)] = []
        for definition in Settings.all {
            let kind: CompletionKind
            switch definition.kind {
            case .path: kind = .directory
            default: kind = definition.kind.suggestions.isEmpty ? .none : .values(definition.kind.suggestions)
            }
            guard kind != .none else { continue }
            if let index = groups.firstIndex(where: { $0.kind == kind }) { groups[index].keys.append(definition.key) } else { groups.append(([definition.key], kind)) }
        }
        return groups
    }

    /// `case` arms, indented, ending with one that fails for anything else.
    private static func arms(_ lines: [String]) -> String {
        (lines + ["*) return 1 ;;"]).map { "        " + $0 }.joined(separator: "\n")
    }

    /// Single-quoted for bash and zsh.
    private static func quote(_ text: String) -> String {
        "'" + text.replacing("'", with: #"'\''"#) + "'"
    }

    // MARK: fish

    static func fish(_ name: String, _ nodes: [CompletionNode]) -> String {
        let subcommands = nodes.filter { !$0.subcommands.isEmpty }.map {
            "        case \(fishQuote($0.path))\n            printf '%s\\n' \($0.subcommands.map { fishWord($0.name) }.joined(separator: " "))"
        }
        let valueOptions = nodes.map { node in
            let words = optionWords(node.options.filter { !$0.isFlag }).map(fishWord)
            return "        case \(fishQuote(node.path))\n            printf '%s\\n' \(words.joined(separator: " "))"
        }
        var lines = ["# Files only where an option or argument asks for them.", "complete -c \(name) -f"]
        for node in nodes {
            lines.append("")
            lines.append("# \(([name] + (node.path.isEmpty ? [] : [node.path])).joined(separator: " "))")
            // The root's global options are offered everywhere, with no condition.
            let at = "__\(name)_at \"\(node.path)\""
            for option in node.ownOptions {
                var words = ["complete -c", name]
                if !node.path.isEmpty || !option.isGlobal { words += ["-n", fishQuote(at)] }
                if let short = option.short { words += ["-s", fishWord(String(short))] }
                words += ["-l", fishWord(option.long)]
                if !option.isFlag { words.append(fishValue(option.completion, name: name, required: true)) }
                words += ["-d", fishQuote(option.help)]
                lines.append(words.joined(separator: " "))
            }
            for command in node.subcommands {
                let condition = fishQuote("__\(name)_at \"\(node.path)\" 0")
                lines.append("complete -c \(name) -n \(condition) -a \(fishWord(command.name)) -d \(fishQuote(command.abstract))")
            }
            for (index, argument) in node.arguments.enumerated() where argument.completion != .none {
                let position = argument.isVariadic ? "\(index)+" : String(index)
                let condition = fishQuote("__\(name)_at \"\(node.path)\" \(position)")
                lines.append("complete -c \(name) -n \(condition) \(fishValue(argument.completion, name: name, required: false))")
            }
        }
        let settingValues = settingCompletions.map { group in
            "        case \(group.keys.map(fishWord).joined(separator: " "))\n            " + fishSettingValue(group.kind)
        }
        return header(name, .fish) + """

            # The subcommands of command $argv[1], one per line.
            function __\(name)_subcommands
                switch $argv[1]
            \(subcommands.joined(separator: "\n"))
                end
            end

            # The options of command $argv[1] that take a value, global ones included.
            function __\(name)_value_options
                switch $argv[1]
            \(valueOptions.joined(separator: "\n"))
                end
            end

            # The values to offer for setting $argv[1].
            function __\(name)_setting_value
                switch $argv[1]
            \(settingValues.joined(separator: "\n"))
                end
            end
            """ + #"""


            # Prints the command typed so far (e.g. "clip ls"), how many positional
            # arguments follow it, those arguments on one line, then the --data-dir
            # option if one was given.
            function __\#(name)_state
                set -l tokens (commandline -opc)
                set -l cmd ''
                set -l args 0
                set -l positional
                set -l ended 0
                set -l data_dir
                set -l i 2
                while test $i -le (count $tokens)
                    set -l word $tokens[$i]
                    if test $ended = 0; and string match -q -- '-?*' $word
                        switch $word
                            case --
                                set ended 1
                            case '\#(dataDirectory)=*'
                                set data_dir $word
                            case '*'
                                if contains -- $word (__\#(name)_value_options "$cmd")
                                    set i (math $i + 1)
                                    test "$word" = \#(dataDirectory); and set data_dir \#(dataDirectory) $tokens[$i]
                                end
                        end
                    else if test $ended = 0 -a $args = 0; and contains -- $word (__\#(name)_subcommands "$cmd")
                        # A subcommand's name descends into it, unless an argument came first.
                        set cmd (string trim -- "$cmd $word")
                    else
                        set args (math $args + 1)
                        set -a positional $word
                    end
                    set i (math $i + 1)
                end
                printf '%s\n' "$cmd" $args "$positional" $data_dir
            end

            # Succeeds when the command typed so far is $argv[1] and, given $argv[2],
            # the word being completed is positional argument $argv[2] ("N+": N or later).
            function __\#(name)_at
                set -l state (__\#(name)_state)
                test "$state[1]" = "$argv[1]"; or return 1
                set -q argv[2]; or return 0
                switch $argv[2]
                    case '*+'
                        test $state[2] -ge (string trim -r -c + -- $argv[2])
                    case '*'
                        test $state[2] -eq $argv[2]
                end
            end

            # "value<TAB>description" lines from the binary: ids, names, setting keys.
            function __\#(name)_complete
                set -l state (__\#(name)_state)
                set -l tokens (commandline -opc)
                $tokens[1] $state[4..-1] __complete $argv[1] 2>/dev/null
            end

            # Command names for help: the subcommands of the arguments typed so far.
            function __\#(name)_command_path
                set -l state (__\#(name)_state)
                __\#(name)_subcommands "$state[3]"
            end

            # Values for the setting named by the first argument.
            function __\#(name)_setting_values
                set -l state (__\#(name)_state)
                __\#(name)_setting_value (string split -m 1 ' ' -- $state[3])[1]
            end


            """# + lines.joined(separator: "\n") + "\n"
    }

    /// The `complete` flags offering a value of `kind`.
    private static func fishValue(_ kind: CompletionKind, name: String, required: Bool) -> String {
        let words: String
        switch kind {
        case .none: return required ? "-x" : ""
        case .file: return required ? "-r -F" : "-F"
        case .directory: words = fishQuote("(__fish_complete_directories)")
        case .values(let values): words = fishQuote(values.joined(separator: " "))
        case .dynamic(let dynamic): words = fishQuote("(__\(name)_complete \(dynamic.rawValue))")
        case .commandPath: words = fishQuote("(__\(name)_command_path)")
        case .settingValue: words = fishQuote("(__\(name)_setting_values)")
        }
        return (required ? "-x " : "") + "-a " + words
    }

    /// The body of one arm of `__NAME_setting_value`: the values, one per line.
    private static func fishSettingValue(_ kind: CompletionKind) -> String {
        switch kind {
        case .directory: return "__fish_complete_directories (commandline -ct)"
        case .values(let values): return "printf '%s\\n' " + values.map(fishWord).joined(separator: " ")
        default: return "return"
        }
    }

    /// A word as is when fish would read it unchanged, else quoted.
    private static func fishWord(_ text: String) -> String {
        let plain = !text.isEmpty && text.allSatisfy { $0.isLetter || $0.isNumber || "-_.=+/".contains($0) }
        return plain ? text : fishQuote(text)
    }

    private static func fishQuote(_ text: String) -> String {
        "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
    }

    // MARK: shared

    private static func header(_ name: String, _ shell: Shell) -> String {
        let destination: String
        switch shell {
        case .bash: destination = "~/.local/share/bash-completion/completions/\(name)"
        case .zsh: destination = "a directory in $fpath, as \(shell.scriptName(for: name))"
        case .fish: destination = "~/.config/fish/completions/\(shell.scriptName(for: name))"
        }
        return """
            # \(shell.rawValue) completion for \(name)
            # Generated by `\(name) completions \(shell.rawValue)` from the command table: do not edit.
            # Install: save that output to \(destination).

            """
    }

    /// `-s` and `--long` for each option, in table order.
    private static func optionWords(_ options: [OptionSpec]) -> [String] {
        options.flatMap { option in (option.short.map { ["-\($0)"] } ?? []) + ["--" + option.long] }
    }
}

/// One visible command as the completion scripts see it.
struct CompletionNode {
    /// The names after the root, space-separated: "" for the root, "clip ls".
    let path: String
    let subcommands: [CommandSpec]
    /// The command's own options; the root's are the global ones.
    let ownOptions: [OptionSpec]
    /// Everything that may be typed here: own options, then the global ones.
    let options: [OptionSpec]
    let arguments: [ArgumentSpec]

    /// `root` and every visible command under it, parents first.
    static func walk(_ root: CommandSpec) -> [CompletionNode] {
        func visit(_ command: CommandSpec, _ names: [String]) -> [CompletionNode] {
            let node = CompletionNode(path: names.joined(separator: " "), subcommands: command.visibleSubcommands,
                                      ownOptions: command.options,
                                      options: names.isEmpty ? command.options : command.options + root.options.filter(\.isGlobal),
                                      arguments: command.arguments)
            return [node] + command.visibleSubcommands.flatMap { visit($0, names + [$0.name]) }
        }
        return visit(root, [])
    }
}

extension ArgumentSpec {
    /// Whether the argument takes every remaining word.
    var isVariadic: Bool { arity == .variadic || arity == .requiredVariadic }
}

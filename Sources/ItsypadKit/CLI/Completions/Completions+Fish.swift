extension CompletionScript {
    /// The fish script: one `complete` line per option, subcommand and argument,
    /// conditioned on the command typed so far.
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
}

extension CompletionScript {
    /// The zsh script: an autoloadable `#compdef` function offering values with descriptions.
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
}

extension CompletionScript {
    /// The bash script: `complete -F` with a function that walks `COMP_WORDS`.
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
}

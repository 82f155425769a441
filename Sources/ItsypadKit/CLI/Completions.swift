/// The shells itsypad writes completion scripts for.
public enum Shell: String, CaseIterable, Sendable {
    case bash, zsh, fish
}

/// Completion scripts generated from the command table.
public enum CompletionScript {
    public static func generate(for shell: Shell, root: CommandSpec) -> String {
        ""
    }
}

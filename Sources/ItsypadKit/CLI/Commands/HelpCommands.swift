import ItsypadModel
import ItsypadStore
import ItsypadSupport

/// `itsypad help`, `itsypad completions` and the hidden `__complete`.
enum HelpCommands {
    static func help(_ invocation: Invocation) throws -> Int32 {
        var path = [CommandTable.root]
        for name in invocation.arguments {
            guard let next = path[path.count - 1].subcommand(name) else {
                var message = "Unknown command '\(name)'."
                let names = path[path.count - 1].visibleSubcommands.map(\.name)
                if let suggestion = Text.suggestion(for: name, among: names) { message += " Did you mean '\(suggestion)'?" }
                throw invocation.usage(message)
            }
            path.append(next)
        }
        invocation.out.write(HelpRenderer(root: CommandTable.root, width: invocation.context.columns).render(path))
        return ExitCode.success
    }

    static func completions(_ invocation: Invocation) throws -> Int32 {
        let name = invocation.arguments[0]
        guard let shell = Shell(rawValue: name) else {
            throw invocation.usage("Unknown shell '\(name)': use bash, zsh or fish.")
        }
        invocation.out.write(CompletionScript.generate(for: shell, root: CommandTable.root))
        return ExitCode.success
    }

    /// Candidates for the completion scripts, one per line (fish and zsh read
    /// "value<TAB>description"). Never fails loudly: a shell must not print errors mid-completion,
    /// never creates a data directory, and gives up quickly when a sync holds the lock.
    static func complete(_ invocation: Invocation) throws -> Int32 {
        guard let kind = DynamicCompletion(rawValue: invocation.arguments[0]) else { return ExitCode.usage }
        func existingStore() -> DataStore? {
            guard let path = try? invocation.dataDirectory(), FileSystem.exists(DataDirectoryLayout(root: path).meta) else { return nil }
            return try? invocation.store(lockTimeout: 0.3)
        }
        switch kind {
        case .languages:
            LanguageDetector.languages.forEach { invocation.out.line($0) }
        case .settingKeys:
            Settings.all.forEach { invocation.out.line("\($0.key)\t\($0.help)") }
        case .tabs:
            guard let store = existingStore(), let tabs = try? store.tabs.all() else { return ExitCode.success }
            for tab in tabs {
                invocation.out.line("\(Identifier.short(tab.id))\t\(Text.preview(tab.name, limit: 40))")
            }
            // Names are offered too (the scripts quote spaces); a tab or newline would break the line format.
            for tab in tabs
            where !tab.name.isEmpty && !tab.name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                invocation.out.line("\(tab.name)\ttab \(Identifier.short(tab.id))")
            }
        case .clips:
            guard let store = existingStore(), let entries = try? store.clips().entries(limit: 200) else { return ExitCode.success }
            for entry in entries {
                invocation.out.line("\(Identifier.short(entry.id))\t\(Text.preview(entry.text, limit: 40))")
            }
        }
        return ExitCode.success
    }
}

import ItsypadBackend
import ItsypadModel
import ItsypadSupport

/// `itsypad settings …`
enum SettingsCommands {
    static func list(_ invocation: Invocation) throws -> Int32 {
        let settings = try invocation.store().settings()
        if invocation.flag(.json) {
            invocation.printJSON(
                .array(
                    Settings.all.map { definition in
                        .object([
                            ("key", .string(definition.key)),
                            ("value", settings.value(definition.key)?.json ?? .null),
                            ("scope", .string(definition.scope.rawValue)),
                            ("isDefault", .bool(!settings.isSet(definition.key))),
                        ])
                    }))
            return ExitCode.success
        }
        // A synced value is another device's text: on a terminal it is shown safely, as listings are.
        for definition in Settings.all {
            let value = settings.value(definition.key).map(display) ?? ""
            invocation.out.line("\(definition.key)=\(value)", terminalSafe: invocation.context.stdoutIsTerminal)
        }
        return ExitCode.success
    }

    static func get(_ invocation: Invocation) throws -> Int32 {
        let definition = try lookup(invocation.arguments[0], invocation)
        let settings = try invocation.store().settings()
        if SettingKey(rawValue: definition.key) == .editor {
            // Its default lives in the environment: show what tab edit would run, and why.
            let editor = Editor(invocation: invocation).resolved()
            invocation.out.line(editor.command, terminalSafe: invocation.context.stdoutIsTerminal)
            invocation.note("(from \(editor.source))")
            return ExitCode.success
        }
        guard let value = settings.value(definition.key) else { return ExitCode.failure }
        // A list's items one a line; on a terminal each is made safe on its own, so a newline in one cannot pass for the next.
        let lines = if case .list(let items) = value, !items.isEmpty { items } else { [value.description] }
        for line in lines { invocation.out.line(line, terminalSafe: invocation.context.stdoutIsTerminal) }
        return ExitCode.success
    }

    static func set(_ invocation: Invocation) throws -> Int32 {
        let definition = try lookup(invocation.arguments[0], invocation)
        let words = Array(invocation.arguments.dropFirst())
        guard var value = definition.kind.parse(words) else {
            let given = words.joined(separator: " ")
            var message = "Invalid value '\(given)' for \(definition.key): expected \(definition.kind.summary)."
            if let problem = definition.kind.problem(with: words) { message += " " + problem + "." }
            throw invocation.usage(message)
        }
        if definition.kind == .path, case .string(let path) = value { value = .string(FileSystem.absolute(path)) }
        if definition.kind == .backendLocation, case .string(let text) = value, let location = BackendLocation(text),
            let problem = RemoteKinds.problem(with: location, as: text)
        {
            throw invocation.usage(problem)
        }
        let store = try invocation.store()
        if SettingKey(rawValue: definition.key) == .syncEnabled, value == .bool(true), try store.settings().string(.syncBackend) == nil {
            throw ItsypadError.failure("sync needs a backend directory: run 'itsypad sync enable DIR' (or set sync.backend first)")
        }
        try store.changeSetting(definition, to: value, now: invocation.context.now())
        return ExitCode.success
    }

    static func unset(_ invocation: Invocation) throws -> Int32 {
        let definition = try lookup(invocation.arguments[0], invocation)
        let store = try invocation.store()
        if SettingKey(rawValue: definition.key) == .syncBackend, try store.settings().bool(.syncEnabled) {
            throw ItsypadError.failure("sync is enabled and needs its backend: run 'itsypad sync disable' first")
        }
        try store.changeSetting(definition, to: nil, now: invocation.context.now())
        return ExitCode.success
    }

    static func lookup(_ key: String, _ invocation: Invocation) throws -> SettingDefinition {
        if let definition = Settings.definition(key) { return definition }
        var message = "Unknown setting '\(key)'."
        if let suggestion = Text.suggestion(for: key, among: Settings.keys) { message += " Did you mean '\(suggestion)'?" }
        throw invocation.usage(message + " Known: " + Settings.keys.joined(separator: ", ") + ".")
    }

    /// One line per setting: lists as comma-separated JSON strings.
    static func display(_ value: SettingValue) -> String {
        if case .list(let items) = value { return items.map { JSONValue.string($0).serialized() }.joined(separator: ",") }
        return value.description
    }
}

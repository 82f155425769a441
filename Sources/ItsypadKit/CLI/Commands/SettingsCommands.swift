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
        for definition in Settings.all {
            let value = settings.value(definition.key).map(display) ?? ""
            invocation.out.line("\(definition.key)=\(value)")
        }
        return ExitCode.success
    }

    static func get(_ invocation: Invocation) throws -> Int32 {
        let definition = try lookup(invocation.arguments[0], invocation)
        let settings = try invocation.store().settings()
        if SettingKey(rawValue: definition.key) == .editor {
            // Its default lives in the environment: show what tab edit would run, and why.
            let editor = Editor(invocation: invocation).resolved()
            invocation.out.line(editor.command)
            invocation.note("(from \(editor.source))")
            return ExitCode.success
        }
        guard let value = settings.value(definition.key) else { return ExitCode.failure }
        invocation.out.line(value.description)
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

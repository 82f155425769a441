import ItsypadModel
import ItsypadStore
import ItsypadSupport

/// `itsypad tab …`
enum TabCommands {
    static func new(_ invocation: Invocation) throws -> Int32 {
        if let path = invocation.value(.file) { return try newFileBacked(invocation, path: FileSystem.absolute(path)) }
        if invocation.flag(.create) { throw invocation.usage("'--create' goes with '--file'.") }
        let language = try invocation.value(.language).map { try canonicalLanguage($0, invocation) }
        let content: String
        if !invocation.arguments.isEmpty {
            // Given explicitly, even as '', the content is what the user asked for.
            content = invocation.arguments.joined(separator: " ")
        } else if let piped = try invocation.pipedText(what: "standard input") {
            // A script or cron line with nothing on stdin must not leave an empty tab behind.
            guard !Text.isBlank(piped) else {
                throw ItsypadError.failure(
                    "standard input is empty or only whitespace; no tab was created (for an empty tab, pass '' as TEXT)")
            }
            content = piped
        } else {
            guard let edited = try Editor(invocation: invocation).edit("", language: language ?? "plain") else {
                throw ItsypadError.failure("the editor exited with an error; no tab was created")
            }
            guard !Text.isBlank(edited) else { throw ItsypadError.failure("the editor saved no text; no tab was created") }
            content = edited
        }
        let tab = try invocation.store().createTab(
            content: content, name: invocation.value(.name), language: language,
            fileURL: nil, now: invocation.context.now())
        invocation.out.line(tab.id)
        return ExitCode.success
    }

    /// A tab backed by the user's file: named after the file, its language from
    /// the file's extension, its content the file's unless TEXT or piped text replaces it.
    static func newFileBacked(_ invocation: Invocation, path: String) throws -> Int32 {
        let language = try invocation.value(.language).map { try canonicalLanguage($0, invocation) }
        let store = try invocation.store()
        if !FileSystem.exists(path) {
            guard invocation.flag(.create) else { throw ItsypadError.failure("\(path) does not exist (pass --create to create it)") }
            try storeOperation { try FileSystem.createFile(path) }
        }
        guard FileSystem.isRegularFile(path) else { throw ItsypadError.failure("\(path) is not a regular file") }
        var content: String
        if !invocation.arguments.isEmpty {
            content = invocation.arguments.joined(separator: " ")
        } else if let piped = try invocation.pipedText(what: "standard input"), !Text.isBlank(piped) {
            content = piped
        } else {
            let bytes = try storeOperation { try FileSystem.read(path) } ?? []
            guard let text = Text.decodeUTF8(bytes) else { throw ItsypadError.failure("\(path) is not valid UTF-8 text") }
            content = text
        }
        let fileName = FileSystem.baseName(path)
        let tab = try store.createTab(
            content: content, name: invocation.value(.name) ?? fileName,
            language: language ?? LanguageDetector.language(forFileName: fileName),
            fileURL: path, now: invocation.context.now())
        invocation.out.line(tab.id)
        return ExitCode.success
    }

    static func list(_ invocation: Invocation) throws -> Int32 {
        let store = try invocation.store()
        if invocation.flag(.json) {
            let states = try store.syncStates()
            try invocation.printJSONArray(try store.tabs.all()) {
                JSONForms.tab(try store.loadContentLeniently($0), syncState: JSONForms.tabState($0, states))
            }
            return ExitCode.success
        }
        // The rows come ready-made from the index, as one piece: 10,000 tabs list as fast as 100.
        guard invocation.context.stdoutIsTerminal else {
            try store.tabs.writeListing { invocation.out.write($0) }
            return ExitCode.success
        }
        var line: [UInt8] = []
        try store.tabs.index().forEach { _, _, row in
            line.removeAll(keepingCapacity: true)
            line += row
            Text.makeTerminalSafe(&line)
            line.append(0x0A)
            invocation.out.write(line)
        }
        return ExitCode.success
    }

    static func show(_ invocation: Invocation) throws -> Int32 {
        let store = try invocation.store()
        let tab = try store.loadContent(try resolve(invocation.arguments[0], store, invocation))
        if invocation.flag(.json) {
            invocation.printJSON(JSONForms.tab(tab, syncState: JSONForms.tabState(tab, try store.syncStates())))
        } else {
            invocation.out.write(tab.content)
        }
        return ExitCode.success
    }

    static func edit(_ invocation: Invocation) throws -> Int32 {
        let reference = invocation.arguments[0]
        let words = invocation.arguments.dropFirst()
        if invocation.flag(.language) && invocation.flag(.autoLanguage) {
            throw invocation.usage("'--language' and '--auto-language' cannot be used together.")
        }
        let language = try invocation.value(.language).map { try canonicalLanguage($0, invocation) }
        let changesMetadata = invocation.flag(.name) || language != nil || invocation.flag(.autoLanguage)
        var store = try invocation.store()
        var original = try store.loadContent(try resolve(reference, store, invocation))

        var content: String?
        if !words.isEmpty {
            content = words.joined(separator: " ")
        } else if !changesMetadata, let piped = try invocation.pipedText(what: "standard input") {
            guard !piped.isEmpty else {
                throw ItsypadError.failure("standard input was empty; the tab was left as it was (to empty it, pass '' as TEXT)")
            }
            content = piped
        } else if !changesMetadata {
            // Nobody else should wait on our lock while a person is typing.
            invocation.close()
            guard let edited = try Editor(invocation: invocation).edit(original.content, language: original.language) else {
                throw ItsypadError.failure("the editor exited with an error; the tab was left as it was")
            }
            store = try invocation.store()
            guard let current = try store.tabs.tab(id: original.id) else {
                let copy = try store.createTab(
                    content: edited, name: original.name, language: nil, fileURL: nil, now: invocation.context.now())
                invocation.warn("the tab was removed while you edited it; your text was saved as a new tab \(copy.id)")
                return ExitCode.success
            }
            if current.clock != original.clock {
                let copy = try store.createTab(
                    content: edited, name: "\(original.name) (edited copy)", language: nil,
                    fileURL: nil, now: invocation.context.now())
                invocation.warn("the tab changed while you edited it; your text was saved as a new tab \(copy.id)")
                return ExitCode.success
            }
            original = try store.loadContent(current)
            content = edited
        }
        let chosen: Tab.Labels = [
            invocation.value(.name) != nil ? .name : [], language != nil || invocation.flag(.autoLanguage) ? .language : [],
        ]
        try store.updateTab(original, now: invocation.context.now(), choosing: chosen) { tab in
            if let content, content != tab.content {
                tab.content = content
                tab.contentDidChange()
            }
            if let name = invocation.value(.name) {
                tab.name = name
                tab.nameLocked = true
            }
            if let language {
                tab.language = language
                tab.languageLocked = true
            } else if invocation.flag(.autoLanguage) {
                tab.languageLocked = false
                tab.language = LanguageDetector.detect(tab.content)
            }
        }
        return ExitCode.success
    }

    static func remove(_ invocation: Invocation) throws -> Int32 {
        let store = try invocation.store()
        // Resolve everything first: one bad reference removes nothing.
        let tabs = try invocation.arguments.map { try resolve($0, store, invocation) }
        var removed = Set<String>()
        for tab in tabs where removed.insert(tab.id).inserted { try store.removeTab(tab) }
        return ExitCode.success
    }

    static func resolve(_ reference: String, _ store: DataStore, _ invocation: Invocation) throws -> Tab {
        try invocation.unique(try store.resolveTab(reference), reference, kind: "tab") {
            "\($0.id)  \($0.name)"
        }
    }

    static func canonicalLanguage(_ name: String, _ invocation: Invocation) throws -> String {
        guard let language = LanguageDetector.canonical(name) else {
            var message = "Unknown language '\(name)'."
            if let suggestion = Text.suggestion(for: name, among: LanguageDetector.languages) {
                message += " Did you mean '\(suggestion)'?"
            }
            throw invocation.usage(message + " Known: " + LanguageDetector.languages.joined(separator: ", ") + ".")
        }
        return language
    }
}

extension DataStore {
    /// For listings: a file-backed tab whose file is gone shows empty content rather than failing the whole list.
    func loadContentLeniently(_ tab: Tab) throws -> Tab {
        (try? loadContent(tab)) ?? tab
    }
}

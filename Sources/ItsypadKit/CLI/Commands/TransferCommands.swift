import ItsypadModel
import ItsypadStore
import ItsypadSupport
import ItsypadSync

/// The clipboard managers whose history `import --from` reads.
enum HistorySource: String, CaseIterable {
    case clipman, copyq
}

/// `itsypad export` and `itsypad import`.
enum TransferCommands {
    /// Streams the document: tabs and clips are written one at a time, so memory stays flat.
    static func export(_ invocation: Invocation) throws -> Int32 {
        let store = try invocation.store()
        let states = try store.syncStates()
        // Only when asked by name: whoever holds the export can then read the encrypted backend.
        var syncKey: String?
        if invocation.flag(.includeSyncKey) {
            guard let key = try SyncKeys.deviceKey(store) else {
                throw ItsypadError.failure("this device has no sync key to export (its backend is not encrypted); nothing was exported")
            }
            syncKey = RecoveryKey.format(key)
        }
        let out = invocation.out
        out.write("{\n  \"format\": \"\(ExportFormat.name)\",\n  \"version\": \(ExportFormat.version),\n")
        if let syncKey { out.write("  \"\(ExportFormat.syncKeyMember)\": \(JSONValue.string(syncKey).serialized()),\n") }
        out.write("  \"exportedAt\": \"\(Time.iso8601(invocation.context.now()))\",\n  \"tabs\": ")
        // A tab whose file cannot be read (missing, or a FIFO in its place) is named, not written, as a clip below.
        var unreadableTabs: [String] = []
        var tabs = JSONArrayWriter(level: 1, write: out.write)
        for tab in try store.tabs.all() {
            let loaded: Tab
            do { loaded = try store.loadContent(tab) } catch {
                unreadableTabs.append("tab \(Text.quoted(tab.name)): \(ItsypadError.wrapping(error).message)")
                continue
            }
            guard case .object(var members) = JSONForms.tab(loaded, syncState: JSONForms.tabState(tab, states)) else { continue }
            members += [("nameLocked", .bool(tab.nameLocked)), ("clock", .string(tab.clock.description))]
            tabs.append(.object(members))
        }
        tabs.finish()
        out.write(",\n  \"clips\": ")
        // A clip whose bytes cannot be had is named, not written: one damaged entry leaves the rest exportable.
        let unreadableClips = try ClipListing(store: store).printJSON(to: out, level: 1, withLocalReason: true)
        out.write(",\n  \"settings\": ")
        // Device settings (the editor command, the backend, …) only when asked by name; import never applies them.
        let withDeviceSettings = invocation.flag(.deviceSettings)
        let settings = try store.settings().entries.filter { withDeviceSettings || Settings.definition($0.key)?.scope != .device }
        JSONArrayWriter.write(settings.sorted { $0.key < $1.key }, level: 1, to: out.write) { key, entry in
            .object([("key", .string(key)), ("value", entry.value ?? .null), ("clock", .string(entry.clock.description))])
        }
        out.write("\n}\n")
        guard !unreadableTabs.isEmpty || !unreadableClips.isEmpty else { return ExitCode.success }
        let errors = invocation.context.standardError
        for message in unreadableTabs + unreadableClips.map(\.message) {
            errors.line("Error: left out of the export: \(message)", terminalSafe: true)
        }
        let counts = [(unreadableTabs.count, "tab"), (unreadableClips.count, "clip")].filter { $0.0 > 0 }.map { Text.counted($0.0, $0.1) }
        errors.line("Error: everything else was exported (\(counts.joined(separator: " and ")) left out)")
        return ExitCode.failure
    }

    static func importFile(_ invocation: Invocation) throws -> Int32 {
        if let tool = invocation.value(.from) { return try importHistory(from: tool, invocation) }
        guard let source = invocation.arguments.first else { throw invocation.usage("Missing expected argument '<file>'.") }
        let store = try invocation.store()
        invocation.progress("importing…")
        defer { invocation.endProgress() }
        let maxEntries = try store.settings().maxClipEntries
        let kvs = invocation.flag(.kvs)
        let document = try document(
            source, spoolingIn: store.tree, limit: kvs ? KeyValueDump.maxBytes : .max,
            tooLarge: " (iCloud's key-value store held at most 1 MB)", invocation)
        let summary = try reading(document, of: source) {
            if kvs { return try store.importKeyValueDump(try JSONValue.parse(document.bytes), maxEntries: maxEntries) }
            // Whether this device syncs is decided by its own settings, not the export's (staged by the import).
            let syncsAlready = try store.settings().bool(.syncEnabled)
            return try store.importExport(document.bytes, consumed: document.release, maxEntries: maxEntries) {
                try importSyncKey($0, into: store, deviceSyncs: syncsAlready, invocation)
            }
        }
        warnAboutCap(summary, maxEntries: maxEntries, invocation)
        if summary.tabsNamingFiles > 0 {
            invocation.warn(
                "imported \(Text.counted(summary.tabsNamingFiles, "tab")) backed by a file as normal tabs, with the text the export holds: "
                    + "an import never links a tab to a file")
        }
        if !summary.skippedDeviceSettings.isEmpty {
            invocation.warn(
                "skipped the export's device settings (\(summary.skippedDeviceSettings.joined(separator: ", "))): "
                    + "an import never sets them; set them with 'itsypad settings set KEY VALUE'")
        }
        invocation.note(summary.description)
        return ExitCode.success
    }

    /// The document FILE names, or standard input for "-", mapped (see `MappedFile.document`); a
    /// missing or empty one, or one over `limit` bytes (`tooLarge` says why that is enough), is refused.
    private static func document(
        _ source: String, spoolingIn spool: FileTree, limit: Int = .max, tooLarge: String = "", missing: String = "",
        _ invocation: Invocation
    ) throws -> MappedFile {
        let document: MappedFile?
        do {
            if source != "-" {
                document = try MappedFile.document(FileSystem.absolute(source), spoolingIn: spool, limit: limit)
            } else if let fd = invocation.context.inputDescriptor {
                document = try MappedFile.spooled(in: spool, path: "standard input", limit: limit, from: fd)
            } else {
                // In memory (tests), standard input is held already.
                var rest = try invocation.context.standardInput()[...]
                document = try MappedFile.spooled(in: spool, path: "standard input", limit: limit) { buffer in
                    let count = min(buffer.count, rest.count)
                    buffer.copyBytes(from: rest.prefix(count))
                    rest = rest.dropFirst(count)
                    return count
                }
            }
        } catch let error as FileSystemError where error.code == FileSystemError.tooLarge {
            throw ItsypadError.failure("\(source) is larger than \(limit >> 20) MiB\(tooLarge); nothing was imported")
        }
        guard let document else { throw ItsypadError.failure("no such file: \(source)\(missing)") }
        guard !document.bytes.isEmpty else { throw ItsypadError.failure("\(source) is empty; nothing was imported") }
        return document
    }

    /// `body`, which reads `document`, with its failures told as they happened: a document cut
    /// short while it was read (whatever the reading then met), or one that is not JSON.
    private static func reading<Result>(_ document: MappedFile, of source: String, _ body: () throws -> Result) throws -> Result {
        do { return try body() } catch {
            if document.isCutShort { throw ItsypadError.failure("\(source) was cut short while it was read; nothing was imported") }
            if let error = error as? JSONParseError {
                throw ItsypadError.failure("\(source) is not valid JSON (\(error)); nothing was imported")
            }
            throw error
        }
    }

    private static func warnAboutCap(_ summary: ImportSummary, maxEntries: Int, _ invocation: Invocation) {
        guard summary.skippedClips > 0 else { return }
        invocation.warn(
            "imported the newest \(summary.clips) of \(summary.clips + summary.skippedClips) new clips: "
                + "clipboard.maxEntries is \(maxEntries); to keep them all, raise it "
                + "(itsypad settings set clipboard.maxEntries N) and import the same \(invocation.value(.from) == nil ? "file" : "history") again"
        )
    }

    /// `import --from TOOL`: another clipboard manager's history, then imported all at once. CopyQ's
    /// is read before the data directory is locked (it may take a while).
    static func importHistory(from tool: String, _ invocation: Invocation) throws -> Int32 {
        guard let source = HistorySource(rawValue: tool) else {
            throw invocation.usage("Unknown tool '\(tool)' for --from: clipman or copyq.")
        }
        if invocation.flag(.kvs) { throw invocation.usage("--from and --kvs cannot be combined.") }
        invocation.progress("importing…")
        defer { invocation.endProgress() }
        let maxBytes = try DataStore.settingsWithoutLock(path: invocation.dataDirectory()).maxClipBytes
        let history: ForeignHistory
        let origin: String
        let store: DataStore
        switch source {
        case .clipman:
            let path: String
            if let given = invocation.arguments.first {
                path = given
            } else {
                guard let home = invocation.context.variable("HOME"), !home.isEmpty else {
                    throw ItsypadError.failure("no HOME to find clipman's history in: pass its path")
                }
                path = ClipmanHistory.defaultPath(home: home)
            }
            store = try invocation.store()
            let document = try document(
                path, spoolingIn: store.tree, missing: " (clipman's history: pass its path if clipman runs with --histpath)", invocation)
            history = try reading(document, of: path) {
                try ClipmanHistory.parse(document.bytes, maxBytes: maxBytes, consumed: document.release)
            }
            origin = "clipman"
        case .copyq:
            guard invocation.arguments.isEmpty else {
                throw invocation.usage("--from copyq reads the running CopyQ, not a file: pass no FILE.")
            }
            let items = try CopyQHistory.parse(try copyqItems(maxBytes: maxBytes, invocation), maxBytes: maxBytes)
            history = items.history
            origin = "CopyQ's tab \(items.tab)"
            store = try invocation.store()
        }
        let maxEntries = try store.settings().maxClipEntries
        let summary = try store.importHistory(history, maxEntries: maxEntries, now: invocation.context.now())
        warnAboutOmissions(history.omitted, maxBytes: maxBytes, invocation)
        warnAboutCap(summary, maxEntries: maxEntries, invocation)
        let duplicates = summary.duplicateClips > 0 ? " (\(summary.duplicateClips) more were in the history already)" : ""
        invocation.note("imported \(Text.counted(summary.clips, "clip")) from \(origin)\(duplicates)")
        return ExitCode.success
    }

    /// The items of CopyQ's first tab, as `CopyQHistory.script` prints them: one copyq process for all.
    private static func copyqItems(maxBytes: Int, _ invocation: Invocation) throws -> [UInt8] {
        let environment = invocation.context.environment
        guard let copyq = Subprocess.find("copyq", searchPath: environment["PATH"]) else {
            throw ItsypadError.failure("copyq is not installed (it is not on PATH); nothing was imported")
        }
        let timeout = 300.0, limit = 1 << 30
        let output = try Subprocess(
            executable: copyq, arguments: ["eval", "--", CopyQHistory.script, String(maxBytes)], environment: environment
        ).run(timeout: timeout, outputLimit: limit + 1)
        if output.timedOut {
            throw ItsypadError.temporary("copyq did not answer within \(Int(timeout)) s; nothing was imported; try again later")
        }
        if output.outlivedOutput {
            throw ItsypadError.temporary(
                "copyq ended its output but was still running \(Int(Subprocess.exitGrace)) s later, so it was stopped; "
                    + "nothing was imported; try again later")
        }
        guard output.status == 0 else {
            if output.errorText.contains("Cannot connect to server") {
                throw ItsypadError.failure("CopyQ is not running (start it with 'copyq --start-server'); nothing was imported")
            }
            let said = output.errorText.isEmpty ? "" : ": \(output.errorText)"
            throw ItsypadError.failure("copyq exited with status \(output.status)\(said); nothing was imported")
        }
        guard output.standardOutput.count <= limit else {
            throw ItsypadError.failure("CopyQ's first tab holds more than \(limit >> 20) MiB of text; nothing was imported")
        }
        return output.standardOutput
    }

    /// Names the items an import from another tool left out, a line per reason.
    private static func warnAboutOmissions(
        _ omitted: [(item: String, why: ForeignHistory.Omission)], maxBytes: Int, _ invocation: Invocation
    ) {
        func names(_ items: [String]) -> String {
            items.count > 10 ? items.prefix(10).joined(separator: ", ") + " and \(items.count - 10) more" : items.joined(separator: ", ")
        }
        var notText: [String] = [], tooLarge: [String] = [], notUTF8: [String] = [], blank: [String] = []
        for (item, why) in omitted {
            switch why {
            case .notText(let types): notText.append(types.isEmpty ? item : "\(item) (\(types.joined(separator: ", ")))")
            case .tooLarge(let bytes): tooLarge.append("\(item) (\(bytes) bytes)")
            case .notUTF8: notUTF8.append(item)
            case .blank: blank.append(item)
            }
        }
        if !notText.isEmpty { invocation.warn("left out \(Text.counted(notText.count, "item")) that are not text: \(names(notText))") }
        if !tooLarge.isEmpty {
            invocation.warn(
                "left out \(Text.counted(tooLarge.count, "item")) larger than clipboard.maxBytes (\(maxBytes) bytes): \(names(tooLarge)); "
                    + "to keep them, raise it (itsypad settings set clipboard.maxBytes N) and import again")
        }
        if !notUTF8.isEmpty {
            invocation.warn("left out \(Text.counted(notUTF8.count, "item")) whose text is not UTF-8: \(names(notUTF8))")
        }
        if !blank.isEmpty { invocation.warn("left out \(Text.counted(blank.count, "empty item")): \(names(blank))") }
    }

    /// Keeps an exported sync key as this device's, unless that could break its sync: a device
    /// with another key keeps its own, and one that syncs unencrypted gets none.
    static func importSyncKey(_ key: SecretBytes, into store: DataStore, deviceSyncs: Bool, _ invocation: Invocation) throws {
        if let current = try SyncKeys.deviceKey(store) {
            if !current.isEqual(to: key) {
                invocation.warn("the export's sync key was not imported: this device has another one, which it keeps")
            }
            return
        }
        if deviceSyncs {
            invocation.warn(
                "the export's sync key was not imported: this device syncs with an unencrypted backend; to join an encrypted one, run 'itsypad sync enable DIR --key -'"
            )
            return
        }
        try KeyFile.write(key, to: store.layout.syncKey)
        invocation.note("imported the sync key: 'itsypad sync enable DIR' now joins the encrypted backend it opens")
    }
}

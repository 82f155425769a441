import ItsypadModel
import ItsypadStore
import ItsypadSupport

/// `itsypad export` and `itsypad import`.
enum TransferCommands {
    /// Streams the document: tabs and clips are written one at a time, so memory stays flat.
    static func export(_ invocation: Invocation) throws -> Int32 {
        let store = try invocation.store()
        let states = try store.syncStates()
        // Only when asked by name: whoever holds the export can then read the encrypted backend.
        var syncKey: String?
        if invocation.flag(.includeSyncKey) {
            guard let key = try SyncKeyCommands.deviceKey(store) else {
                throw ItsypadError.failure("this device has no sync key to export (its backend is not encrypted); nothing was exported")
            }
            syncKey = RecoveryKey.format(key)
        }
        let out = invocation.out
        out.write("{\n  \"format\": \"\(ExportFormat.name)\",\n  \"version\": \(ExportFormat.version),\n")
        if let syncKey { out.write("  \"\(ExportFormat.syncKeyMember)\": \(JSONValue.string(syncKey).serialized()),\n") }
        out.write("  \"exportedAt\": \"\(Time.iso8601(invocation.context.now()))\",\n  \"tabs\": ")
        try JSONArrayWriter.write(try store.tabs.all(), level: 1, to: out.write) { tab in
            let loaded = try store.loadContentLeniently(tab)
            guard case .object(var members) = JSONForms.tab(loaded, syncState: JSONForms.tabState(tab, states)) else { return .null }
            members += [("nameLocked", .bool(tab.nameLocked)), ("clock", .string(tab.clock.description))]
            return .object(members)
        }
        out.write(",\n  \"clips\": ")
        try ClipListing(store: store).printJSON(to: out, level: 1, withLocalReason: true)
        out.write(",\n  \"settings\": ")
        // Device settings (the editor command, the backend, …) only when asked by name; import never applies them.
        let withDeviceSettings = invocation.flag(.deviceSettings)
        let settings = try store.settings().entries.filter { withDeviceSettings || Settings.definition($0.key)?.scope != .device }
        JSONArrayWriter.write(settings.sorted { $0.key < $1.key }, level: 1, to: out.write) { key, entry in
            .object([("key", .string(key)), ("value", entry.value ?? .null), ("clock", .string(entry.clock.description))])
        }
        out.write("\n}\n")
        return ExitCode.success
    }

    static func importFile(_ invocation: Invocation) throws -> Int32 {
        let source = invocation.arguments[0]
        // Read inside a function so the raw bytes are freed once decoded.
        func input() throws -> [UInt8] {
            let bytes: [UInt8]
            if source == "-" {
                bytes = try invocation.context.standardInput()
            } else {
                guard let read = try FileSystem.read(FileSystem.absolute(source)) else {
                    throw ItsypadError.failure("no such file: \(source)")
                }
                bytes = read
            }
            guard !bytes.isEmpty else { throw ItsypadError.failure("\(source) is empty; nothing was imported") }
            return bytes
        }
        let store = try invocation.store()
        invocation.progress("importing…")
        defer { invocation.endProgress() }
        let maxEntries = try store.settings().maxClipEntries
        let summary: ImportSummary
        do {
            if invocation.flag(.kvs) {
                summary = try store.importKeyValueDump(try JSONValue.parse(try input()), maxEntries: maxEntries)
            } else {
                // Whether this device syncs is decided by its own settings, not the export's (staged by the import).
                let syncsAlready = try store.settings().bool(.syncEnabled)
                summary = try store.importExport(try input(), maxEntries: maxEntries) {
                    try importSyncKey($0, into: store, deviceSyncs: syncsAlready, invocation)
                }
            }
        } catch let error as JSONParseError {
            throw ItsypadError.failure("\(source) is not valid JSON (\(error)); nothing was imported")
        }
        if summary.skippedClips > 0 {
            invocation.warn(
                "imported the newest \(summary.clips) of \(summary.clips + summary.skippedClips) new clips: "
                    + "clipboard.maxEntries is \(maxEntries); to keep them all, raise it "
                    + "(itsypad settings set clipboard.maxEntries N) and import the same file again")
        }
        if !summary.skippedDeviceSettings.isEmpty {
            invocation.warn(
                "skipped the export's device settings (\(summary.skippedDeviceSettings.joined(separator: ", "))): "
                    + "an import never sets them; set them with 'itsypad settings set KEY VALUE'")
        }
        invocation.note(summary.description)
        return ExitCode.success
    }

    /// Keeps an exported sync key as this device's, unless that could break its sync: a device
    /// with another key keeps its own, and one that syncs unencrypted gets none.
    static func importSyncKey(_ key: SecretBytes, into store: DataStore, deviceSyncs: Bool, _ invocation: Invocation) throws {
        if let current = try SyncKeyCommands.deviceKey(store) {
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

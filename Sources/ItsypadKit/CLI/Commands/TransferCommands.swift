import ItsypadModel
import ItsypadStore
import ItsypadSupport

/// `itsypad export` and `itsypad import`.
enum TransferCommands {
    static let formatName = "itsypad-export"
    static let formatVersion: Int64 = 1
    /// The member that carries the sync key, in its recovery form, when the export was asked for it.
    static let syncKeyMember = "syncKey"

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
        out.write("{\n  \"format\": \"\(formatName)\",\n  \"version\": \(formatVersion),\n")
        if let syncKey { out.write("  \"\(syncKeyMember)\": \(JSONValue.string(syncKey).serialized()),\n") }
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
        JSONArrayWriter.write(try store.settings().entries.sorted { $0.key < $1.key }, level: 1, to: out.write) { key, entry in
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
                guard let read = try FileSystem.read(FileSystem.absolute(source)) else { throw ItsypadError.failure("no such file: \(source)") }
                bytes = read
            }
            guard !bytes.isEmpty else { throw ItsypadError.failure("\(source) is empty; nothing was imported") }
            return bytes
        }
        let store = try invocation.store()
        invocation.progress("importing…")
        defer { invocation.endProgress() }
        let maxEntries = try store.settings().maxClipEntries
        let summary: Summary
        do {
            if invocation.flag(.kvs) {
                let document = try JSONValue.parse(try input())
                summary = try commit(try staged(store) { try importKVS(document, into: $0, maxEntries: maxEntries) })
            } else {
                let bytes = try input()
                // Whether this device syncs is decided by its own settings, not the export's (staged below).
                let syncsAlready = try store.settings().bool(.syncEnabled)
                var syncKey: SecretBytes?
                var staging = try staged(store) { syncKey = try stageExport(bytes, into: $0) }
                if let cap = try newestThatFit(staging.addedClips, store: store, maxEntries: maxEntries) {
                    // Over the cap: start again with only the newest clips that fit.
                    staging.discard()
                    staging = try staged(store, admitting: cap.admitted) { try stageExport(bytes, into: $0) }
                    staging.summary.skippedClips = cap.skipped
                }
                if let syncKey { try importSyncKey(syncKey, into: store, deviceSyncs: syncsAlready, invocation) }
                summary = try commit(staging)
            }
        } catch let error as JSONParseError {
            throw ItsypadError.failure("\(source) is not valid JSON (\(error)); nothing was imported")
        }
        // A bulk import is the moment to compact a long queue, not the next clip add.
        let pending = try store.pending()
        if pending.needsCompaction { try pending.compact { _ in true } }
        if summary.skippedClips > 0 {
            invocation.warn("imported the newest \(summary.clips) of \(summary.clips + summary.skippedClips) new clips: "
                + "clipboard.maxEntries is \(maxEntries); to keep them all, raise it "
                + "(itsypad settings set clipboard.maxEntries N) and import the same file again")
        }
        invocation.note(summary.description)
        return ExitCode.success
    }

    /// Stages an import; on any failure drops the stage ("nothing was imported") and rethrows.
    static func staged(_ store: DataStore, admitting: ((PackedID) -> Bool)? = nil,
                       _ body: (ImportStaging) throws -> Void) throws -> ImportStaging {
        let staging = try ImportStaging(store: store, admitting: admitting)
        do {
            try body(staging)
            return staging
        } catch {
            staging.discard()
            throw nothingImported(error)
        }
    }

    static func commit(_ staging: ImportStaging) throws -> Summary {
        do { try staging.commit() } catch {
            staging.discard()
            throw nothingImported(error)
        }
        return staging.summary
    }

    /// When the clips an import adds would take the history past `maxEntries`,
    /// the newest ones that fit (an import never evicts what is there) and how many are left out.
    static func newestThatFit(_ added: [ClipSlot], store: DataStore, maxEntries: Int) throws
        -> (admitted: (PackedID) -> Bool, skipped: Int)? {
        let room = max(0, maxEntries - (try store.clips().count))
        guard added.count > room else { return nil }
        let kept = Set(added.sorted { ($0.timestamp, $0.idString) > ($1.timestamp, $1.idString) }.prefix(room).map(\.id))
        return ({ kept.contains($0) }, added.count - room)
    }

    static func nothingImported(_ error: Error) -> Error {
        guard case .failure(let message) = error as? ItsypadError, !message.contains("nothing was") else { return error }
        return ItsypadError.failure(message + "; nothing was imported")
    }

    struct Summary: CustomStringConvertible {
        var tabs = 0, clips = 0, settings = 0, deleted = 0, skippedClips = 0
        var description: String {
            "imported \(tabs) tabs, \(clips) clips, \(settings) settings" + (deleted > 0 ? "; removed \(deleted) tombstoned items" : "")
        }
    }

    /// An export's small parts; tabs and clips are streamed.
    struct ExportHeader {
        var format: String?
        var version: Int64?
        var settings: [(String, SettingsStore.Entry)] = []
        var syncKey: SecretBytes?
    }

    /// Decodes and validates an export, handing each tab and clip over as it is
    /// parsed, so memory stays near one entry's size however large the file.
    static func readExport(_ bytes: [UInt8], device: String, tab: (Tab) throws -> Void, clip: (ClipEntry) throws -> Void) throws -> ExportHeader {
        var header = ExportHeader()
        var tabCount = 0, clipCount = 0
        try JSONValue.parseObject(bytes, streamedArrays: ["tabs", "clips"], member: { key, value in
            switch key {
            case "format": header.format = value.stringValue
            case "version": header.version = value.int64Value
            case "settings": header.settings = try (value.arrayValue ?? []).map(decodeSetting)
            case syncKeyMember: header.syncKey = try decodeSyncKey(value)
            default: break
            }
        }, element: { key, json in
            if key == "tabs" {
                tabCount += 1
                guard let decoded = decodeTab(json, device: device) else {
                    throw ItsypadError.failure("tab \(tabCount) in the export is invalid; nothing was imported")
                }
                try tab(decoded)
            } else {
                clipCount += 1
                guard let decoded = decodeClip(json) else {
                    throw ItsypadError.failure("clip \(clipCount) in the export is invalid; nothing was imported")
                }
                try clip(decoded)
            }
        })
        guard header.format == formatName, let version = header.version else {
            throw ItsypadError.failure("not an itsypad export (use --kvs for Itsypad's key-value layout); nothing was imported")
        }
        guard version <= formatVersion else {
            throw ItsypadError.failure("the export was written by a newer itsypad (version \(version)); upgrade to import it")
        }
        return header
    }

    /// Stages an export: tabs merge one by one, clips are added, then settings.
    /// Stages the export's items and settings; returns the sync key it carries, if any.
    @discardableResult
    static func stageExport(_ bytes: [UInt8], into staging: ImportStaging) throws -> SecretBytes? {
        let header = try readExport(bytes, device: staging.store.deviceID, tab: staging.merge, clip: staging.add)
        for (key, entry) in header.settings { try staging.mergeSetting(key, entry) }
        return header.syncKey
    }

    static func decodeSyncKey(_ json: JSONValue) throws -> SecretBytes {
        do {
            return try RecoveryKey.parse(json.stringValue ?? "")
        } catch {
            throw ItsypadError.failure("the export's sync key is invalid (\(error)); nothing was imported")
        }
    }

    /// Keeps an exported sync key as this device's, unless that could break its sync: a device
    /// with another key keeps its own, and one that syncs unencrypted gets none.
    static func importSyncKey(_ key: SecretBytes, into store: DataStore, deviceSyncs: Bool, _ invocation: Invocation) throws {
        if let current = try SyncKeyCommands.deviceKey(store) {
            if !current.isEqual(to: key) { invocation.warn("the export's sync key was not imported: this device has another one, which it keeps") }
            return
        }
        if deviceSyncs {
            invocation.warn("the export's sync key was not imported: this device syncs with an unencrypted backend; to join an encrypted one, run 'itsypad sync enable DIR --key -'")
            return
        }
        try KeyFile.write(key, inDirectory: store.path)
        invocation.note("imported the sync key: 'itsypad sync enable DIR' now joins the encrypted backend it opens")
    }

    static func decodeClip(_ json: JSONValue) -> ClipEntry? {
        guard let id = json["id"]?.stringValue?.lowercased(), Identifier.isValid(id), let text = json["text"]?.stringValue,
              let timestamp = Time.stored(json["timestamp"]?.stringValue.flatMap(Time.parseISO8601)) else { return nil }
        let reason = json["localReason"]?.stringValue.flatMap(LocalOnlyReason.init(rawValue:))
            ?? (json["localOnly"]?.boolValue == true ? .requested : nil)
        return ClipEntry(id: id, text: text, timestamp: timestamp, pinned: json["pinned"]?.boolValue ?? false, localOnly: reason)
    }

    static func decodeSetting(_ json: JSONValue) throws -> (String, SettingsStore.Entry) {
        guard let key = json["key"]?.stringValue, let clock = json["clock"]?.stringValue.flatMap(HybridTimestamp.init) else {
            throw ItsypadError.failure("a setting in the export is invalid; nothing was imported")
        }
        let value = json["value"].flatMap { $0 == .null ? nil : $0 }
        if let value, let definition = Settings.definition(key), definition.kind.decode(value) == nil {
            throw ItsypadError.failure("the export's value for \(key) is invalid; nothing was imported")
        }
        return (key, SettingsStore.Entry(value: value, clock: clock))
    }

    static func decodeTab(_ json: JSONValue, device: String) -> Tab? {
        guard let id = json["id"]?.stringValue?.lowercased(), Identifier.isValid(id),
              let content = json["content"]?.stringValue,
              let modified = Time.stored(json["lastModified"]?.stringValue.flatMap(Time.parseISO8601)) else { return nil }
        let name = json["name"]?.stringValue ?? Tab.derivedName(for: content)
        let language = json["language"]?.stringValue.flatMap(LanguageDetector.canonical) ?? LanguageDetector.detect(content)
        let clock = json["clock"]?.stringValue.flatMap(HybridTimestamp.init) ?? HybridTimestamp(physical: modified, device: device)
        return Tab(id: id, name: name, nameLocked: json["nameLocked"]?.boolValue ?? true, content: content, language: language,
                   languageLocked: json["languageLocked"]?.boolValue ?? false, lastModified: modified,
                   fileURL: json["fileURL"]?.stringValue, clock: clock)
    }

    // MARK: Legacy key-value layout (seed 001)

    /// Seconds since 2001-01-01 (JSONEncoder's default Date form) to Unix milliseconds; nil outside 1970–9999.
    static func legacyDate(_ value: JSONValue?) -> Milliseconds? {
        Time.stored(value?.doubleValue.flatMap(Time.fromReferenceDate(seconds:)))
    }

    /// A key's array. The app stored each value as encoded data, so a dump may hold it
    /// decoded (an array), as the JSON document itself (a string), or as that document's
    /// bytes in base64 (how a property-list export writes data). nil when the key is absent.
    static func kvsArray(_ document: JSONValue, _ key: String) throws -> [JSONValue]? {
        guard let value = document[key], value != .null else { return nil }
        if let array = value.arrayValue { return array }
        if let text = value.stringValue {
            if let array = (try? JSONValue.parse(Array(text.utf8)))?.arrayValue { return array }
            // Property-list exports wrap base64 in lines.
            if let bytes = Base64.decode(String(text.unicodeScalars.filter { !$0.properties.isWhitespace })),
               let array = (try? JSONValue.parse(bytes))?.arrayValue { return array }
        }
        throw ItsypadError.failure("the key-value dump's \(key) is neither an array, nor a JSON array as text, nor base64 data holding one; nothing was imported")
    }

    static func importKVS(_ document: JSONValue, into staging: ImportStaging, maxEntries: Int) throws {
        let store = staging.store
        guard case .object = document, document["tabs"] != nil || document["clipboard"] != nil else {
            throw ItsypadError.failure("not an Itsypad key-value dump (no tabs or clipboard key); nothing was imported")
        }
        let deletedTabs = Set((try kvsArray(document, "deletedTabIDs") ?? []).compactMap { $0.stringValue?.lowercased() })
        let deletedClips = Set((try kvsArray(document, "deletedClipboardIDs") ?? []).compactMap { $0.stringValue?.lowercased() })
        let tabs = try (try kvsArray(document, "tabs") ?? []).compactMap { json -> Tab? in
            guard let id = json["id"]?.stringValue?.lowercased(), Identifier.isValid(id), let content = json["content"]?.stringValue,
                  let modified = legacyDate(json["lastModified"]) else {
                throw ItsypadError.failure("a tab in the key-value dump is invalid; nothing was imported")
            }
            // Only scratch tabs were ever synced through the key-value store.
            guard json["fileURL"]?.stringValue == nil, !deletedTabs.contains(id) else { return nil }
            let language = json["language"]?.stringValue.flatMap(LanguageDetector.canonical) ?? "plain"
            return Tab(id: id, name: json["name"]?.stringValue ?? Tab.derivedName(for: content), nameLocked: false,
                       content: content, language: language, languageLocked: json["languageLocked"]?.boolValue ?? false,
                       lastModified: modified, fileURL: nil, clock: HybridTimestamp(physical: modified, device: store.deviceID))
        }
        var clips = try (try kvsArray(document, "clipboard") ?? []).compactMap { json -> ClipEntry? in
            guard let id = json["id"]?.stringValue?.lowercased(), Identifier.isValid(id), let text = json["text"]?.stringValue,
                  let timestamp = legacyDate(json["timestamp"]) else {
                throw ItsypadError.failure("a clipboard entry in the key-value dump is invalid; nothing was imported")
            }
            guard !deletedClips.contains(id), !Text.isBlank(text) else { return nil }
            return ClipEntry(id: id, text: text, timestamp: timestamp, localOnly: try store.localOnlyReason(for: text, requested: false))
        }

        for tombstoned in deletedTabs.sorted() {
            if let tab = try store.tabs.tab(id: tombstoned) { try staging.removeTab(tab) }
        }
        let removedClips = try staging.removeClips(deletedClips.sorted())
        for tab in tabs { try staging.merge(tab) }
        // The history takes the newest entries that fit under clipboard.maxEntries; nothing there is evicted.
        clips.removeAll { !staging.isFresh($0) }
        let room = max(0, maxEntries - (try store.clips().count - removedClips))
        if clips.count > room {
            staging.summary.skippedClips = clips.count - room
            clips = Array(clips.sorted { ($0.timestamp, $0.id) > ($1.timestamp, $1.id) }.prefix(room))
        }
        for clip in clips { try staging.add(clip) }
    }
}

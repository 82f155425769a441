import ItsypadModel
import ItsypadSupport

/// What an import changed, for its closing note.
package struct ImportSummary: CustomStringConvertible {
    package var tabs = 0, clips = 0, settings = 0, deleted = 0, skippedClips = 0
    /// Clips of another tool's history whose text the history holds already.
    package var duplicateClips = 0
    /// Tabs whose entry named a file (`fileURL`): imported as scratch tabs, never file-backed.
    package var tabsNamingFiles = 0
    /// Device settings the document carried, which an import never applies.
    package var skippedDeviceSettings: [String] = []
    package var description: String {
        "imported \(tabs) tabs, \(clips) clips, \(settings) settings" + (deleted > 0 ? "; removed \(deleted) tombstoned items" : "")
    }
}

/// Importing is all or nothing: everything is staged (`ImportStaging`), then committed at once.
/// Tabs merge by id (the newer `lastModified` wins), settings by clock; clips are added up to
/// `clipboard.maxEntries`, the newest first, and an import never evicts what is there.
extension DataStore {
    /// Imports an `itsypad export` document. `acceptSyncKey` is handed the sync key the export
    /// carries, if any, before anything is committed.
    /// `consumed` is told how far the reading of `bytes` got: nothing before that is read again
    /// unless the import starts over (see `MappedFile.release(before:)`).
    package func importExport(
        _ bytes: UnsafeBufferPointer<UInt8>, consumed: (Int) -> Void = { _ in }, maxEntries: Int,
        acceptSyncKey: (SecretBytes) throws -> Void
    ) throws -> ImportSummary {
        var syncKey: SecretBytes?
        var staging = try staged { syncKey = try ExportFormat.stage(bytes, into: $0, consumed: consumed) }
        if let cap = try newestThatFit(staging.clipStaging, maxEntries: maxEntries) {
            // Over the cap: start again with only the newest clips that fit.
            staging.discard()
            staging = try staged(admitting: cap.admitted) { try ExportFormat.stage(bytes, into: $0, consumed: consumed) }
            staging.summary.skippedClips = cap.skipped
        }
        if let syncKey {
            do { try acceptSyncKey(syncKey) } catch {
                staging.discard()
                throw error
            }
        }
        return try commit(staging)
    }

    /// Imports a dump of Itsypad's old iCloud key-value layout, tombstones honoured.
    package func importKeyValueDump(_ document: JSONValue, maxEntries: Int) throws -> ImportSummary {
        try commit(try staged { try KeyValueDump.stage(document, into: $0, maxEntries: maxEntries) })
    }

    /// Imports another clipboard tool's history (`ForeignHistory`), whose entries have no ids or
    /// times of their own. A text already in the history is not added again. The others get new
    /// ids and times that keep the tool's order: the newest is `now`, each older one a millisecond
    /// before the one above it, and below any newer entry the history already has. `progress` is told
    /// how many of the clips to add are staged.
    package func importHistory(
        _ history: ForeignHistory, maxEntries: Int, now: Milliseconds, progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) throws -> ImportSummary {
        // The newest time of each of the tool's texts that the history holds: the history is walked,
        // not held, and only the tool's texts (held already) are kept.
        let offered = Set(history.entries.lazy.map(\.text))
        var times: [String: Milliseconds] = [:]
        try clips().forEachEntry { entry in
            guard offered.contains(entry.text) else { return }
            times[entry.text] = max(times[entry.text] ?? entry.timestamp, entry.timestamp)
        }
        var next = now
        var clips: [ClipEntry] = []
        var duplicates = 0
        for entry in history.entries {
            if let time = times[entry.text] {
                next = min(next, time - 1)
                duplicates += 1
                continue
            }
            times[entry.text] = next
            clips.append(
                ClipEntry(
                    id: Identifier.make(), text: entry.text, timestamp: next, pinned: entry.pinned,
                    localOnly: try localOnlyReason(for: entry.text, requested: false)))
            next -= 1
        }
        let staging = try staged { try $0.addNewest(clips, maxEntries: maxEntries, progress: progress) }
        staging.summary.duplicateClips = duplicates
        return try commit(staging)
    }

    /// Stages an import; on any failure drops the stage ("nothing was imported") and rethrows.
    private func staged(admitting: ((EscapedClip) -> Bool)? = nil, _ body: (ImportStaging) throws -> Void) throws -> ImportStaging {
        let staging = try ImportStaging(store: self, admitting: admitting)
        do {
            try body(staging)
            return staging
        } catch {
            staging.discard()
            throw Self.nothingImported(error)
        }
    }

    private func commit(_ staging: ImportStaging) throws -> ImportSummary {
        do { try staging.commit() } catch let error as StagedChanges.Unfinished {
            reopenFiles()
            throw ItsypadError.failure(
                "the import is committed but not all in place yet (\(error.reason)); the next itsypad command finishes it")
        } catch {
            staging.discard()
            throw Self.nothingImported(error)
        }
        // A bulk import is the moment to compact a long queue, not the next clip add; the import is
        // done, so a compaction that fails is left to a later one.
        if let pending = try? pending(), pending.needsCompaction { try? pending.compact { _ in true } }
        return staging.summary
    }

    /// When the clips an import adds would take the history past `maxEntries`,
    /// the newest ones that fit (an import never evicts what is there) and how many are left out.
    private func newestThatFit(_ staged: ClipStore.Staging, maxEntries: Int) throws -> (admitted: (EscapedClip) -> Bool, skipped: Int)? {
        let room = max(0, maxEntries - (try clips().count))
        let skipped = staged.addedCount - room
        guard skipped > 0 else { return nil }
        guard room > 0 else { return ({ _ in false }, skipped) }
        // By time, then id: the oldest admitted, and every entry after it.
        let oldest = try staged.addedEntry(at: skipped)
        return ({ ($0.timestamp, $0.id.high, $0.id.low) >= (oldest.timestamp, oldest.id.high, oldest.id.low) }, skipped)
    }

    private static func nothingImported(_ error: Error) -> Error {
        guard case .failure(let message) = error as? ItsypadError, !message.contains("nothing was") else { return error }
        return ItsypadError.failure(message + "; nothing was imported")
    }
}

/// The document `itsypad export` writes and `itsypad import` reads.
package enum ExportFormat {
    package static let name = "itsypad-export"
    package static let version: Int64 = 1
    /// The member that carries the sync key, in its recovery form, when the export was asked for it.
    package static let syncKeyMember = "syncKey"

    /// An export's small parts; tabs and clips are streamed.
    struct Header {
        var format: String?
        var version: Int64?
        var settings: [(String, SettingsStore.Entry)] = []
        var syncKey: SecretBytes?
    }

    /// Decodes and validates an export, handing each tab and clip over as it is
    /// parsed, so memory stays near one entry's size however large the file.
    static func read(
        _ bytes: UnsafeBufferPointer<UInt8>, device: String, tab: (Tab) throws -> Void,
        clip: (EscapedClip, [UInt8]?) throws -> Void, consumed: (Int) -> Void = { _ in }
    ) throws -> Header {
        var header = Header()
        var tabCount = 0, clipCount = 0
        var text: [UInt8] = []
        var data: [UInt8] = []
        try JSONValue.parseObject(
            bytes, streamedArrays: ["tabs", "clips"],
            member: { key, value in
                switch key {
                case "format": header.format = value.stringValue
                case "version": header.version = value.int64Value
                case "settings": header.settings = try (value.arrayValue ?? []).map(decodeSetting)
                case syncKeyMember: header.syncKey = try decodeSyncKey(value)
                default: break
                }
            },
            element: { key, element in
                if key == "tabs" {
                    tabCount += 1
                    guard let decoded = decodeTab(try element.value(), device: device) else {
                        throw ItsypadError.failure("tab \(tabCount) in the export is invalid; nothing was imported")
                    }
                    try tab(decoded)
                } else {
                    clipCount += 1
                    // A clip is usually a flat object, read from its bytes.
                    let decoded: EscapedClip?
                    if let flat = element.flat {
                        decoded = decodeClip(flat, escapedText: &text, data: &data)
                    } else {
                        decoded = decodeClip(try element.value(), escapedText: &text, data: &data)
                    }
                    guard let decoded else {
                        throw ItsypadError.failure("clip \(clipCount) in the export is invalid; nothing was imported")
                    }
                    try clip(decoded, decoded.binary != nil ? data : nil)
                }
            }, consumed: consumed)
        guard header.format == name, let version = header.version else {
            throw ItsypadError.failure("not an itsypad export (use --kvs for Itsypad's key-value layout); nothing was imported")
        }
        guard version <= Self.version else {
            throw ItsypadError.failure("the export was written by a newer itsypad (version \(version)); upgrade to import it")
        }
        return header
    }

    /// Stages the export's tabs (merged one by one), clips and settings; returns the sync key it carries, if any.
    static func stage(_ bytes: UnsafeBufferPointer<UInt8>, into staging: ImportStaging, consumed: (Int) -> Void) throws -> SecretBytes? {
        let header = try read(bytes, device: staging.store.deviceID, tab: staging.merge, clip: staging.add, consumed: consumed)
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

    /// A clip, its text escaped into `escapedText` and, for a binary one, its bytes decoded into
    /// `data` (both are scratch space the caller reuses). An id is a UUID with hex digits in either
    /// case. A binary clip (a `type` other than text) needs a valid type and its bytes as canonical
    /// base64 in `data`, as many as `size` says.
    static func decodeClip(_ json: some JSONFields, escapedText text: inout [UInt8], data: inout [UInt8]) -> EscapedClip? {
        text.removeAll(keepingCapacity: true)
        data.removeAll(keepingCapacity: true)
        let isBinary = json.withStringMember("type", { !MediaType.isText(utf8: $0) }) ?? false
        guard let id = json.withStringMember("id", PackedID.init(anyCaseUTF8:)) ?? nil,
            isBinary || json.appendEscapedMember("text", to: &text),
            let timestamp = Time.stored(json.withStringMember("timestamp", Time.parseISO8601(utf8:)) ?? nil)
        else { return nil }
        var binary: ClipBinary?
        if isBinary, let type = json.stringMember("type")?.lowercased() {
            guard MediaType.isValid(type), json.withStringMember("data", { Base64.decode($0, into: &data) }) == true, !data.isEmpty,
                json.integerMember("size").map({ $0 == data.count }) ?? true
            else { return nil }
            binary = ClipBinary(describing: data, type: type)
        }
        let reason =
            json.stringMember("localReason").flatMap(LocalOnlyReason.init(rawValue:))
            ?? (json.boolMember("localOnly") == true ? .requested : nil)
        return EscapedClip(
            id: id, timestamp: timestamp, pinned: json.boolMember("pinned") ?? false, localOnly: reason, binary: binary,
            escapedText: text)
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
            let modified = Time.stored(json["lastModified"]?.stringValue.flatMap(Time.parseISO8601))
        else { return nil }
        let name = json["name"]?.stringValue ?? Tab.derivedName(for: content)
        let language = json["language"]?.stringValue.flatMap(LanguageDetector.canonical) ?? LanguageDetector.detect(content)
        let clock = json["clock"]?.stringValue.flatMap(HybridTimestamp.init) ?? HybridTimestamp(physical: modified, device: device)
        return Tab(
            id: id, name: name, nameLocked: json["nameLocked"]?.boolValue ?? true, content: content, language: language,
            languageLocked: json["languageLocked"]?.boolValue ?? false, lastModified: modified,
            fileURL: json["fileURL"]?.stringValue, clock: clock)
    }
}

/// Itsypad's old iCloud key-value layout, read by `import --kvs` (see `KeyValueDumpFile`).
package enum KeyValueDump {
    /// The largest dump read (it is parsed whole): iCloud's key-value store held at most 1 MB for
    /// the app, which its JSON form (data in base64, text escaped) never takes past this.
    package static let maxBytes = 16 << 20

    /// Seconds since 2001-01-01 (JSONEncoder's default Date form) to Unix milliseconds; nil outside 1970–9999.
    static func legacyDate(_ seconds: Double) -> Milliseconds? {
        Time.stored(Time.fromReferenceDate(seconds: seconds))
    }

    static func stage(_ document: JSONValue, into staging: ImportStaging, maxEntries: Int) throws {
        let store = staging.store
        guard case .object = document, document["tabs"] != nil || document["clipboard"] != nil else {
            throw ItsypadError.failure("not an Itsypad key-value dump (no tabs or clipboard key); nothing was imported")
        }
        let dump = try JSONCoding.decode(KeyValueDumpFile.self, from: document)
        let deletedTabs = Set((dump.deletedTabIDs?.items ?? []).compactMap { $0.id?.lowercased() })
        let deletedClips = Set((dump.deletedClipboardIDs?.items ?? []).compactMap { $0.id?.lowercased() })
        let tabs = (dump.tabs?.items ?? []).compactMap { tab -> Tab? in
            let id = tab.id.lowercased()
            // Only scratch tabs were ever synced through the key-value store.
            guard tab.fileURL?.value == nil, !deletedTabs.contains(id), let modified = tab.modified else { return nil }
            return Tab(
                id: id, name: tab.name?.value ?? Tab.derivedName(for: tab.content), nameLocked: false, content: tab.content,
                language: tab.language?.value.flatMap(LanguageDetector.canonical) ?? "plain",
                languageLocked: tab.languageLocked?.value ?? false, lastModified: modified, fileURL: nil,
                clock: HybridTimestamp(physical: modified, device: store.deviceID))
        }
        let clips = try (dump.clipboard?.items ?? []).compactMap { clip -> ClipEntry? in
            let id = clip.id.lowercased()
            guard !deletedClips.contains(id), !Text.isBlank(clip.text), let time = clip.time else { return nil }
            return ClipEntry(
                id: id, text: clip.text, timestamp: time, localOnly: try store.localOnlyReason(for: clip.text, requested: false))
        }
        for tombstoned in deletedTabs.sorted() {
            if let tab = try store.tabs.tab(id: tombstoned) { try staging.removeTab(tab) }
        }
        let removedClips = try staging.removeClips(deletedClips.sorted())
        for tab in tabs { try staging.merge(tab) }
        try staging.addNewest(clips, maxEntries: maxEntries, removed: removedClips)
    }
}

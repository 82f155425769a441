import ItsypadBackend
import ItsypadModel
import ItsypadSupport

/// A tab record's fields (`ScratchTab`, see `FieldCoding` for how each is stored): the one place
/// their names and meaning are written down. The names follow the Itsypad app's CloudKit schema,
/// plus what a CLI adds (clock, deviceName, history). Records of the app and of older versions lack
/// some, so every field is optional here; `problem` says which a tab cannot do without.
struct TabRecordFields: Codable, Equatable {
    let name: String?
    /// Absent in records from before names could be locked: not locked.
    let nameLocked: Bool?
    /// Any name or alias `LanguageDetector` knows; anything else is plain text.
    let language: String?
    let languageLocked: Bool?
    let lastModified: RecordTimestamp?
    /// The tab's `HybridTimestamp`. Absent in the app's records: the time and the writing device's.
    let clock: String?
    /// The clocks of the edits that last set the name and the language (each with its lock); absent
    /// when they are `clock`, and in records from before they were kept.
    let nameClock: String?
    let languageClock: String?
    /// The name of the device that wrote this version, for conflict copies and `sync status`.
    let deviceName: String?
    /// The edits this version includes; absent in records from before they were kept.
    let history: [String]?
    /// The content, inline when it is small enough for the backend to keep in the record.
    let content: String?
    /// The content as an asset, otherwise.
    let contentAsset: AssetReference?

    /// Where a tab's content is written.
    enum Content {
        case inline
        case asset(AssetReference)
    }

    init(_ tab: Tab, deviceName: String, content: Content) {
        name = tab.name
        nameLocked = tab.nameLocked
        language = tab.language
        languageLocked = tab.languageLocked
        lastModified = RecordTimestamp(tab.lastModified)
        clock = tab.clock.description
        nameClock = tab.nameClock == tab.clock ? nil : tab.nameClock.description
        languageClock = tab.languageClock == tab.clock ? nil : tab.languageClock.description
        self.deviceName = deviceName
        history = tab.history.strings
        switch content {
        case .inline:
            self.content = tab.content
            contentAsset = nil
        case .asset(let reference):
            self.content = nil
            contentAsset = reference
        }
    }

    /// Why these fields cannot become a tab, or nil when they can. `mistypedContent`: the record
    /// holds inline content that is not a string, which no asset beside it makes good.
    func problem(recordName: String, mistypedContent: Bool) -> String? {
        guard Identifier.isValid(recordName) else { return "the record name is not a tab id" }
        guard name != nil else { return "no name" }
        guard let lastModified, Time.validRange.contains(lastModified.milliseconds) else {
            return "lastModified is missing or outside 1970–9999"
        }
        guard content != nil || (contentAsset != nil && !mistypedContent) else { return "no content" }
        for (key, value) in [("clock", clock), ("nameClock", nameClock), ("languageClock", languageClock)] {
            if let value, HybridTimestamp(value) == nil { return "\(key) \(Text.quoted(value)) is not a valid clock" }
        }
        return nil
    }

    /// Whether `fields` hold inline content of another type than a string (read here as absent).
    static func hasMistypedContent(_ fields: [String: FieldValue]) -> Bool {
        switch fields[CodingKeys.content.stringValue] {
        case nil, .string?: false
        default: true
        }
    }

    /// The tab these fields hold, with `content` read from wherever it is, as synced at `tag`
    /// (nil without a name or time: check `problem` first). `writer` is the id of the device that
    /// saved the record.
    func tab(id: String, content: String, tag: String, writer: String?) -> Tab? {
        guard let name, let modified = lastModified?.milliseconds else { return nil }
        let clock = clock.flatMap(HybridTimestamp.init) ?? HybridTimestamp(physical: modified, device: writer ?? "")
        return Tab(
            id: id.lowercased(), name: name, nameLocked: nameLocked ?? false, content: content,
            language: language.flatMap(LanguageDetector.canonical) ?? "plain", languageLocked: languageLocked ?? false,
            lastModified: modified, fileURL: nil, clock: clock, sync: TabSyncMetadata(tag: tag, ancestor: content, clock: clock),
            history: editHistory, nameClock: nameClock.flatMap(HybridTimestamp.init),
            languageClock: languageClock.flatMap(HybridTimestamp.init))
    }

    /// The edits this version includes; a record without them counts as its own edit.
    var editHistory: EditHistory { VersionEditFields(history: history, clock: clock).edits }
}

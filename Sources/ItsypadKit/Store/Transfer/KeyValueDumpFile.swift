import ItsypadModel
import ItsypadSupport

/// A dump of Itsypad's old iCloud key-value layout, read by `import --kvs`: the one place its keys
/// and members are written down. The app wrote it; itsypad only reads it. Keys are read in the
/// order of the properties, which decides the refusal a dump with several problems gets.
struct KeyValueDumpFile: Decodable {
    /// Ids of tabs deleted in the app.
    let deletedTabIDs: KeyValueData<DeletedID>?
    let deletedClipboardIDs: KeyValueData<DeletedID>?
    let tabs: KeyValueData<Tab>?
    let clipboard: KeyValueData<Clip>?

    /// A tab as the app encoded it (it wrote more members, ignored here). An optional member that
    /// holds something else is ignored, as by the app.
    struct Tab: KeyValueItem {
        /// A UUID in either case.
        let id: String
        let content: String
        /// Seconds since 2001-01-01 (JSONEncoder's default `Date` form).
        let lastModified: Double
        /// Absent: derived from the content.
        let name: IfReadable<String>?
        let language: IfReadable<String>?
        let languageLocked: IfReadable<Bool>?
        /// A file-backed tab's file: such tabs were never synced through the key-value store.
        let fileURL: IfReadable<String>?

        static let noun = "a tab"
        var modified: Milliseconds? { KeyValueDump.legacyDate(lastModified) }
        var isValid: Bool { Identifier.isValid(id) && modified != nil }
    }

    /// A clipboard entry as the app encoded it.
    struct Clip: KeyValueItem {
        let id: String
        let text: String
        /// Seconds since 2001-01-01.
        let timestamp: Double

        static let noun = "a clipboard entry"
        var time: Milliseconds? { KeyValueDump.legacyDate(timestamp) }
        var isValid: Bool { Identifier.isValid(id) && time != nil }
    }

    /// An id in a list of deleted ones: anything but a string is ignored.
    struct DeletedID: KeyValueItem {
        let id: String?

        init(from decoder: any Decoder) throws { id = try? decoder.singleValueContainer().decode(String.self) }

        static let noun = "an id"
        var isValid: Bool { true }
    }
}

/// One element of a key's array: what it is called in a refusal, and whether it can be imported.
protocol KeyValueItem: Decodable {
    static var noun: String { get }
    var isValid: Bool { get }
}

/// A member that is read when it holds a `Value`, and is nil when it holds anything else.
struct IfReadable<Value: Decodable>: Decodable {
    let value: Value?

    init(from decoder: any Decoder) throws { value = try? decoder.singleValueContainer().decode(Value.self) }
}

/// A key's value. The app stored each as encoded data, so a dump may hold it decoded (an array),
/// as the JSON document itself (a string), or as that document's bytes in base64 (how a
/// property-list export writes data, wrapped in lines).
struct KeyValueData<Item: KeyValueItem>: Decodable {
    let items: [Item]

    init(from decoder: any Decoder) throws {
        let key = decoder.codingPath.last?.stringValue ?? ""
        guard let array = KeyValueData.array(try decoder.singleValueContainer().decode(JSONValue.self)) else {
            throw ItsypadError.failure(
                "the key-value dump's \(key) is neither an array, nor a JSON array as text, nor base64 data holding one; nothing was imported"
            )
        }
        guard let items = try? JSONCoding.decode([Item].self, from: array), items.allSatisfy(\.isValid) else {
            throw ItsypadError.failure("\(Item.noun) in the key-value dump is invalid; nothing was imported")
        }
        self.items = items
    }

    private static func array(_ value: JSONValue) -> JSONValue? {
        if case .array = value { return value }
        guard let text = value.stringValue else { return nil }
        if let array = try? JSONValue.parse(Array(text.utf8)), case .array = array { return array }
        guard let bytes = Base64.decode(String(text.unicodeScalars.filter { !$0.properties.isWhitespace })),
            let array = try? JSONValue.parse(bytes), case .array = array
        else { return nil }
        return array
    }
}

import ItsypadBackend
import ItsypadModel
import ItsypadSupport

/// The documented `--json` and export forms. Field order is fixed: scripts may
/// rely on it, and new fields are only ever appended.
enum JSONForms {
    static func tab(_ tab: Tab, syncState: SyncState) -> JSONValue {
        .object([
            ("id", .string(tab.id)),
            ("name", .string(tab.name)),
            ("content", .string(tab.content)),
            ("language", .string(tab.language)),
            ("languageLocked", .bool(tab.languageLocked)),
            ("lastModified", .string(Time.iso8601(tab.lastModified))),
            ("fileURL", tab.fileURL.map { .string($0) } ?? .null),
            ("syncState", .string(syncState.rawValue)),
        ])
    }

    /// `text` is null for a binary entry; `type` is its MIME type (`text/plain` for text), `size` its bytes.
    static let clipKeys = ["id", "text", "timestamp", "pinned", "localOnly", "syncState", "type", "size"]

    static func clip(_ entry: ClipEntry, syncState: SyncState) -> JSONValue {
        .object(
            Array(
                zip(
                    clipKeys,
                    [
                        .string(entry.id),
                        entry.binary == nil ? .string(entry.text) : .null,
                        .string(Time.iso8601(entry.timestamp)),
                        .bool(entry.pinned),
                        .bool(entry.localOnly != nil),
                        .string(syncState.rawValue),
                        .string(entry.type),
                        .integer(Int64(entry.binary?.size ?? entry.text.utf8.count)),
                    ])))
    }

    static func tabState(_ tab: Tab, _ states: (RecordKey) -> SyncState) -> SyncState {
        tab.isFileBacked ? .localOnly : states(RecordKey(.tab, tab.id))
    }

    static func clipState(_ entry: ClipEntry, _ states: (RecordKey) -> SyncState) -> SyncState {
        entry.localOnly != nil ? .localOnly : states(RecordKey(.clip, entry.id))
    }
}

extension Invocation {
    /// Prints pretty JSON and a newline.
    func printJSON(_ value: JSONValue) {
        out.line(value.prettySerialized())
    }

    /// Prints a pretty JSON array one element at a time, so that memory stays
    /// flat however long the list (the output is identical to `printJSON(.array(...))`).
    func printJSONArray<Items: Sequence>(_ items: Items, _ element: (Items.Element) throws -> JSONValue) rethrows {
        try JSONArrayWriter.write(items, level: 0, to: out.write, element)
        out.write("\n")
    }
}

extension Invocation {
    /// Reads piped standard input as UTF-8 text; nil when stdin is a terminal.
    func pipedText(what: String) throws -> String? {
        guard !context.stdinIsTerminal else { return nil }
        let bytes = try context.standardInput()
        guard let text = Text.decodeUTF8(bytes) else {
            throw ItsypadError.failure("\(what) is not valid UTF-8 text; nothing was stored")
        }
        return text
    }

    /// Turns a resolution into the item or a clear error naming the candidates.
    func unique<Item>(_ resolution: Resolution<Item>, _ reference: String, kind: String, describe: (Item) -> String) throws -> Item {
        switch resolution {
        case .found(let item): return item
        case .notFound: throw ItsypadError.failure("no \(kind) matches '\(reference)'")
        case .ambiguous(let items):
            throw ItsypadError.failure(
                "'\(reference)' matches several \(kind)s; use more characters:\n"
                    + items.map { "  " + describe($0) }.joined(separator: "\n"))
        }
    }
}

/// Writes a pretty JSON array element by element, so output of any length
/// needs no document in memory; the text equals `JSONValue.array(...).prettySerialized()`.
struct JSONArrayWriter {
    let level: Int
    let write: (String) -> Void
    private var first = true

    init(level: Int = 0, write: @escaping (String) -> Void) {
        self.level = level
        self.write = write
    }

    mutating func append(_ element: JSONValue) {
        let indent = String(repeating: "  ", count: level + 1)
        write((first ? "[\n" : ",\n") + indent + element.prettySerialized().replacingNewlines(with: "\n" + indent))
        first = false
    }

    func finish() {
        write(first ? "[]" : "\n" + String(repeating: "  ", count: level) + "]")
    }

    /// Writes a whole sequence.
    static func write<Items: Sequence>(
        _ items: Items, level: Int, to write: @escaping (String) -> Void,
        _ element: (Items.Element) throws -> JSONValue
    ) rethrows {
        var writer = JSONArrayWriter(level: level, write: write)
        for item in items { writer.append(try element(item)) }
        writer.finish()
    }
}

extension String {
    func replacingNewlines(with replacement: String) -> String {
        split(separator: "\n", omittingEmptySubsequences: false).joined(separator: replacement)
    }
}

/// An element of a pretty JSON array split around its values, so that
/// thousands of elements print without building a `JSONValue` each. The text
/// is made by `JSONArrayWriter` itself, so the output is the same byte for byte.
struct JSONElementTemplate {
    /// The text between values: pieces[0], value 0, pieces[1], … value n-1, pieces[n].
    let pieces: [[UInt8]]

    /// `form` builds the element from its values; the template calls it once with placeholders.
    init(level: Int, valueCount: Int, form: ([JSONValue]) -> JSONValue) {
        let markers = (0..<valueCount).map { "\u{1}\($0)\u{1}" }
        var text = ""
        var writer = JSONArrayWriter(level: level) { text += $0 }
        writer.append(form(markers.map { .string($0) }))
        var pieces: [[UInt8]] = []
        var rest = Substring(text.dropFirst(2))  // the writer's opening "[\n"
        for marker in markers {
            let quoted = JSONValue.string(marker).serialized()
            let range = rest.firstRange(of: quoted)!
            pieces.append(Array(rest[..<range.lowerBound].utf8))
            rest = rest[range.upperBound...]
        }
        pieces.append(Array(rest.utf8))
        self.pieces = pieces
    }
}

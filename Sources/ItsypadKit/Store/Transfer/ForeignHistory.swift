import ItsypadModel
import ItsypadSupport

/// Another clipboard tool's history as `import --from` reads it: its texts, newest first, and
/// the items left out, each named as that tool or its file names it.
package struct ForeignHistory: Equatable {
    package struct Entry: Equatable {
        package var text: String
        package var pinned = false
    }

    package enum Omission: Equatable {
        /// Offered only in these types (none of them text).
        case notText([String])
        case tooLarge(bytes: Int)
        case notUTF8
        case blank
    }

    package var entries: [Entry] = []
    package var omitted: [(item: String, why: Omission)] = []

    package init() {}

    package static func == (a: ForeignHistory, b: ForeignHistory) -> Bool {
        a.entries == b.entries && a.omitted.elementsEqual(b.omitted) { $0.item == $1.item && $0.why == $1.why }
    }

    /// Adds an item's text, or says why it is left out.
    mutating func add(_ text: String, item: String, pinned: Bool = false, maxBytes: Int) {
        if text.utf8.count > maxBytes {
            omitted.append((item, .tooLarge(bytes: text.utf8.count)))
        } else if Text.isBlank(text) {
            omitted.append((item, .blank))
        } else {
            entries.append(Entry(text: text, pinned: pinned))
        }
    }
}

/// clipman's history file: a JSON array of strings, the oldest first (`null` when empty).
package enum ClipmanHistory {
    /// Where clipman keeps it unless `--histpath` says otherwise: under HOME, whatever XDG_DATA_HOME says.
    package static func defaultPath(home: String) -> String { home + "/.local/share/clipman.json" }

    /// Entries are named by their place in the array, as jq does (`.[0]` is the oldest). The array
    /// is read an element at a time (`consumed` is told how far), so memory holds the texts kept,
    /// never a text over `maxBytes`. A document that is not an array is parsed whole only when small.
    package static func parse(
        _ bytes: UnsafeBufferPointer<UInt8>, maxBytes: Int, consumed: (Int) -> Void = { _ in }
    ) throws
        -> ForeignHistory
    {
        let notHistory = ItsypadError.failure("not a clipman history (a JSON array of strings); nothing was imported")
        guard bytes.first(where: { !$0.isASCIIWhitespace }) == UInt8(ascii: "[") else {
            // null (how clipman leaves an empty history) or not a history at all.
            guard bytes.count <= 1 << 20 else { throw notHistory }
            guard try JSONValue.parse(bytes) == .null else { throw notHistory }
            return ForeignHistory()
        }
        var oldestFirst = ForeignHistory()
        var index = 0
        try JSONValue.parseArray(
            bytes,
            element: { element in
                guard let text = try element.value().stringValue else {
                    throw ItsypadError.failure("not a clipman history: .[\(index)] is not a string; nothing was imported")
                }
                oldestFirst.add(text, item: ".[\(index)]", maxBytes: maxBytes)
                index += 1
            }, consumed: consumed)
        var history = ForeignHistory()
        history.entries = oldestFirst.entries.reversed()
        history.omitted = oldestFirst.omitted.reversed()
        return history
    }
}

/// The items of CopyQ's first tab, as the `copyq eval` of `script` prints them.
package enum CopyQHistory {
    /// Prints `{"tab": NAME, "items": [{"types": [...], "text": BASE64} …]}`, row 0 (the newest)
    /// first. Bytes travel in base64, so that newlines and binary data arrive as they are; a
    /// text larger than the limit (the first argument) is given as its `size` only.
    package static let script = """
        var limit = Number(str(arguments[1]));
        var names = tab();
        var items = [];
        if (names.length > 0) {
            tab(names[0]);
            for (var row = 0, count = size(); row < count; ++row) {
                var item = getItem(row);
                var entry = {types: Object.keys(item), pinned: 'application/x-copyq-item-pinned' in item};
                var text = item['text/plain'];
                if (text !== undefined) {
                    if (text.length > limit) entry.size = text.length; else entry.text = toBase64(text);
                }
                items.push(JSON.stringify(entry));
            }
        }
        print('{"tab":' + JSON.stringify(names.length > 0 ? names[0] : '') + ',"items":[' + items.join(',') + ']}');
        """

    /// CopyQ's own formats (the item's window title, its pin), not a type the item was copied in.
    static let internalTypePrefix = "application/x-copyq-"

    /// Items are named by their row (`copyq read 0` is the newest). Returns the tab's name too.
    package static func parse(_ bytes: [UInt8], maxBytes: Int) throws -> (tab: String, history: ForeignHistory) {
        let malformed = ItsypadError.failure("copyq printed something other than its items; nothing was imported")
        guard let document = try? JSONValue.parse(bytes), let tab = document["tab"]?.stringValue,
            let items = document["items"]?.arrayValue
        else { throw malformed }
        var history = ForeignHistory()
        for (row, item) in items.enumerated() {
            guard let types = item["types"]?.arrayValue?.compactMap(\.stringValue) else { throw malformed }
            let name = "row \(row)"
            if let encoded = item["text"]?.stringValue {
                guard let bytes = Base64.decode(encoded) else { throw malformed }
                guard let text = Text.decodeUTF8(bytes) else {
                    history.omitted.append((name, .notUTF8))
                    continue
                }
                history.add(text, item: name, pinned: item["pinned"]?.boolValue ?? false, maxBytes: maxBytes)
            } else if let size = item["size"]?.int64Value {
                history.omitted.append((name, .tooLarge(bytes: Int(size))))
            } else {
                history.omitted.append((name, .notText(types.filter { !$0.hasPrefix(internalTypePrefix) })))
            }
        }
        return (tab, history)
    }
}

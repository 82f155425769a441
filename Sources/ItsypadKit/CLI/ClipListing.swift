import ItsypadModel
import ItsypadStore
import ItsypadSupport

/// `clip ls` (previews or JSON) and the clips of `export`, printed from the
/// log's bytes: no `ClipEntry`, `String` or `JSONValue` per entry, and of a
/// long text only what is printed is read (its first bytes for a preview;
/// for JSON the whole text, streamed a piece at a time).
struct ClipListing {
    let store: DataStore
    let clips: ClipStore
    var query: TextQuery? = nil
    var limit: Int? = nil
    var pinnedOnly = false

    /// Bytes of escaped text read for a preview before reading on: 100
    /// characters of up to four bytes, with room for escapes.
    static let previewHead = 512
    /// Bytes of escaped text read with a JSON element before streaming the rest.
    static let jsonHead = 1 << 16

    init(store: DataStore) throws {
        self.store = store
        clips = try store.clips()
    }

    /// Entries that pass the search and the limit, newest first.
    private func forEachShown(textHead: Int, _ body: (ListedClip) throws -> Void) throws {
        var shown = 0
        var scratch: [UInt8] = []
        // A search reads whole texts, a long one in pieces after its first MiB.
        try clips.forEachListed(pinnedOnly: pinnedOnly, textHead: query == nil ? textHead : 1 << 20) { clip in
            if let query {
                // Most texts are ruled out from their escaped bytes; the others are decoded and decided by the rule.
                if clip.isWhole && !query.mayMatch(escaped: clip.head) { return true }
                if try !clips.wholeText(of: clip, scratch: &scratch, query.matches(utf8:)) { return true }
            }
            try body(clip)
            shown += 1
            return limit.map { shown < $0 } ?? true
        }
    }

    /// `SHORTID<TAB>preview` lines, made safe for a terminal when one shows them.
    func printPreviews(to out: OutputBuffer, length: Int, terminalSafe: Bool = false) throws {
        var line: [UInt8] = []
        var scratch: [UInt8] = []
        try forEachShown(textHead: ClipListing.previewHead) { clip in
            guard terminalSafe else {
                // Off a terminal (fzf, scripts) each line is written straight into the output.
                try out.append { output in
                    try appendPreviewLine(clip, length: length, to: &output, scratch: &scratch)
                    output.append(0x0A)
                }
                return
            }
            line.removeAll(keepingCapacity: true)
            try appendPreviewLine(clip, length: length, to: &line, scratch: &scratch)
            Text.makeTerminalSafe(&line)
            line.append(0x0A)
            out.write(line)
        }
    }

    private func appendPreviewLine(_ clip: ListedClip, length: Int, to line: inout [UInt8], scratch: inout [UInt8]) throws {
        clip.slot.id.appendText(to: &line, hexDigits: 8)
        line.append(0x09)
        // Most previews come straight from the escaped text; the others from the decoded one.
        if !PreviewBuilder.append(escaped: clip.head, isWhole: clip.isWhole, limit: length, to: &line) {
            var preview = PreviewBuilder(limit: length)
            try clips.forEachDecodedPiece(of: clip, scratch: &scratch) { piece, last in !preview.feed(piece, isLast: last) }
            line += preview.output
        }
    }

    /// A pretty JSON array of `JSONForms.clip` elements at `level` (values in
    /// `JSONForms.clipKeys` order, which the indices below follow), with
    /// `localReason` appended for export; the text is streamed.
    func printJSON(to out: OutputBuffer, level: Int = 0, withLocalReason: Bool = false) throws {
        let keys = JSONForms.clipKeys + (withLocalReason ? ["localReason"] : [])
        let template = JSONElementTemplate(level: level, valueCount: keys.count) { .object(Array(zip(keys, $0))) }
        let states = try store.clipSyncStates()
        let quotedStates = Dictionary(uniqueKeysWithValues: SyncState.allCases.map { ($0, Array("\"\($0.rawValue)\"".utf8)) })
        let reasons = Dictionary(uniqueKeysWithValues: LocalOnlyReason.allCases.map { ($0, Array("\"\($0.rawValue)\"".utf8)) })
        let (yes, no, null) = (Array("true".utf8), Array("false".utf8), Array("null".utf8))
        var element: [UInt8] = []
        var scratch: [UInt8] = []
        var first = true
        try forEachShown(textHead: ClipListing.jsonHead) { clip in
            element.removeAll(keepingCapacity: true)
            element += first ? [0x5B, 0x0A] : [0x2C, 0x0A]
            first = false
            for (index, piece) in template.pieces.enumerated() {
                element += piece
                guard index < keys.count else { break }
                switch index {
                case 0:
                    element.append(0x22)
                    clip.slot.id.appendText(to: &element)
                    element.append(0x22)
                case 1:
                    element.append(0x22)
                    try clips.forEachDecodedPiece(of: clip, reescaping: true, scratch: &scratch) { piece, _ in
                        element += piece
                        if element.count >= 1 << 20 {
                            out.write(element)
                            element.removeAll(keepingCapacity: true)
                        }
                        return true
                    }
                    element.append(0x22)
                case 2:
                    element.append(0x22)
                    Time.appendISO8601(clip.slot.timestamp, to: &element)
                    element.append(0x22)
                case 3: element += clip.slot.isPinned ? yes : no
                case 4: element += clip.localOnly != nil ? yes : no
                case 5: element += quotedStates[clip.localOnly != nil ? .localOnly : states(clip.slot.id)]!
                default: element += clip.localOnly.map { reasons[$0]! } ?? null
                }
            }
            out.write(element)
        }
        out.write(first ? "[]" : "\n" + String(repeating: "  ", count: level) + "]")
    }
}

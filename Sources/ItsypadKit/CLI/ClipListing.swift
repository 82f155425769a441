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
    /// `localReason` appended for export. Each element is written straight into
    /// the output, its text copied from the log when it is already in the form
    /// JSON needs; a long text is streamed.
    func printJSON(to out: OutputBuffer, level: Int = 0, withLocalReason: Bool = false) throws {
        let keys = JSONForms.clipKeys + (withLocalReason ? ["localReason"] : [])
        let template = JSONElementTemplate(level: level, valueCount: keys.count) { .object(Array(zip(keys, $0))) }
        let states = try store.clipSyncStates()
        let words = JSONWords(template: template)
        var scratch: [UInt8] = []
        var first = true
        try forEachShown(textHead: ClipListing.jsonHead) { clip in
            let separator = first ? words.opening : words.separator
            first = false
            let state = clip.localOnly != nil ? .localOnly : states(clip.slot.id)
            // Most texts are copied whole; a long one is written a MiB at a time.
            try out.append { output in
                for index in 0...keys.count {
                    words.write(index == 0 ? separator : words.pieces[index], to: &output)
                    guard index < keys.count else { break }
                    switch index {
                    case 0:
                        output.append(0x22)
                        clip.slot.id.appendText(to: &output)
                        output.append(0x22)
                    case 1:
                        output.append(0x22)
                        try clips.forEachDecodedPiece(of: clip, reescaping: true, scratch: &scratch) { piece, _ in
                            output += piece
                            if output.count >= 1 << 20 { out.writeOut(&output) }
                            return true
                        }
                        output.append(0x22)
                    case 2:
                        output.append(0x22)
                        Time.appendISO8601(clip.slot.timestamp, to: &output)
                        output.append(0x22)
                    case 3: words.write(words.bool(clip.slot.isPinned), to: &output)
                    case 4: words.write(words.bool(clip.localOnly != nil), to: &output)
                    case 5: words.write(words.state(state), to: &output)
                    default: words.write(clip.localOnly.map(words.reason) ?? words.null, to: &output)
                    }
                }
            }
        }
        out.write(first ? "[]" : "\n" + String(repeating: "  ", count: level) + "]")
    }
}

/// The fixed bytes of `ClipListing.printJSON`'s elements — the template's pieces
/// and the quoted values — as ranges of one array, so that writing an element
/// copies bytes without touching an array of its own or a dictionary.
private struct JSONWords {
    private var bytes: [UInt8] = []
    /// The template's pieces; the first is replaced by `opening` or `separator` and the piece itself.
    private(set) var pieces: [Range<Int>] = []
    private(set) var opening = 0..<0, separator = 0..<0, null = 0..<0
    private var yes = 0..<0, no = 0..<0
    private var states: [(SyncState, Range<Int>)] = []
    private var reasons: [(LocalOnlyReason, Range<Int>)] = []

    init(template: JSONElementTemplate) {
        func add(_ literal: [UInt8]) -> Range<Int> {
            bytes += literal
            return bytes.count - literal.count..<bytes.count
        }
        pieces = template.pieces.map(add)
        opening = add([0x5B, 0x0A] + template.pieces[0])
        separator = add([0x2C, 0x0A] + template.pieces[0])
        (yes, no, null) = (add(Array("true".utf8)), add(Array("false".utf8)), add(Array("null".utf8)))
        states = SyncState.allCases.map { ($0, add(Array("\"\($0.rawValue)\"".utf8))) }
        reasons = LocalOnlyReason.allCases.map { ($0, add(Array("\"\($0.rawValue)\"".utf8))) }
    }

    func write(_ range: Range<Int>, to output: inout [UInt8]) {
        bytes.withUnsafeBufferPointer { output.append(contentsOf: UnsafeBufferPointer(rebasing: $0[range])) }
    }

    func bool(_ value: Bool) -> Range<Int> { value ? yes : no }
    func state(_ state: SyncState) -> Range<Int> { states.first { $0.0 == state }!.1 }
    func reason(_ reason: LocalOnlyReason) -> Range<Int> { reasons.first { $0.0 == reason }!.1 }
}

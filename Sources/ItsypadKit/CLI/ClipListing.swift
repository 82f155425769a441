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
        // A search passes over lines in which its anchor stands nowhere (their texts compare as bytes).
        let skipping = query.map { query in
            { (slot: ClipSlot, line: UnsafeBufferPointer<UInt8>) in slot.comparesAsBytes && query.cannotMatch(anywhereIn: line) }
        }
        try clips.forEachListed(pinnedOnly: pinnedOnly, textHead: query == nil ? textHead : 1 << 20, skipping: skipping) { clip in
            if let query {
                // A search reads text: bytes of another type never match.
                if clip.binary != nil { return true }
                // Most texts are decided from their escaped bytes; the others are decoded and decided by the rule.
                switch clip.isWhole ? query.verdict(escaped: clip.head, comparesAsBytes: clip.slot.comparesAsBytes) : .undecided {
                case .noMatch: return true
                case .match: break
                case .undecided: if try !clips.wholeText(of: clip, scratch: &scratch, query.matches(utf8:)) { return true }
                }
            }
            try body(clip)
            shown += 1
            return limit.map { shown < $0 } ?? true
        }
    }

    /// What a pinned entry's preview starts with: after the tab, so that `cut -f1` still gives the id.
    static let pinnedMarker = Array("[pinned] ".utf8)

    /// `SHORTID<TAB>preview` lines, made safe for a terminal when one shows them.
    func printPreviews(to out: OutputBuffer, terminalSafe: Bool = false) throws {
        var line: [UInt8] = []
        var scratch: [UInt8] = []
        try forEachShown(textHead: ClipListing.previewHead) { clip in
            guard terminalSafe else {
                // Off a terminal (fzf, scripts) each line is written straight into the output.
                try out.append { output in
                    try appendPreviewLine(clip, to: &output, scratch: &scratch)
                    output.append(0x0A)
                }
                return
            }
            line.removeAll(keepingCapacity: true)
            try appendPreviewLine(clip, to: &line, scratch: &scratch)
            Text.makeTerminalSafe(&line)
            line.append(0x0A)
            out.write(line)
        }
    }

    private func appendPreviewLine(_ clip: ListedClip, to line: inout [UInt8], scratch: inout [UInt8]) throws {
        // The short id is the id text's first eight digits (`Identifier.short`), as the line holds it.
        line.append(contentsOf: UnsafeBufferPointer(rebasing: clip.idText[..<8]))
        line.append(0x09)
        if clip.slot.isPinned { line += ClipListing.pinnedMarker }
        if let binary = clip.binary {
            ClipBinary.appendSummary(type: binary.type, size: binary.size, width: binary.width, height: binary.height, to: &line)
            return
        }
        // Most short texts are their own previews (as was worked out when they were added); most other
        // previews come straight from the escaped text; the rest from the decoded one.
        let limit = PreviewBuilder.listingLimit
        if clip.slot.isOwnPreview && clip.isWhole {
            line.append(contentsOf: clip.head)
        } else if !PreviewBuilder.append(escaped: clip.head, isWhole: clip.isWhole, limit: limit, to: &line) {
            var preview = PreviewBuilder(limit: limit)
            try clips.forEachDecodedPiece(of: clip, scratch: &scratch) { piece, last in !preview.feed(piece, isLast: last) }
            line += preview.output
        }
    }

    /// A pretty JSON array of `JSONForms.clip` elements at `level`, with `localReason` and
    /// `data` (a binary entry's bytes in base64, null for text) appended for export. Each element
    /// is copied into a block of output, its text straight from the log when it is already in the
    /// form JSON needs; a long text is streamed. For export, an entry whose bytes cannot be had is
    /// left out, and returned: the others are all written.
    @discardableResult
    func printJSON(to out: OutputBuffer, level: Int = 0, withLocalReason: Bool = false) throws -> [UnreadableClipBytes] {
        let words = JSONWords(level: level, withLocalReason: withLocalReason)
        let states = try store.clipSyncStates()
        var scratch: [UInt8] = []
        var bytes: [UInt8] = []
        var unreadable: [UnreadableClipBytes] = []
        var first = true
        var block = OutputBlock(out)
        var dates = ISO8601Writer()
        defer { block.close() }
        let blobs = withLocalReason ? clips.blobReader() : nil
        try forEachShown(textHead: ClipListing.jsonHead) { clip in
            // Read (and checked) before anything of the element is written.
            if let blobs, clip.binary != nil {
                do { try blobs.read(clip, into: &bytes) } catch let error as UnreadableClipBytes {
                    unreadable.append(error)
                    return
                }
            }
            let opening = first ? words.opening : words.separator
            first = false
            let state = clip.localOnly != nil ? .localOnly : states(clip.slot.id)
            words.write(opening, to: &block)
            block.append(UnsafeRawBufferPointer(clip.idText))
            var size = clip.binary?.size ?? 0
            if clip.binary != nil {
                words.write(words.afterIDNull, to: &block)
            } else {
                words.write(words.afterID, to: &block)
                // Most texts are copied whole; a long one a MiB at a time.
                try clips.forEachDecodedPiece(of: clip, reescaping: true, scratch: &scratch) { piece, _ in
                    block.append(UnsafeRawBufferPointer(piece))
                    size += JSONString.unescapedCount(ofCanonical: piece)
                    return true
                }
            }
            words.write(clip.binary != nil ? words.afterTextNull : words.afterText, to: &block)
            block.appendWritten(count: ISO8601Writer.length) { dates.write(clip.slot.timestamp, to: $0) }
            words.write(words.flags(pinned: clip.slot.isPinned, localOnly: clip.localOnly != nil), to: &block)
            if let binary = clip.binary {
                words.write(words.state(state), to: &block)
                block.append(UnsafeRawBufferPointer(binary.type))
                words.write(words.afterType, to: &block)
            } else {
                words.write(words.textState(state), to: &block)
            }
            block.appendDecimal(size)
            words.write(words.ending(clip.localOnly), to: &block)
            guard withLocalReason else { return }
            if clip.binary != nil {
                block.appendQuotedBase64(bytes)
            } else {
                words.write(words.null, to: &block)
            }
            words.write(words.closing, to: &block)
        }
        block.close()
        out.write(first ? "[]" : "\n" + String(repeating: "  ", count: level) + "]")
        return unreadable
    }
}

/// Output gathered in one block of memory and handed to an `OutputBuffer` a
/// block at a time: a JSON element is a few copies into it, each a `memcpy`
/// without an array's checks around it, and a block goes out in one write.
struct OutputBlock {
    private let out: OutputBuffer
    private var storage: UnsafeMutableBufferPointer<UInt8>
    private var count = 0

    /// Bytes gathered before they go out.
    private static let size = 1 << 18

    init(_ out: OutputBuffer) {
        self.out = out
        storage = .allocate(capacity: OutputBlock.size)
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress else { return }
        if count + bytes.count > storage.count {
            flush()
            // A piece as large as a block goes out as it is.
            if bytes.count >= storage.count {
                out.write(bytes)
                return
            }
        }
        UnsafeMutableRawPointer(storage.baseAddress! + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// Appends a non-negative integer's decimal digits.
    mutating func appendDecimal(_ value: Int) {
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        appendWritten(count: digits) { start in
            var rest = value
            for position in (0..<digits).reversed() {
                start[position] = UInt8(0x30 + rest % 10)
                rest /= 10
            }
        }
    }

    /// Appends `bytes` in base64 between quotes, encoded straight into the block, 48 KiB of them
    /// at a time (a multiple of 3: the pieces' texts join into the whole's).
    mutating func appendQuotedBase64(_ bytes: [UInt8]) {
        appendWritten(count: 1) { $0.pointee = 0x22 }
        bytes.withUnsafeBytes { bytes in
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + 3 << 14)
                appendWritten(count: Base64.encodedCount(end - start)) {
                    Base64.encode(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), into: $0)
                }
                start = end
            }
        }
        appendWritten(count: 1) { $0.pointee = 0x22 }
    }

    /// Appends `length` bytes (far fewer than a block) that `write` fills in place.
    mutating func appendWritten(count length: Int, _ write: (UnsafeMutablePointer<UInt8>) -> Void) {
        if count + length > storage.count { flush() }
        write(storage.baseAddress! + count)
        count += length
    }

    private mutating func flush() {
        guard count > 0 else { return }
        out.write(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: storage[..<count])))
        count = 0
    }

    /// Hands over what is gathered and frees the block; nothing may be appended after.
    mutating func close() {
        guard storage.count > 0 else { return }
        flush()
        storage.deallocate()
        storage = UnsafeMutableBufferPointer(start: nil, count: 0)
    }
}

/// The fixed bytes of `ClipListing.printJSON`'s elements, cut from a
/// `JSONElementTemplate` of `JSONForms.clip` (values in `JSONForms.clipKeys`
/// order: id, text, timestamp, pinned, localOnly, syncState, type, size, then
/// localReason and data for export) and joined around the values that vary, as
/// ranges of one array: an element is a dozen copies, without an array or a
/// dictionary of its own.
private struct JSONWords {
    private var bytes: [UInt8] = []
    /// Up to the id's first character, for the first element and the others.
    private(set) var opening = 0..<0, separator = 0..<0
    /// From after the id to the text's first character (or to its null), and from after the text
    /// (or its null) to the timestamp's first character.
    private(set) var afterID = 0..<0, afterIDNull = 0..<0, afterText = 0..<0, afterTextNull = 0..<0
    /// From after the timestamp to the sync state, for each pin and local-only flag.
    private var flagWords: [Range<Int>] = []
    /// From the sync state to the type's first character, for each state; for text, on to the size.
    private var stateWords: [Range<Int>] = [], textStateWords: [Range<Int>] = []
    /// From after the type to the size.
    private(set) var afterType = 0..<0
    /// From after the size: the element's end, or for export up to the data, for each local reason.
    private var endings: [Range<Int>] = []
    /// For export: `null` data, and the element's end after the data.
    private(set) var null = 0..<0, closing = 0..<0
    private let states = SyncState.allCases
    private let reasons: [LocalOnlyReason?]

    init(level: Int, withLocalReason: Bool) {
        reasons = withLocalReason ? [nil] + LocalOnlyReason.allCases : [nil]
        let keys = JSONForms.clipKeys + (withLocalReason ? ["localReason", "data"] : [])
        let pieces = JSONElementTemplate(level: level, valueCount: keys.count) { .object(Array(zip(keys, $0))) }.pieces
        let quote: [UInt8] = [0x22]
        func add(_ parts: [UInt8]...) -> Range<Int> {
            let joined = parts.flatMap { $0 }
            bytes += joined
            return bytes.count - joined.count..<bytes.count
        }
        func literal(_ text: String) -> [UInt8] { Array(text.utf8) }
        opening = add([0x5B, 0x0A], pieces[0], quote)
        separator = add([0x2C, 0x0A], pieces[0], quote)
        afterID = add(quote, pieces[1], quote)
        afterIDNull = add(quote, pieces[1], literal("null"))
        afterText = add(quote, pieces[2], quote)
        afterTextNull = add(pieces[2], quote)
        for pinned in [false, true] {
            for localOnly in [false, true] {
                flagWords.append(
                    add(quote, pieces[3], literal(pinned ? "true" : "false"), pieces[4], literal(localOnly ? "true" : "false"), pieces[5]))
            }
        }
        for state in states {
            stateWords.append(add(literal("\"\(state.rawValue)\""), pieces[6], quote))
            textStateWords.append(add(literal("\"\(state.rawValue)\""), pieces[6], quote, literal(MediaType.text), quote, pieces[7]))
        }
        afterType = add(quote, pieces[7])
        for reason in reasons {
            if withLocalReason {
                endings.append(add(pieces[8], literal(reason.map { "\"\($0.rawValue)\"" } ?? "null"), pieces[9]))
            } else {
                endings.append(add(pieces[8]))
            }
        }
        null = add(literal("null"))
        closing = withLocalReason ? add(pieces[10]) : 0..<0
    }

    func write(_ range: Range<Int>, to block: inout OutputBlock) {
        bytes.withUnsafeBytes { block.append(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    func flags(pinned: Bool, localOnly: Bool) -> Range<Int> { flagWords[(pinned ? 2 : 0) + (localOnly ? 1 : 0)] }

    func state(_ state: SyncState) -> Range<Int> { stateWords[states.firstIndex(of: state)!] }

    func textState(_ state: SyncState) -> Range<Int> { textStateWords[states.firstIndex(of: state)!] }

    /// The words after the size; `reason` is written only for export.
    func ending(_ reason: LocalOnlyReason?) -> Range<Int> {
        endings[reasons.count == 1 ? 0 : reasons.firstIndex(of: reason)!]
    }
}

import ItsypadDesktop
import ItsypadModel
import ItsypadStore
import ItsypadSupport

/// `itsypad clip …`
enum ClipCommands {
    /// What wl-clipboard (2.2 and later) sets `CLIPBOARD_STATE` to for a clip that is not to be kept:
    /// a password manager's, or none at all (the clipboard was cleared).
    static let unkeptClipboardStates: Set<String> = ["sensitive", "clear", "nil"]

    static func add(_ invocation: Invocation) throws -> Int32 {
        if let state = invocation.context.variable("CLIPBOARD_STATE"), unkeptClipboardStates.contains(state) { return ExitCode.success }
        let type = try invocation.value(.type).map { type in
            guard MediaType.isValid(type) else {
                throw invocation.usage("\(Text.quoted(type)) is not a MIME type: use type/subtype, such as image/png; nothing was stored.")
            }
            return type.lowercased()
        }
        // Read without the lock, which is taken only once the input is in: nobody waits on it while a slow pipe is read.
        let maxBytes = try DataStore.settingsWithoutLock(path: invocation.dataDirectory()).maxClipBytes
        func tooLarge() -> ItsypadError {
            .failure(
                "the input is larger than clipboard.maxBytes (\(maxBytes) bytes); nothing was stored "
                    + "(to keep larger clips: itsypad settings set clipboard.maxBytes N)")
        }
        let bytes: [UInt8]
        if !invocation.arguments.isEmpty {
            bytes = Array(invocation.arguments.joined(separator: " ").utf8)
            guard bytes.count <= maxBytes else { throw tooLarge() }
        } else if !invocation.context.stdinIsTerminal {
            // Read only up to the cap: a huge input is refused without being held in memory.
            guard let input = try invocation.context.standardInput(limit: maxBytes) else { throw tooLarge() }
            bytes = input
        } else {
            throw invocation.usage("No text: pass TEXT or pipe it on standard input.")
        }
        guard !bytes.isEmpty else { throw ItsypadError.failure("nothing to add: the input is empty; nothing was stored") }
        let outcome: ClipStore.AddOutcome
        // The type given, or for bytes given without one, what they are (nil: text).
        if let binaryType = type.map({ MediaType.isText($0) ? nil : $0 }) ?? MediaType.binaryType(of: bytes) {
            outcome = try invocation.store().addClip(
                bytes: bytes, type: binaryType, local: invocation.flag(.local), now: invocation.context.now())
        } else {
            // The bytes are given up here: a large text is not held twice while it is stored.
            guard let text = Text.decodeUTF8(consume bytes) else {
                throw ItsypadError.failure("the input is not valid UTF-8 text; nothing was stored")
            }
            guard !Text.isBlank(text) else {
                throw ItsypadError.failure("nothing to add: the input is empty or only whitespace")
            }
            outcome = try invocation.store().addClip(text, local: invocation.flag(.local), now: invocation.context.now())
        }
        invocation.out.line(outcome.entry.id)
        return ExitCode.success
    }

    static func list(_ invocation: Invocation) throws -> Int32 {
        let limit = try invocation.integer(.limit, in: 0...Int.max)
        let store = try invocation.store()
        if limit == 0 { return ExitCode.success }
        var listing = try ClipListing(store: store)
        listing.query = invocation.value(.search).map(TextQuery.init)
        listing.limit = limit
        listing.pinnedOnly = invocation.flag(.pinned)
        if invocation.flag(.json) {
            try listing.printJSON(to: invocation.out)
            invocation.out.write("\n")
        } else {
            try listing.printPreviews(to: invocation.out, terminalSafe: invocation.context.stdoutIsTerminal)
        }
        return ExitCode.success
    }

    static func show(_ invocation: Invocation) throws -> Int32 {
        guard let reference = try invocation.arguments.first ?? idFromStandardInput(invocation) else { return ExitCode.success }
        let store = try invocation.store()
        invocation.out.write(try store.clips().bytes(of: resolve(reference, store, invocation)))
        return ExitCode.success
    }

    /// Puts an entry back on the desktop's clipboard with its type, or on the terminal's by OSC 52.
    static func copy(_ invocation: Invocation) throws -> Int32 {
        let clipboard = try DesktopClipboard.writer(
            environment: invocation.context.environment, primary: invocation.flag(.primary), osc52: invocation.flag(.osc52))
        guard let reference = try invocation.arguments.first ?? idFromStandardInput(invocation) else { return ExitCode.success }
        let store = try invocation.store()
        let entry = try resolve(reference, store, invocation)
        let bytes = try store.clips().bytes(of: entry)
        invocation.close()
        let scratch = invocation.context.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let type = MediaType.isText(entry.type) ? DesktopClipboard.textType : entry.type
        try clipboard.copy(bytes, type: type, scratchDirectory: scratch)
        return ExitCode.success
    }

    /// The id piped in (`clip ls | fzf | cut -f1 | itsypad clip show`); nil
    /// when nothing was: fzf left with Esc, and like `xargs -r` there is then nothing to do.
    static func idFromStandardInput(_ invocation: Invocation) throws -> String? {
        guard let piped = try invocation.pipedText(what: "standard input") else {
            throw invocation.usage("Missing expected argument '<id>' (pass it, or pipe it on standard input).")
        }
        let ids = piped.split(whereSeparator: \.isWhitespace).map(String.init)
        guard ids.count <= 1 else { throw invocation.usage("Expected one id on standard input, not \(ids.count).") }
        return ids.first
    }

    static func remove(_ invocation: Invocation) throws -> Int32 {
        let store = try invocation.store()
        let entries = try invocation.arguments.map { try resolve($0, store, invocation) }
        try store.removeClips(entries.map(\.id))
        return ExitCode.success
    }

    static func pin(_ invocation: Invocation, _ pinned: Bool) throws -> Int32 {
        let store = try invocation.store()
        let entry = try resolve(invocation.arguments[0], store, invocation)
        if try !store.setClipPinned(entry, pinned, now: invocation.context.now()) {
            invocation.note("\(Identifier.short(entry.id)) was already \(pinned ? "pinned" : "unpinned")")
        }
        return ExitCode.success
    }

    static func clear(_ invocation: Invocation) throws -> Int32 {
        let store = try invocation.store()
        let removed = try store.clearClips(includingPinned: invocation.flag(.all))
        invocation.note("removed \(removed.count) \(removed.count == 1 ? "entry" : "entries")")
        return ExitCode.success
    }

    static func prune(_ invocation: Invocation) throws -> Int32 {
        let store = try invocation.store()
        let settings = try store.settings()
        let retentionText = invocation.value(.olderThan) ?? settings.string(.clipboardRetention) ?? "never"
        guard let retention = RetentionDuration(retentionText) else {
            throw invocation.usage("'\(retentionText)' is not a duration: use 90s, 30m, 12h, 7d, 2w or never.")
        }
        let keep = try invocation.integer(.keep, in: 0...Int.max) ?? settings.maxClipEntries
        let removed = try store.pruneClips(olderThan: retention.milliseconds, keep: keep, now: invocation.context.now())
        invocation.note("pruned \(removed.count) \(removed.count == 1 ? "entry" : "entries")")
        return ExitCode.success
    }

    static func resolve(_ reference: String, _ store: DataStore, _ invocation: Invocation) throws -> ClipEntry {
        try invocation.unique(try store.clips().resolve(reference), reference, kind: "clip") {
            "\($0.id)  \($0.binary?.summary ?? Text.preview($0.text, limit: 50))"
        }
    }
}

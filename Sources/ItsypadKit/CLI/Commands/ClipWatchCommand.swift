import ItsypadDesktop
import ItsypadModel
import ItsypadStore
import ItsypadSupport

/// `itsypad clip watch`: records every new clipboard offer until SIGINT,
/// SIGTERM or SIGHUP (exit 0). A change signal (wl-paste --watch on Wayland,
/// XFixes on X11) wakes it; it then lists the offered types, skips an offer a
/// password manager marked, reads the best type and checks that the offer is
/// still the same before it stores anything. In between it sleeps in the kernel.
enum ClipWatchCommand {
    /// Offers that follow each other this closely (a selection dragged out) are read once, at the end.
    static let settle = 0.05
    /// An offer whose owner did not answer (or a tool starved on a busy machine) is read again this many
    /// times, after pauses of 1, 2, 4… seconds, before the watcher says it gave up on it.
    static let rereads = 6

    /// What one read of the offer came to.
    enum Reading {
        case recorded(String)
        /// Nothing to store (skipped, blank, the newest entry again, or a failure already said).
        case nothing
        /// Its owner did not answer in time: read it again.
        case unanswered
    }

    static func run(_ invocation: Invocation) throws -> Int32 {
        let clipboard = try DesktopClipboard.source(environment: invocation.context.environment, primary: invocation.flag(.primary))
        try clipboard.checkTools()
        let directory = try invocation.dataDirectory()
        let follows = try invocation.flag(.follow) || DataStore.settingsWithoutLock(path: directory).bool(.clipboardFollow)
        var follower = follows ? try ClipFollower(invocation) : nil
        let events = FileEvents()
        if follows { events.watch([try ClipFollower.watched(invocation)]) }
        let signal = try clipboard.changeSignal()
        defer { signal.stop() }
        events.watchReadable(signal.descriptor)
        let errors = invocation.context.standardError
        if !invocation.quiet {
            let following = follows ? "; following clips from other devices" : ""
            errors.line("watching \(clipboard.name); recording into \(directory)\(following)", terminalSafe: true)
            errors.flush()
        }
        // What is on offer at the start counts as a change.
        var changed = true
        var unanswered = 0
        while true {
            if changed {
                // A burst of offers settles first: only the last is read.
                for _ in 0..<5 {
                    let wake = events.wait(timeout: settle)
                    if wake == .stopRequested { return ExitCode.success }
                    if wake == .timedOut { break }
                    guard signal.consume() else { return try ended(clipboard, signal) }
                }
                switch record(clipboard, invocation, follower: follower) {
                case .recorded(let id):
                    follower?.recorded(id)
                    unanswered = 0
                case .nothing: unanswered = 0
                case .unanswered:
                    unanswered += 1
                    if unanswered > rereads {
                        errors.line(
                            "\(Time.iso8601(invocation.context.now())) gave up on a clip: its owner did not answer \(unanswered) times")
                        unanswered = 0
                    }
                }
                // A clip that arrived is followed only once this clipboard's own copy is in the history (newest wins).
                follower?.follow(onto: clipboard, unlessChanged: signal, invocation)
                errors.flush()
            }
            switch events.wait(timeout: unanswered > 0 ? Double(1 << (unanswered - 1)) : 3600) {
            case .stopRequested: return ExitCode.success
            case .timedOut: changed = unanswered > 0
            case .changed:
                // With a follower the history's changes wake it too; the clipboard is read only when it signalled
                // (read again, an older entry on it would be added anew and echo).
                changed = follower == nil || signal.isPending
                if !changed { follower?.follow(onto: clipboard, unlessChanged: signal, invocation) }
                guard !changed || signal.consume() else { return try ended(clipboard, signal) }
            }
        }
    }

    /// The change signal ended: the compositor or X server is gone (a new one may come: try again later).
    static func ended(_ clipboard: any ClipboardSource, _ signal: any ClipboardChangeSignal) throws -> Int32 {
        let said = signal.errorText
        throw ItsypadError.temporary(
            "\(clipboard.name) went away (the compositor or X server stopped); nothing is watched" + (said.isEmpty ? "" : ":\n" + said))
    }

    /// Reads the current offer and adds it to the history, unless it is marked by a password
    /// manager, empty, or changed while it was read (the newest entry again adds nothing).
    /// Nor is what `follower` put there itself.
    static func record(_ clipboard: any ClipboardSource, _ invocation: Invocation, follower: ClipFollower?) -> Reading {
        let errors = invocation.context.standardError
        let time = Time.iso8601(invocation.context.now())
        do {
            // A list too long to read whole may hide the mark: such an offer is skipped like a marked one.
            guard let types = try clipboard.offeredTypes() else {
                if !invocation.quiet {
                    errors.line(
                        "\(time) skipped a clip: its list of types is longer than \(DesktopClipboard.typeListLimit >> 20) MiB, "
                            + "so a password manager's mark cannot be ruled out")
                }
                return .nothing
            }
            if types.contains(DesktopClipboard.passwordManagerHint) {
                if !invocation.quiet { errors.line("\(time) skipped a clip marked by a password manager") }
                return .nothing
            }
            guard let type = DesktopClipboard.bestType(types) else { return .nothing }
            let maxBytes = try DataStore.settingsWithoutLock(path: invocation.dataDirectory()).maxClipBytes
            let read = Result { try clipboard.content(type, limit: maxBytes) }
            // A new offer meanwhile (a password manager's among them), or an owner gone mid-read: this
            // read may be another offer's, or cut short. The new offer's own signal reads it again.
            guard try clipboard.offeredTypes() == types else { return .nothing }
            guard let bytes = try read.get() else {
                errors.line("\(time) skipped a clip (\(type)): larger than clipboard.maxBytes (\(maxBytes) bytes)", terminalSafe: true)
                return .nothing
            }
            guard follower?.put(bytes) != true, let id = try add(bytes, type: type, invocation) else { return .nothing }
            if !invocation.quiet {
                errors.line("\(time) recorded \(Identifier.short(id)) (\(type), \(Text.counted(bytes.count, "byte")))", terminalSafe: true)
            }
            return .recorded(id)
        } catch let error as ItsypadError where error == DesktopClipboard.unanswered {
            errors.line("\(time) could not read a clip yet: \(error.message); asking again")
            return .unanswered
        } catch {
            errors.line("\(time) could not record a clip: \(ItsypadError.wrapping(error).message)", terminalSafe: true)
            return .nothing
        }
    }

    /// Stores a clip as `clip add` would, holding the data directory's lock only for that; the
    /// id stored, or nil when nothing was (blank text, the newest entry again).
    static func add(_ bytes: [UInt8], type: String, _ invocation: Invocation) throws -> String? {
        let now = invocation.context.now()
        defer { invocation.close() }
        let outcome: ClipStore.AddOutcome
        if DesktopClipboard.isText(type) {
            guard let text = Text.decodeUTF8(bytes) else { throw ItsypadError.failure("the clip (\(type)) is not valid UTF-8 text") }
            guard !Text.isBlank(text) else { return nil }
            outcome = try invocation.store().addClip(text, local: false, now: now)
        } else {
            guard !bytes.isEmpty else { return nil }
            guard MediaType.isValid(type) else {
                throw ItsypadError.failure("the clip's type '\(Text.escapingControls(type, limit: 100))' is not a MIME type")
            }
            outcome = try invocation.store().addClip(bytes: bytes, type: type, local: false, now: now)
        }
        return outcome.duplicate ? nil : outcome.entry.id
    }
}

import ItsypadDesktop
import ItsypadModel
import ItsypadStore
import ItsypadSupport

/// The follower of `clip watch --follow` (or `clipboard.follow`): a clip that sync brings from another
/// device is put on this desktop's clipboard with its type, when it is the newest in the history
/// (by the devices' clocks, so a copy made here meanwhile wins) and was copied less than
/// `clipboard.followWindow` ago. Never followed: a clip added here (still waiting to be sent),
/// a local-only one, or one that `clipboard.ignore` or the secret detectors would keep here.
/// The watcher then sees the copy as the newest entry again, which adds nothing and sends nothing.
struct ClipFollower {
    /// The window in milliseconds.
    let window: Milliseconds
    /// The newest entry already looked at: only a newer one is followed.
    private var seen: String?
    /// The SHA-256 of what it last put on the clipboard.
    private var followed: String?

    /// Starts from the history as it is: what is already there is not followed.
    init(_ invocation: Invocation) throws {
        let settings = try DataStore.settingsWithoutLock(path: invocation.dataDirectory())
        window = Milliseconds(settings.int(.clipboardFollowWindow) ?? 120) * 1000
        defer { invocation.close() }
        seen = try invocation.store().clips().newest()?.id
    }

    /// The history's clips folder, whose changes wake the follower.
    static func watched(_ invocation: Invocation) throws -> FileEvents.Watched {
        FileEvents.Watched(DataDirectoryLayout(root: try invocation.dataDirectory()).clips, names: ["log"])
    }

    /// An entry recorded here is never followed; after it, what it put there last is a copy like any other.
    mutating func recorded(_ id: String) {
        seen = id
        followed = nil
    }

    /// Whether `bytes` are what it last put on the clipboard: already in the history, not to be added again
    /// (when something else arrived meanwhile, they are no longer the newest entry).
    func put(_ bytes: [UInt8]) -> Bool { followed == SHA256.hexDigest(of: bytes) }

    /// Puts the newest entry on `clipboard` when it is one to follow, unless `signal` reports a change of
    /// the clipboard meanwhile: that copy is recorded first, and the entry looked at again after it.
    mutating func follow(onto clipboard: any ClipboardWriter, unlessChanged signal: any ClipboardChangeSignal, _ invocation: Invocation) {
        let errors = invocation.context.standardError
        let time = Time.iso8601(invocation.context.now())
        let before = seen
        do {
            guard let (entry, bytes) = try newArrival(invocation) else { return }
            guard !signal.isPending else { return seen = before }
            let type = MediaType.isText(entry.type) ? DesktopClipboard.textType : entry.type
            let scratch = invocation.context.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
            try clipboard.copy(bytes, type: type, scratchDirectory: scratch)
            followed = SHA256.hexDigest(of: bytes)
            if !invocation.quiet {
                errors.line("\(time) followed \(Identifier.short(entry.id)) (\(entry.type), \(Text.counted(bytes.count, "byte")))")
            }
        } catch let skip as Skip {
            if !invocation.quiet { errors.line("\(time) did not follow \(skip.id): \(skip.reason)") }
        } catch {
            errors.line("\(time) could not follow a clip: \(ItsypadError.wrapping(error).message)", terminalSafe: true)
        }
        errors.flush()
    }

    /// Why a clip from another device was not followed.
    private struct Skip: Error {
        let id: String
        let reason: String
    }

    /// The newest entry and its bytes, when it is new, came by sync and may be followed; nil when there is none such.
    private mutating func newArrival(_ invocation: Invocation) throws -> (ClipEntry, [UInt8])? {
        let now = invocation.context.now()
        defer { invocation.close() }
        let store = try invocation.store()
        guard let entry = try store.clips().newest(), entry.id != seen else { return nil }
        seen = entry.id
        // Added here and not sent yet (or never to be sent): this device's own clip.
        guard entry.localOnly == nil, let id = PackedID(entry.id), try store.clipSyncStates()(id) != .pending else { return nil }
        let short = Identifier.short(entry.id)
        guard now - entry.timestamp < window else {
            throw Skip(
                id: short, reason: "copied \((now - entry.timestamp) / 1000) s ago, more than clipboard.followWindow (\(window / 1000) s)")
        }
        let reason =
            entry.binary == nil
            ? try store.localOnlyReason(for: entry.text, requested: false)
            : try store.localOnlyReason(forBinaryOf: entry.binary?.size ?? 0, requested: false)
        if let reason { throw Skip(id: short, reason: "this device keeps such clips local (\(reason.rawValue))") }
        return (entry, try store.clips().bytes(of: entry))
    }
}

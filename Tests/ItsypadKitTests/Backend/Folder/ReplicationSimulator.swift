import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A file-replicating sync service (Syncthing, Dropbox, Nextcloud, iCloud Drive) simulated over
/// several copies of one folder, driven by a seeded random source and a step counter, never wall time.
///
/// Like the real services it keeps, per copy, an index of every file with a version vector
/// (Syncthing's model): a change found by scanning a copy becomes a new version, which is copied
/// to every other copy after a random delay, in random order, one file at a time. So files arrive
/// in any order (a later journal segment before an earlier one, a record before the asset it
/// references), deletions propagate as deletions, and while a file is being received a temporary
/// file appears next to it. When two copies changed one file concurrently, the newer change wins
/// (a modification beats a deletion) and the losing content is kept as a conflict copy
/// (`x.sync-conflict-20261123-101500-BBBBBBB.json` or `x (conflicted copy 2026-11-23).json`) —
/// unless the service drops it silently, as iCloud Drive can.
///
/// Use `step()` / `run(steps:)` for random replication, `quiesce()` to let everything arrive, and
/// `scan`, `pending` and `deliver` to stage an exact order in a test.
final class ReplicationSimulator {
    enum ConflictNaming: CaseIterable {
        /// `name.sync-conflict-YYYYMMDD-HHMMSS-DEVICEID.ext`
        case syncthing
        /// `name (conflicted copy YYYY-MM-DD).ext`
        case dropbox
    }

    enum TemporaryNaming: CaseIterable {
        /// `.syncthing.NAME.tmp`, renamed into place when complete.
        case syncthing
        /// `~syncthing~NAME.tmp`
        case syncthingWindows
        /// `NAME.~tmp~`
        case tilde
        /// No temporary file: the file itself is written in two halves (a half-replicated file is visible).
        case inPlace
    }

    struct Options {
        var conflictNaming = ConflictNaming.syncthing
        var temporaryNaming = TemporaryNaming.syncthing
        /// A transfer waits 0…maxDelay steps after the change is noticed.
        var maxDelay = 6
        /// Chance that a scan happens in a step (changes are only noticed by scans).
        var scanChance = 0.5
        /// Chance that a transfer stays half done (temporary file, or half a file in place) for a few steps.
        var halfDoneChance = 0.3
        /// Chance that a half-done transfer is abandoned: its temporary file stays until a later clean-up.
        var abandonChance = 0.1
        /// Chance that the losing side of a conflict is dropped without a conflict copy.
        var dropConflictCopyChance = 0.0
    }

    /// One file version as the service tracks it.
    struct Version: Equatable {
        /// nil for a deletion.
        var content: [UInt8]?
        /// Copy index → counter of that copy's changes (Syncthing's per-file version vector).
        var vector: [Int: Int]
        /// Simulated time of the change: the newer side wins a conflict.
        var modified: Int
        /// The copy that made the change.
        var modifiedBy: Int

        func isCovered(by other: Version) -> Bool {
            vector.allSatisfy { other.vector[$0.key, default: 0] >= $0.value }
        }
    }

    /// A file version on its way from one copy to another.
    struct Transfer: Equatable, CustomStringConvertible {
        let path: String
        let from: Int
        let to: Int
        let version: Version
        /// Step from which it may be delivered.
        let due: Int
        var description: String { "\(path) \(from)→\(to)\(version.content == nil ? " (deletion)" : "")" }
    }

    /// What the service did, for tests to check and for failure messages.
    enum Event: Equatable {
        case noticed(path: String, copy: Int)
        case applied(path: String, copy: Int)
        case conflict(path: String, copy: Int, conflictCopy: String?)
        case temporaryFileLeft(path: String, copy: Int)
    }

    /// A transfer whose temporary (or half) file is on disk.
    private struct Staged {
        var transfer: Transfer
        let temporaryPath: String?
        let finishAt: Int
        let abandoned: Bool
    }

    private final class Copy {
        let root: String
        var index: [String: Version] = [:]
        var counter = 0
        init(root: String) { self.root = root }
    }

    private let copies: [Copy]
    private var random: SeededGenerator
    let options: Options
    /// The simulated clock, in steps; one step is one second in conflict-copy names.
    private(set) var now = 0
    private(set) var pending: [Transfer] = []
    private var staged: [Staged] = []
    private var leftovers: [(copy: Int, path: String, removeAt: Int)] = []
    private(set) var events: [Event] = []
    /// Conflict-copy names use this as the time of step 0: 2026-11-23 10:15:00 UTC.
    private static let epoch: Milliseconds = 1_795_428_900_000

    /// Creates `count` empty copies under `directory` (`copy0`, `copy1`, …).
    init(copies count: Int, in directory: String, seed: UInt64, options: Options = Options()) throws {
        copies = (0..<count).map { Copy(root: directory + "/copy\($0)") }
        random = SeededGenerator(seed: seed)
        self.options = options
        for copy in copies { try FileSystem.makeDirectory(copy.root) }
    }

    var count: Int { copies.count }

    /// The root directory of one copy.
    func root(_ copy: Int) -> String { copies[copy].root }

    /// Nothing in flight, no temporary file left, and no copy changed since its last scan.
    var isQuiet: Bool { pending.isEmpty && staged.isEmpty && leftovers.isEmpty && !copies.indices.contains { hasUnscannedChanges($0) } }

    // MARK: Random replication

    /// One step: maybe scan a random copy, then deliver one random due transfer, finish due staged ones.
    func step() throws {
        now += 1
        if random.chance(options.scanChance) { try scan(Int.random(in: copies.indices, using: &random)) }
        for index in staged.indices.reversed() where staged[index].finishAt <= now {
            try finish(staged.remove(at: index))
        }
        for index in leftovers.indices.reversed() where leftovers[index].removeAt <= now {
            let leftover = leftovers.remove(at: index)
            try FileSystem.remove(copies[leftover.copy].root + "/" + leftover.path)
        }
        let due = pending.indices.filter { pending[$0].due <= now }
        guard let chosen = due.randomElement(using: &random) else { return }
        let transfer = pending.remove(at: chosen)
        if random.chance(options.halfDoneChance) {
            try stage(transfer)
        } else {
            try complete(transfer)
        }
    }

    /// Lets simulated time pass without replicating anything.
    func tick() { now += 1 }

    func run(steps: Int) throws {
        for _ in 0..<steps { try step() }
    }

    /// Replicates until every copy holds the same files: scans everything, delivers everything
    /// (in random order), removes temporary files, and repeats until nothing changes.
    func quiesce() throws {
        for _ in 0..<1000 {
            now += 1
            for copy in copies.indices { try scan(copy) }
            for item in staged { try finish(item) }
            staged = []
            for leftover in leftovers { try FileSystem.remove(copies[leftover.copy].root + "/" + leftover.path) }
            leftovers = []
            if pending.isEmpty { return }
            pending.shuffle(using: &random)
            while !pending.isEmpty { try complete(pending.removeFirst()) }
        }
        Issue.record("replication did not settle after 1000 rounds")
    }

    // MARK: Staged replication (deterministic, for tests)

    /// Notices the changes in one copy and schedules them for every other copy. Contents are
    /// compared, not stat data: file times are too coarse to tell two quick writes apart.
    func scan(_ copy: Int) throws {
        let onDisk = try regularFiles(in: copy)
        for path in onDisk.sorted() { try notice(path, in: copy) }
        for (path, version) in copies[copy].index.sorted(by: { $0.key < $1.key }) where version.content != nil && !onDisk.contains(path) {
            try notice(path, in: copy)
        }
    }

    /// Delivers the oldest pending transfer of `path` from one copy to another, completely.
    /// Returns false when there is none.
    @discardableResult
    func deliver(_ path: String, from: Int, to: Int) throws -> Bool {
        guard let index = pending.firstIndex(where: { $0.path == path && $0.from == from && $0.to == to }) else { return false }
        try complete(pending.remove(at: index))
        return true
    }

    /// Delivers every pending transfer from one copy to another, in the order given by `order` (default: as scheduled).
    func deliverAll(from: Int, to: Int, order: ([Transfer]) -> [Transfer] = { $0 }) throws {
        let chosen = order(pending.filter { $0.from == from && $0.to == to })
        pending.removeAll { $0.from == from && $0.to == to }
        for transfer in chosen { try complete(transfer) }
    }

    /// Starts delivering `path` from one copy to another but leaves it half done (a temporary file,
    /// or half the file in place) until `finishStaged()`.
    func deliverHalf(_ path: String, from: Int, to: Int) throws {
        guard let index = pending.firstIndex(where: { $0.path == path && $0.from == from && $0.to == to }) else {
            Issue.record("no pending transfer of \(path) from \(from) to \(to)")
            return
        }
        try stage(pending.remove(at: index), finishAt: Int.max, abandoned: false)
    }

    /// Completes every half-done transfer.
    func finishStaged() throws {
        for item in staged { try finish(item) }
        staged = []
    }

    // MARK: Noticing local changes

    private func hasUnscannedChanges(_ copy: Int) -> Bool {
        guard let onDisk = try? regularFiles(in: copy) else { return true }
        let indexed = copies[copy].index.filter { $0.value.content != nil }
        return onDisk != Set(indexed.keys)
            || onDisk.contains { path in (try? FileSystem.read(copies[copy].root + "/" + path)) != indexed[path]?.content }
    }

    /// Records a new version of `path` if its content differs from the indexed one. A file the
    /// service is writing in place right now is its own half-done work, not a change.
    private func notice(_ path: String, in copy: Int) throws {
        if staged.contains(where: { $0.transfer.to == copy && $0.transfer.path == path && $0.temporaryPath == nil }) { return }
        let state = copies[copy]
        let content = try FileSystem.read(state.root + "/" + path)
        let previous = state.index[path]
        guard previous?.content != content else { return }
        state.counter += 1
        var vector = previous?.vector ?? [:]
        vector[copy] = state.counter
        state.index[path] = Version(content: content, vector: vector, modified: now, modifiedBy: copy)
        events.append(.noticed(path: path, copy: copy))
        schedule(path, from: copy)
    }

    private func schedule(_ path: String, from copy: Int) {
        guard let version = copies[copy].index[path] else { return }
        for target in copies.indices where target != copy {
            pending.append(
                Transfer(
                    path: path, from: copy, to: target, version: version, due: now + Int.random(in: 0...options.maxDelay, using: &random)))
        }
    }

    /// Relative paths of the regular files of one copy: symbolic links, the service's own temporary
    /// files and files it is writing in place right now are not scanned.
    private func regularFiles(in copy: Int) throws -> Set<String> {
        let receiving = Set(staged.filter { $0.transfer.to == copy && $0.temporaryPath == nil }.map(\.transfer.path))
        return try regularFiles(copies[copy].root, prefix: "").subtracting(receiving)
    }

    private func regularFiles(_ directory: String, prefix: String) throws -> Set<String> {
        var result = Set<String>()
        for name in try FileSystem.list(directory, includingHidden: true) where !Self.isTemporary(name) {
            var info = stat()
            guard lstat(directory + "/" + name, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR: result.formUnion(try regularFiles(directory + "/" + name, prefix: prefix + name + "/"))
            case S_IFREG: result.insert(prefix + name)
            default: continue
            }
        }
        return result
    }

    /// The service's own temporary files are never replicated (they are not data).
    static func isTemporary(_ name: String) -> Bool {
        (name.hasPrefix(".syncthing.") && name.hasSuffix(".tmp")) || (name.hasPrefix("~syncthing~") && name.hasSuffix(".tmp"))
            || name.hasSuffix(".~tmp~")
    }

    // MARK: Receiving

    private func temporaryPath(for path: String) -> String? {
        let directory = path.contains("/") ? FileSystem.directoryName(path) + "/" : ""
        let name = FileSystem.baseName(path)
        switch options.temporaryNaming {
        case .syncthing: return directory + ".syncthing." + name + ".tmp"
        case .syncthingWindows: return directory + "~syncthing~" + name + ".tmp"
        case .tilde: return directory + name + ".~tmp~"
        case .inPlace: return nil
        }
    }

    /// Writes half of the incoming content where readers can see it: a temporary file, or the file
    /// itself. Like the real services, only once it has decided the file needs the incoming version.
    private func stage(_ transfer: Transfer, finishAt: Int? = nil, abandoned: Bool? = nil) throws {
        try notice(transfer.path, in: transfer.to)
        guard let content = transfer.version.content, !isOldNews(transfer) else { return try complete(transfer) }
        let abandon = abandoned ?? random.chance(options.abandonChance)
        let copy = copies[transfer.to]
        let temporary = temporaryPath(for: transfer.path)
        if temporary == nil && abandon { return try complete(transfer) }
        let target = copy.root + "/" + (temporary ?? transfer.path)
        try FileSystem.makeDirectory(FileSystem.directoryName(target))
        try write(Array(content.prefix(content.count / 2)), to: target)
        staged.append(
            Staged(
                transfer: transfer, temporaryPath: temporary, finishAt: finishAt ?? now + Int.random(in: 1...4, using: &random),
                abandoned: abandon))
    }

    private func finish(_ item: Staged) throws {
        if item.abandoned, let temporary = item.temporaryPath {
            // The transfer broke off: its temporary file lingers until a later clean-up, and it is retried.
            events.append(.temporaryFileLeft(path: temporary, copy: item.transfer.to))
            leftovers.append((item.transfer.to, temporary, now + Int.random(in: 2...10, using: &random)))
            pending.append(
                Transfer(
                    path: item.transfer.path, from: item.transfer.from, to: item.transfer.to, version: item.transfer.version,
                    due: now + Int.random(in: 1...options.maxDelay + 1, using: &random)))
            return
        }
        if let temporary = item.temporaryPath { try FileSystem.remove(copies[item.transfer.to].root + "/" + temporary) }
        try complete(item.transfer, halfWrittenInPlace: item.temporaryPath == nil)
    }

    /// Applies an incoming version the way the services do: a newer version replaces the file; a
    /// concurrent one is a conflict; an older or equal one is ignored.
    private func complete(_ transfer: Transfer, halfWrittenInPlace: Bool = false) throws {
        let copy = copies[transfer.to]
        // A local change not scanned yet must be noticed first, or it would be overwritten unseen.
        if !halfWrittenInPlace { try notice(transfer.path, in: transfer.to) }
        let incoming = transfer.version
        guard let local = copy.index[transfer.path] else { return try adopt(incoming, at: transfer) }
        let sameContent = local.content == incoming.content
        if isOldNews(transfer) { return }
        if (sameContent || local.vector != incoming.vector) && local.isCovered(by: incoming) { return try adopt(incoming, at: transfer) }
        let incomingWins = Self.wins(incoming, over: local)
        let winner = incomingWins ? incoming : local, loser = incomingWins ? local : incoming
        if !sameContent {
            var conflictCopy: String?
            if let content = loser.content, !random.chance(options.dropConflictCopyChance) {
                conflictCopy = try writeConflictCopy(of: transfer.path, content: content, loser: loser, in: transfer.to)
            }
            events.append(.conflict(path: transfer.path, copy: transfer.to, conflictCopy: conflictCopy))
        }
        var merged = winner
        merged.vector.merge(loser.vector, uniquingKeysWith: max)
        try adopt(merged, at: transfer)
    }

    /// The receiving copy already has this version or a newer one. (Equal vectors with different
    /// contents — two copies that settled one conflict differently — are a conflict, not old news.)
    private func isOldNews(_ transfer: Transfer) -> Bool {
        guard let local = copies[transfer.to].index[transfer.path] else { return false }
        let incoming = transfer.version
        return (local.content == incoming.content || local.vector != incoming.vector) && incoming.isCovered(by: local)
    }

    /// A modification beats a deletion; then the newer change wins, then the higher copy index, then
    /// the larger content: a total order, so every copy settles a conflict the same way.
    static func wins(_ a: Version, over b: Version) -> Bool {
        if (a.content == nil) != (b.content == nil) { return a.content != nil }
        if a.modified != b.modified { return a.modified > b.modified }
        if a.modifiedBy != b.modifiedBy { return a.modifiedBy > b.modifiedBy }
        return (a.content ?? []).lexicographicallyPrecedes(b.content ?? []) == false
    }

    private func adopt(_ version: Version, at transfer: Transfer) throws {
        let copy = copies[transfer.to]
        let target = copy.root + "/" + transfer.path
        if let content = version.content {
            try replace(transfer.path, in: transfer.to, with: content)
        } else {
            try FileSystem.remove(target)
        }
        copy.index[transfer.path] = version
        events.append(.applied(path: transfer.path, copy: transfer.to))
        schedule(transfer.path, from: transfer.to)
    }

    private func writeConflictCopy(of path: String, content: [UInt8], loser: Version, in copy: Int) throws -> String {
        let directory = path.contains("/") ? FileSystem.directoryName(path) + "/" : ""
        let name = FileSystem.baseName(path)
        let dot = name.lastIndex(of: ".").flatMap { $0 == name.startIndex ? nil : $0 }
        let base = dot.map { String(name[..<$0]) } ?? name
        let ext = dot.map { String(name[$0...]) } ?? ""
        let time = Time.iso8601(Self.epoch + Milliseconds(loser.modified) * 1000)
        let date = String(time.prefix(10)), clock = String(time.dropFirst(11).prefix(8))
        var candidate: String
        var attempt = 1
        repeat {
            let suffix = attempt == 1 ? "" : " \(attempt)"
            switch options.conflictNaming {
            case .syncthing:
                candidate =
                    base + ".sync-conflict-" + date.filter { $0 != "-" } + "-" + clock.filter { $0 != ":" }
                    + "-" + Self.deviceID(loser.modifiedBy) + suffix + ext
            case .dropbox:
                candidate = base + " (conflicted copy " + date + ")" + suffix + ext
            }
            attempt += 1
        } while try FileSystem.read(copies[copy].root + "/" + directory + candidate).map { $0 != content } ?? false
        try replace(directory + candidate, in: copy, with: content)
        try notice(directory + candidate, in: copy)
        return directory + candidate
    }

    /// Syncthing's short device IDs: seven capital letters.
    static func deviceID(_ copy: Int) -> String {
        String(repeating: String(UnicodeScalar(UInt8(ascii: "A") + UInt8(copy % 26))), count: 7)
    }

    /// Gives a file of one copy its replicated content: through a temporary file renamed into
    /// place, or written in place when the service works that way.
    private func replace(_ path: String, in copy: Int, with bytes: [UInt8]) throws {
        let root = copies[copy].root
        try FileSystem.makeDirectory(FileSystem.directoryName(root + "/" + path))
        guard let temporary = temporaryPath(for: path) else { return try write(bytes, to: root + "/" + path) }
        try write(bytes, to: root + "/" + temporary)
        guard rename(root + "/" + temporary, root + "/" + path) == 0 else {
            throw FileSystemError(path: path, code: errno, operation: "rename")
        }
    }

    private func write(_ bytes: [UInt8], to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileSystemError(path: path, code: errno, operation: "write") }
        defer { close(fd) }
        try bytes.withUnsafeBytes { try FileSystem.writeAll(fd: fd, $0, path: path) }
    }
}

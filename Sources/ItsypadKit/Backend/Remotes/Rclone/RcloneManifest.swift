import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// What the mirror and the remote held of each backend file when they were last in step:
/// `sync/rclone/manifest`, a first line naming the mirror (and when the whole remote was last
/// listed, in milliseconds, and the token its log names), then a line per file,
/// `path TAB remote-stamp TAB local-stamp TAB sent` (`s` when this device sent the file, `-` when
/// it was downloaded); the changes since, in `manifest.log` (see `RcloneManifestFile`).
///
/// A fetch downloads the files whose remote stamp (size and time, as rclone lists them) differs
/// from the one recorded; a send uploads the files whose local stamp (size and exact time of the
/// mirror's file) differs, which only this device's writes change. An empty stamp is unknown: the
/// file is looked at again. A lost manifest (or a mirror made anew) costs one full transfer.
struct RcloneManifest: Equatable {
    struct Entry: Equatable {
        /// The remote's copy as last listed or downloaded.
        var remote = ""
        /// The mirror's copy as last downloaded or uploaded.
        var local = ""
        /// This device uploaded it: it is this device's to replace and to remove there.
        var sent = false
    }

    private(set) var entries: [String: Entry] = [:]
    /// When a fetch last listed the whole remote; 0 for never.
    var fullyListed: Milliseconds = 0 {
        didSet { listingChanged = listingChanged || fullyListed != oldValue }
    }
    /// Names this manifest as written whole, so that only a log begun over it is read over it
    /// (see `RcloneManifestFile`); empty for a manifest no log may follow.
    var token = ""
    /// The paths set or removed since the manifest was read or saved: what saving it appends.
    private(set) var changed: Set<String> = []
    private(set) var listingChanged = false

    subscript(path: String) -> Entry? {
        get { entries[path] }
        set {
            guard entries[path] != newValue else { return }
            entries[path] = newValue
            changed.insert(path)
        }
    }

    var hasChanges: Bool { listingChanged || !changed.isEmpty }

    /// Forgets which paths changed: the manifest is as saved.
    mutating func markSaved() {
        changed = []
        listingChanged = false
    }

    static func == (a: RcloneManifest, b: RcloneManifest) -> Bool {
        a.fullyListed == b.fullyListed && a.entries == b.entries
    }

    /// The manifest of the mirror `mirror` (its inode); nil when it is missing, unreadable or
    /// describes another mirror (one removed and made again, or a copied data directory's).
    static func read(_ path: String, mirror: FileStatus) -> RcloneManifest? {
        var manifest = RcloneManifest()
        var isOfMirror = false
        try? FileTree.containing(path).forEachLine(path) { offset, line in
            if offset == 0 {
                let fields = line.split(separator: tab, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
                isOfMirror = fields.count >= 2 && fields[..<2] == ["mirror", String(mirror.inode)]
                manifest.fullyListed = fields.count >= 3 ? Milliseconds(fields[2]) ?? 0 : 0
                manifest.token = fields.count == 4 ? fields[3] : ""
            } else if isOfMirror, let parsed = parsedEntry(line) {
                manifest.entries[parsed.name] = parsed.entry
            }
        }
        return isOfMirror ? manifest : nil
    }

    private static let tab = UInt8(ascii: "\t")

    /// A file's line, read field by field where it lies (a manifest has a line per backend file:
    /// no array per line); nil unless it has four fields.
    fileprivate static func parsedEntry(_ line: ArraySlice<UInt8>) -> (name: String, entry: Entry)? {
        guard let first = line.firstIndex(of: tab), let second = line[(first + 1)...].firstIndex(of: tab),
            let third = line[(second + 1)...].firstIndex(of: tab), !line[(third + 1)...].contains(tab)
        else { return nil }
        let text = { (range: Range<Int>) in String(decoding: line[range], as: UTF8.self) }
        let sent = line[(third + 1)...].elementsEqual(CollectionOfOne(UInt8(ascii: "s")))
        return (text(line.startIndex..<first), Entry(remote: text(first + 1..<second), local: text(second + 1..<third), sent: sent))
    }

    /// Writes a line per file in the order of the paths' bytes (ASCII: String's order). Each line
    /// is laid out once and the lines are sorted where they lie, compared with memcmp: no String
    /// compared or copied (sorting the entries cost most of a write at 10,000 files). A line
    /// starts with its path and a tab, which sorts before any byte a path holds.
    func write(_ path: String, mirror: FileStatus) throws {
        var lines: [UInt8] = []
        lines.reserveCapacity(entries.count * 160)
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(entries.count)
        for (name, entry) in entries {
            let start = lines.count
            lines += name.utf8
            lines.append(RcloneManifest.tab)
            lines += entry.remote.utf8
            lines.append(RcloneManifest.tab)
            lines += entry.local.utf8
            lines.append(RcloneManifest.tab)
            lines.append(UInt8(ascii: entry.sent ? "s" : "-"))
            lines.append(UInt8(ascii: "\n"))
            ranges.append(start..<lines.count)
        }
        lines.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            ranges.sort { a, b in
                let order = memcmp(base + a.lowerBound, base + b.lowerBound, min(a.count, b.count))
                return order != 0 ? order < 0 : a.count < b.count
            }
        }
        // A token is a fourth field, which versions before the log read as "never listed whole":
        // they list the whole remote rather than trust a manifest its log has moved past.
        var bytes = Array("mirror\t\(mirror.inode)\t\(fullyListed)\(token.isEmpty ? "" : "\t" + token)\n".utf8)
        bytes.reserveCapacity(bytes.count + lines.count)
        for range in ranges { bytes += lines[range] }
        try FileTree.containing(path).writeAtomically(path, bytes)
    }

    /// The log's lines of the changes since the manifest was read or saved: a file's line as the
    /// manifest has it, `path TAB` for a path removed, `listed TAB MILLISECONDS` for a whole listing.
    var changeLines: [UInt8] {
        var bytes: [UInt8] = []
        if listingChanged { bytes += "listed\t\(fullyListed)\n".utf8 }
        for path in changed.sorted() {
            bytes += path.utf8
            bytes.append(RcloneManifest.tab)
            if let entry = entries[path] {
                bytes += "\(entry.remote)\t\(entry.local)\t\(entry.sent ? "s" : "-")".utf8
            }
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }

    /// Applies a line of the log (see `changeLines`); false for a line that is none of its kinds.
    mutating func apply(logLine line: ArraySlice<UInt8>) -> Bool {
        if let parsed = RcloneManifest.parsedEntry(line) {
            entries[parsed.name] = parsed.entry
            return true
        }
        guard let tab = line.firstIndex(of: RcloneManifest.tab), !line[(tab + 1)...].contains(RcloneManifest.tab) else { return false }
        let name = String(decoding: line[..<tab], as: UTF8.self)
        if tab + 1 == line.endIndex {
            entries[name] = nil
        } else if name == "listed", let time = Milliseconds(String(decoding: line[(tab + 1)...], as: UTF8.self)) {
            fullyListed = time
        } else {
            return false
        }
        return true
    }

    /// The stamp of a file of the mirror: its size and exact modification time.
    static func localStamp(_ status: FileStatus) -> String {
        "\(status.size):\(status.modifiedSeconds).\(status.modifiedNanoseconds)"
    }

    /// When the file of a local stamp was last modified, in milliseconds; nil for an empty stamp.
    static func modified(of stamp: String) -> Milliseconds? {
        guard let colon = stamp.firstIndex(of: ":") else { return nil }
        let time = stamp[stamp.index(after: colon)...].split(separator: ".", maxSplits: 1)
        guard time.count == 2, let seconds = Milliseconds(time[0]), let nanoseconds = Milliseconds(time[1]) else { return nil }
        return seconds * 1000 + nanoseconds / 1_000_000
    }

    /// The size a stamp of either kind starts with.
    static func size(of stamp: String) -> Substring {
        stamp.prefix { $0 != ":" && $0 != " " }
    }
}

extension RcloneManifest {
    /// Whether `path`, relative to the backend, names a file of the backend's data that devices
    /// exchange (see FolderLayout): zone.json, a file of a device's folder, a record file. Never a
    /// lock (each machine's own), a temporary file or any name of a service's: not transferred.
    static func isTransferred(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.allSatisfy({ FileTree.isPlainName(String($0)) && !$0.hasPrefix(".") }) else { return false }
        switch (parts.first, parts.count) {
        case ("zone.json", 1): return true
        case ("devices", 3): return VersionVector.isDeviceID(parts[1]) && parts[2] == "device.json"
        case ("devices", 4): return VersionVector.isDeviceID(parts[1]) && (parts[2] == "journal" || parts[2] == "assets")
        case ("records", 4): return FolderLayout.recordFile(named: String(parts[3])) != nil
        default: return false
        }
    }
}

/// The manifest on disk, read once by a remote and kept: `manifest` (written whole, see
/// `RcloneManifest.write`) and `manifest.log`, the changes since, each save appending its own with
/// one `fdatasync`, so that a sync's cost follows its changes, not the backend. Once the log
/// outgrows a quarter of the manifest it is folded into it: the manifest replaced atomically, then
/// the log removed. The log's first line names the token of the manifest it follows: a log left
/// over the manifest it was folded into, or over one an earlier version wrote whole, is not read
/// and goes at the next save. A torn last line of the log was never committed and is left out.
///
/// What was read is used again while both files are as it left them (a `sync watch` meets the
/// files of a sync run beside it, and reads them again).
final class RcloneManifestFile {
    let path: String
    var logPath: String { path + ".log" }
    private let files: FileTree
    /// The manifest as read or saved last, of the mirror with that inode, the two files as they
    /// were then (a file's status changes with every write: inode, size, time), and whether the
    /// log on disk follows that manifest (false: a stale log, which a save replaces).
    private var kept: (manifest: RcloneManifest, mirror: UInt64, files: [FileStatus?], logFollows: Bool)?

    init(_ path: String) {
        self.path = path
        files = FileTree.containing(path)
    }

    private func identities() -> [FileStatus?] {
        [path, logPath].map { (try? files.status($0)) ?? nil }
    }

    /// The manifest of the mirror `mirror`; nil when it is missing, unreadable or another mirror's.
    func read(mirror: FileStatus) -> RcloneManifest? {
        let now = identities()
        if let kept, kept.mirror == mirror.inode, kept.files == now { return kept.manifest }
        guard var manifest = RcloneManifest.read(path, mirror: mirror) else {
            kept = nil
            return nil
        }
        let header = Array(RcloneManifestFile.logHeader(manifest.token).dropLast())
        var logFollows = now[1] == nil
        try? files.forEachLine(logPath) { offset, line in
            if offset == 0 {
                logFollows = !manifest.token.isEmpty && line.elementsEqual(header)
            } else if logFollows {
                _ = manifest.apply(logLine: line)
            }
        }
        manifest.markSaved()
        kept = (manifest, mirror.inode, now, logFollows)
        return manifest
    }

    /// Records the changes of `manifest` since it was read or saved (nothing when there are none),
    /// durable when it returns; the whole of it when the files are not the ones it was read from.
    func save(_ manifest: inout RcloneManifest, mirror: FileStatus) throws {
        guard manifest.hasChanges else { return }
        let now = identities()
        guard let previous = kept, previous.mirror == mirror.inode, previous.files == now, previous.logFollows,
            !previous.manifest.token.isEmpty
        else {
            manifest.token = try replace(with: manifest, mirror: mirror)
            manifest.markSaved()
            return
        }
        manifest.token = previous.manifest.token
        if let log = now[1], log.size > max(64 << 10, (now[0]?.size ?? 0) / 4) {
            manifest.token = RcloneManifestFile.newToken()
            try manifest.write(path, mirror: mirror)
            _ = try files.remove(logPath)
        } else if now[1] == nil {
            try AppendFile(path: logPath, in: files).append(RcloneManifestFile.logHeader(manifest.token) + manifest.changeLines)
            // The log's name must outlive a crash as its lines do.
            try files.syncDirectory(FileSystem.directoryName(logPath))
        } else {
            try AppendFile(path: logPath, in: files).append(manifest.changeLines)
        }
        manifest.markSaved()
        kept = (manifest, mirror.inode, identities(), true)
    }

    /// Makes `manifest` the whole of it (a new mirror's, or one made anew), under a new token that
    /// it returns: the log is removed first, so that none of it is ever read over the new one.
    @discardableResult
    func replace(with manifest: RcloneManifest, mirror: FileStatus) throws -> String {
        if try files.remove(logPath) { try files.syncDirectory(FileSystem.directoryName(logPath)) }
        var saved = manifest
        saved.token = RcloneManifestFile.newToken()
        try saved.write(path, mirror: mirror)
        saved.markSaved()
        kept = (saved, mirror.inode, identities(), true)
        return saved.token
    }

    private static func logHeader(_ token: String) -> [UInt8] {
        Array("manifest\t\(token)\n".utf8)
    }

    private static func newToken() -> String {
        String(UInt64.random(in: .min ... .max), radix: 16)
    }
}

import ItsypadModel
import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A sync backend kept on any storage rclone reaches (`rclone:REMOTE:PATH`): a mirror of it in
/// the data directory (`sync/rclone/backend/`), on which the engine runs exactly as on a shared
/// folder.
///
/// Every file of the backend but zone.json has one writer, the device its path names, so no
/// locking and no two-way merge is needed: a fetch lists the remote and downloads the other
/// devices' files that changed since the manifest last saw them (and removes from the mirror
/// those they removed); a send uploads this device's files that changed and removes from the
/// remote those it removed. A transfer cut short is found by the next listing and done again.
///
/// Uses the system `rclone` with the user's own configuration (`RCLONE_CONFIG` is honoured) or
/// a connection string, as one `rclone rcd` per sync (see `RcloneDaemon`), never prompting, every
/// operation bounded in time.
public struct RcloneRemote: SyncRemote {
    /// The remote as rclone takes it: `REMOTE:PATH`, or a connection string `:BACKEND,OPTION=…:PATH`.
    public let remote: String
    /// This remote's files in the data directory.
    public let directory: String
    let environment: [String: String]
    /// The rclone process that runs this remote's operations.
    let daemon: RcloneDaemon
    /// The manifest, read once and kept while its files are as it left them.
    let manifestFile: RcloneManifestFile
    /// Seconds an rclone operation may go without progress (a file transferred, a line listed) before
    /// it is killed.
    let timeout: Double
    /// Files one rclone operation transfers at most: each chunk is recorded in the manifest once it has
    /// landed, so that a sync cut short resumes with the files not transferred yet.
    let chunkSize: Int
    /// Milliseconds after which a fetch lists the whole remote again rather than what the
    /// journals name.
    let fullListingInterval: Milliseconds
    /// Milliseconds for which a change of this device's device.json waits for a later send once
    /// one was sent (see `waitsForLaterSend`).
    let acknowledgementDelay: Milliseconds

    /// `rclone:REMOTE:PATH`; `ITSYPAD_RCLONE_TIMEOUT` sets the seconds an rclone call may go
    /// without progress (300), `ITSYPAD_RCLONE_CHUNK` the files one call transfers (1000),
    /// `ITSYPAD_RCLONE_FULL_LISTING` the seconds after which a fetch lists the whole remote again
    /// (3600; 0 for every fetch).
    static let kind = RemoteKind(scheme: "rclone", syntax: "rclone:REMOTE:PATH") { remote, directory, environment in
        func number(_ name: String, atLeast least: Double) -> Double? {
            RemoteKinds.number(name, in: environment) { $0 >= least }
        }
        return RcloneRemote(
            remote: remote, directory: directory, environment: environment,
            timeout: number("ITSYPAD_RCLONE_TIMEOUT", atLeast: 1) ?? 300,
            chunkSize: number("ITSYPAD_RCLONE_CHUNK", atLeast: 1).map { Int($0) } ?? 1000,
            fullListingInterval: number("ITSYPAD_RCLONE_FULL_LISTING", atLeast: 0).map { Milliseconds($0 * 1000) } ?? 3_600_000)
    }

    public init(
        remote: String, directory: String, environment: [String: String], timeout: Double = 300, chunkSize: Int = 1000,
        fullListingInterval: Milliseconds = 3_600_000, acknowledgementDelay: Milliseconds = 60_000
    ) {
        self.remote = remote
        self.directory = directory
        self.environment = environment
        self.timeout = timeout
        self.chunkSize = chunkSize
        self.fullListingInterval = fullListingInterval
        self.acknowledgementDelay = acknowledgementDelay
        daemon = RcloneDaemon(
            location: BackendLocation.remote(scheme: "rclone", address: remote), environment: environment.merging(["TZ": "UTC"]) { $1 },
            options: RcloneRemote.options(timeout: timeout), timeout: timeout, ownerFile: directory + "/rcd.owner")
        manifestFile = RcloneManifestFile(directory + "/manifest")
    }

    /// The backend directory the engine works on.
    public var mirror: String { directory + "/backend" }
    var statusFile: String { directory + "/status.json" }
    /// Where a fetch downloads to before each file is moved into the mirror whole.
    var incoming: String { directory + "/incoming" }
    /// The names an rclone call transfers, one a line.
    var transferList: String { directory + "/transfer-list" }

    public var location: BackendLocation { .remote(scheme: "rclone", address: remote) }

    /// The remote as the daemon's calls name it: its path ending in a slash, which tells rclone it is a
    /// folder (a WebDAV remote asks the server whether a path without one is a file: a request a sync);
    /// a remote's root (`REMOTE:`) as it is.
    var remoteAsFolder: String { remote.hasSuffix(":") || remote.hasSuffix("/") ? remote : remote + "/" }
    private var files: FileTree { FileTree(root: directory) }

    /// Creates the mirror if needed, with its manifest: from then on a mirror without a manifest
    /// of its own that holds this device's files is a copy (see `manifest(as:mirror:)`).
    public func prepare() throws {
        try FileSystem.makeDirectory(directory)
        if try files.makeDirectory(mirror) { try manifestFile.replace(with: RcloneManifest(), mirror: try mirrorStatus()) }
    }

    /// Starts `rclone rcd` (see `RcloneDaemon.start`): it takes about as long as the sync's local
    /// work before the fetch (opening the engine, reading the manifest).
    public func warmUp() {
        try? daemon.start()
    }

    // MARK: Fetching

    /// Brings the other devices' changes into the mirror. Network I/O: call it without holding the
    /// data directory's lock.
    ///
    /// Every other device's change is a line of its journal, so a fetch lists `devices/` and
    /// zone.json, then only the record folders the journals' new lines name: its cost follows the
    /// changes, not the backend. The whole remote is listed instead when the manifest knows nothing,
    /// the zone or a journal's segments changed (a new device, a compaction), a new line cannot be
    /// read, or the last whole listing is `fullListingInterval` old: what someone wrote on the
    /// server outside any journal is seen then.
    public func fetch(as device: String) throws -> RemoteFetch {
        try prepare()
        let mirrorStatus = try mirrorStatus()
        var manifest = try manifest(as: device, mirror: mirrorStatus)
        let now = Time.now()
        var changed = false
        var folders: Set<String>? = nil
        let listed = manifest.fullyListed
        if listed > 0, (listed..<listed + fullListingInterval).contains(now) {
            // The journals as known before (not a copy of the whole manifest, which the listing changes).
            let known = manifest.entries.filter { RcloneRemote.isJournalSegment($0.key) }
            let zone = zoneFile()
            let devices = try bringIn(.devices, as: device, into: &manifest, mirror: mirrorStatus)
            changed = devices.changed
            folders = zoneFile() == zone ? try recordFolders(namedBy: devices, known: known) : nil
            if let folders, !folders.isEmpty {
                changed =
                    try bringIn(.recordFolders(folders), as: device, into: &manifest, mirror: mirrorStatus).changed
                    || changed
            }
        }
        if folders == nil {
            changed = try bringIn(.everything, as: device, into: &manifest, mirror: mirrorStatus).changed || changed
            manifest.fullyListed = now
        }
        try manifestFile.save(&manifest, mirror: mirrorStatus)
        recordSuccess { $0.lastFetch = Time.now() }
        return changed ? .changed : .unchanged
    }

    /// The mirror's manifest. A mirror without one of its own (one whose manifest was lost, or a
    /// copied data directory's that `MirrorIdentity` did not tell: copied before it recorded the
    /// mirror) gets one in which every file it
    /// holds counts as downloaded with the remote's copy unknown, so that the fetch compares each
    /// again and no other device's stale copy is ever sent; unless it holds `device`'s folder:
    /// then another data directory may write as `device` (`ReplicationError.deviceIDInUse`), and
    /// the session takes a new device id before anything is written. Files sent as another device
    /// id (the one this data directory gave up) are another device's from then on: compared again.
    private func manifest(as device: String, mirror mirrorStatus: FileStatus) throws -> RcloneManifest {
        if var recorded = manifestFile.read(mirror: mirrorStatus) {
            let isOwn = RcloneRemote.writtenBy(device)
            let givenUp = recorded.entries.filter { $0.value.sent && $0.key != "zone.json" && !isOwn($0.key) }
            guard !givenUp.isEmpty else { return recorded }
            for path in givenUp.keys {
                recorded[path] = try files.status(mirror + "/" + path).map { .init(local: RcloneManifest.localStamp($0)) }
            }
            try manifestFile.save(&recorded, mirror: mirrorStatus)
            return recorded
        }
        let deviceFolder = "devices/" + device + "/"
        guard try files.status(mirror + "/" + deviceFolder + "device.json") == nil else {
            throw ReplicationError.deviceIDInUse(
                "its rclone mirror holds \(deviceFolder)device.json but is not the mirror it synced with")
        }
        var manifest = RcloneManifest()
        for (path, status) in try RcloneRemote.transferredFiles(in: mirror) where !RcloneRemote.isWritten(path, by: device) {
            manifest[path] = .init(local: RcloneManifest.localStamp(status))
        }
        try manifestFile.replace(with: manifest, mirror: mirrorStatus)
        manifest.markSaved()
        return manifest
    }

    /// Whether `path` (a transferred file, see `RcloneManifest.isTransferred`) is one `device` writes.
    static func isWritten(_ path: String, by device: String) -> Bool {
        writtenBy(device)(path)
    }

    /// `isWritten(_:by:)` for one device, its names laid out once: a fetch asks it of every file in
    /// the manifest. A record file is `NAME.DEVICE.json` (see `FolderLayout.recordFile`).
    static func writtenBy(_ device: String) -> (String) -> Bool {
        let folder = "devices/" + device + "/", ending = "." + device + ".json"
        return { RcloneRemote.bytes(of: $0, start: folder) || RcloneRemote.bytes(of: $0, start: "records/", end: ending) }
    }

    /// Whether the UTF-8 of `string` starts with `prefix` and ends with `suffix`, compared with
    /// `memcmp`: a fetch and a send ask such questions of every path in the manifest, which String's
    /// own comparisons (Unicode's rules) made a tenth of a sync's instructions at 10,000 files.
    static func bytes(of string: String, start prefix: String, end suffix: String = "") -> Bool {
        var (string, prefix, suffix) = (string, prefix, suffix)
        return string.withUTF8 { bytes in
            prefix.withUTF8 { start in
                suffix.withUTF8 { end in
                    guard bytes.count >= start.count + end.count, let base = bytes.baseAddress else { return start.isEmpty && end.isEmpty }
                    return (start.isEmpty || memcmp(base, start.baseAddress!, start.count) == 0)
                        && (end.isEmpty || memcmp(base + bytes.count - end.count, end.baseAddress!, end.count) == 0)
                }
            }
        }
    }

    /// What a fetch lists of the remote.
    enum Scope {
        /// Every file.
        case everything
        /// zone.json and the devices' folders (their journals, device.json and assets).
        case devices
        /// The files of these record folders (`records/TYPE/BUCKET`).
        case recordFolders(Set<String>)

        func contains(_ path: String) -> Bool {
            switch self {
            case .everything: true
            case .devices: path == "zone.json" || RcloneRemote.bytes(of: path, start: "devices/")
            case .recordFolders(let folders): RcloneRemote.isRecordFile(path, inOneOf: folders)
            }
        }

        /// rclone's listings of this scope, each a folder (relative to the remote) and the
        /// parameters of its `operations/list`. A record folder is listed by itself: a listing
        /// filtered from the top would list every folder above it too, a request each on a
        /// server that lists one folder per request (WebDAV, sftp).
        var listings: [(folder: String, parameters: [(String, JSONValue)])] {
            func options(recursing: Bool) -> (String, JSONValue) {
                ("opt", .object([("recurse", .bool(recursing)), ("filesOnly", .bool(true)), ("noMimeType", .bool(true))]))
            }
            let devices: JSONValue = .object([("IncludeRule", .array([.string("/zone.json"), .string("/devices/**")]))])
            return switch self {
            case .everything: [("", [options(recursing: true), ("_config", .object([("UseListR", .bool(true))]))])]
            case .devices: [("", [options(recursing: true), ("_filter", devices)])]
            case .recordFolders(let folders): folders.sorted().map { ($0, [options(recursing: false)]) }
            }
        }
    }

    /// What `bringIn` found changed on the remote.
    struct Arrivals {
        var downloaded: [String] = []
        /// Files removed from the mirror because their writer removed them.
        var removed: [String] = []
        var changed: Bool { !downloaded.isEmpty || !removed.isEmpty }
    }

    /// Lists `scope` and brings its changes into the mirror: downloads the other devices' files
    /// that changed since the manifest last saw them, removes from the mirror those they removed,
    /// and marks this device's files there that are not what it sent to be sent again; throws
    /// `ReplicationError.deviceIDInUse` when a journal segment of `device` there holds what this
    /// data directory never wrote (see `checkOwnSegment`).
    private func bringIn(
        _ scope: Scope, as device: String, into manifest: inout RcloneManifest, mirror mirrorStatus: FileStatus
    ) throws -> Arrivals {
        let started = Time.now()
        let listed = try list(scope)
        var downloads: [(path: String, stamp: String)] = []
        for (path, stamp) in listed {
            if let entry = manifest[path], entry.sent, path != "zone.json" {
                let sameSize = RcloneManifest.size(of: entry.local) == RcloneManifest.size(of: stamp)
                // Changed since this device last saw it there (its remote stamp is empty from its
                // upload until a listing shows the size it sent).
                if RcloneRemote.isJournalSegment(path), entry.remote != stamp, !entry.remote.isEmpty || !sameSize {
                    try checkOwnSegment(path)
                }
                manifest[path]?.remote = RcloneRemote.isSettled(stamp, listedAt: started) ? stamp : ""
                // This device's copy there is not the size it sent (an upload cut short): it is sent again.
                if !sameSize { manifest[path]?.local = "" }
            } else if manifest[path] == nil, try isNewerSegment(path, of: device) {
                throw ReplicationError.deviceIDInUse("\(path) on the remote is a journal segment this data directory never wrote")
            } else if manifest[path]?.remote != stamp, try !isChangedHere(path, manifest) {
                downloads.append((path, RcloneRemote.isSettled(stamp, listedAt: started) ? stamp : ""))
            }
        }
        var arrivals = Arrivals(downloaded: downloads.map(\.path))
        for (path, entry) in manifest.entries where scope.contains(path) && listed[path] == nil {
            if entry.sent {
                manifest[path]?.local = ""
            } else if try !isChangedHere(path, manifest) {
                // Removed by its writer (a version superseded, a journal compacted): as a folder would see it.
                _ = try files.remove(mirror + "/" + path)
                manifest[path] = nil
                arrivals.removed.append(path)
            }
        }
        // Each chunk downloaded saves the manifest with every change above.
        try download(downloads, into: &manifest, mirror: mirrorStatus)
        return arrivals
    }

    /// Throws `ReplicationError.deviceIDInUse` unless the remote's copy of this device's journal
    /// segment `path` is the start of the mirror's (or all of it): a journal only grows, so what
    /// an upload cut short leaves there is such a start, and anything else was written by
    /// another data directory with this device id (a cloned disk, whose mirror kept its inode).
    private func checkOwnSegment(_ path: String) throws {
        // Gone from the mirror: compacted here, its removal there still to come.
        guard let ours = try files.read(mirror + "/" + path, limit: RcloneRemote.segmentLimit) else { return }
        try transfer(.download, [path])
        defer { try? files.removeTree(incoming) }
        let theirs = try files.read(incoming + "/" + path, limit: RcloneRemote.segmentLimit) ?? []
        guard ours.starts(with: theirs) else {
            throw ReplicationError.deviceIDInUse("\(path) on the remote holds lines this data directory never wrote")
        }
    }

    /// Whether `path` is a journal segment of `device` that starts after every segment of the
    /// mirror's journal of it, which holds one: a segment this data directory did not start (an
    /// older one is a compacted segment whose removal has not reached the remote yet).
    private func isNewerSegment(_ path: String, of device: String) throws -> Bool {
        guard RcloneRemote.isJournalSegment(path), RcloneRemote.isWritten(path, by: device),
            let last = try files.list(mirror + "/devices/" + device + "/journal")?.filter({ $0.hasSuffix(".log") }).max()
        else { return false }
        return FileSystem.baseName(path) > last
    }

    /// The mirror's zone.json; nil when it holds none, or one larger than a zone can be.
    private func zoneFile() -> [UInt8]? {
        (try? files.read(mirror + "/zone.json", limit: RcloneRemote.zoneLimit)) ?? nil
    }

    /// The record folders that the lines `devices` brought into other devices' journals name (the
    /// records they wrote or removed), or nil when only a whole listing can tell what changed: a
    /// journal segment came or went, or a journal lost lines or holds one that cannot be read.
    private func recordFolders(namedBy devices: Arrivals, known: [String: RcloneManifest.Entry]) throws -> Set<String>? {
        let segments = (devices.downloaded + devices.removed).filter(RcloneRemote.isJournalSegment)
        guard !devices.removed.contains(where: RcloneRemote.isJournalSegment),
            segments.allSatisfy({ known[$0] != nil })
        else { return nil }
        var folders = Set<String>()
        for path in segments {
            guard let named = recordFolders(namedAfter: known[path]?.local ?? "", in: path) else { return nil }
            folders.formUnion(named)
        }
        return folders
    }

    /// The record folders that the lines of the mirror's journal segment `path` name after those
    /// its copy of stamp `stamp` held (all of them when the stamp is empty); nil when the segment
    /// is shorter than that copy, too large to read (the engine quarantines it) or holds a line
    /// that cannot be read.
    private func recordFolders(namedAfter stamp: String, in path: String) -> Set<String>? {
        guard let bytes = (try? files.read(mirror + "/" + path, limit: RcloneRemote.segmentLimit)) ?? nil,
            let lines = RcloneRemote.linesAfter(Int(RcloneManifest.size(of: stamp)) ?? 0, in: bytes)
        else { return nil }
        var folders = Set<String>()
        for line in lines {
            guard let batch = try? JSONCoding.decode(NamedChanges.self, from: Array(line)) else { return nil }
            for change in batch.changes {
                guard let type = change.recordType, let name = change.recordName else { continue }
                guard RcloneRemote.isPlainTypeName(type) else { return nil }
                folders.insert("records/" + type + "/" + FolderLayout.bucket(of: name))
            }
        }
        return folders
    }

    /// The records a journal line's changes name; the rest of the line is the engine's to read.
    private struct NamedChanges: Decodable {
        struct Change: Decodable {
            let recordType: String?
            let recordName: String?
        }
        let changes: [Change]
    }

    /// The complete lines of a journal segment that its copy of `oldSize` bytes did not hold
    /// whole; nil when the segment is shorter than that copy (rewritten, not appended to).
    static func linesAfter(_ oldSize: Int, in bytes: [UInt8]) -> [ArraySlice<UInt8>]? {
        guard bytes.count >= oldSize else { return nil }
        let start = bytes[..<oldSize].lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
        guard let end = bytes.lastIndex(of: 0x0A), end >= start else { return [] }
        return bytes[start..<end].split(separator: 0x0A)
    }

    static func isJournalSegment(_ path: String) -> Bool {
        RcloneRemote.bytes(of: path, start: "devices/")
            && RcloneRemote.bytes(of: FileSystem.directoryName(path), start: "", end: "/journal")
    }

    /// Whether `path` is a file right in one of `folders` (`records/TYPE/BUCKET`, a handful), its
    /// folder compared as bytes (see `bytes(of:start:end:)`).
    static func isRecordFile(_ path: String, inOneOf folders: Set<String>) -> Bool {
        guard !folders.isEmpty else { return false }
        var path = path
        return path.withUTF8 { bytes in
            guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")), let base = bytes.baseAddress else { return false }
            return folders.contains { folder in
                var folder = folder
                return folder.withUTF8 { name in name.count == slash && memcmp(base, name.baseAddress!, slash) == 0 }
            }
        }
    }

    /// Whether a record type can be named in an rclone filter as it is (no pattern characters).
    static func isPlainTypeName(_ type: String) -> Bool {
        !type.isEmpty
            && type.utf8.allSatisfy {
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0 | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
            }
    }

    /// Whether the mirror's file at `path` was written here since it was last in step with the
    /// remote (this device's change, not sent yet): it is never replaced by a download.
    private func isChangedHere(_ path: String, _ manifest: RcloneManifest) throws -> Bool {
        guard let status = try files.status(mirror + "/" + path) else { return false }
        return RcloneManifest.localStamp(status) != manifest[path]?.local
    }

    /// A listed time this close to now may be followed by a change of the same size within the
    /// same second, which the next listing could not tell apart: such a file is fetched again.
    static func isSettled(_ stamp: String, listedAt now: Milliseconds) -> Bool {
        guard let space = stamp.firstIndex(of: " "),
            let listed = Time.parseISO8601(stamp[stamp.index(after: space)...].replacing(" ", with: "T") + "Z")
        else { return false }
        return listed < now - 2000
    }

    /// The backend's files in `scope` on the remote, each with its stamp (`size YYYY-MM-DD
    /// HH:MM:SS`, in UTC); none when the remote path does not exist yet.
    private func list(_ scope: Scope) throws -> [String: String] {
        var listed: [String: String] = [:]
        for (folder, parameters) in scope.listings {
            let body = try rc(
                "operations/list", [("fs", .string(remoteAsFolder)), ("remote", .string(folder))] + parameters, doing: "list",
                limit: RcloneRemote.listingLimit)
            if let body { try read(listing: body, of: scope, into: &listed) }
        }
        return listed
    }

    /// Adds the backend's files in `scope` that rclone's listing `body` names to `listed`, each with its stamp.
    private func read(listing body: [UInt8], of scope: Scope, into listed: inout [String: String]) throws {
        do {
            try JSONValue.parseObject(body, streamedArrays: ["list"], member: { _, _ in }) { _, file in
                // A time is RFC 3339 in UTC (rclone runs with TZ=UTC), to the second or finer.
                guard let flat = file.flat, let path = flat.stringMember("Path"), let size = flat.integerMember("Size"),
                    let time = flat.stringMember("ModTime"), time.utf8.count >= 19, RcloneManifest.isTransferred(path),
                    scope.contains(path)
                else { return }
                listed[path] = "\(size) " + time.prefix(19).replacing("T", with: " ")
            }
        } catch {
            throw record(failure: .failure("rclone's listing of \(location) cannot be read: \(JSONCoding.describe(error))"))
        }
    }

    /// Downloads `downloads` chunk by chunk into `incoming`, then moves each file into the mirror
    /// (so that the mirror never holds a file cut short), made durable before the manifest
    /// records the chunk.
    private func download(
        _ downloads: [(path: String, stamp: String)], into manifest: inout RcloneManifest, mirror mirrorStatus: FileStatus
    ) throws {
        let stamps = Dictionary(downloads, uniquingKeysWith: { first, _ in first })
        try transfer(.download, downloads.map(\.path)) { chunk in
            var moved: [String] = []
            for path in chunk {
                let source = incoming + "/" + path
                // Gone meanwhile (its writer removed it): the next listing says what became of it.
                guard let status = try files.status(source), status.isRegular else { continue }
                guard chmod(source, 0o600) == 0 else { throw FileSystem.fail("chmod", source) }
                try files.rename(source, to: mirror + "/" + path)
                moved.append(path)
            }
            try files.syncFileSystem(of: mirror)
            for path in moved {
                guard let status = try files.status(mirror + "/" + path) else { continue }
                manifest[path] = .init(remote: stamps[path] ?? "", local: RcloneManifest.localStamp(status))
            }
            try manifestFile.save(&manifest, mirror: mirrorStatus)
        }
        if !downloads.isEmpty { try files.removeTree(incoming) }
    }

    // MARK: Sending

    /// Uploads the mirror's files written here since they were last in step (this device's, and
    /// zone.json when this device wrote it), and removes from the remote the files this device
    /// sent and the mirror no longer holds; no other device's file is touched. Network I/O: call
    /// it without holding the data directory's lock.
    ///
    /// Only what this device wrote since its last send is looked at (see `writtenSinceLastSend`):
    /// its cost follows the changes, not the backend.
    public func send(message: String) throws -> Bool {
        try send(lookingAtEverything: false)
    }

    /// Compaction removed this device's old files from the mirror: a send that looks at the whole
    /// mirror removes them there too.
    public func sendCompaction(message: String) throws -> Bool {
        try send(lookingAtEverything: true)
    }

    /// Sends the changes of the files a send looks at: the whole mirror when `lookingAtEverything`,
    /// the manifest is lost or only a walk of it can tell what changed. The records go first, each
    /// part's removals after its uploads, then the devices' folders and zone.json: a journal
    /// segment is recorded as sent only once the records its lines name are in step there, so a
    /// send cut short looks at them again.
    private func send(lookingAtEverything: Bool) throws -> Bool {
        try prepare()
        let mirrorStatus = try mirrorStatus()
        let recorded = manifestFile.read(mirror: mirrorStatus)
        var manifest = recorded ?? RcloneManifest()
        let written = lookingAtEverything || recorded == nil ? nil : try writtenSinceLastSend(manifest)
        let present = try written?.files ?? RcloneRemote.transferredFiles(in: mirror)
        let presentPaths = Set(present.map(\.path))
        let now = Time.now()
        let uploads = present.filter {
            manifest[$0.path]?.local != RcloneManifest.localStamp($0.status)
                && !(written != nil && waitsForLaterSend($0.path, manifest, now: now))
        }
        let removals = manifest.entries.filter { path, entry in
            entry.sent && written?.covers(path) ?? true && !presentPaths.contains(path)
        }.map(\.key).sorted()
        for isRecord in [true, false] {
            let partUploads = uploads.filter { $0.path.hasPrefix("records/") == isRecord }
            let stamps = Dictionary(
                partUploads.map { ($0.path, RcloneManifest.localStamp($0.status)) }, uniquingKeysWith: { first, _ in first })
            try transfer(.upload, partUploads.map(\.path)) { chunk in
                for path in chunk {
                    // The remote's stamp is learnt from the next listing (zone.json's: another device's may
                    // replace this one).
                    manifest[path] = .init(local: stamps[path] ?? "", sent: true)
                }
                try manifestFile.save(&manifest, mirror: mirrorStatus)
            }
            try transfer(.removal, removals.filter { $0.hasPrefix("records/") == isRecord }) { chunk in
                for path in chunk { manifest[path] = nil }
                try manifestFile.save(&manifest, mirror: mirrorStatus)
            }
        }
        recordSuccess { $0.lastSend = Time.now() }
        return true
    }

    /// Whether the change of `path` waits for a later send: this device's device.json, of which a
    /// copy sent less than `acknowledgementDelay` ago is on the remote. What changes in it from
    /// one sync to the next is what this device has read (`seen`, `lastSync`), which other devices
    /// only wait for to drop old versions and tombstones: sent at most that often, it saves a
    /// transfer each way on most syncs. Only a send of what the journal names asks (a first send,
    /// a compaction or a new zone always sends it).
    private func waitsForLaterSend(_ path: String, _ manifest: RcloneManifest, now: Milliseconds) -> Bool {
        guard let entry = manifest[path], entry.sent, FileSystem.baseName(path) == "device.json",
            let sentAt = RcloneManifest.modified(of: entry.local)
        else { return false }
        return (sentAt..<sentAt + acknowledgementDelay).contains(now)
    }

    /// The mirror's files a send looks at, and which paths' removals it sends.
    struct WrittenFiles {
        var files: [(path: String, status: FileStatus)]
        /// The folders of the devices this data directory writes as.
        var deviceFolders: Set<String>
        var recordFolders: Set<String>

        func covers(_ path: String) -> Bool {
            if RcloneRemote.bytes(of: path, start: "devices/") { return deviceFolders.contains(RcloneRemote.deviceFolder(of: path)) }
            return path == "zone.json" || RcloneRemote.isRecordFile(path, inOneOf: recordFolders)
        }
    }

    /// What this device wrote since its last send: zone.json, the folders of the devices it writes
    /// as (those it sent a file of, and those new to the manifest), the record folders their
    /// journals' lines not sent yet name, and those of its files to send again (an upload cut
    /// short). Nil when only a walk of the whole mirror can tell: this device sent no journal
    /// segment yet (a first send), one it sent is gone (a compaction) or one cannot be read on
    /// from where it was sent.
    private func writtenSinceLastSend(_ manifest: RcloneManifest) throws -> WrittenFiles? {
        var knownDevices = Set<String>(), sendingDevices = Set<String>(), resent = Set<String>()
        for (path, entry) in manifest.entries {
            if RcloneRemote.bytes(of: path, start: "devices/") {
                knownDevices.insert(RcloneRemote.deviceFolder(of: path))
                if entry.sent { sendingDevices.insert(RcloneRemote.deviceFolder(of: path)) }
            } else if entry.sent, entry.local.isEmpty {
                resent.insert(FileSystem.directoryName(path))
            }
        }
        let deviceFolders = Set(
            (try files.list(mirror + "/devices") ?? []).map { "devices/" + $0 }.filter {
                sendingDevices.contains($0) || !knownDevices.contains($0)
            })
        var found: [(path: String, status: FileStatus)] = []
        if let zone = try files.status(mirror + "/zone.json"), zone.isRegular { found.append(("zone.json", zone)) }
        for folder in deviceFolders.sorted() { found += try RcloneRemote.transferredFiles(in: mirror, under: folder) }
        let segments = Dictionary(found.filter { RcloneRemote.isJournalSegment($0.path) }, uniquingKeysWith: { first, _ in first })
        let sentSegments = manifest.entries.filter { $0.value.sent && RcloneRemote.isJournalSegment($0.key) }.keys
        guard !sentSegments.isEmpty, sentSegments.allSatisfy({ segments[$0] != nil }) else { return nil }
        var folders = resent.filter { $0.hasPrefix("records/") }
        for (path, status) in segments {
            let sent = manifest[path]?.local ?? ""
            guard sent != RcloneManifest.localStamp(status) else { continue }
            guard let named = recordFolders(namedAfter: sent, in: path) else { return nil }
            folders.formUnion(named)
        }
        for folder in folders.sorted() { found += try RcloneRemote.transferredFiles(in: mirror, under: folder) }
        return WrittenFiles(files: found, deviceFolders: deviceFolders, recordFolders: folders)
    }

    /// `devices/DEVICE` of a path in a device's folder.
    static func deviceFolder(of path: String) -> String {
        let bytes = path.utf8
        guard let first = bytes.firstIndex(of: UInt8(ascii: "/")) else { return path }
        guard let second = bytes[bytes.index(after: first)...].firstIndex(of: UInt8(ascii: "/")) else { return path }
        return String(path[..<second])
    }

    /// What `transfer` does with the files it is given.
    enum Transfer {
        /// Copies them from a backend directory here (the mirror unless given) to the remote.
        case upload
        /// Copies them from the remote into `incoming`.
        case download
        /// Removes them from the remote.
        case removal
    }

    /// Runs `transfer` on `paths` in chunks of `chunkSize` files, one rclone operation each, calling
    /// `landed` with each chunk once rclone has done it; nothing when `paths` is empty.
    private func transfer(
        _ transfer: Transfer, _ paths: [String], from source: String? = nil, landed: ([String]) throws -> Void = { _ in }
    ) throws {
        if transfer == .download, !paths.isEmpty {
            try files.removeTree(incoming)
            try FileSystem.makeDirectory(incoming)
        }
        let filter: (String, JSONValue) = ("_filter", .object([("FilesFromRaw", .array([.string(transferList)]))]))
        let copying = { (from: String, to: String, checkingDestination: Bool) -> [(String, JSONValue)] in
            let config: [(String, JSONValue)] = [("NoTraverse", .bool(true))] + (checkingDestination ? [] : [("NoCheckDest", .bool(true))])
            return [("srcFs", .string(from)), ("dstFs", .string(to)), filter, ("_config", .object(config))]
        }
        for start in stride(from: 0, to: paths.count, by: chunkSize) {
            let chunk = Array(paths[start..<min(start + chunkSize, paths.count)])
            try writeTransferList(chunk)
            let (method, parameters, what) =
                switch transfer {
                case .upload: ("sync/copy", copying(source ?? mirror, remoteAsFolder, false), "upload to")
                case .download: ("sync/copy", copying(remoteAsFolder, incoming, true), "download from")
                case .removal: ("operations/delete", [("fs", JSONValue.string(remoteAsFolder)), filter], "remove old files from")
                }
            _ = try rc(method, parameters, doing: what, asJob: true)
            try landed(chunk)
        }
    }

    /// The files that devices exchange (see `RcloneManifest.isTransferred`) in the backend
    /// directory `root`, or in its folder `folder` (none when it holds no such folder), by path
    /// relative to `root`, regular files only.
    static func transferredFiles(in root: String, under folder: String? = nil) throws -> [(path: String, status: FileStatus)] {
        let top = folder.map { root + "/" + $0 } ?? root
        if folder != nil, try FileTree(root: root).status(top)?.isDirectory != true { return [] }
        let prefix = folder.map { $0 + "/" } ?? ""
        var found: [(path: String, status: FileStatus)] = []
        // The backend's folders are at most three deep (records/TYPE/BUCKET).
        try FileTree(root: top).forEachEntry(entering: { (prefix + $0).utf8.count(where: { $0 == UInt8(ascii: "/") }) < 3 }) {
            path, status in
            if status.isRegular, RcloneManifest.isTransferred(prefix + path) { found.append((prefix + path, status)) }
        }
        return found
    }

    private func mirrorStatus() throws -> FileStatus {
        guard let status = try files.status(mirror) else { throw FileSystemError(path: mirror, code: ENOENT, operation: "stat") }
        return status
    }

    /// Written in place and never synced: only the rclone call about to run reads it (a list torn
    /// by a crash is written anew by the next transfer), so it costs no `fsync` a transfer.
    private func writeTransferList(_ paths: [String]) throws {
        let bytes = Array(paths.joined(separator: "\n").utf8) + [0x0A]
        guard let fd = try files.openFile(transferList, flags: O_WRONLY | O_CREAT | O_TRUNC) else {
            throw FileSystem.fail("write", transferList)
        }
        defer { close(fd) }
        try bytes.withUnsafeBytes { try FileSystem.writeAll(fd: fd, $0, path: transferList) }
    }

    // MARK: Replacing the backend

    /// Uploads the backend directory `replacement` (a new zone built beside the mirror), its
    /// zone.json last, then removes from the remote the files this device sent that it does not
    /// hold. False, sending nothing, when the remote's zone.json is no longer the mirror's.
    public func sendReplacement(from replacement: String, message: String) throws -> Bool {
        let mirrorZone = try FileTree(root: mirror).read(mirror + "/zone.json", limit: RcloneRemote.zoneLimit)
        guard try fetchedZone() == mirrorZone else { return false }
        let replacementFiles = try RcloneRemote.transferredFiles(in: replacement).map(\.path)
        let others = replacementFiles.filter { $0 != "zone.json" }
        try transfer(.upload, others, from: replacement)
        try transfer(.upload, ["zone.json"], from: replacement)
        let kept = Set(replacementFiles)
        let manifest = manifestFile.read(mirror: try mirrorStatus()) ?? RcloneManifest()
        let removals = manifest.entries.filter { $0.value.sent && !kept.contains($0.key) }.map(\.key).sorted()
        try transfer(.removal, removals)
        recordSuccess { $0.lastSend = Time.now() }
        return true
    }

    /// Puts `replacement` in the mirror's place, every file of it recorded as sent.
    public func adoptReplacement(from replacement: String) throws {
        let retired = directory + "/retired"
        try files.removeTree(retired)
        try files.rename(mirror, to: retired)
        try files.rename(replacement, to: mirror)
        try files.syncDirectory(directory)
        try files.removeTree(retired)
        let mirrorStatus = try mirrorStatus()
        var manifest = RcloneManifest()
        for (path, status) in try RcloneRemote.transferredFiles(in: mirror) {
            manifest[path] = .init(local: RcloneManifest.localStamp(status), sent: true)
        }
        try manifestFile.replace(with: manifest, mirror: mirrorStatus)
    }

    /// The remote's zone.json, read now; nil when it holds none.
    public func fetchedZone() throws -> [UInt8]? {
        let described = try rc(
            "operations/stat", [("fs", .string(remoteAsFolder)), ("remote", .string("zone.json"))], doing: "read zone.json from")
        // The remote is untrusted: a zone.json larger than a zone can be is none.
        guard let described, let size = (try? JSONValue.parse(described))?["item"]?["Size"]?.int64Value, size <= RcloneRemote.zoneLimit
        else { return nil }
        try transfer(.download, ["zone.json"])
        defer { try? files.removeTree(incoming) }
        return try files.read(incoming + "/zone.json", limit: RcloneRemote.zoneLimit)
    }

    /// The largest listing read: about 500,000 files (rclone describes each in about 200 bytes of JSON).
    static let listingLimit = 128 << 20

    /// The largest journal segment read: a larger one is quarantined (see the backend's limits).
    static let segmentLimit = 12 << 20

    /// The largest zone.json read (see the backend's limits).
    static let zoneLimit = 64 * 1024

    // MARK: What the protocol asks of a remote with no history

    /// Nothing to mark: every send compares the mirror's files with what was sent.
    public func checkpoint(message: String) throws {}

    /// Never reported: a replaced zone.json reaches the mirror like any file, and the engine sees the new zone.
    public func acknowledgeReplacement() {}

    // MARK: Status

    /// When the mirror last fetched and sent, and rclone's last error, for `sync status`.
    public var status: RemoteStatus { RemoteStatusFile.read(statusFile).status }

    private func recordSuccess(_ change: (inout RemoteStatusFile) -> Void) {
        RemoteStatusFile.update(statusFile) {
            change(&$0)
            $0.lastError = nil
        }
    }

    private func record(failure: ItsypadError) -> ItsypadError {
        RemoteStatusFile.record(failure: failure, at: statusFile)
    }

    // MARK: Running rclone

    /// rclone's options for every operation: never asking for a password or a configuration, its
    /// connections bounded in time.
    static func options(timeout: Double) -> [String] {
        let seconds = { (limit: Double) in "\(Int(min(timeout, limit).rounded(.up)))s" }
        return [
            "--ask-password=false", "--contimeout", seconds(15), "--timeout", seconds(30), "--retries", "1",
            "--low-level-retries", "3", "--transfers", "8", "--checkers", "16",
        ]
    }

    /// Runs `method` of rclone's remote control (see `RcloneDaemon`): its response's body, or nil
    /// when the path it names is not there; what it failed to do (`doing`) is kept for `sync status`.
    @discardableResult
    private func rc(
        _ method: String, _ parameters: [(String, JSONValue)], doing what: String, asJob: Bool = false, limit: Int = 1 << 20
    ) throws -> [UInt8]? {
        let outcome: RcloneDaemon.Outcome
        do { outcome = try daemon.call(method, parameters, asJob: asJob, limit: limit) } catch let error as ItsypadError {
            throw record(failure: error)
        }
        switch outcome {
        case .succeeded(let body): return body
        case .failed(404, _): return nil
        case .failed(_, let message): throw record(failure: failure(what, message))
        case .stalled:
            throw record(failure: .temporary("rclone could not \(what) \(location): no progress for \(Int(timeout)) s; \(retry)"))
        }
    }

    private var retry: String { "local changes stay queued; try again later" }

    /// Exit 75 for what retrying can fix (no network, an unreachable host, a time-out, a server
    /// busy), 1 for the rest (refused credentials, a remote missing from the configuration),
    /// rclone's message in both, escaped, the secrets of a connection string left out.
    func failure(_ what: String, _ message: String) -> ItsypadError {
        let quoted = "rclone could not \(what) \(location):\n" + location.redacting("  " + Text.escapingControls(message, limit: 2000))
        return RcloneRemote.isTransient(message) ? .temporary(quoted + "\n" + retry) : .failure(quoted)
    }

    /// Whether rclone's message describes a failure that retrying can fix: the network, the host,
    /// a time-out, a busy server or a file rewritten by its writer while it was downloaded; never
    /// refused credentials or a configuration at fault.
    static func isTransient(_ message: String) -> Bool {
        let lowered = message.lowercased()
        // HTTP statuses count as whole numbers only: a port such as 14033 names no 403.
        let numbers = Set(lowered.split { !$0.isNumber }.map(String.init))
        let refused = [
            "unauthorized", "forbidden", "unable to authenticate", "permission denied", "didn't find section",
            "couldn't decrypt", "unknown backend", "config file", "password", "certificate",
        ]
        let unreachable = [
            "connection refused", "i/o timeout", "no such host", "network is unreachable", "no route to host", "connection reset",
            "context deadline exceeded", "timeout", "temporary failure in name resolution", "broken pipe", "eof",
            "500 internal", "too many requests", "service unavailable", "corrupted on transfer",
        ]
        if refused.contains(where: lowered.contains) || !numbers.isDisjoint(with: ["401", "403"]) { return false }
        return unreachable.contains(where: lowered.contains) || !numbers.isDisjoint(with: ["429", "502", "503", "504"])
    }
}

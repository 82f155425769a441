import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport
@testable import ItsypadSync

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Fixed clock for the tests: 2024-11-21.
let testNow: Int64 = 1_732_200_000_000

/// A backend directory inside a fresh temporary directory, opened as the engine reaches it, by
/// device `devA`. Call `remove()` (in a `defer`) when done.
struct TemporaryBackend {
    /// The temporary parent directory.
    let parent: String
    /// The backend directory, `<parent>/backend`.
    let path: String
    let backend: any SyncBackend

    init(lockTimeout: Double = 5, now: Int64 = testNow, createZone: Bool = true) throws {
        try self.init(lockTimeout: lockTimeout, clock: { now }, createZone: createZone)
    }

    init(lockTimeout: Double = 5, clock: @escaping @Sendable () -> Int64, createZone: Bool = true) throws {
        parent = FileManager.default.temporaryDirectory.path + "/itsypad-backend-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        path = parent + "/backend"
        backend = Self.opened(at: path, lockTimeout: lockTimeout, clock: clock)
        if createZone {
            _ = try backend.createZoneIfNeeded()
        }
    }

    /// The backend in `path` as device `devA` reaches it.
    static func opened(at path: String, lockTimeout: Double = 5, clock: @escaping @Sendable () -> Int64 = { testNow }) -> any SyncBackend {
        ReplicatedSyncBackend(
            FolderBackend(
                path: path, deviceID: "devA", instance: "instance-a", deviceName: "a", lockTimeout: lockTimeout, now: clock))
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: parent)
    }

    /// Deletes the backend directory, as wiping the backend does.
    func wipe() throws {
        try FileManager.default.removeItem(atPath: path)
    }

    var layout: FolderLayout { FolderLayout(root: path) }
}

// MARK: Records

func tab(_ name: String, text: String = "hello", tag: String? = nil) -> BackendRecord {
    BackendRecord(
        recordName: name,
        recordType: "ScratchTab",
        recordChangeTag: tag,
        fields: ["name": .string(text), "lastModified": .timestamp(testNow), "languageLocked": .int64(0)]
    )
}

extension SyncBackend {
    /// Saves records and expects success; returns the stored versions.
    @discardableResult
    func save(_ records: BackendRecord..., device: String = "deviceA") throws -> [BackendRecord] {
        try save(contentsOf: records, device: device)
    }

    @discardableResult
    func save(contentsOf records: [BackendRecord], device: String = "deviceA") throws -> [BackendRecord] {
        let result = try modify(saves: records.map(RecordSave.init(record:)), deletes: [], device: device)
        #expect(result.failures == [])
        return result.saved
    }

    /// Deletes records unconditionally and expects success.
    func delete(_ recordNames: String..., type: String = "ScratchTab", device: String = "deviceA") throws {
        let deletes = recordNames.map { RecordDelete(recordType: type, recordName: $0) }
        #expect(try modify(saves: [], deletes: deletes, device: device).failures == [])
    }

    /// Every page from `token` on.
    func fetchAll(since token: ChangeToken?, limit: Int = 1000) throws -> (changes: [Change], token: ChangeToken, pages: Int) {
        var changes: [Change] = []
        var token = token
        var pages = 0
        while true {
            let page = try fetchChanges(since: token, limit: limit)
            changes += page.changes
            token = page.token
            pages += 1
            if !page.moreComing {
                return (changes, page.token, pages)
            }
        }
    }

    /// Token after every current change.
    func currentToken() throws -> ChangeToken {
        try fetchAll(since: nil).token
    }
}

/// Assets for compaction's sweep: record "clip" referenced `replaced`, then `kept`; `orphan` was never referenced.
struct SweptAssets {
    let kept: AssetReference
    let orphan: AssetReference
    let replaced: AssetReference

    init(in backend: some SyncBackend) throws {
        kept = try backend.putAsset(Array("kept".utf8))
        orphan = try backend.putAsset(Array("orphan".utf8))
        replaced = try backend.putAsset(Array("replaced".utf8))
        var record = tab("clip")
        record.fields["content"] = .asset(replaced)
        let first = try #require(try backend.save(record).first)
        record.fields["content"] = .asset(kept)
        record.recordChangeTag = first.recordChangeTag
        try backend.save(record)
    }

    /// After a sweep of the old unreferenced assets: the referenced one and `recent` remain.
    func expectSwept(from backend: some SyncBackend, keeping recent: AssetReference) throws {
        #expect(try backend.readAsset(kept) == Array("kept".utf8))
        #expect(try backend.readAsset(recent) == Array("recent".utf8))
        #expect(throws: BackendError.assetNotFound(orphan.fileChecksum)) { try backend.readAsset(orphan) }
        #expect(throws: BackendError.assetNotFound(replaced.fileChecksum)) { try backend.readAsset(replaced) }
    }
}

extension Change {
    var savedRecord: BackendRecord? {
        if case .saved(let record) = self { return record }
        return nil
    }

    var recordName: String {
        switch self {
        case .saved(let record): record.recordName
        case .deleted(_, let recordName): recordName
        }
    }
}

// MARK: Files

/// Tests reach backend files by absolute path: the same operations, over a tree rooted at "/".
extension FileIO {
    static let anywhere = FileIO(root: "/")

    static func status(_ path: String) throws -> FileStatus? { try anywhere.status(path) }
    static func readFileIfExists(_ path: String) throws -> [UInt8]? { try anywhere.readFileIfExists(path) }
    static func writeAtomically(_ bytes: [UInt8], to path: String) throws { try anywhere.writeAtomically(bytes, to: path) }
    static func writeAll(_ descriptor: Int32, _ bytes: [UInt8], path: String) throws {
        try anywhere.writeAll(descriptor, bytes, path: path)
    }
    static func listDirectory(_ path: String) throws -> [String]? { try anywhere.listDirectory(path) }
    static func removeFile(_ path: String) throws { try anywhere.removeFile(path) }
    static func makeDirectory(_ path: String) throws { try anywhere.makeDirectory(path) }
}

func readBytes(_ path: String) throws -> [UInt8] {
    try #require(try FileIO.readFileIfExists(path))
}

func readText(_ path: String) throws -> String {
    String(decoding: try readBytes(path), as: UTF8.self)
}

func writeText(_ text: String, to path: String) throws {
    try FileIO.writeAtomically(Array(text.utf8), to: path)
}

func appendText(_ text: String, to path: String) throws {
    let descriptor = open(path, O_WRONLY | O_APPEND)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    try FileIO.writeAll(descriptor, Array(text.utf8), path: path)
}

func permissions(_ path: String) throws -> UInt32 {
    try #require(try FileIO.status(path)).permissions
}

/// Sets a file's modification time `age` milliseconds before `testNow`.
func age(_ path: String, by age: Int64) throws {
    let seconds = (testNow - age) / 1000
    var times = [timespec(tv_sec: Int(seconds), tv_nsec: 0), timespec(tv_sec: Int(seconds), tv_nsec: 0)]
    try #require(utimensat(AT_FDCWD, path, &times, 0) == 0)
}

/// Every file and directory under `root`, relative, sorted.
func treeListing(_ root: String) throws -> [String] {
    var result: [String] = []
    for name in try FileIO.listDirectory(root) ?? [] {
        result.append(name)
        if try FileIO.status(root + "/" + name)?.isDirectory == true {
            result += try treeListing(root + "/" + name).map { name + "/" + $0 }
        }
    }
    return result.sorted()
}

/// The record files of a record type's folder in a folder backend (`records/<type>/<bucket>/…`),
/// as paths relative to that folder (`<bucket>/<name>.<device>.json`), sorted.
func fannedOutRecordFiles(in typeDirectory: String) throws -> [String] {
    guard FileSystem.isDirectory(typeDirectory) else { return [] }
    return try FileSystem.list(typeDirectory).flatMap { bucket in
        try FileSystem.list(typeDirectory + "/" + bucket).map { bucket + "/" + $0 }
    }.sorted()
}

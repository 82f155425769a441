import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport
@testable import ItsypadSync

/// The backend a fleet's devices share.
enum FleetBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// A backend directory, reached through the CLI (`itsypad sync enable DIR`, `itsypad sync`) as a user does.
    case directory
    /// One `InMemoryBackend`, each device's sync engine run in-process against it: for scenarios
    /// that only need a backend, fast, and with faults on demand.
    case inMemory
    /// A backend directory created end-to-end encrypted (`--encrypt`) by the first device to
    /// enable it; the others join with its recovery key on standard input (`--key -`).
    case encryptedDirectory

    var testDescription: String { rawValue }
}

/// Several devices (data directories) sharing one backend.
struct Fleet {
    let backend = TemporaryDirectory()
    let devices: [Device]
    /// The shared backend when the fleet syncs in memory; nil when it syncs through `backendPath`.
    let memoryBackend: InMemoryBackend?
    let encrypted: Bool
    var backendPath: String { backend.path + "/backend" }

    init(_ count: Int, backend kind: FleetBackend = .directory) {
        devices = (0..<count).map { _ in Device() }
        encrypted = kind == .encryptedDirectory
        memoryBackend = kind == .inMemory ? InMemoryBackend() : nil
        for (index, device) in devices.enumerated() {
            _ = device.inProcess(["settings", "set", "device.name", "dev\(index)"])
        }
    }

    subscript(index: Int) -> Device { devices[index] }

    /// What `itsypad sync enable` does: creates the backend's zone if needed, then syncs.
    @discardableResult
    func enable(_ index: Int) -> Int32 {
        if let memoryBackend {
            do { _ = try memoryBackend.createZoneIfNeeded() } catch { Issue.record("creating the zone failed: \(error)") }
            return sync(index)
        }
        var arguments = ["sync", "enable", backendPath]
        var recoveryKey: String?
        // A device with a key re-creates a missing backend encrypted with it, as a user would.
        if encrypted, !FileSystem.exists(DataDirectoryLayout(root: devices[index].dataDir).syncKey) {
            let holder = devices.first { FileSystem.exists(DataDirectoryLayout(root: $0.dataDir).syncKey) }
            if FileSystem.exists(backendPath + "/zone.json"), let holder {
                recoveryKey = holder.output("sync", "key", "show")
                arguments += ["--key", "-"]
            } else {
                arguments.append("--encrypt")
            }
        }
        let (status, _, err) = devices[index].inProcess(arguments, stdin: recoveryKey)
        #expect(status == 0, "sync enable failed: \(err)")
        return status
    }

    @discardableResult
    func sync(_ index: Int, now: Milliseconds? = nil) -> Int32 {
        if memoryBackend != nil {
            do {
                try engine(index, now: now).sync()
                return ExitCode.success
            } catch {
                Issue.record("sync failed on dev\(index): \(error)")
                return ExitCode.failure
            }
        }
        let (status, _, err) = devices[index].inProcess(["sync"], now: now)
        #expect(status == 0, "sync failed on dev\(index): \(err)")
        return status
    }

    /// The sync engine of device `index` on the in-memory backend.
    func engine(_ index: Int, now: Milliseconds? = nil) throws -> SyncEngine {
        let backend = try #require(memoryBackend, "only an in-memory fleet runs engines directly")
        let store = try DataStore(path: devices[index].dataDir, lockTimeout: 1)
        return try SyncEngine(store: store, backend: backend, now: now.map { value in { value } } ?? Time.now)
    }

    /// What `itsypad sync compact` does on device `index`.
    func compact(_ index: Int) {
        if let memoryBackend {
            #expect(throws: Never.self) { try memoryBackend.compact() }
            return
        }
        _ = devices[index].output("sync", "compact")
    }

    /// Every device syncs twice, in turn: enough for every change to reach everyone.
    func converge() {
        for _ in 0..<2 { for index in devices.indices { sync(index) } }
    }

    /// Tab id → (name, content) on one device.
    func tabs(_ index: Int) throws -> [String: String] {
        let items = try #require(try JSONValue.parse(devices[index].inProcess(["tab", "ls", "--json"]).1).arrayValue)
        var result: [String: String] = [:]
        for item in items { result[item["id"]!.stringValue!] = item["name"]!.stringValue! + "|" + item["content"]!.stringValue! }
        return result
    }

    /// Clip id → text/pinned on one device (local-only clips excluded: they never travel).
    func clips(_ index: Int) throws -> [String: String] {
        let items = try #require(try JSONValue.parse(devices[index].inProcess(["clip", "ls", "--json"]).1).arrayValue)
        var result: [String: String] = [:]
        for item in items where item["localOnly"] == .bool(false) {
            result[item["id"]!.stringValue!] = item["text"]!.stringValue! + "|" + "\(item["pinned"]!.boolValue!)"
        }
        return result
    }

    func syncedSettings(_ index: Int) -> String {
        devices[index].inProcess(["settings"]).1.split(separator: "\n").filter {
            let key = String($0.split(separator: "=")[0])
            return Settings.definition(key)?.scope == .synced
        }.joined(separator: "\n")
    }

    func expectConverged(sourceLocation: SourceLocation = #_sourceLocation) throws {
        for index in devices.indices.dropFirst() {
            #expect(try tabs(index) == tabs(0), "tabs differ on dev\(index)", sourceLocation: sourceLocation)
            let (theirs, first) = (try clips(index), try clips(0))
            #expect(
                theirs == first,
                "clips differ on dev\(index): only there \(theirs.filter { first[$0.key] != $0.value }), only on dev0 \(first.filter { theirs[$0.key] != $0.value })",
                sourceLocation: sourceLocation)
            #expect(syncedSettings(index) == syncedSettings(0), "settings differ on dev\(index)", sourceLocation: sourceLocation)
        }
    }
}

extension Device {
    func output(_ arguments: String..., stdin: String? = nil, now: Milliseconds? = nil) -> String {
        let (status, out, err) = inProcess(arguments, stdin: stdin, now: now)
        #expect(status == 0, "\(arguments.joined(separator: " ")) failed: \(err)")
        return out.trimmingNewline
    }
}

/// The randomized tests' user: random commands on random devices of a fleet, remembering every
/// line typed into a tab (concurrent edits may merge or conflict, but none may lose a line).
struct RandomUser {
    var random: SeededGenerator
    private(set) var typed: [String] = []
    private let seed: UInt64

    init(seed: UInt64) {
        self.seed = seed
        random = SeededGenerator(seed: seed)
    }

    /// Runs one random command on a random device, or returns the device that should sync now
    /// (the caller decides how it syncs).
    mutating func act(in fleet: Fleet, step: Int) throws -> Int? {
        let index = Int.random(in: fleet.devices.indices, using: &random)
        let device = fleet[index]
        let tabs = try fleet.tabs(index).keys.sorted()
        let clips = try fleet.clips(index).keys.sorted()
        let token = "line-\(seed)-\(step)"
        switch Int.random(in: 0..<9, using: &random) {
        case 0:
            typed.append(token)
            _ = device.output("tab", "new", token)
        case 1, 2:
            guard let tab = tabs.randomElement(using: &random) else { return nil }
            let content = device.output("tab", "show", tab)
            typed.append(token)
            // Append or prepend a line: concurrent edits may merge or conflict; neither may lose it.
            let edited = Bool.random(using: &random) ? content + "\n" + token : token + "\n" + content
            _ = device.output("tab", "edit", tab, edited)
        case 3:
            _ = device.output("clip", "add", token)
        case 4:
            guard let clip = clips.randomElement(using: &random) else { return nil }
            _ = device.inProcess(["clip", "rm", clip])
        case 5:
            guard let clip = clips.randomElement(using: &random) else { return nil }
            _ = device.inProcess(["clip", Bool.random(using: &random) ? "pin" : "unpin", clip])
        case 6:
            _ = device.output("settings", "set", "clipboard.retention", ["1d", "7d", "2w", "never"].randomElement(using: &random)!)
        default:
            return index
        }
        return nil
    }

    /// Every line typed into a tab is in some tab of device 0.
    func expectNothingLost(in fleet: Fleet, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let everything = try fleet.tabs(0).values.joined(separator: "\n")
        let lost = typed.filter { !everything.contains($0) }
        #expect(lost.isEmpty, "typed lines lost: \(lost)", sourceLocation: sourceLocation)
    }
}

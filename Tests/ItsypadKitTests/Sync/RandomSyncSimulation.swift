import Testing

@testable import ItsypadBackend
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport
@testable import ItsypadSync

#if canImport(Glibc)
import Glibc
#endif

/// The backend implementations the simulation runs over (a new one joins here). Each
/// simulated machine opens its own handle on one shared backend, as real ones do.
enum SimulatedBackend: String, CaseIterable, CustomTestStringConvertible {
    case inMemory = "in memory"
    /// A backend directory in a coherent folder, as `sync enable` creates it.
    case directory = "directory"
    /// What `sync enable --encrypt` creates, every device with the same key.
    case encryptedDirectory = "encrypted directory"

    var testDescription: String { rawValue }

    /// Opens a device's handles on a fresh shared backend stored at `path` (the in-memory one lives as long as the opener).
    func opener(path: String) -> (DataStore) throws -> SyncBackend {
        switch self {
        case .directory:
            return { try BackendFactory.plain.open(path, $0) }
        case .encryptedDirectory:
            return { try BackendFactory.encrypted.open(path, $0) }
        case .inMemory:
            let shared = InMemoryBackend()
            return { _ in shared }
        }
    }
}

/// A kill -9 in the middle of a sync: thrown by ``FaultInjectingBackend``. Every
/// write of the engine and the stores is atomic, so stopping at a backend call
/// leaves the files exactly as a killed process would.
struct SimulatedKill: Error {}

/// Wraps a backend to stop a run at a chosen call (before it, or after it
/// returned: a batch committed that the engine never hears of) and to run
/// another device's sync just before a chosen call (two syncs at once).
final class FaultInjectingBackend: SyncBackend, @unchecked Sendable {
    private let base: SyncBackend
    private var calls = 0
    /// Throws `SimulatedKill` at this call; `afterCall`: once the call has done its work.
    var kill: (call: Int, afterCall: Bool)?
    /// Throws `SimulatedKill` as soon as a batch has committed: the run never hears back.
    var killAfterCommit = false
    /// Runs `body` just before this call.
    var interleave: (call: Int, body: () -> Void)?
    /// Records saved by batches that committed, whether or not the caller heard back, with the
    /// call that last committed each.
    private(set) var committed: [RecordID: Int] = [:]

    init(_ base: SyncBackend) {
        self.base = base
    }

    var limits: BackendLimits { base.limits }
    var absenceProvesDeletion: Bool { base.absenceProvesDeletion }
    func sealedByteCount(of fields: [String: FieldValue]) throws -> Int? { try base.sealedByteCount(of: fields) }

    private func call<T>(_ body: () throws -> T) throws -> T {
        calls += 1
        if let interleave, interleave.call == calls {
            self.interleave = nil
            interleave.body()
        }
        if let kill, kill.call == calls, !kill.afterCall { throw SimulatedKill() }
        let result = try body()
        if let kill, kill.call == calls { throw SimulatedKill() }
        return result
    }

    func createZoneIfNeeded() throws -> ZoneInfo { try call { try base.createZoneIfNeeded() } }
    func zone() throws -> ZoneInfo { try call { try base.zone() } }
    func fetchChanges(since token: ChangeToken?, limit: Int) throws -> ChangesPage {
        try call { try base.fetchChanges(since: token, limit: limit) }
    }
    func modify(saves: [RecordSave], deletes: [RecordDelete], device: String) throws -> ModifyResult {
        try call {
            let result = try base.modify(saves: saves, deletes: deletes, device: device)
            if result.failures.isEmpty {
                for record in result.saved { committed[record.id] = calls }
                if killAfterCommit { throw SimulatedKill() }
            }
            return result
        }
    }
    func putAsset(_ bytes: [UInt8]) throws -> AssetReference { try call { try base.putAsset(bytes) } }
    func readAsset(_ reference: AssetReference) throws -> [UInt8] { try call { try base.readAsset(reference) } }
    func compact() throws -> CompactionReport { try call { try base.compact() } }
    func fetchRecord(_ id: RecordID) throws -> BackendRecord? { try call { try base.fetchRecord(id) } }
    func location(of id: RecordID) -> String { base.location(of: id) }
    func finishSync(acknowledging token: ChangeToken) throws { try call { try base.finishSync(acknowledging: token) } }
}

/// Several devices working on one backend at random — every tab, clip, setting and
/// sync operation, syncs killed at random moments and syncs running at once — then
/// brought to quiescence and checked against what the operations allow:
///
/// - every device holds the same tabs, clips and synced settings, with nothing pending or failed;
/// - the last choice of a tab's name (a rename, a new tab's given name) decides its name, and the last
///   choice of its language its language; a name or language never chosen, or chosen to be detected,
///   follows the tab's final content;
/// - a tab whose rename or language choice no removal had seen is there;
/// - every line typed that no later edit or removal could have seen is in some tab;
/// - a tab removal by a device that had seen every change of the tab sticks, as does every clip removal;
/// - clips never removed anywhere are everywhere;
/// - a pin change by a device that had seen every other pin change of the clip sticks;
/// - each synced setting holds the value last set.
///
/// What a device "had seen" is counted conservatively: its own changes, and changes
/// committed (sent by a sync that completed with nothing of that item left pending)
/// before one of its own syncs completed.
final class RandomSyncSimulation {
    let seed: UInt64
    let steps: Int
    /// Opens one device's handle on the shared backend.
    private let openBackend: (DataStore) throws -> SyncBackend
    private let root: String
    private var random: SeededGenerator
    private var devices: [SimulatedDevice] = []
    private var step = 0
    /// Set while local operations run in the middle of the device's own sync, before this backend call.
    private var duringCall: Int?
    private var time: Milliseconds = 1_800_000_000_000
    /// What happened, for the failure message.
    private(set) var trace: [String] = []

    // What the oracle needs.
    private var changes: [RecordKey: [Change]] = [:]
    private var createdTabs = Set<String>()
    private var tabRemovals: [(id: String, device: Int, step: Int)] = []
    private var typed = Set<String>()
    private var mayVanish = Set<String>()
    private var addedClips = Set<String>()
    /// Clips added with --local: no record of them, not even of their removal, may reach the backend.
    private var localClips = Set<String>()
    private var removedClips = Set<String>()
    private var clipRemovalsThatStick = Set<String>()
    private var lastPinChange: [String: (change: Change, pinned: Bool)] = [:]
    private var lastSetting: [String: (step: Int, value: SettingValue?)] = [:]

    /// One user change of an item.
    struct Change {
        let step: Int
        let device: Int
        var committedAt: Int?
        /// For a tab: the labels it left, and which it chose.
        var labels: TabLabels?
    }

    /// A tab's name and language (each with its lock) after a change, and which the change chose
    /// (the others follow the content).
    struct TabLabels {
        let name: String
        let language: String
        let chosen: Tab.Labels
        let changedContent: Bool

        init(_ tab: Tab, before: Tab?, chosen: Tab.Labels) {
            name = "\(tab.name)|\(tab.nameLocked)"
            language = "\(tab.language)|\(tab.languageLocked)"
            self.chosen = chosen
            changedContent = before.map { $0.content != tab.content } ?? true
        }

        /// The value of the label `name` says, as this change left it.
        func value(_ label: Label) -> String { label == .name ? name : language }
        func chose(_ label: Label) -> Bool { chosen.contains(label.option) }

        /// What a label that follows the content is for `tab`'s content.
        static func derived(_ label: Label, of tab: Tab) -> String {
            label == .name ? "\(Tab.derivedName(for: tab.content))|false" : "\(LanguageDetector.detect(tab.content))|false"
        }
    }

    enum Label: String, CaseIterable {
        case name, language

        var option: Tab.Labels { self == .name ? .name : .language }
    }

    struct SimulatedDevice {
        let dataDir: String
        var enabled = true
        /// Steps at which a sync of this device completed.
        var completedSyncs: [Int] = []
        /// Changes made here and not known to be committed yet; made while this device's own sync
        /// waited for its backend call `duringCall`, a change travels only in batches sent after it.
        var uncommitted: [(key: RecordKey, index: Int, duringCall: Int?)] = []
    }

    init(seed: UInt64, devices count: Int = 3, steps: Int = 150, backend: SimulatedBackend) {
        self.seed = seed
        self.steps = steps
        random = SeededGenerator(seed: seed)
        root = RandomSyncSimulation.makeRoot()
        openBackend = backend.opener(path: root + "/backend")
        devices = (0..<count).map { SimulatedDevice(dataDir: root + "/device\($0)") }
    }

    deinit { RandomSyncSimulation.removeTree(root) }

    /// Removes a directory tree without spawning `rm` (hundreds of simulations run in one test).
    private static func removeTree(_ path: String) {
        if FileSystem.isDirectory(path) {
            for name in (try? FileSystem.list(path, includingHidden: true)) ?? [] { removeTree(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }

    /// tmpfs when there is one: the simulation is about ordering, not durability, and fsyncs would dominate.
    private static func makeRoot() -> String {
        let base = FileSystem.isDirectory("/dev/shm") ? "/dev/shm" : "/tmp"
        var template = Array("\(base)/itsypad-sim-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        return String(cString: template)
    }

    // MARK: Running

    /// Runs the operations, brings the devices to quiescence and returns what the oracle found wrong.
    func run() throws -> [String] {
        // Created on purpose, as `sync enable` does: a sync never creates a backend.
        _ = try withStore(0) { try openBackend($0).createZoneIfNeeded() }
        for index in devices.indices {
            try withStore(index) { store in
                try store.changeSetting(Settings.definition(.deviceName), to: .string("dev\(index)"), now: time)
                try store.changeSetting(Settings.definition(.clipboardMaxEntries), to: .int(5000), now: time)
            }
            try sync(index)
        }
        while step < steps {
            step += 1
            time += 1000 + Milliseconds.random(in: 0..<500, using: &random)
            try randomOperation(on: Int.random(in: devices.indices, using: &random))
        }
        try quiesce()
        return try violations()
    }

    private func randomOperation(on index: Int) throws {
        let roll = Int.random(in: 0..<100, using: &random)
        switch roll {
        case 0..<8: try newTab(index)
        case 8..<22: try editTabContent(index)
        case 22..<26: try renameTab(index)
        case 26..<29: try setLanguage(index)
        case 29..<31: try autoLanguage(index)
        case 31..<35: try removeTab(index)
        case 35..<43: try addClip(index)
        case 43..<47: try removeClip(index)
        case 47..<53: try pinClip(index)
        case 53..<54: try clearClips(index)
        case 54..<55: try pruneClips(index)
        case 55..<59: try changeSetting(index)
        case 59..<61: try toggleSync(index)
        case 61..<65: try compact()
        case 65..<73: try killedSync(index)
        case 73..<78: try concurrentSyncs(index)
        case 78..<84: try editsDuringSync(index)
        default: try sync(index)
        }
    }

    private func log(_ index: Int, _ text: String) {
        trace.append("step \(step) dev\(index): \(text)")
    }

    private func withStore<T>(_ index: Int, _ body: (DataStore) throws -> T) throws -> T {
        // During the device's own sync the lock must be free: a short wait shows a sync that holds it.
        let store = try DataStore(path: devices[index].dataDir, lockTimeout: duringCall == nil ? 10 : 1)
        defer { store.close() }
        return try body(store)
    }

    private func record(_ key: RecordKey, by index: Int, labels: TabLabels? = nil) {
        changes[key, default: []].append(Change(step: step, device: index, labels: labels))
        devices[index].uncommitted.append((key, changes[key]!.count - 1, duringCall))
    }

    private func token(_ kind: String) -> String { "\(kind)-\(seed)-\(step)" }

    // MARK: Tabs

    /// Tabs in an order that does not depend on random ids.
    private func tabs(_ store: DataStore) throws -> [Tab] {
        try store.tabs.all().sorted { ($0.lastModified, $0.name, $0.content) < ($1.lastModified, $1.name, $1.content) }
    }

    /// Mostly any tab, often the one changed last: people keep coming back to the same notes,
    /// which is where devices meet.
    private func pickTab(_ store: DataStore) throws -> Tab? {
        let all = try tabs(store)
        return Int.random(in: 0..<3, using: &random) == 0 ? all.last : all.randomElement(using: &random)
    }

    private func noteTabChange(_ tab: Tab, from before: Tab?, choosing chosen: Tab.Labels, by index: Int) {
        record(RecordKey(.tab, tab.id), by: index, labels: TabLabels(tab, before: before, chosen: chosen))
    }

    private func newTab(_ index: Int) throws {
        let line = token("line")
        let name: String? = Bool.random(using: &random) ? token("name") : nil
        let language: String? =
            Int.random(in: 0..<4, using: &random) == 0 ? ["python", "rust", "markdown"].randomElement(using: &random) : nil
        let tab = try withStore(index) { try $0.createTab(content: line, name: name, language: language, fileURL: nil, now: time) }
        typed.insert(line)
        createdTabs.insert(tab.id)
        noteTabChange(tab, from: nil, choosing: [name != nil ? .name : [], language != nil ? .language : []], by: index)
        log(index, "tab new \(tab.id.prefix(8)) \(line)")
    }

    private func editTabContent(_ index: Int) throws {
        let line = token("line")
        try withStore(index) { store in
            guard let tab = try pickTab(store) else { return }
            var lines = tab.content.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: lines.append(line)
            case 1: lines.insert(line, at: 0)
            default:
                // Replaces a line: the edit had seen what it removes.
                let position = Int.random(in: lines.indices, using: &random)
                mayVanish.insert(lines[position])
                lines[position] = line
            }
            typed.insert(line)
            try store.updateTab(tab, now: time) { edited in
                edited.content = lines.joined(separator: "\n")
                edited.contentDidChange()
            }
            noteTabChange(try store.tabs.tab(id: tab.id)!, from: tab, choosing: [], by: index)
            log(index, "tab edit \(tab.id.prefix(8)) +\(line)")
        }
    }

    private func renameTab(_ index: Int) throws {
        let name = token("name")
        try changeTab(index, "rename \(name)", choosing: .name) {
            $0.name = name
            $0.nameLocked = true
        }
    }

    private func setLanguage(_ index: Int) throws {
        let language = ["python", "rust", "swift", "markdown", "plain"].randomElement(using: &random)!
        try changeTab(index, "language \(language)", choosing: .language) {
            $0.language = language
            $0.languageLocked = true
        }
    }

    private func autoLanguage(_ index: Int) throws {
        try changeTab(index, "auto-language", choosing: .language) {
            $0.languageLocked = false
            $0.language = LanguageDetector.detect($0.content)
        }
    }

    /// Changes a tab's metadata as `tab edit` does, a choice of the labels `chosen`.
    private func changeTab(_ index: Int, _ description: String, choosing chosen: Tab.Labels, _ change: (inout Tab) -> Void) throws {
        try withStore(index) { store in
            guard let tab = try pickTab(store), try store.updateTab(tab, now: time, choosing: chosen, change: change) else { return }
            noteTabChange(try store.tabs.tab(id: tab.id)!, from: tab, choosing: chosen, by: index)
            log(index, "tab \(description) \(tab.id.prefix(8))")
        }
    }

    private func removeTab(_ index: Int) throws {
        try withStore(index) { store in
            guard let tab = try pickTab(store) else { return }
            // The removing device had seen every line it holds.
            mayVanish.formUnion(tab.content.split(separator: "\n").map(String.init))
            try store.removeTab(tab)
            tabRemovals.append((tab.id, index, step))
            log(index, "tab rm \(tab.id.prefix(8))")
        }
    }

    // MARK: Clips

    private func clips(_ store: DataStore) throws -> [ClipEntry] {
        try store.clips().entries().sorted { $0.text < $1.text }
    }

    private func addClip(_ index: Int) throws {
        let text = token("clip")
        // Every fifth step's clip stays on its device: decided without a random draw, so that seeds keep their other choices.
        let local = step % 5 == 0
        let outcome = try withStore(index) { try $0.addClip(text, local: local, now: time) }
        if local { localClips.insert(outcome.entry.id) } else { addedClips.insert(outcome.entry.id) }
        removedClips.formUnion(outcome.evicted)
        log(index, "clip add \(outcome.entry.id.prefix(8)) \(text)")
    }

    private func removeClip(_ index: Int) throws {
        try withStore(index) { store in
            guard let clip = try clips(store).randomElement(using: &random) else { return }
            let removed = try store.removeClips([clip.id])
            removedClips.formUnion(removed)
            clipRemovalsThatStick.formUnion(removed)
            log(index, "clip rm \(clip.id.prefix(8))")
        }
    }

    private func pinClip(_ index: Int) throws {
        try withStore(index) { store in
            guard let clip = try clips(store).randomElement(using: &random) else { return }
            guard try store.setClipPinned(clip, !clip.pinned, now: time) else { return }
            let key = RecordKey(.clip, clip.id)
            record(key, by: index)
            lastPinChange[clip.id] = (changes[key]!.last!, !clip.pinned)
            log(index, "clip \(clip.pinned ? "unpin" : "pin") \(clip.id.prefix(8))")
        }
    }

    private func clearClips(_ index: Int) throws {
        let all = Int.random(in: 0..<4, using: &random) == 0
        let removed = try withStore(index) { try $0.clearClips(includingPinned: all) }
        removedClips.formUnion(removed)
        clipRemovalsThatStick.formUnion(removed)
        log(index, "clip clear\(all ? " --all" : "") (\(removed.count))")
    }

    private func pruneClips(_ index: Int) throws {
        let age = Milliseconds.random(in: 5_000...60_000, using: &random)
        let keep = Int.random(in: 3...20, using: &random)
        let removed = try withStore(index) { try $0.pruneClips(olderThan: age, keep: keep, now: time) }
        removedClips.formUnion(removed)
        log(index, "clip prune older than \(age) keep \(keep) (\(removed.count))")
    }

    // MARK: Settings

    private func changeSetting(_ index: Int) throws {
        let setting: SettingKey = Bool.random(using: &random) ? .clipboardRetention : .clipboardMaxEntries
        let (key, definition) = (setting.rawValue, Settings.definition(setting))
        let value: SettingValue? =
            Int.random(in: 0..<4, using: &random) == 0
            ? nil
            : setting == .clipboardRetention
                ? .string(["1d", "7d", "2w", "never"].randomElement(using: &random)!)
                : .int([2000, 5000, 9000].randomElement(using: &random)!)
        try withStore(index) { try $0.changeSetting(definition, to: value, now: time) }
        // clipboard.maxEntries unset means 1000, still above what a run adds.
        lastSetting[key] = (step, value)
        log(index, "settings \(value.map { "set \(key) \($0)" } ?? "unset \(key)")")
    }

    // MARK: Syncing

    /// One sync run through a fault-injecting handle; returns whether it completed.
    @discardableResult
    private func runSync(_ index: Int, configure: (FaultInjectingBackend) -> Void = { _ in }) throws -> Bool {
        guard devices[index].enabled else { return false }
        let store = try DataStore(path: devices[index].dataDir)
        defer { store.close() }
        let backend = FaultInjectingBackend(try openBackend(store))
        configure(backend)
        let engine = try SyncEngine(store: store, backend: backend, now: { [time] in time })
        var completed = true
        do {
            try engine.sync()
        } catch is SimulatedKill {
            completed = false
        }
        // A batch that committed carried every change this device had made to its records, heard back or not.
        var committed: [RecordKey: Int] = [:]
        let types = SyncedTypeTable(SyncedTypes.standard)
        for (id, call) in backend.committed { if let key = types.key(of: id) { committed[key] = max(committed[key] ?? 0, call) } }
        markCommitted(on: index) { change in committed[change.key].map { $0 > (change.duringCall ?? 0) } ?? false }
        // Calls are counted per run: what stays uncommitted travels in any later batch.
        for position in devices[index].uncommitted.indices { devices[index].uncommitted[position].duringCall = nil }
        guard completed else { return false }
        guard engine.report.failed.isEmpty else { throw SimulationError("sync failed on dev\(index): \(engine.report.failed)") }
        devices[index].completedSyncs.append(step)
        // What this device changed and no longer has waiting was committed by now.
        let waiting = try store.pending().keys()
        markCommitted(on: index) { !waiting.contains($0.key) }
        return true
    }

    private func markCommitted(on index: Int, _ isCommitted: ((key: RecordKey, index: Int, duringCall: Int?)) -> Bool) {
        devices[index].uncommitted.removeAll { change in
            guard isCommitted(change) else { return false }
            if changes[change.key]![change.index].committedAt == nil { changes[change.key]![change.index].committedAt = step }
            return true
        }
    }

    private func sync(_ index: Int) throws {
        guard devices[index].enabled else { return }
        try runSync(index)
        log(index, "sync")
    }

    private func killedSync(_ index: Int) throws {
        guard devices[index].enabled else { return }
        if Bool.random(using: &random) {
            let completed = try runSync(index) { $0.killAfterCommit = true }
            // A machine that crashed often stays down a while: the others move on meanwhile.
            let staysDown = !completed && Bool.random(using: &random)
            if staysDown { devices[index].enabled = false }
            log(index, "sync killed as its batch committed\(completed ? " (nothing to send)" : "")\(staysDown ? "; stays offline" : "")")
            return
        }
        let call = Int.random(in: 1...8, using: &random)
        let afterCall = Bool.random(using: &random)
        let completed = try runSync(index) { $0.kill = (call, afterCall) }
        log(index, "sync killed at call \(call)\(afterCall ? " after it returned" : "")\(completed ? " (finished first)" : "")")
    }

    private func concurrentSyncs(_ index: Int) throws {
        let others = devices.indices.filter { $0 != index && devices[$0].enabled }
        guard devices[index].enabled, let other = others.randomElement(using: &random) else { return }
        let call = Int.random(in: 1...10, using: &random)
        var failure: Error?
        try runSync(index) { backend in
            backend.interleave = (
                call,
                { [self] in
                    do { try runSync(other) } catch { failure = error }
                }
            )
        }
        if let failure { throw failure }
        log(index, "sync with dev\(other) syncing at its call \(call)")
    }

    /// Local changes made while the device's own sync waits for the backend, which it does
    /// without the data directory's lock: each is a step of its own, after the sync began and
    /// before it ends, and must come out exactly as if made before or after the sync.
    private func editsDuringSync(_ index: Int) throws {
        guard devices[index].enabled else { return }
        let call = Int.random(in: 1...10, using: &random)
        let count = Int.random(in: 1...3, using: &random)
        var failure: Error?
        var reached = false
        try runSync(index) { backend in
            backend.interleave = (
                call,
                { [self] in
                    reached = true
                    duringCall = call
                    defer { duringCall = nil }
                    do {
                        for _ in 0..<count {
                            step += 1
                            time += 1000
                            try localOperation(on: index)
                        }
                    } catch { failure = error }
                    // The rest of the sync comes after them: what it finds sent was sent after them.
                    step += 1
                }
            )
        }
        if let failure { throw failure }
        log(index, "sync with local changes at its call \(call)\(reached ? "" : " (not reached)")")
    }

    /// One of the changes a person makes on a device.
    private func localOperation(on index: Int) throws {
        switch Int.random(in: 0..<9, using: &random) {
        case 0: try newTab(index)
        case 1, 2: try editTabContent(index)
        case 3: try renameTab(index)
        case 4: try removeTab(index)
        case 5: try addClip(index)
        case 6: try removeClip(index)
        case 7: try pinClip(index)
        default: try changeSetting(index)
        }
    }

    private func toggleSync(_ index: Int) throws {
        devices[index].enabled.toggle()
        log(index, devices[index].enabled ? "sync enable" : "sync disable")
        if devices[index].enabled { try sync(index) }
    }

    private func compact() throws {
        _ = try withStore(0) { try openBackend($0).compact() }
        trace.append("step \(step): compact")
    }

    /// Every device on, syncing in turn until a round changes nothing.
    private func quiesce() throws {
        for index in devices.indices { devices[index].enabled = true }
        step += 1
        var previous: [DeviceSnapshot] = []
        for _ in 0..<8 {
            for index in devices.indices { try runSync(index) }
            let snapshots = try devices.indices.map(snapshot)
            if snapshots == previous, snapshots.allSatisfy({ $0 == snapshots[0] }) { return }
            previous = snapshots
        }
    }

    // MARK: The oracle

    struct DeviceSnapshot: Equatable {
        var tabs: [String: String] = [:]
        var clips: [String: String] = [:]
        var settings: [String: String] = [:]
    }

    private func snapshot(_ index: Int) throws -> DeviceSnapshot {
        try withStore(index) { store in
            var result = DeviceSnapshot()
            for tab in try store.tabs.all() {
                result.tabs[tab.id] =
                    "\(tab.name)|\(tab.nameLocked)|\(tab.language)|\(tab.languageLocked)|\(tab.lastModified)|\(tab.content)"
            }
            for clip in try store.clips().entries() where clip.localOnly == nil {
                result.clips[clip.id] = "\(clip.text)|\(clip.timestamp)|\(clip.pinned)"
            }
            for (key, entry) in try store.settings().entries where Settings.definition(key)?.scope == .synced {
                result.settings[key] = entry.value.map { $0.serialized() } ?? "unset"
            }
            return result
        }
    }

    private func knows(_ index: Int, _ change: Change, before step: Int) -> Bool {
        if change.device == index { return change.step < step }
        guard let committed = change.committedAt else { return false }
        return devices[index].completedSyncs.contains { $0 > committed && $0 < step }
    }

    private func violations() throws -> [String] {
        var found: [String] = []
        let snapshots = try devices.indices.map(snapshot)
        for index in devices.indices.dropFirst() where snapshots[index] != snapshots[0] {
            found.append("dev\(index) differs from dev0: \(describeDifference(snapshots[0], snapshots[index]))")
        }
        for index in devices.indices {
            try withStore(index) { store in
                let pending = try store.pending().changes()
                if !pending.isEmpty {
                    found.append(
                        "dev\(index) still has \(pending.count) pending: \(pending.map { "\($0.operation) \($0.key.name.prefix(8))" })")
                }
                let failures = try EngineState.load(from: store).failures
                if !failures.isEmpty { found.append("dev\(index) has failed items: \(failures)") }
            }
        }
        let final = snapshots[0]
        let finalTabs = try withStore(0) { try $0.tabs.all() }
        let allText = finalTabs.map(\.content).joined(separator: "\n")
        let present = Set(allText.split(separator: "\n").map(String.init))
        for line in typed.sorted() where !mayVanish.contains(line) && !present.contains(line) {
            found.append("typed line \(line) is lost")
        }
        for tab in finalTabs where createdTabs.contains(tab.id) {
            let now = TabLabels(tab, before: nil, chosen: [])
            for label in Label.allCases {
                let expected: String
                let reason: String
                switch lastSurvivingChoice(of: tab.id, of: label) {
                case .undecided:
                    continue
                case .chosen(let last) where last.labels?.value(label).hasSuffix("|true") == true:
                    expected = last.labels!.value(label)
                    reason = "its last choice of it (step \(last.step), dev\(last.device)) made it"
                case .chosen, .followsContent:
                    expected = TabLabels.derived(label, of: tab)
                    reason = "it follows the content, which makes it"
                }
                if now.value(label) != expected {
                    found.append("tab \(tab.id.prefix(8))'s \(label) is \(now.value(label)), but \(reason) \(expected)")
                }
            }
        }
        for id in createdTabs.sorted() where final.tabs[id] == nil {
            if let unseen = unseenLabelChange(of: id) {
                found.append(
                    "tab \(id.prefix(8)) is gone, but its \(unseen.labels!.chose(.name) ? "rename" : "language choice") at step \(unseen.step) by dev\(unseen.device) was seen by no removal"
                )
            }
        }
        for removal in tabRemovals where createdTabs.contains(removal.id) && final.tabs[removal.id] != nil {
            let all = changes[RecordKey(.tab, removal.id)] ?? []
            if all.allSatisfy({ $0.step < removal.step && knows(removal.device, $0, before: removal.step) }) {
                found.append(
                    "tab \(removal.id.prefix(8)) removed at step \(removal.step) by dev\(removal.device), which had seen every change, is back"
                )
            }
        }
        for id in clipRemovalsThatStick.sorted() where final.clips[id] != nil {
            found.append("clip \(id.prefix(8)) was removed but is back")
        }
        for id in addedClips.subtracting(removedClips).sorted() where final.clips[id] == nil {
            found.append("clip \(id.prefix(8)) was never removed but is missing")
        }
        for (id, last) in lastPinChange.sorted(by: { $0.key < $1.key }) {
            guard let state = final.clips[id] else { continue }
            let others = (changes[RecordKey(.clip, id)] ?? []).filter { $0.step != last.change.step }
            guard others.allSatisfy({ knows(last.change.device, $0, before: last.change.step) }) else { continue }
            if !state.hasSuffix("|\(last.pinned)") {
                found.append(
                    "clip \(id.prefix(8)): the \(last.pinned ? "pin" : "unpin") at step \(last.change.step), made after every other pin change, did not stick"
                )
            }
        }
        let backendRecords = try withStore(0) { store in
            var names: [String] = []
            let backend = try openBackend(store)
            var token: ChangeToken?
            var moreComing = true
            while moreComing {
                let page = try backend.fetchChanges(since: token, limit: 2000)
                for case .saved(let record) in page.changes { names.append(record.recordName) }
                (token, moreComing) = (page.token, page.moreComing)
            }
            return names
        }
        for id in localClips.sorted() where backendRecords.contains(where: { $0.contains(id) }) {
            found.append("local-only clip \(id.prefix(8)) has a record on the backend")
        }
        for (key, last) in lastSetting.sorted(by: { $0.key < $1.key }) {
            let expected = last.value?.json.serialized() ?? "unset"
            if final.settings[key] != expected {
                found.append("setting \(key) is \(final.settings[key] ?? "absent"), but was last set to \(expected) at step \(last.step)")
            }
        }
        return found
    }

    /// What decides a tab's label.
    enum LabelOutcome {
        /// The choice that stands.
        case chosen(Change)
        /// No choice stands: the label follows the content.
        case followsContent
        /// Not decided: a later removal may have seen a choice already sent and, losing to
        /// concurrent edits, carried it away or not depending on which device synced first.
        case undecided
    }

    /// The choice that decides a tab's name or language: the last one, unless the device that made
    /// it removed the tab before sending it (then the one before). (Commits are known exactly, from
    /// what the backend accepted, so this needs no guess at what a device had fetched.)
    private func lastSurvivingChoice(of id: String, of label: Label) -> LabelOutcome {
        let removals = tabRemovals.filter { $0.id == id }
        let choices = (changes[RecordKey(.tab, id)] ?? []).filter { $0.labels?.chose(label) ?? false }
        for change in choices.sorted(by: { $0.step > $1.step }) {
            let removedUnsent = removals.contains { removal in
                removal.device == change.device && removal.step > change.step && (change.committedAt.map { $0 > removal.step } ?? true)
            }
            if removedUnsent { continue }
            let mayHaveBeenRemoved = removals.contains { removal in
                removal.step > change.step && (change.committedAt.map { $0 < removal.step } ?? false)
            }
            return mayHaveBeenRemoved ? .undecided : .chosen(change)
        }
        return .followsContent
    }

    /// A choice of a tab's name or language that no removal of the tab can have seen and no later
    /// choice of the same labels replaced: it keeps the tab (a content change is checked by its
    /// lines, which may survive in a conflict copy instead).
    private func unseenLabelChange(of id: String) -> Change? {
        let all = changes[RecordKey(.tab, id)] ?? []
        let removals = tabRemovals.filter { $0.id == id }
        return all.first { change in
            guard let labels = change.labels, !labels.changedContent, !labels.chosen.isEmpty else { return false }
            let replaced = Label.allCases.filter(labels.chose).allSatisfy { label in
                all.contains { $0.step > change.step && ($0.labels?.chose(label) ?? false) }
            }
            let mayHaveBeenSeen = removals.contains { removal in
                removal.device == change.device
                    ? change.step < removal.step : (change.committedAt.map { $0 < removal.step } ?? false)
            }
            return !replaced && !mayHaveBeenSeen
        }
    }

    private func describeDifference(_ a: DeviceSnapshot, _ b: DeviceSnapshot) -> String {
        var parts: [String] = []
        for id in Set(a.tabs.keys).union(b.tabs.keys).sorted() where a.tabs[id] != b.tabs[id] {
            parts.append("tab \(id.prefix(8)): \(a.tabs[id] ?? "absent") vs \(b.tabs[id] ?? "absent")")
        }
        for id in Set(a.clips.keys).union(b.clips.keys).sorted() where a.clips[id] != b.clips[id] {
            parts.append("clip \(id.prefix(8)): \(a.clips[id] ?? "absent") vs \(b.clips[id] ?? "absent")")
        }
        if a.settings != b.settings { parts.append("settings \(a.settings) vs \(b.settings)") }
        return parts.joined(separator: "; ")
    }
}

struct SimulationError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

/// Devices sharing a format 1 backend, each with work not sent yet, upgraded one at a time: the
/// first sync of an upgraded device converts the backend to format 2 (same zone, every record
/// kept); a device not upgraded yet refuses the newer format (exit 1, its work kept) until it is.
@Suite struct Format1UpgradeTests {
    /// A format 1 fleet that synced shared data (a tab, clips, a tab stored as an asset), then made
    /// work on every device that is not sent yet: an edit of its own line of the shared tab, a new
    /// tab, a new clip; device 0 also pins a clip and removes another, the last device changes a
    /// synced setting.
    struct Scene {
        let fleet: Fleet
        let shared: String
        let big: String
        let pinned: String
        let removed: String
        static let bigContent = String(repeating: "big tab line\n", count: 75_000)

        init(devices count: Int) {
            fleet = Fleet(count, format1: true)
            shared = fleet[0].output("tab", "new", "--name", "shared", Self.sharedContent(count: count, editedBy: nil))
            big = fleet[0].output("tab", "new", "--name", "big", Self.bigContent)
            pinned = fleet[0].output("clip", "add", "pinned on device 0")
            removed = fleet[0].output("clip", "add", "removed on device 0")
            for index in 0..<count { fleet.enable(index) }
            fleet.converge()
            for index in 0..<count {
                let device = fleet[index]
                _ = device.output("tab", "edit", shared, Self.sharedContent(count: count, editedBy: [index]))
                _ = device.output("tab", "new", "--name", "new on \(index)", "typed on device \(index)")
                _ = device.output("clip", "add", "clip of device \(index)")
            }
            _ = fleet[0].output("clip", "pin", pinned)
            _ = fleet[0].output("clip", "rm", removed)
            _ = fleet[count - 1].output("settings", "set", "clipboard.retention", "2w")
        }

        var count: Int { fleet.devices.count }

        /// The shared tab: a line per device, apart from each other so that their edits merge.
        static func sharedContent(count: Int, editedBy editors: Set<Int>?) -> String {
            (0..<count).flatMap { index in
                [editors?.contains(index) == true ? "line \(index) edited on device \(index)" : "line \(index)", "kept \(index)"]
            }.joined(separator: "\n")
        }

        /// Every device holds everything every device typed.
        func expectEverythingEverywhere(sourceLocation: SourceLocation = #_sourceLocation) throws {
            try fleet.expectConverged(sourceLocation: sourceLocation)
            let tabs = try fleet.tabs(0)
            #expect(
                tabs[shared] == "shared|" + Self.sharedContent(count: count, editedBy: Set(0..<count)),
                "\(tabs[shared] ?? "no shared tab")", sourceLocation: sourceLocation)
            #expect(tabs[big] == "big|" + Self.bigContent, sourceLocation: sourceLocation)
            for index in 0..<count {
                #expect(tabs.values.contains("new on \(index)|typed on device \(index)"), sourceLocation: sourceLocation)
            }
            #expect(tabs.count == 2 + count, sourceLocation: sourceLocation)
            let clips = try fleet.clips(0)
            #expect(clips[pinned] == "pinned on device 0|true", sourceLocation: sourceLocation)
            #expect(clips[removed] == nil, sourceLocation: sourceLocation)
            for index in 0..<count {
                #expect(clips.values.contains("clip of device \(index)|false"), sourceLocation: sourceLocation)
            }
            #expect(fleet[0].output("settings", "get", "clipboard.retention") == "2w", sourceLocation: sourceLocation)
        }

        /// The backend is format 2 in the zone it had, with nothing of format 1 left.
        func expectConverted(zone: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let path = fleet.backendPath
            let document = try JSONValue.parse(try #require(try FileSystem.read(path + "/zone.json")))
            #expect(document["format"]?.int64Value == 4, sourceLocation: sourceLocation)
            #expect(document["zoneID"]?.stringValue == zone, sourceLocation: sourceLocation)
            for leftover in ["state.json", "lock", "journal", "assets"] {
                #expect(!FileSystem.exists(path + "/" + leftover), "format 1's \(leftover) is left", sourceLocation: sourceLocation)
            }
            for type in try FileSystem.list(path + "/records") {
                for file in try fannedOutRecordFiles(in: path + "/records/" + type) {
                    #expect(
                        ReplicatedLayout.recordFile(named: FileSystem.baseName(file)) != nil, "records/\(type)/\(file) is not format 4's",
                        sourceLocation: sourceLocation)
                }
            }
        }

        func zoneID() throws -> String { try DirectoryBackend(path: fleet.backendPath).zone().zoneID }

        /// What `sync status --json` says is waiting to be sent, by type.
        func pending(_ index: Int) throws -> [String: Int64] {
            let status = try JSONValue.parse(fleet[index].output("sync", "status", "--json"))
            guard case .object(let counts)? = status["pending"] else { return [:] }
            return Dictionary(uniqueKeysWithValues: counts.map { ($0.0, $0.1.int64Value ?? -1) })
        }

        /// How many changes the last logged sync of device `index` sent.
        func lastPushed(_ index: Int) throws -> Int64? {
            try JSONValue.parse(fleet[index].output("sync", "log", "--json")).arrayValue?.last?["pushed"]?.int64Value
        }
    }

    @Test(arguments: [2, 3])
    func devicesUpgradedOneByOneKeepEverythingTyped(devices count: Int) throws {
        let scene = Scene(devices: count)
        let fleet = scene.fleet
        let zone = try scene.zoneID()
        let waiting = try (0..<count).map { try scene.pending($0) }

        try fleet[0].runsOnlyFormat1(false)
        fleet.sync(0)
        try scene.expectConverted(zone: zone)
        // Only what was waiting went: the records the backend already held are not sent again.
        #expect(try scene.lastPushed(0) == waiting[0].values.reduce(0, +))

        for index in 1..<count {
            // Not upgraded yet: the newer format is refused, not retried, and nothing is written or lost.
            let (status, _, err) = fleet[index].inProcess(["sync"])
            #expect(status == ExitCode.failure, "\(err)")
            #expect(err.contains("format 4, newer than this version understands"), "\(err)")
            #expect(try scene.pending(index) == waiting[index])
        }
        for index in 1..<count {
            try fleet[index].runsOnlyFormat1(false)
            fleet.sync(index)
            #expect(try scene.lastPushed(index) == waiting[index].values.reduce(0, +))
        }
        fleet.converge()
        try scene.expectEverythingEverywhere()
        try scene.expectConverted(zone: zone)
    }

    /// A device that enables sync with an existing format 1 backend converts it, and the devices
    /// that wrote it follow once upgraded.
    @Test func aNewDeviceEnablingAFormat1BackendConvertsIt() throws {
        let scene = Scene(devices: 2)
        let zone = try scene.zoneID()
        let newcomer = Device()
        _ = newcomer.output("clip", "add", "from the newcomer")
        _ = newcomer.output("sync", "enable", scene.fleet.backendPath)
        try scene.expectConverted(zone: zone)
        #expect(try JSONValue.parse(newcomer.output("tab", "ls", "--json")).arrayValue?.count == 2)
        for index in 0..<2 {
            try scene.fleet[index].runsOnlyFormat1(false)
            scene.fleet.sync(index)
        }
        scene.fleet.converge()
        try scene.expectEverythingEverywhere()
        #expect(try scene.fleet.clips(0).values.contains("from the newcomer|false"))
    }

    /// `sync compact` opens the backend as `sync` does: it converts it too.
    @Test func compactingAFormat1BackendConvertsIt() throws {
        let scene = Scene(devices: 2)
        let zone = try scene.zoneID()
        try scene.fleet[1].runsOnlyFormat1(false)
        _ = scene.fleet[1].output("sync", "compact")
        try scene.expectConverted(zone: zone)
        for index in 0..<2 { try scene.fleet[index].runsOnlyFormat1(false) }
        scene.fleet.converge()
        try scene.expectEverythingEverywhere()
    }
}

import Testing

@testable import ItsypadSupport

/// Someone without the key who writes the remote's files directly on the server (here behind
/// `rclone serve webdav`) gets what a keyless writer of a folder gets (`KeylessWriterTests`, whose
/// cases these are): whatever each sync reports (0, 1 or 75, with a reason), no synced item is
/// lost on either device, and a zone.json changed under the same zone id is refused (exit 1).
@Suite(.needs(RcloneServer.Kind.rcloneWebDAV.tools))
struct RcloneKeylessWriterTests {
    /// Two devices, each with a clip of its own, synced through the server.
    static func fleet() throws -> RcloneFleet {
        let fleet = try RcloneFleet(.rcloneWebDAV, devices: 2)
        try #require(try fleet.syncUntilEveryDeviceHolds(texts))
        return fleet
    }

    static let texts = ["clip of device 0", "clip of device 1"]

    /// A device that joins now, with the fleet's key, gets every clip.
    static func expectANewcomerGetsEveryClip(_ fleet: RcloneFleet, _ label: String) throws {
        let newcomer = Device()
        let key = try fleet.devices[0].run("sync", "key", "show").stdout
        _ = try fleet.run(newcomer, "sync", "enable", fleet.server.location, "--key", "-", stdin: key)
        let clips = try fleet.clips(newcomer)
        for text in texts { #expect(clips.contains(text), "\(label): the server holds \(text)") }
    }

    /// Both devices sync twice: none traps or hangs, each exits 0, 1 or 75 with a reason, and
    /// both keep every clip. Each of these fetches lists the whole remote, as the periodic whole
    /// listing does: what a keyless writer changes outside the journals is seen only there.
    static func syncBothLosingNothing(_ fleet: RcloneFleet, _ label: String) throws -> [RunResult] {
        var results: [RunResult] = []
        for _ in 0..<2 {
            for device in fleet.devices {
                let result = try fleet.run(device, "sync", environment: ["ITSYPAD_RCLONE_FULL_LISTING": "0"])
                #expect(result.signal == nil && [0, 1, 75].contains(result.status), "\(label): \(result.status) \(result.stderr)")
                if result.status != 0 { #expect(!result.stderr.isEmpty, "\(label): a failure says why") }
                results.append(result)
            }
        }
        for device in fleet.devices {
            let clips = try fleet.clips(device)
            for text in texts { #expect(clips.contains(text), "\(label): \(text) lost") }
        }
        return results
    }

    @Test(arguments: KeylessWriterTests.zoneEdits.indices)
    func aChangedZoneFileLosesNothing(_ index: Int) throws {
        let (label, key, value) = KeylessWriterTests.zoneEdits[index]
        let fleet = try Self.fleet()
        try KeylessWriterTests.Fleet.editJSON(fleet.server.backend + "/zone.json", KeylessWriterTests.set(key, value))
        let results = try Self.syncBothLosingNothing(fleet, label)
        if key != "zoneID" { #expect(results.allSatisfy { $0.status == 1 }, "\(label): \(results.map(\.status))") }
    }

    @Test(arguments: KeylessWriterTests.journalEdits)
    func damagedJournalsLoseNothing(_ how: String) throws {
        let fleet = try Self.fleet()
        try KeylessWriterTests.damageJournals(in: fleet.server.backend, how)
        _ = try Self.syncBothLosingNothing(fleet, how)
    }

    @Test(arguments: KeylessWriterTests.removals.indices)
    func removedFoldersLoseNothingAndAreSentAgain(_ index: Int) throws {
        let (label, folders) = KeylessWriterTests.removals[index]
        let fleet = try Self.fleet()
        for folder in folders { _ = try Process.run("/bin/rm", ["-rf", fleet.server.backend + "/" + folder]) }
        _ = try Self.syncBothLosingNothing(fleet, label)
        // What the server lost is sent again: a device that joins now gets every clip.
        try Self.expectANewcomerGetsEveryClip(fleet, label)
    }

    /// A line appended to a device's journal on the server reads, to that device, as another data
    /// directory writing as it: it takes a new device id and sends its data again, and nothing is
    /// lost; a newcomer gets every clip.
    @Test func aLineAddedToADevicesJournalMakesItANewDeviceAndLosesNothing() throws {
        let fleet = try Self.fleet()
        let before = try fleet.run(fleet.devices[0], "sync", "status").stdout
        let device = try #require(try FileSystem.list(fleet.server.backend + "/devices").first { before.contains("(\($0))\n") })
        let journal = fleet.server.backend + "/devices/\(device)/journal"
        let segment = journal + "/" + (try #require(try FileSystem.list(journal).max()))
        let bytes = try #require(try FileSystem.read(segment))
        try FileSystem.writeAtomically(segment, bytes + Array("{\"seq\":999}\n".utf8))
        let results = try Self.syncBothLosingNothing(fleet, "a line added")
        #expect(
            results.contains { $0.stderr.contains("\(device)/journal") && $0.stderr.contains("never wrote") }, "\(results.map(\.stderr))")
        #expect(try !fleet.run(fleet.devices[0], "sync", "status").stdout.contains("(\(device))\n"), "device 0 syncs under a new id")
        try Self.expectANewcomerGetsEveryClip(fleet, "a line added")
    }

    /// Names that are no part of the backend (a temporary file, a conflict copy, a file where a
    /// folder belongs) are never transferred, and stop nobody.
    @Test func foreignNamesAreLeftAlone() throws {
        let fleet = try Self.fleet()
        let device = try #require(try FileSystem.list(fleet.server.backend + "/devices").first)
        let planted = [
            "devices/\(device)/notes.json", ".tmp-0123", "records/ClipboardEntry/zz.json", "notes.txt",
            "devices/\(device)/device.sync-conflict-20260101-000000-ABCDEFG.json",
        ]
        for path in planted {
            try FileSystem.makeDirectory(FileSystem.directoryName(fleet.server.backend + "/" + path))
            try FileSystem.writeAtomically(fleet.server.backend + "/" + path, Array("planted".utf8))
        }
        let results = try Self.syncBothLosingNothing(fleet, "foreign names")
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
        for other in fleet.devices {
            let mirror = other.dataDir + "/sync/rclone/backend/"
            for path in planted { #expect(!FileSystem.exists(mirror + path), "\(path) was downloaded") }
        }
    }
}

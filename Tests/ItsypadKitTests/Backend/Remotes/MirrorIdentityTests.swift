import Testing

@testable import ItsypadBackend
@testable import ItsypadSupport

/// The check every remote gets before a fetch (`MirrorIdentity`): a mirror copied with its data
/// directory that holds this device's folder is told, again until the device id changes; a mirror
/// made anew, one made by an earlier version and a copy seen under a new device id are not.
struct MirrorIdentityTests {
    let scratch = TemporaryDirectory()

    /// A remote's folder `name` with its mirror, holding `device`'s device.json when given.
    func remoteFolder(_ name: String, holding device: String? = nil) throws -> MirrorIdentity {
        let mirror = scratch.file(name) + "/backend"
        try FileSystem.makeDirectory(mirror + "/devices/" + (device ?? "none"))
        if let device { try FileSystem.writeAtomically(mirror + "/devices/\(device)/device.json", Array("{}".utf8)) }
        return MirrorIdentity(mirror: mirror)
    }

    func copy(_ from: String, to: String) throws -> MirrorIdentity {
        #expect(try Process.run("/bin/cp", ["-a", scratch.file(from), scratch.file(to)]).status == 0)
        return MirrorIdentity(mirror: scratch.file(to) + "/backend")
    }

    @Test func aCopiedMirrorHoldingThisDevicesFolderIsToldUntilTheDeviceIDChanges() throws {
        let original = try remoteFolder("a", holding: "A")
        try original.check(as: "A")
        let copy = try copy("a", to: "copy")
        #expect(throws: ReplicationError.self) { try copy.check(as: "A") }
        #expect(throws: ReplicationError.self) { try copy.check(as: "A") }
        // As a new device the copy's mirror holds only others' folders: it is its own from then on.
        try copy.check(as: "N")
        try copy.check(as: "N")
        try original.check(as: "A")
    }

    @Test func aMirrorRecordedByNoFileIsTakenAsItsOwnThenToldWhenCopied() throws {
        // Made by a version before the record: nothing tells a copy apart yet.
        let original = try remoteFolder("a", holding: "A")
        #expect(!FileSystem.exists(original.file))
        try original.check(as: "A")
        #expect(FileSystem.exists(original.file))
        #expect(throws: ReplicationError.self) { try copy("a", to: "copy").check(as: "A") }
    }

    @Test func aMirrorMadeAnewIsNoCopy() throws {
        let original = try remoteFolder("a", holding: "A")
        try original.check(as: "A")
        _ = try Process.run("/bin/rm", ["-rf", original.mirror])
        try FileSystem.makeDirectory(original.mirror)
        try original.check(as: "A")
        // The fetch then brings this device's folder back from the remote.
        try FileSystem.makeDirectory(original.mirror + "/devices/A")
        try FileSystem.writeAtomically(original.mirror + "/devices/A/device.json", Array("{}".utf8))
        try original.check(as: "A")
    }

    @Test func aMissingMirrorIsLeftAlone() throws {
        let missing = MirrorIdentity(mirror: scratch.file("none") + "/backend")
        try missing.check(as: "A")
        #expect(!FileSystem.exists(missing.file))
    }
}

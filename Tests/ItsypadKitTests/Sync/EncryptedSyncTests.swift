import Testing

@testable import ItsypadBackend
@testable import ItsypadCLI
@testable import ItsypadStore
@testable import ItsypadSupport
@testable import ItsypadSync

/// An end-to-end encrypted backend: nothing typed reaches it in the clear, and a wrong or
/// missing key, or records changed or moved in the backend, are refused with nothing lost.
@Suite struct EncryptedSyncTests {
    /// Every file of the backend that contains one of `texts` (grep -F: none found exits 1).
    func filesContaining(_ texts: [String], in fleet: Fleet) throws -> String {
        let result = try Process.run("/usr/bin/grep", ["-rlF"] + texts.flatMap { ["-e", $0] } + [fleet.backendPath])
        #expect(result.status <= 1, "grep failed: \(result.stderr)")
        return result.stdout
    }

    /// Every file of the backend with its content, to show that nothing changed.
    func snapshot(_ fleet: Fleet) throws -> String {
        try Process.run(
            "/bin/sh", ["-c", "find \"$0\" -type f | sort | while read -r f; do echo \"$f\"; cat \"$f\"; done", fleet.backendPath]
        ).stdout
    }

    /// Replaces `old` by `new` in every backend file that holds it (records and journal alike).
    func replaceInBackend(_ old: String, _ new: String, fleet: Fleet) throws {
        for path in try filesContaining([old], in: fleet).split(separator: "\n").map(String.init) {
            let text = String(decoding: try #require(try FileSystem.read(path)), as: UTF8.self)
            try FileSystem.writeAtomically(
                path, Array(text.split(separator: old, omittingEmptySubsequences: false).joined(separator: new).utf8), mode: 0o644)
        }
    }

    /// The sealed field of the tab's record file (its one device's version file).
    func sealedField(ofTab id: String, in fleet: Fleet) throws -> String {
        let directory = fleet.backendPath + "/records/ScratchTab"
        let file = try #require(try fannedOutRecordFiles(in: directory).first { FileSystem.baseName($0).hasPrefix(id + ".") })
        let record = try JSONCoding.decode(VersionDocument.self, from: try #require(try FileSystem.read(directory + "/" + file))).record
        guard case .string(let sealed)? = record.fields[RecordCipher.sealedFieldName] else { throw CancellationError() }
        return sealed
    }

    @Test
    func nothingTypedReachesTheBackendInTheClear() throws {
        let fleet = Fleet(2, backend: .encryptedDirectory)
        let a = fleet[0], b = fleet[1]
        _ = a.output("tab", "new", "--name", "tab-name-unique-1", "first-tab-line-unique\nsecond-tab-line-unique")
        _ = a.output("clip", "add", "clip-text-unique-2")
        _ = a.output("settings", "set", "clipboard.ignore", "ignored-pattern-unique-3")
        _ = a.output("tab", "new", "--name", "big", String(repeating: "large-tab-content-unique-4 ", count: 60_000))
        fleet.enable(0)
        fleet.enable(1)
        _ = b.output("clip", "add", "clip-text-unique-5")
        fleet.converge()
        #expect(b.output("tab", "show", "tab-name-unique-1") == "first-tab-line-unique\nsecond-tab-line-unique")
        #expect(b.output("settings", "get", "clipboard.ignore").contains("ignored-pattern-unique-3"))
        try fleet.expectConverged()
        let typed = [
            "tab-name-unique-1", "first-tab-line-unique", "second-tab-line-unique", "clip-text-unique-2",
            "ignored-pattern-unique-3", "large-tab-content-unique-4", "clip-text-unique-5", "clipboard.ignore", "dev0", "dev1",
        ]
        #expect(try filesContaining(typed, in: fleet).isEmpty)
        #expect(!FileSystem.exists(fleet.backendPath + "/records/Setting/clipboard.ignore.json"))
    }

    @Test
    func anEncryptedBackendIsFormat3SoThatOlderVersionsWriteNothingToIt() throws {
        let fleet = Fleet(1, backend: .encryptedDirectory)
        fleet.enable(0)
        let zone = try ZoneDocument.read(try #require(try FileSystem.read(fleet.backendPath + "/zone.json")), path: "zone.json")
        #expect(zone.format == ZoneDocument.encryptedFormat && zone.isEncrypted)
        let members = try JSONValue.parse(try #require(try FileSystem.read(fleet.backendPath + "/zone.json")))
        #expect(members["layout"]?.int64Value == 4 && members["encryption"] == .string(ZoneDocument.encryptionName))
    }

    @Test
    func aDeviceWithoutTheKeyIsToldHowToEnterItAndWritesNothing() throws {
        let fleet = Fleet(2, backend: .encryptedDirectory)
        _ = fleet[0].output("tab", "new", "kept")
        fleet.enable(0)
        let before = try snapshot(fleet)
        let (status, _, err) = fleet[1].inProcess(["sync", "enable", fleet.backendPath])
        #expect(status == 1)
        #expect(err.contains("has no sync key") && err.contains("--key -"))
        #expect(fleet[1].inProcess(["settings", "get", "sync.backend"]).1.trimmingNewline.isEmpty)
        #expect(try snapshot(fleet) == before)
    }

    @Test
    func aWrongKeyIsRefusedBeforeAnythingIsWritten() throws {
        let fleet = Fleet(2, backend: .encryptedDirectory)
        let other = Fleet(1, backend: .encryptedDirectory)
        _ = fleet[0].output("tab", "new", "kept")
        fleet.enable(0)
        other.enable(0)
        let before = try snapshot(fleet)
        let wrongKey = other[0].output("sync", "key", "show")
        let (status, _, err) = fleet[1].inProcess(["sync", "enable", fleet.backendPath, "--key", "-"], stdin: wrongKey)
        #expect(status == 1)
        #expect(err.contains("does not open"))
        #expect(!FileSystem.exists(DataDirectoryLayout(root: fleet[1].dataDir).syncKey))

        // A device whose key no longer matches (the backend was re-created with another key) stops before writing.
        _ = try Process.run("/bin/cp", [other.backendPath + "/zone.json", fleet.backendPath + "/zone.json"])
        let changed = try snapshot(fleet)
        _ = fleet[0].output("tab", "new", "typed meanwhile")
        let (syncStatus, _, syncErr) = fleet[0].inProcess(["sync"])
        #expect(syncStatus == 1)
        #expect(syncErr.contains("does not open this backend") && syncErr.contains("--key -"))
        #expect(try snapshot(fleet) == changed)
        #expect(try fleet.tabs(0).count == 2)
        #expect(before != changed)
    }

    @Test
    func aTypoInTheRecoveryKeyNamesItsGroup() throws {
        let fleet = Fleet(2, backend: .encryptedDirectory)
        fleet.enable(0)
        var key = Array(fleet[0].output("sync", "key", "show"))
        key[7] = key[7] == "A" ? "B" : "A"
        let (status, _, err) = fleet[1].inProcess(["sync", "enable", fleet.backendPath, "--key", "-"], stdin: String(key))
        #expect(status == 1)
        #expect(err.contains("group 2"), "\(err)")
        #expect(!FileSystem.exists(DataDirectoryLayout(root: fleet[1].dataDir).syncKey))
    }

    @Test
    func tamperedAndSwappedRecordsAreSkippedAndReportedNeverApplied() throws {
        let fleet = Fleet(2, backend: .encryptedDirectory)
        let a = fleet[0], b = fleet[1]
        let first = a.output("tab", "new", "first tab")
        let second = a.output("tab", "new", "second tab")
        let third = a.output("tab", "new", "third tab")
        _ = a.output("clip", "add", "a clip")
        fleet.enable(0)
        // Tampered: one character of the ciphertext changed.
        let sealed = try sealedField(ofTab: third, in: fleet)
        var characters = Array(sealed)
        let middle = characters.count / 2
        characters[middle] = characters[middle] == "A" ? "B" : "A"
        try replaceInBackend(sealed, String(characters), fleet: fleet)
        // Swapped: two records' sealed fields exchanged.
        let (sealedFirst, sealedSecond) = (
            try sealedField(ofTab: first, in: fleet), try sealedField(ofTab: second, in: fleet)
        )
        try replaceInBackend(sealedFirst, "SWAP-PLACEHOLDER", fleet: fleet)
        try replaceInBackend(sealedSecond, sealedFirst, fleet: fleet)
        try replaceInBackend("SWAP-PLACEHOLDER", sealedSecond, fleet: fleet)

        let key = a.output("sync", "key", "show")
        let (status, _, err) = b.inProcess(["sync", "enable", fleet.backendPath, "--key", "-"], stdin: key)
        #expect(status == 1)
        #expect(err.contains("does not verify"))
        for id in [first, second, third] {
            #expect(err.contains(id + "."), "\(id) not reported: \(err)")
            #expect(b.inProcess(["tab", "show", id]).0 == 1, "a refused record was applied")
        }
        #expect(b.output("clip", "ls").contains("a clip"), "the records that verify still arrive")
        // Quarantined like any malformed record: named in status and log, and checked again (still refused) on the next sync.
        let report = b.output("sync", "status")
        #expect(report.contains("quarantined: 3"), "\(report)")
        #expect([first, second, third].allSatisfy { report.contains($0 + ".") }, "\(report)")
        #expect(b.output("sync", "log").contains("does not verify"))
        #expect(b.inProcess(["sync"]).0 == 1)
        #expect(b.inProcess(["tab", "show", third]).0 == 1)
        // Nothing lost where it was typed: a keeps its tabs (and its next sync re-sends nothing over them).
        _ = a.inProcess(["sync"])
        #expect(
            try Set(fleet.tabs(0).values.map { $0.split(separator: "|").last.map(String.init) ?? "" }) == [
                "first tab", "second tab", "third tab",
            ])
    }

    @Test
    func aReplayedOlderVersionIsRefusedAndTheNewerOneKept() throws {
        let fleet = Fleet(2, backend: .encryptedDirectory)
        let a = fleet[0], b = fleet[1]
        let tab = a.output("tab", "new", "version one")
        fleet.enable(0)
        fleet.enable(1)
        let versionOne = try sealedField(ofTab: tab, in: fleet)
        _ = a.output("tab", "edit", tab, "version two")
        fleet.sync(0)
        fleet.sync(1)
        #expect(b.output("tab", "show", tab) == "version two")
        // A third save whose sealed fields an attacker replaces with the first version's (which verify).
        _ = a.output("tab", "edit", tab, "version three")
        fleet.sync(0)
        try replaceInBackend(try sealedField(ofTab: tab, in: fleet), versionOne, fleet: fleet)
        let (status, _, err) = b.inProcess(["sync"])
        #expect(status == 1)
        // The sealed fields are bound to the version's vector.
        #expect(err.contains("ScratchTab/") && err.contains(tab) && err.contains("does not verify"), "\(err)")
        #expect(b.output("tab", "show", tab) == "version two")
        #expect(a.output("tab", "show", tab) == "version three")
    }

    /// A tab is read together with its tombstone: a tombstone that does not verify
    /// is skipped (the engine does not sync tombstones as records of their own, so it names none),
    /// and the tab's own verified removal and every other record still arrive.
    @Test func aTamperedTombstoneBlocksNothingElse() throws {
        let fleet = Fleet(2, backend: .encryptedDirectory)
        let a = fleet[0], b = fleet[1]
        let tab = a.output("tab", "new", "removed tab")
        fleet.enable(0)
        fleet.enable(1)
        _ = a.output("tab", "rm", tab)
        _ = a.output("clip", "add", "added after the removal")
        fleet.sync(0)
        let directory = fleet.backendPath + "/records/" + RecordMapping.tombstoneType
        let file = try #require(try fannedOutRecordFiles(in: directory).first)
        let record = try JSONCoding.decode(VersionDocument.self, from: try #require(try FileSystem.read(directory + "/" + file))).record
        guard case .string(let sealed)? = record.fields[RecordCipher.sealedFieldName] else { throw CancellationError() }
        var changed = Array(sealed)
        changed[changed.count / 2] = changed[changed.count / 2] == "A" ? "B" : "A"
        try replaceInBackend(sealed, String(changed), fleet: fleet)

        let (status, _, err) = b.inProcess(["sync"])
        #expect(status == 0, "\(err)")
        #expect(b.output("clip", "ls").contains("added after the removal"))
        #expect(b.inProcess(["tab", "show", tab]).0 == 1, "the verified removal was not applied")
    }

    func zoneID(_ fleet: Fleet) throws -> String {
        try ZoneDocument.read(try #require(try FileSystem.read(fleet.backendPath + "/zone.json")), path: "zone.json").zoneID
    }

    @Test
    func rotatingTheKeyReencryptsEverythingAndTheOtherDevicesEnterTheNewKeyWithNothingLost() throws {
        let fleet = Fleet(2, backend: .encryptedDirectory)
        let a = fleet[0], b = fleet[1]
        _ = a.output("tab", "new", "--name", "tab-name-unique-1", "tab-line-unique-2")
        _ = b.output("clip", "add", "clip-text-unique-3")
        fleet.enable(0)
        fleet.enable(1)
        fleet.converge()
        let oldKey = a.output("sync", "key", "show")
        let oldZone = try zoneID(fleet)
        // Typed on b and not yet sent when a rotates.
        _ = b.output("clip", "add", "clip-typed-meanwhile-unique-4")

        let (status, out, err) = a.inProcess(["sync", "key", "rotate"])
        #expect(status == 0, "\(err)")
        #expect(out.contains("sync enable \(fleet.backendPath) --key -"), "\(out)")
        let newKey = a.output("sync", "key", "show")
        #expect(newKey != oldKey)
        #expect(try zoneID(fleet) != oldZone)
        #expect(try FileSystem.list(fleet.backend.path, includingHidden: true) == ["backend"], "nothing left beside the backend")
        #expect(!FileSystem.exists(DataDirectoryLayout(root: a.dataDir).nextSyncKey))
        #expect(try filesContaining(["tab-name-unique-1", "tab-line-unique-2", "clip-text-unique-3"], in: fleet).isEmpty)
        #expect(a.inProcess(["sync"]).0 == 0)

        // b's key no longer opens the backend: it is told how to enter the new one, and writes nothing.
        let before = try snapshot(fleet)
        let (refused, _, message) = b.inProcess(["sync"])
        #expect(refused == 1)
        #expect(message.contains("rotated") && message.contains("--key -"), "\(message)")
        #expect(try snapshot(fleet) == before)
        #expect(b.output("clip", "ls").contains("clip-typed-meanwhile-unique-4"))
        // The old key opens nothing any more.
        let newcomer = Device()
        #expect(newcomer.inProcess(["sync", "enable", fleet.backendPath, "--key", "-"], stdin: oldKey).0 == 1)

        let (joined, _, joinError) = b.inProcess(["sync", "enable", fleet.backendPath, "--key", "-"], stdin: newKey)
        #expect(joined == 0, "\(joinError)")
        fleet.converge()
        try fleet.expectConverged()
        #expect(a.output("clip", "ls").contains("clip-typed-meanwhile-unique-4"))
        #expect(b.output("tab", "ls").contains("tab-name-unique-1"))
        #expect(try filesContaining(["clip-typed-meanwhile-unique-4", "tab-line-unique-2"], in: fleet).isEmpty)
    }

    /// Where a crash may stop a rotation: after the new zone was filled beside the backend, between
    /// moving the backend aside and the new zone in, and after that but before the new key replaced the old.
    enum RotationStop: String, CaseIterable { case beforeReplacing, betweenRenames, beforeTheKeyIsReplaced }

    @Test(arguments: RotationStop.allCases)
    func theNextSyncFinishesOrUndoesAnInterruptedRotation(_ stop: RotationStop) throws {
        let fleet = Fleet(1, backend: .encryptedDirectory)
        let a = fleet[0]
        _ = a.output("tab", "new", "kept")
        fleet.enable(0)
        let oldKey = a.output("sync", "key", "show")
        let directory = BackendReplacement(path: fleet.backendPath, lockTimeout: 1)
        let newKey = try SecretBytes.random(count: RecordCipher.masterKeyByteCount)
        let cipher = try RecordCipher(masterKey: newKey)
        try KeyFile.write(newKey, to: DataDirectoryLayout(root: a.dataDir).nextSyncKey)
        _ = try BackendOpener.open(
            directory.replacementPath, for: DataStore(path: a.dataDir, lockTimeout: 1), cipher: cipher, lockTimeout: 1
        ).createZoneIfNeeded()
        switch stop {
        case .beforeReplacing: break
        case .betweenRenames: try FileTree(root: fleet.backend.path).rename(fleet.backendPath, to: directory.retiredPath)
        case .beforeTheKeyIsReplaced:
            try directory.replace(expecting: try #require(try SyncKeys.existingZone(at: fleet.backendPath)))
        }
        let (status, _, err) = a.inProcess(["sync"])
        #expect(status == 0, "\(err)")
        #expect(a.output("sync", "key", "show") == (stop == .beforeReplacing ? oldKey : RecoveryKey.format(newKey)))
        #expect(!FileSystem.exists(DataDirectoryLayout(root: a.dataDir).nextSyncKey))
        #expect(!FileSystem.exists(directory.replacementPath))
        #expect(a.output("tab", "ls").contains("kept"))
        #expect(a.output("sync", "status").contains("pending:    0 tabs, 0 clips, 0 settings"))
    }
}

import Testing

@testable import ItsypadBackend
@testable import ItsypadStore
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// A git remote's backend is end-to-end encrypted unless asked otherwise: its history keeps
/// every byte ever pushed, so none of what a user types may reach it in the clear.
@Suite(.tags(.git), .needs(["git"]))
struct EncryptedGitRemoteTests {
    let remote: BareRepository
    let laptop = Device()
    let desktop = Device()
    var url: String { "git:" + remote.path }

    init() throws {
        remote = try BareRepository()
    }

    @discardableResult
    func succeed(_ device: Device, _ arguments: String..., stdin: String? = nil) throws -> String {
        let result = try device.runArguments(arguments, stdin: stdin.map { Array($0.utf8) })
        try #require(result.status == 0, "\(arguments.joined(separator: " ")): exit \(result.status): \(result.stderr)")
        return result.stdout
    }

    func recoveryKey(_ device: Device) throws -> String { try succeed(device, "sync", "key", "show") }

    /// The itsypad branch's tip in the bare repository, nil before the first push.
    func tip() throws -> String? {
        let result = try Process.run("/usr/bin/git", ["--git-dir=" + remote.path, "rev-parse", "-q", "--verify", "itsypad"])
        return result.status == 0 ? result.stdout : nil
    }

    /// Every object in the bare repository, decompressed: commits, trees and file contents.
    func everyObject() throws -> String {
        try BareRepository.git(["--git-dir=" + remote.path, "cat-file", "--batch-all-objects", "--batch"])
    }

    func zoneIsEncrypted() throws -> Bool {
        try BareRepository.git(["--git-dir=" + remote.path, "show", "itsypad:zone.json"]).contains(ZoneDocument.encryptionName)
    }

    @Test func twoDevicesConvergeAndNothingTypedReachesTheRemoteInTheClear() throws {
        try succeed(laptop, "settings", "set", "device.name", "laptop-name-unique-0")
        try succeed(laptop, "tab", "new", "--name", "tab-name-unique-1", "first-line-unique-2\nsecond-line-unique-3")
        try succeed(laptop, "clip", "add", "clip-text-unique-4")
        try succeed(laptop, "settings", "set", "clipboard.ignore", "ignored-pattern-unique-5")
        try succeed(laptop, "sync", "enable", url)
        #expect(try zoneIsEncrypted())

        try succeed(desktop, "settings", "set", "device.name", "desktop-name-unique-6")
        try succeed(desktop, "clip", "add", "clip-text-unique-7")
        try succeed(desktop, "sync", "enable", url, "--key", "-", stdin: try recoveryKey(laptop))
        #expect(try succeed(desktop, "tab", "show", "tab-name-unique-1") == "first-line-unique-2\nsecond-line-unique-3")
        #expect(try succeed(desktop, "clip", "ls").contains("clip-text-unique-4"))
        #expect(try succeed(desktop, "settings", "get", "clipboard.ignore").contains("ignored-pattern-unique-5"))
        try succeed(desktop, "tab", "edit", "tab-name-unique-1", "edited-on-desktop-unique-8")
        try succeed(desktop, "sync")
        try succeed(laptop, "sync")
        #expect(try succeed(laptop, "clip", "ls").contains("clip-text-unique-7"))
        #expect(try succeed(laptop, "tab", "show", "tab-name-unique-1") == "edited-on-desktop-unique-8")

        let objects = try everyObject()
        #expect(objects.contains("zone.json") && objects.contains("itsypad sync on "), "the scan reads the repository's objects")
        let typed = [
            "laptop-name-unique-0", "tab-name-unique-1", "first-line-unique-2", "second-line-unique-3", "clip-text-unique-4",
            "ignored-pattern-unique-5", "desktop-name-unique-6", "clip-text-unique-7", "edited-on-desktop-unique-8", "clipboard.ignore",
        ]
        #expect(typed.filter(objects.contains).isEmpty)
    }

    @Test func joiningWithoutTheKeySaysHowAndWritesNothing() throws {
        try succeed(laptop, "sync", "enable", url)
        let before = try tip()
        try succeed(desktop, "clip", "add", "kept on the desktop")
        let result = try desktop.run("sync", "enable", url)
        #expect(result.status == 1)
        #expect(
            result.stderr.contains("\(url) holds an encrypted backend") && result.stderr.contains("'itsypad sync enable \(url) --key -'"),
            "\(result.stderr)")
        #expect(try tip() == before)
        #expect(try desktop.run("settings", "get", "sync.backend").stdout.trimmingNewline.isEmpty)
        #expect(!FileSystem.exists(DataDirectoryLayout(root: desktop.dataDir).syncKey))
        #expect(try succeed(desktop, "clip", "ls").contains("kept on the desktop"))
    }

    @Test func aWrongKeyIsRefusedWithNothingWritten() throws {
        try succeed(laptop, "sync", "enable", url)
        let stranger = Device()
        let otherRemote = try BareRepository()
        try succeed(stranger, "sync", "enable", "git:" + otherRemote.path)
        let before = try tip()
        let result = try desktop.run("sync", "enable", url, "--key", "-", stdin: try recoveryKey(stranger))
        #expect(result.status == 1)
        #expect(result.stderr.contains("that recovery key does not open \(url) (nothing was changed)"), "\(result.stderr)")
        #expect(try tip() == before)
        #expect(try desktop.run("settings", "get", "sync.backend").stdout.trimmingNewline.isEmpty)
        #expect(!FileSystem.exists(DataDirectoryLayout(root: desktop.dataDir).syncKey))
    }

    @Test func noEncryptCreatesAnUnencryptedBackendThatOthersJoinWithoutAKey() throws {
        try succeed(laptop, "clip", "add", "sent in the clear")
        try succeed(laptop, "sync", "enable", url, "--no-encrypt")
        #expect(try !zoneIsEncrypted())
        #expect(try everyObject().contains("sent in the clear"))
        try succeed(desktop, "sync", "enable", url)
        #expect(try succeed(desktop, "clip", "ls").contains("sent in the clear"))
        #expect(!FileSystem.exists(DataDirectoryLayout(root: desktop.dataDir).syncKey))
    }

    @Test func noEncryptIsRefusedOnADeviceThatHasAKey() throws {
        try succeed(laptop, "sync", "enable", desktop.directory.path + "/encrypted", "--encrypt")
        let result = try laptop.run("sync", "enable", url, "--no-encrypt")
        #expect(result.status == 1)
        #expect(result.stderr.contains("this device has a sync key"), "\(result.stderr)")
        #expect(try tip() == nil)
    }
    // MARK: Rotating the key

    func zoneFile() throws -> String {
        try BareRepository.git(["--git-dir=" + remote.path, "show", "itsypad:zone.json"])
    }

    /// Laptop and desktop on the encrypted remote, each with its own clip synced to the other.
    func twoDevicesOnTheRemote() throws {
        try succeed(laptop, "clip", "add", "before the rotation")
        try succeed(laptop, "sync", "enable", url)
        try succeed(desktop, "clip", "add", "from the desktop")
        try succeed(desktop, "sync", "enable", url, "--key", "-", stdin: try recoveryKey(laptop))
        try succeed(laptop, "sync")
    }

    /// A wrapper in place of git that runs `script` when the rotation's commit is pushed.
    func onRotationPush(_ script: String) throws -> GitWrapper {
        try GitWrapper(
            """
            for last in "$@"; do :; done
            if [ "$cmd" = push ] && /usr/bin/git --git-dir="$gitdir" log -1 --format=%s "${last%%:*}" | grep -q 'key rotate'; then
              \(script)
            fi
            """)
    }

    @Test func rotatingTheKeyPushesANewZoneAndTheOtherDeviceIsToldHowToJoinIt() throws {
        try twoDevicesOnTheRemote()
        let oldKey = try recoveryKey(laptop)
        let oldZone = try zoneFile()
        let said = try succeed(laptop, "sync", "key", "rotate")
        #expect(said.contains("'itsypad sync enable \(url) --key -'"), "\(said)")
        let newKey = try recoveryKey(laptop)
        #expect(try newKey != oldKey && zoneFile() != oldZone)
        #expect(try remote.log().first?.hasPrefix("itsypad sync key rotate on ") == true)
        #expect(!FileSystem.exists(DataDirectoryLayout(root: laptop.dataDir).nextSyncKey))
        try succeed(laptop, "sync")

        try succeed(desktop, "clip", "add", "typed on the desktop after the rotation")
        let before = try tip()
        let refused = try desktop.run("sync")
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains("does not open this backend") && refused.stderr.contains("'itsypad sync enable \(url) --key -'"),
            "\(refused.stderr)")
        #expect(try tip() == before)
        #expect(try desktop.run("sync", "enable", url, "--key", "-", stdin: oldKey).status == 1)
        try succeed(desktop, "sync", "enable", url, "--key", "-", stdin: newKey)
        try succeed(laptop, "sync")
        let onLaptop = try succeed(laptop, "clip", "ls"), onDesktop = try succeed(desktop, "clip", "ls")
        #expect(["from the desktop", "typed on the desktop after the rotation"].allSatisfy(onLaptop.contains), "\(onLaptop)")
        #expect(onDesktop.contains("before the rotation"), "\(onDesktop)")
        let objects = try everyObject()
        #expect(!["before the rotation", "from the desktop", "typed on the desktop after the rotation"].contains(where: objects.contains))
    }

    @Test func aRotationWhoseRemoteMovedMeanwhileRotatesNothing() throws {
        try twoDevicesOnTheRemote()
        let oldKey = try recoveryKey(laptop)
        let checkout = try remote.clone()
        let mover = try onRotationPush(
            """
            touch '\(checkout)/moved'; /usr/bin/git -C '\(checkout)' add moved; /usr/bin/git -C '\(checkout)' commit -qm moved
                  /usr/bin/git -C '\(checkout)' push -q origin itsypad
            """)
        let result = try laptop.runArguments(["sync", "key", "rotate"], environment: mover.environment)
        #expect(result.status == 1)
        #expect(result.stderr.contains("another device synced through \(url) meanwhile; nothing was rotated"), "\(result.stderr)")
        #expect(try recoveryKey(laptop) == oldKey)
        #expect(!FileSystem.exists(DataDirectoryLayout(root: laptop.dataDir).nextSyncKey))
        try succeed(laptop, "clip", "add", "after the refused rotation")
        try succeed(laptop, "sync")
        try succeed(desktop, "sync")
        #expect(try succeed(desktop, "clip", "ls").contains("after the refused rotation"))
    }

    /// Killed before the rotation's push reached the remote, or after it did but before the new
    /// key became the device's: the next sync reads the remote's zone and undoes or finishes it.
    @Test(arguments: ["before", "after"])
    func aRotationKilledAroundItsPushIsUndoneOrFinishedByTheNextSync(_ moment: String) throws {
        try twoDevicesOnTheRemote()
        let oldKey = try recoveryKey(laptop)
        let killer = try onRotationPush(moment == "before" ? "kill -9 $PPID; exit 137" : #"/usr/bin/git "$@"; kill -9 $PPID; exit 137"#)
        let killed = try laptop.runArguments(["sync", "key", "rotate"], environment: killer.environment)
        #expect(killed.signal == SIGKILL, "\(killed.status) \(killed.stderr)")
        #expect(FileSystem.exists(DataDirectoryLayout(root: laptop.dataDir).nextSyncKey))

        try succeed(laptop, "clip", "add", "after the killed rotation")
        try succeed(laptop, "sync")
        #expect(!FileSystem.exists(DataDirectoryLayout(root: laptop.dataDir).nextSyncKey))
        let key = try recoveryKey(laptop)
        #expect(moment == "before" ? key == oldKey : key != oldKey)
        if moment == "after" {
            #expect(try desktop.run("sync").status == 1)
            try succeed(desktop, "sync", "enable", url, "--key", "-", stdin: key)
        } else {
            try succeed(desktop, "sync")
        }
        try succeed(laptop, "sync")
        let onDesktop = try succeed(desktop, "clip", "ls"), onLaptop = try succeed(laptop, "clip", "ls")
        #expect(onDesktop.contains("after the killed rotation") && onDesktop.contains("before the rotation"), "\(onDesktop)")
        #expect(onLaptop.contains("from the desktop"), "\(onLaptop)")
    }
    /// The desktop's commit for the old zone, never pushed, is not put on top of the new zone
    /// even where git could rebase it without a conflict: the clone keeps it aside and the
    /// desktop sends its data again.
    @Test func commitsMadeForTheOldZoneAreKeptAsideNotRebasedOntoTheNewOne() throws {
        try twoDevicesOnTheRemote()
        try succeed(desktop, "clip", "add", "queued for the old zone")
        let clone = ["--git-dir=" + desktop.dataDir + "/sync/git/repository", "--work-tree=" + desktop.dataDir + "/sync/git/backend"]
        desktop.directory.write("data/sync/git/backend/written-for-the-old-zone", "old")
        try BareRepository.git(clone + ["add", "written-for-the-old-zone"])
        try BareRepository.git(clone + ["commit", "-qm", "unpushed"])
        try succeed(laptop, "sync", "key", "rotate")
        try succeed(desktop, "sync", "enable", url, "--key", "-", stdin: try recoveryKey(laptop))
        try succeed(laptop, "sync")
        #expect(try succeed(laptop, "clip", "ls").contains("queued for the old zone"))
        #expect(
            try !BareRepository.git(["--git-dir=" + remote.path, "ls-tree", "--name-only", "itsypad"]).contains("written-for-the-old-zone"))
        #expect(try !BareRepository.git(clone + ["for-each-ref", "refs/itsypad/kept"]).isEmpty)
    }
}

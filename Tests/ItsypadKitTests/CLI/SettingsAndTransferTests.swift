import Testing

@testable import ItsypadBackend
@testable import ItsypadCLI
@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

@Suite struct SettingsCommandTests {
    let device = Device()

    @Test func setGetUnset() {
        #expect(device.inProcess(["settings", "get", "clipboard.maxEntries"]).1 == "1000\n")
        #expect(device.inProcess(["settings", "set", "clipboard.maxEntries", "50"]).0 == 0)
        #expect(device.inProcess(["settings", "get", "clipboard.maxEntries"]).1 == "50\n")
        #expect(device.inProcess(["settings"]).1.contains("clipboard.maxEntries=50\n"))
        #expect(device.inProcess(["settings", "unset", "clipboard.maxEntries"]).0 == 0)
        #expect(device.inProcess(["settings", "get", "clipboard.maxEntries"]).1 == "1000\n")
    }

    @Test(arguments: [
        (["settings", "set", "clipboard.maxEntry", "5"], "Did you mean 'clipboard.maxEntries'?"),
        (["settings", "set", "clipboard.maxEntries", "lots"], "a whole number"),
        (["settings", "set", "clipboard.retention", "soon"], "duration"),
        (["settings", "set", "clipboard.ignore", "(unclosed"], "regular expression"),
        (["settings", "set", "sync.enabled", "maybe"], "true or false"),
        (["settings", "get", "nope"], "Unknown setting"),
    ])
    func rejectsBadKeysAndValues(_ arguments: [String], _ message: String) {
        let (status, _, err) = device.inProcess(arguments)
        #expect(status == 64)
        #expect(err.contains(message), "\(err)")
    }

    /// `ls` is `list`, as with tabs and clips: parsed, shown in help, completed.
    @Test func lsIsAnAliasOfList() throws {
        let listed = device.inProcess(["settings", "list"])
        let (status, out, err) = device.inProcess(["settings", "ls"])
        #expect(status == 0 && out == listed.1, "\(err)")
        #expect(device.inProcess(["settings", "ls", "--json"]).1 == device.inProcess(["settings", "list", "--json"]).1)
        #expect(device.inProcess(["help", "settings"]).1.contains("  list, ls "))
        #expect(device.inProcess(["help", "settings", "ls"]).1.contains("USAGE: itsypad settings list"))
        let bash = CompletionScript.generate(for: .bash, root: CommandTable.root)
        #expect(bash.contains("'settings') REPLY='list ls get set unset'"), "\(bash)")
        #expect(ManPage.generate(path: [CommandTable.root, CommandTable.settings]).contains("Also run as itsypad settings ls."))
    }

    /// The overviews of itsypad and of sync name git remotes, not only directories.
    @Test func helpSaysABackendMayBeAGitRemote() {
        for command in [["help"], ["help", "sync"]] {
            let overview = device.inProcess(command).1.split(separator: "\n\n").first ?? ""
            #expect(overview.contains("git remote"), "\(overview)")
        }
    }

    @Test func onlySyncedKeysAreQueued() throws {
        #expect(device.inProcess(["settings", "set", "device.name", "laptop"]).0 == 0)
        #expect(device.inProcess(["settings", "set", "clipboard.retention", "7d"]).0 == 0)
        let keys = try PendingQueue(path: device.dataDir + "/sync/pending.log").changes().map(\.key)
        #expect(keys == [RecordKey(.setting, "clipboard.retention")])
    }

    /// Turning sync on without a backend would only fail at the next sync.
    @Test func syncNeedsABackend() throws {
        let (status, _, err) = device.inProcess(["settings", "set", "sync.enabled", "yes"])
        #expect(status == 1)
        #expect(err.contains("sync needs a backend directory"), "\(err)")
        #expect(device.inProcess(["settings", "get", "sync.enabled"]).1 == "false\n")

        let backend = TemporaryDirectory()
        #expect(device.inProcess(["settings", "set", "sync.backend", backend.path]).0 == 0)
        #expect(device.inProcess(["settings", "set", "sync.enabled", "yes"]).0 == 0)
        #expect(device.inProcess(["settings", "unset", "sync.backend"]).0 == 1)
        #expect(device.inProcess(["settings", "set", "sync.enabled", "no"]).0 == 0)
        #expect(device.inProcess(["settings", "unset", "sync.backend"]).0 == 0)
    }

    /// The editor's default comes from the environment: get shows what would run and, to a person, why.
    @Test(
        arguments: [
            ([:], nil, "vi", "(from the default: neither $VISUAL nor $EDITOR is set)"),
            (["EDITOR": "nano"], nil, "nano", "(from $EDITOR)"),
            (["EDITOR": "nano", "VISUAL": "code -w"], nil, "code -w", "(from $VISUAL)"),
            (["VISUAL": "code -w"], "hx", "hx", "(from the editor setting)"),
        ] as [([String: String], String?, String, String)])
    func editorShowsTheEffectiveCommandAndItsSource(
        _ environment: [String: String], _ setting: String?, _ command: String, _ source: String
    ) {
        if let setting { #expect(device.inProcess(["settings", "set", "editor", setting]).0 == 0) }
        let err = OutputBuffer()
        let context = Context(
            environment: environment.merging(["ITSYPAD_DATA_DIR": device.dataDir]) { $1 },
            stdinIsTerminal: true, stdoutIsTerminal: false, stderrIsTerminal: true,
            standardOutput: OutputBuffer(), standardError: err, readInput: { [] })
        #expect(Itsypad.run(["settings", "get", "editor"], context: context) == 0)
        #expect(context.standardOutput.text == command + "\n")
        #expect(err.text == source + "\n")
    }

    @Test func jsonListsEveryKeyWithScope() throws {
        let items = try #require(try JSONValue.parse(device.inProcess(["settings", "list", "--json"]).1).arrayValue)
        #expect(items.compactMap { $0["key"]?.stringValue } == Settings.keys)
        #expect(items.first { $0["key"] == .string("sync.enabled") }?["scope"] == .string("device"))
    }
}

@Suite struct TransferCommandTests {
    let source = Device()
    let copy = Device()

    /// The export without its timestamp, for comparison.
    func export(_ device: Device) throws -> JSONValue {
        guard case .object(let members) = try JSONValue.parse(device.inProcess(["export"]).1) else { return .null }
        return .object(members.filter { $0.0 != "exportedAt" })
    }

    @Test func exportImportReproducesTheData() throws {
        _ = source.inProcess(["tab", "new", "--name", "Fixed", "content\nlines"])
        _ = source.inProcess(["tab", "new", "plain tab"])
        let clip = source.inProcess(["clip", "add", "pinned clip"]).1.trimmingNewline
        _ = source.inProcess(["clip", "pin", clip])
        _ = source.inProcess(["clip", "add", "--local", "local clip"])
        _ = source.inProcess(["settings", "set", "clipboard.retention", "2w"])
        let document = source.inProcess(["export"]).1
        let (status, _, err) = copy.inProcess(["import", "-"], stdin: document)
        #expect(status == 0, "\(err)")
        #expect(try export(copy) == export(source))
        // Importing again changes nothing.
        #expect(copy.inProcess(["import", "-"], stdin: document).0 == 0)
        #expect(try export(copy) == export(source))
    }

    /// Every setting whose scope is this device, with a value a crafted file would use against it.
    static let deviceSettingValues: [(key: SettingKey, value: String)] = [
        (.editor, "touch /tmp/pwned #"), (.syncBackend, "/tmp/attacker"), (.syncEnabled, "true"), (.deviceName, "attacker"),
        (.clipboardMaxBytes, "1"), (.clipboardFollow, "true"), (.clipboardFollowWindow, "86400"),
    ]

    @Test func importNeverAppliesDeviceSettingsAndNamesThem() throws {
        #expect(
            Set(Self.deviceSettingValues.map(\.key.rawValue)) == Set(Settings.all.filter { $0.scope == .device }.map(\.key)))
        for (key, value) in Self.deviceSettingValues {
            #expect(source.inProcess(["settings", "set", key.rawValue, value], now: 9_000_000_000_000).0 == 0)
        }
        #expect(source.inProcess(["settings", "set", "clipboard.retention", "2w"], now: 9_000_000_000_000).0 == 0)
        let document = source.inProcess(["export", "--device-settings"]).1
        let exported = try #require(try JSONValue.parse(document)["settings"]?.arrayValue).compactMap { $0["key"]?.stringValue }
        #expect(Set(exported) == Set(Self.deviceSettingValues.map(\.key.rawValue) + ["clipboard.retention"]))

        let before = copy.inProcess(["settings", "list", "--json"]).1
        let imported = try copy.runArguments(["import", "-"], stdin: Array(document.utf8))
        #expect(imported.status == 0, "\(imported.stderr)")
        for (key, _) in Self.deviceSettingValues { #expect(imported.stderr.contains(key.rawValue), "\(imported.stderr)") }
        #expect(copy.inProcess(["settings", "get", "clipboard.retention"]).1 == "2w\n")
        let after = try JSONValue.parse(copy.inProcess(["settings", "list", "--json"]).1).arrayValue ?? []
        let untouched = try JSONValue.parse(before).arrayValue ?? []
        for (key, _) in Self.deviceSettingValues {
            #expect(after.first { $0["key"] == .string(key.rawValue) } == untouched.first { $0["key"] == .string(key.rawValue) })
        }
    }

    @Test func exportLeavesDeviceSettingsOutUnlessAsked() throws {
        for (key, value) in Self.deviceSettingValues { #expect(source.inProcess(["settings", "set", key.rawValue, value]).0 == 0) }
        #expect(source.inProcess(["settings", "set", "clipboard.maxEntries", "50"]).0 == 0)
        let keys = { (arguments: [String]) throws -> [String] in
            try #require(try JSONValue.parse(source.inProcess(arguments).1)["settings"]?.arrayValue).compactMap { $0["key"]?.stringValue }
        }
        #expect(try keys(["export"]) == ["clipboard.maxEntries"])
        #expect(try keys(["export", "--device-settings"]).count == Self.deviceSettingValues.count + 1)
    }

    @Test func newerLocalTabWins() throws {
        let id = source.inProcess(["tab", "new", "old text"], now: 1_000).1.trimmingNewline
        let document = source.inProcess(["export"]).1
        _ = source.inProcess(["tab", "edit", id, "newer text"], now: 2_000)
        #expect(source.inProcess(["import", "-"], stdin: document).0 == 0)
        #expect(source.inProcess(["tab", "show", id]).1 == "newer text")
    }

    @Test(arguments: [
        "", "not json", "{\"format\":\"itsypad-export\",\"version\":99}", "{\"format\":\"other\"}",
        "{\"format\":\"itsypad-export\",\"version\":1,\"tabs\":[{\"id\":\"bad\"}]}",
    ])
    func refusesBadDocumentsAndImportsNothing(_ document: String) {
        let (status, _, _) = copy.inProcess(["import", "-"], stdin: document)
        #expect(status == 1)
        #expect(copy.inProcess(["tab", "ls"]).1.isEmpty)
        #expect(copy.inProcess(["clip", "ls"]).1.isEmpty)
    }

    @Test func importsTheLegacyKeyValueLayoutWithTombstones() throws {
        let keep = "6F9619FF-8B86-D011-B42D-00C04FC964FF"
        let gone = "7F9619FF-8B86-D011-B42D-00C04FC964FF"
        let localVictim = copy.inProcess(["tab", "new", "doomed"]).1.trimmingNewline
        let clipKeep = "8F9619FF-8B86-D011-B42D-00C04FC964FF"
        let clipGone = "9F9619FF-8B86-D011-B42D-00C04FC964FF"
        let dump = """
            {"tabs":[{"id":"\(keep)","name":"Kept","content":"print(1)","language":"python","languageLocked":false,"isDirty":false,"cursorPosition":0,"lastModified":754000000.5},
                     {"id":"\(gone)","name":"Gone","content":"x","language":"plain","languageLocked":false,"lastModified":754000000}],
             "deletedTabIDs":["\(gone)","\(localVictim.uppercased())"],
             "clipboard":[{"id":"\(clipKeep)","text":"kept clip","timestamp":754000001},{"id":"\(clipGone)","text":"gone clip","timestamp":754000002}],
             "deletedClipboardIDs":["\(clipGone)"]}
            """
        let (status, _, err) = copy.inProcess(["import", "--kvs", "-"], stdin: dump)
        #expect(status == 0, "\(err)")
        let tabs = copy.inProcess(["tab", "ls"]).1
        #expect(tabs.contains("Kept") && !tabs.contains("Gone") && !tabs.contains("doomed"))
        #expect(copy.inProcess(["tab", "show", keep.lowercased(), "--json"]).1.contains("2024-11-22T20:26:40.500Z"))
        #expect(copy.inProcess(["clip", "ls"]).1 == "8f9619ff\tkept clip\n")
    }

    @Test func theSyncKeyIsExportedOnlyWhenAskedAndImportedWhereItBreaksNothing() throws {
        let fleet = Fleet(1, backend: .encryptedDirectory)
        let holder = fleet[0]
        _ = holder.output("tab", "new", "synced tab")
        fleet.enable(0)
        let recoveryKey = holder.output("sync", "key", "show")
        let plain = holder.output("export")
        #expect(!plain.contains(recoveryKey) && !plain.contains(ExportFormat.syncKeyMember))
        let withKey = holder.output("export", "--include-sync-key")
        #expect(try JSONValue.parse(Array(withKey.utf8))[ExportFormat.syncKeyMember]?.stringValue == recoveryKey)

        // A device without a key takes it, and then joins the encrypted backend with a plain enable.
        #expect(copy.inProcess(["import", "-"], stdin: withKey).0 == 0)
        #expect(copy.output("sync", "key", "show") == recoveryKey)
        let (status, _, err) = copy.inProcess(["sync", "enable", fleet.backendPath])
        #expect(status == 0, "\(err)")
        #expect(copy.output("tab", "ls").contains("synced tab"))

        // A device with another key keeps its own, and still imports the data.
        let other = Fleet(1, backend: .encryptedDirectory)
        other.enable(0)
        let otherKey = other[0].output("sync", "key", "show")
        let (imported, _, warning) = other[0].inProcess(["import", "-"], stdin: withKey)
        #expect(imported == 0 && warning.contains("not imported"), "\(warning)")
        #expect(other[0].output("sync", "key", "show") == otherKey)
        #expect(other[0].output("tab", "ls").contains("synced tab"))
    }

    @Test func aDeviceThatSyncsUnencryptedIsNotGivenAKey() throws {
        let fleet = Fleet(1, backend: .encryptedDirectory)
        fleet.enable(0)
        let withKey = fleet[0].output("export", "--include-sync-key")
        let unencrypted = Fleet(1)
        unencrypted.enable(0)
        let (status, _, warning) = unencrypted[0].inProcess(["import", "-"], stdin: withKey)
        #expect(status == 0 && warning.contains("unencrypted"), "\(warning)")
        #expect(!FileSystem.exists(DataDirectoryLayout(root: unencrypted[0].dataDir).syncKey))
        #expect(unencrypted[0].inProcess(["sync"]).0 == 0)
    }

    @Test func aDamagedKeyImportsNothingAndNoKeyIsNothingToExport() throws {
        let fleet = Fleet(1, backend: .encryptedDirectory)
        _ = fleet[0].output("tab", "new", "a tab")
        fleet.enable(0)
        var document = fleet[0].output("export", "--include-sync-key")
        let key = fleet[0].output("sync", "key", "show")
        document = document.split(separator: key, omittingEmptySubsequences: false).joined(separator: String(key.dropFirst()) + "A")
        #expect(copy.inProcess(["import", "-"], stdin: document).0 == 1)
        #expect(copy.inProcess(["tab", "ls"]).1.isEmpty)
        #expect(!FileSystem.exists(DataDirectoryLayout(root: copy.dataDir).syncKey))
        let (status, out, err) = source.inProcess(["export", "--include-sync-key"])
        #expect(status == 1 && out.isEmpty && err.contains("no sync key"), "\(err)")
    }
}

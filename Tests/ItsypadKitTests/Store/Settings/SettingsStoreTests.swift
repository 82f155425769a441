import Testing

@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

/// The clip caps every command applies come from one place: the stored value,
/// else the settings table's default.
@Suite struct SettingsStoreTests {
    let scratch = TemporaryDirectory()

    @Test func clipCapsAreTheTablesDefaultsUntilSet() throws {
        let path = scratch.path + "/settings.json"
        let settings = try SettingsStore(path: path)
        #expect(Settings.definition("clipboard.maxEntries")?.defaultValue == .int(settings.maxClipEntries))
        #expect(Settings.definition("clipboard.maxBytes")?.defaultValue == .int(settings.maxClipBytes))
        let clock = HybridTimestamp(physical: Time.now(), device: "test")
        try settings.set("clipboard.maxEntries", .int(250), clock: clock)
        try settings.set("clipboard.maxBytes", .int(4096), clock: clock)
        let reread = try SettingsStore(path: path)
        #expect((reread.maxClipEntries, reread.maxClipBytes) == (250, 4096))
    }
}

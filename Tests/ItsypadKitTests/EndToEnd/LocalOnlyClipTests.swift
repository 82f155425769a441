import Testing

@testable import ItsypadSupport

/// A clip added with --local never leaves its device, and neither does its removal: no record of
/// it, not even a tombstone, reaches the backend (its id and time would).
@Suite struct LocalOnlyClipTests {
    @Test(arguments: ["rm", "clear", "prune", "eviction"])
    func removingALocalOnlyClipWritesNothingToTheBackend(removal: String) throws {
        let device = Device()
        let backend = device.directory.path + "/backend"
        #expect(try device.run("sync", "enable", backend).status == 0)
        let id = try device.run("clip", "add", "--local", "kept here").stdout.split(separator: "\n").first.map(String.init) ?? ""
        #expect(try device.run("sync").status == 0)
        switch removal {
        case "rm": #expect(try device.run("clip", "rm", id).status == 0)
        case "clear": #expect(try device.run("clip", "clear").status == 0)
        case "prune": #expect(try device.run("clip", "prune", "--keep", "0").status == 0)
        default:
            #expect(try device.run("settings", "set", "clipboard.maxEntries", "1").status == 0)
            #expect(try device.run("clip", "add", "newer").status == 0)
        }
        #expect(!(try device.run("clip", "ls")).stdout.contains("kept here"))
        #expect(try device.run("sync").status == 0)
        let found = try Process.run("/bin/grep", ["-rl", "-e", id, backend])
        let named = try Process.run("/usr/bin/find", [backend, "-name", "*\(id)*"])
        #expect(found.stdout.isEmpty && named.stdout.isEmpty, "\(found.stdout)\(named.stdout)")
        #expect(found.status == 1, "grep: \(found.stderr)")
    }
}

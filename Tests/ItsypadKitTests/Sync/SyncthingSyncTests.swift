import Testing

@testable import ItsypadCLI

/// `itsypad sync` end to end on a folder that real Syncthing keeps in step: two devices, each
/// with the backend in its own copy of the folder, add clips, edit one tab on different lines
/// and on the same line, delete, and sync at the same moments while Syncthing replicates in the
/// background; then rounds of waiting for Syncthing and syncing until nothing changes.
@Suite(.tags(.syncthing), .serialized, .timeLimit(.minutes(5)))
struct SyncthingSyncTests {
    @Test func twoDevicesConvergeThroughSyncthing() throws {
        let pair = try SyncthingPair.start()
        defer { pair.stop() }
        let fleet = Fleet(2)
        let backends = pair.folders.map { $0 + "/backend" }
        _ = fleet[0].output("sync", "enable", backends[0])
        try pair.waitUntilInSync()
        _ = fleet[1].output("sync", "enable", backends[1])
        try pair.waitUntilInSync()
        _ = fleet[0].output("sync")

        let shared = fleet[0].output("tab", "new", "--name", "shared", "top\nmiddle\nbottom")
        let doomed = fleet[0].output("tab", "new", "--name", "doomed", "to be deleted")
        _ = fleet[0].output("sync")
        try pair.waitUntilInSync()
        _ = fleet[1].output("sync")
        #expect(try fleet.tabs(1)[shared] == "shared|top\nmiddle\nbottom", "the tab did not reach the other device")

        var typed: [String] = []
        for round in 0..<4 {
            for index in 0..<2 {
                for clip in 0..<3 { _ = fleet[index].output("clip", "add", "clip-\(round)-\(index)-\(clip)") }
                let content = fleet[index].output("tab", "show", shared)
                let line = "line-\(round)-\(index)"
                typed.append(line)
                // Device 0 appends, device 1 prepends: different lines, which merge.
                _ = fleet[index].output("tab", "edit", shared, index == 0 ? content + "\n" + line : line + "\n" + content)
            }
            if round == 2 { _ = fleet[1].output("tab", "rm", doomed) }
            if round == 3 {
                // The same line on both: one version wins, the other is kept as a conflict copy.
                for index in 0..<2 {
                    let content = fleet[index].output("tab", "show", shared)
                    _ = fleet[index].output(
                        "tab", "edit", shared, content.replacingOccurrences(of: "middle", with: "middle by dev\(index)"))
                }
            }
            for index in 0..<2 { _ = fleet[index].output("sync") }
        }

        var settled = false
        for _ in 0..<6 where !settled {
            try pair.waitUntilInSync()
            let before = try (fleet.tabs(0), fleet.tabs(1), fleet.clips(0), fleet.clips(1))
            for index in 0..<2 { _ = fleet[index].output("sync") }
            let after = try (fleet.tabs(0), fleet.tabs(1), fleet.clips(0), fleet.clips(1))
            settled = before == after && after.0 == after.1 && after.2 == after.3
        }
        #expect(settled, "the devices did not settle")
        try fleet.expectConverged()
        let tabs = try fleet.tabs(0)
        let everything = tabs.values.joined(separator: "\n")
        #expect(typed.allSatisfy { everything.contains($0) }, "typed lines lost: \(typed.filter { !everything.contains($0) })")
        #expect(everything.contains("middle by dev0") && everything.contains("middle by dev1"), "a same-line edit was lost: \(tabs)")
        #expect(tabs[doomed] == nil, "the deleted tab came back")
        #expect(try fleet.clips(0).count == 24)
        for folder in pair.folders { try ReplicatedBackendConvergenceTests.expectNoConflictCopies(in: folder) }
    }
}

extension String {
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}

import Testing

@testable import ItsypadSupport

/// A device changes a tab without syncing; another, which never sees that change, edits the
/// tab, syncs and removes it. Whatever the change (content, name, language, a lock), the tab
/// stays on both devices with the change applied: an edit beats a removal that had not seen it.
@Suite struct UnseenChangeTests {
    /// `tab edit` arguments for the unseen change, and what `tab ls --json` then shows of the tab.
    static let changes: [(String, [String], [String: JSONValue])] = [
        ("a rename", ["--name", "renamed-on-a"], ["name": .string("renamed-on-a"), "content": .string("one\ntwo\nthree\nfour")]),
        ("a language", ["--language", "python"], ["language": .string("python"), "languageLocked": .bool(true)]),
        ("a language unlocked", ["--auto-language"], ["language": .string("plain"), "languageLocked": .bool(false)]),
        ("a content edit", ["zero\none\ntwo\nthree"], ["name": .string("notes"), "content": .string("zero\none\ntwo\nthree\nfour")]),
    ]

    @Test(arguments: changes)
    func aChangeTheRemoverHadNotSeenKeepsTheTab(_ change: (label: String, arguments: [String], shown: [String: JSONValue])) throws {
        let scratch = TemporaryDirectory()
        let backend = scratch.path + "/backend"
        let a = Device()
        let b = Device()
        let tab = try b.run("tab", "new", "--name", "notes", "--language", "rust", "one\ntwo\nthree").stdout.trimmingNewline
        for device in [a, b] { try expectSuccess(device.run("sync", "enable", backend)) }
        try expectSuccess(a.run("sync"))
        try expectSuccess(a.runArguments(["tab", "edit", tab] + change.arguments))
        try expectSuccess(b.run("tab", "edit", tab, "one\ntwo\nthree\nfour"))
        try expectSuccess(b.run("sync"))
        try expectSuccess(b.run("tab", "rm", tab))
        for _ in 0..<2 {
            for device in [a, b] { try expectSuccess(device.run("sync")) }
        }
        for (name, device) in [("a", a), ("b", b)] {
            let listing = try JSONValue.parse(Array(try device.run("tab", "ls", "--json").stdout.utf8)).arrayValue ?? []
            try #require(listing.count == 1, "\(change.label): \(name) holds \(listing.count) tabs")
            for (field, value) in change.shown {
                #expect(listing[0][field] == value, "\(change.label): \(field) on \(name)")
            }
        }
    }

    func expectSuccess(_ result: RunResult, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(result.status == 0, "\(result.stderr)", sourceLocation: sourceLocation)
    }
}

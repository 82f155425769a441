import Testing

@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

@Suite struct TabStoreTests {
    let scratch = TemporaryDirectory()

    /// `isFileName` (read from the bytes) accepts exactly the names `fileName` gives.
    @Test(arguments: [
        ("0f8fad5b-d9cb-469f-a165-70867728950e.json", true), ("0F8FAD5B-D9CB-469F-A165-70867728950E.json", false),
        ("0f8fad5b-d9cb-469f-a165-70867728950e.JSON", false), ("0f8fad5b-d9cb-469f-a165-70867728950e", false),
        ("0f8fad5b-d9cb-469f-a165-70867728950e.json.tmp", false), ("0f8fad5bd9cb469fa16570867728950e.json", false),
        ("0f8fad5b-d9cb-469f-a165-70867728950g.json", false), ("0f8fad5b-d9cb-469f-a165_70867728950e.json", false),
        ("0f8fad5b-d9cb-469f-a165-70867728950é.json", false), (".json", false), ("index", false), ("", false),
    ])
    func fileNamesAreTheIdsLowercase(_ name: String, isTab: Bool) {
        #expect(TabStore.isFileName(name) == isTab)
        let stem = name.hasSuffix(".json") ? String(name.dropLast(5)) : name
        #expect((TabStore.fileName(stem) == name) == isTab)
    }

    /// The entries read together are the ones read one by one, whether the directory exists or not;
    /// a file that is not a tab is left out, for `entry(id:)` to say why.
    @Test(arguments: [false, true])
    func entriesReadTogetherAreThoseReadOneByOne(_ withFiles: Bool) throws {
        let store = TabStore(directory: scratch.path + "/tabs")
        let saved = (0..<3).map { index in
            let clock = HybridTimestamp(physical: 1_000 + Int64(index), device: "d")
            return Tab(
                id: Identifier.make(), name: "tab \(index)", nameLocked: false, content: "content \(index)", language: "plain",
                languageLocked: false, lastModified: 1_000 + Int64(index), fileURL: nil, clock: clock)
        }
        if withFiles {
            try store.save(Array(saved.prefix(2)))
            try FileSystem.writeAtomically(store.filePath(saved[1].id)!, Array("not a tab".utf8))
        }
        let ids = saved.map(\.id) + [Identifier.make(), "not-an-id"]
        let entries = try store.entries(ids: ids)
        for id in ids {
            // Absent: left to `entry(id:)` (a file that is not a tab, a name that is not an id).
            if let entry = entries[id] { #expect(entry == (try store.entry(id: id)), "\(id)") }
        }
        #expect(entries[saved[0].id] == (withFiles ? .some(.live(saved[0])) : .some(nil)))
        #expect(withFiles ? entries[saved[1].id] == nil : entries[saved[1].id] == .some(nil))
        #expect(entries[saved[2].id] == .some(nil))
    }
}

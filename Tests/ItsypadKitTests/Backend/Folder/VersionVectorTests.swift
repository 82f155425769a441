import Testing

@testable import ItsypadBackend
@testable import ItsypadModel

@Suite struct VersionVectorTests {
    static func vector(_ tag: String) -> VersionVector { VersionVector(tag: tag)! }

    @Test(arguments: ["", "a:1", "A-1:7,b:12,z9:9007199254740991"])
    func canonicalTagsRoundTrip(_ tag: String) throws {
        #expect(try #require(VersionVector(tag: tag)).tag == tag)
    }

    @Test(arguments: [
        "a", ":1", "a:", "a:0", "a:01", "a:+1", "a:-1", "a:1.5", "a:9007199254740992", "a:99999999999999999999",
        "b:1,a:1", "a:1,a:2", "a:1,", ",a:1", "-a:1", "a b:1", "a/b:1", String(repeating: "x", count: 65) + ":1",
    ])
    func malformedTagsAreRefused(_ tag: String) {
        #expect(VersionVector(tag: tag) == nil)
    }

    @Test func tooManyDevicesAreRefused() {
        let entries = (0...VersionVector.maxEntries).map { "d\(String(1_000_000 + $0)):1" }
        #expect(VersionVector(tag: entries.dropLast().joined(separator: ",")) != nil)
        #expect(VersionVector(tag: entries.joined(separator: ",")) == nil)
    }

    @Test(arguments: [
        ("a:2,b:1", "a:1", true, false),
        ("a:1", "a:1", true, true),
        ("a:1", "", true, false),
        ("a:2", "a:1,b:1", false, false),
        ("a:1,b:1", "a:2", false, false),
    ])
    func coverage(_ x: String, _ y: String, xCoversY: Bool, yCoversX: Bool) {
        #expect(Self.vector(x).covers(Self.vector(y)) == xCoversY)
        #expect(Self.vector(y).covers(Self.vector(x)) == yCoversX)
        #expect(Self.vector(x).isConcurrent(with: Self.vector(y)) == (!xCoversY && !yCoversX))
    }

    @Test func joinAndMeet() {
        let x = Self.vector("a:3,b:1"), y = Self.vector("a:1,c:4")
        #expect(x.joined(with: y).tag == "a:3,b:1,c:4")
        #expect(x.meet(with: y).tag == "a:1")
        #expect(x.joined(with: y).covers(x) && x.joined(with: y).covers(y))
    }

    @Test func aChangeAdvancesItsDevicesEntry() {
        let base = Self.vector("a:3,b:1")
        #expect(base.advanced(by: "b", to: 7)?.tag == "a:3,b:7")
        #expect(base.advanced(by: "c", to: 1)?.tag == "a:3,b:1,c:1")
        #expect(base.advanced(by: "a", to: 3) == nil, "a device's numbers only grow")
        #expect(base.advanced(by: "bad/id", to: 9) == nil)
        #expect(base.advanced(by: "b", to: VersionVector.maxSequence) == nil)
    }
}

@Suite struct VersionHistoryTests {
    static func version(
        _ tag: String, writer: String, text: String = "x", deleted: Bool = false, derived: Bool = false, base: RecordVersion? = nil
    ) -> RecordVersion {
        let record = BackendRecord(
            recordName: "r", recordType: "ScratchTab", recordChangeTag: tag, fields: deleted ? [:] : ["content": .string(text)])
        return RecordVersion(
            record: record, version: VersionVector(tag: tag)!, writer: writer, isDeleted: deleted, isDerived: derived, base: base?.asBase)
    }

    @Test func siblingsAreTheVersionsNothingCovers() {
        let versions = [
            Self.version("a:1", writer: "a"), Self.version("a:1,b:2", writer: "b"), Self.version("a:2", writer: "a"),
            Self.version("b:1", writer: "b"),
        ]
        #expect(VersionHistory.siblings(versions).map(\.version.tag) == ["a:1,b:2", "a:2"])
        #expect(VersionHistory.siblings([versions[0]]).map(\.version.tag) == ["a:1"])
        #expect(VersionHistory.siblings([]).isEmpty)
    }

    /// Two devices merging the same siblings at once write one version, not two new siblings.
    @Test func theSameDerivedMergeByTwoDevicesIsOneVersion() {
        let left = Self.version("a:1", writer: "a", text: "left"), right = Self.version("b:1", writer: "b", text: "right")
        let merged = left.version.joined(with: right.version).tag
        let byA = Self.version(merged, writer: "a", text: "left+right", derived: true)
        let byB = Self.version(merged, writer: "b", text: "left+right", derived: true)
        let siblings = VersionHistory.siblings([left, right, byA, byB])
        #expect(siblings.count == 1)
        #expect(siblings.first?.record.fields["content"] == .string("left+right"))
    }

    /// Equal vectors with different contents (two releases merging differently) settle on the same one everywhere.
    @Test func equalVectorsWithDifferentContentsPickTheSameVersionInAnyOrder() {
        let one = Self.version("a:1,b:1", writer: "a", text: "one"), two = Self.version("a:1,b:1", writer: "b", text: "two")
        let forward = VersionHistory.siblings([one, two]), backward = VersionHistory.siblings([two, one])
        #expect(forward.count == 1)
        #expect(forward == backward)
    }

    @Test func theCommonAncestorIsTheVersionBothStartedFrom() {
        let shared = Self.version("a:1", writer: "a", text: "alpha\nbeta")
        let editA = Self.version("a:2", writer: "a", text: "ALPHA\nbeta", base: shared)
        let editB = Self.version("a:1,b:1", writer: "b", text: "alpha\nBETA", base: shared)
        #expect(VersionHistory.commonAncestor(of: editA, editB) == shared.asBase)
        #expect(VersionHistory.commonAncestor(of: editB, editA) == shared.asBase)
        // B edited A's first edit while A edited it again (keeping its older base): the ancestor is
        // A's first edit, which B's base names.
        let editB2 = Self.version("a:2,b:1", writer: "b", text: "ALPHA\nBETA", base: editA)
        let editA2 = Self.version("a:3", writer: "a", text: "ALPHA!\nbeta", base: shared)
        #expect(VersionHistory.commonAncestor(of: editA2, editB2) == editA.asBase)
        // Both kept only older bases: the shared history (a:2) is not among them.
        let editB3 = Self.version("a:2,b:2", writer: "b", text: "ALPHA\nBETA!", base: shared)
        #expect(VersionHistory.commonAncestor(of: editA2, editB3) == nil)
        // Unrelated creations share nothing.
        #expect(VersionHistory.commonAncestor(of: Self.version("a:1", writer: "a"), Self.version("b:1", writer: "b")) == nil)
    }

    @Test func conflictCopyNamesAreTheSameOnEveryDevice() {
        let first = VersionHistory.conflictCopyName(of: "3f2a9c1e-0d4b-4c55-9a0e-5b7f2d8e6a11", losing: VersionVector(tag: "a:2")!)
        #expect(first == VersionHistory.conflictCopyName(of: "3f2a9c1e-0d4b-4c55-9a0e-5b7f2d8e6a11", losing: VersionVector(tag: "a:2")!))
        #expect(first != VersionHistory.conflictCopyName(of: "3f2a9c1e-0d4b-4c55-9a0e-5b7f2d8e6a11", losing: VersionVector(tag: "a:3")!))
        #expect(Identifier.isValid(first))
        #expect(Array(first)[14] == "8", "a version 8 UUID")
    }
}

import Testing

@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

/// Binary entries: their bytes are a file of their own, written before the line that adds the
/// entry and gone once the entry's removal returns; nothing a crash leaves behind stays, and a
/// line whose file is missing is reported, never trusted.
@Suite struct ClipStoreBinaryTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path + "/clips" }
    var blobs: String { path + "/blobs" }

    func image(_ seed: UInt64, at time: Int64) -> (entry: ClipEntry, bytes: [UInt8]) {
        let bytes = TestImages.png(width: 64, height: 32, payload: 4096, seed: seed)
        let entry = ClipEntry(
            id: Identifier.make(), text: "", timestamp: time, binary: ClipBinary(describing: bytes, type: "image/png"))
        return (entry, bytes)
    }

    func blobNames() throws -> [String] { try FileSystem.exists(blobs) ? FileSystem.list(blobs, includingHidden: true) : [] }

    @Test func bytesAreKeptByteForByteInAPrivateFile() throws {
        let store = try ClipStore(directory: path)
        let (entry, bytes) = image(1, at: 1)
        _ = try store.add(entry, bytes: bytes, maxEntries: 10)
        let stored = try #require(try store.newest())
        #expect(stored == entry && stored.binary?.width == 64 && stored.binary?.height == 32)
        #expect(try store.bytes(of: stored) == bytes)
        var info = stat()
        #expect(lstat(blobs + "/" + entry.id, &info) == 0 && info.st_mode & 0o777 == 0o600)
        // Reopened (the index rebuilt from the log), the entry reads the same.
        try FileSystem.remove(path + "/index")
        #expect(try ClipStore(directory: path).newest() == entry)
    }

    @Test func repeatingTheNewestImageAddsNothing() throws {
        let store = try ClipStore(directory: path)
        let first = image(1, at: 1)
        _ = try store.add(first.entry, bytes: first.bytes, maxEntries: 10)
        var again = image(1, at: 2)
        #expect(try store.add(again.entry, bytes: again.bytes, maxEntries: 10).duplicate)
        // The same bytes of another type, and other bytes, are new entries.
        again.entry.binary?.type = "application/octet-stream"
        #expect(try !store.add(again.entry, bytes: again.bytes, maxEntries: 10).duplicate)
        let other = image(2, at: 3)
        #expect(try !store.add(other.entry, bytes: other.bytes, maxEntries: 10).duplicate)
        // A text after an image is no repeat of it, however empty the image's text is.
        #expect(try !store.add(ClipEntry(id: Identifier.make(), text: "", timestamp: 4), maxEntries: 10).duplicate)
        #expect(try store.count == 4)
        #expect(try blobNames().count == 3)
    }

    @Test func removalEvictionAndClearingTakeTheBytesAlong() throws {
        let store = try ClipStore(directory: path)
        let images = (1...4).map { image(UInt64($0), at: Int64($0)) }
        for (entry, bytes) in images { _ = try store.add(entry, bytes: bytes, maxEntries: 3) }
        // The fourth add evicted the first.
        #expect(try blobNames().sorted() == images.dropFirst().map(\.entry.id).sorted())
        try store.remove(ids: [images[1].entry.id])
        #expect(try blobNames().sorted() == images.suffix(2).map(\.entry.id).sorted())
        _ = try store.evict(keeping: 1)
        #expect(try blobNames() == [images[3].entry.id])
        try store.clear(includingPinned: true)
        #expect(try blobNames().isEmpty)
    }

    @Test func orphansACrashLeftAreRemovedWhenTheIndexIsRebuilt() throws {
        let kept = image(1, at: 1)
        do {
            let store = try ClipStore(directory: path)
            _ = try store.add(kept.entry, bytes: kept.bytes, maxEntries: 10)
        }
        // What a kill between writing the bytes and the line leaves, and a torn temporary file.
        try FileSystem.writeAtomically(blobs + "/" + Identifier.make(), [1, 2, 3])
        try FileSystem.writeAtomically(blobs + "/" + FileSystem.temporaryName(), [4])
        try FileSystem.remove(path + "/index")
        let store = try ClipStore(directory: path)
        #expect(try blobNames() == [kept.entry.id])
        #expect(try store.bytes(of: #require(try store.newest())) == kept.bytes)
    }

    @Test func compactionKeepsTheBytesOfLiveEntries() throws {
        let store = try ClipStore(directory: path)
        let kept = image(1, at: 1)
        _ = try store.add(kept.entry, bytes: kept.bytes, maxEntries: 10)
        try FileSystem.writeAtomically(blobs + "/" + Identifier.make(), [1])
        try store.compact()
        #expect(try blobNames() == [kept.entry.id])
        #expect(try store.bytes(of: #require(try store.newest())) == kept.bytes)
    }

    @Test func missingOrChangedBytesAreReportedNotTrusted() throws {
        let store = try ClipStore(directory: path)
        let (entry, bytes) = image(1, at: 1)
        _ = try store.add(entry, bytes: bytes, maxEntries: 10)
        try FileSystem.writeAtomically(blobs + "/" + entry.id, Array(bytes.dropLast()) + [bytes.last! ^ 1])
        #expect(throws: ItsypadError.self) { try store.bytes(of: entry) }
        try FileSystem.remove(blobs + "/" + entry.id)
        let error = #expect(throws: ItsypadError.self) { try store.bytes(of: entry) }
        #expect(error?.message.contains("missing") == true)
        // The listing still describes it, from its line alone.
        #expect(try store.entries().map(\.id) == [entry.id])
    }

    @Test func insertTakesOnlyBinaryEntriesThatComeWithTheirBytes() throws {
        let store = try ClipStore(directory: path)
        let good = image(1, at: 1)
        let wrong = image(2, at: 2)
        let missing = image(3, at: 3)
        let inserted = try store.insert(
            [good.entry, wrong.entry, missing.entry], bytes: [good.entry.id: good.bytes, wrong.entry.id: good.bytes])
        #expect(inserted.map(\.id) == [good.entry.id])
        #expect(try blobNames() == [good.entry.id])
        #expect(try store.bytes(of: good.entry) == good.bytes)
    }
}

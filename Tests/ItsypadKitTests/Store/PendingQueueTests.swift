import Testing
@testable import ItsypadKit

@Suite struct PendingQueueTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path + "/sync/pending.log" }
    let a = RecordKey(.tab, "a"), b = RecordKey(.tab, "b")

    @Test func deduplicatesInFirstPendingOrder() throws {
        let queue = try PendingQueue(path: path)
        try queue.enqueue(.save, a)
        try queue.enqueue(.save, b)
        try queue.enqueue(.save, a)
        #expect(try queue.changes().map(\.key) == [a, b])
        #expect(try PendingQueue(path: path).changes().map(\.key) == [a, b])
    }

    @Test func deleteReplacesSave() throws {
        let queue = try PendingQueue(path: path)
        try queue.enqueue(.save, a)
        try queue.enqueue(.delete, a)
        #expect(try PendingQueue(path: path).changes().map { "\($0.key.name) \($0.operation)" } == ["a delete"])
    }

    @Test func confirmingAnOlderVersionKeepsALaterEdit() throws {
        let queue = try PendingQueue(path: path)
        try queue.enqueue(.save, a)
        let batch = try queue.changes()
        try queue.enqueue(.save, a)   // edited while the batch was in flight
        try queue.confirm(batch)
        #expect(try PendingQueue(path: path).changes().map(\.key) == [a])
        try queue.confirm(try queue.changes())
        #expect(try PendingQueue(path: path).changes().isEmpty)
    }

    @Test func compactionKeepsVersionsAndDropsDeletesTheBackendNeverHad() throws {
        let queue = try PendingQueue(path: path)
        try queue.enqueue(.save, a)
        try queue.enqueue(.save, b)
        try queue.enqueue(.delete, b)
        let before = try queue.changes()
        try queue.compact { _ in false }
        #expect(try PendingQueue(path: path).changes() == before.filter { $0.key == a })
    }

    @Test func ignoresATornTail() throws {
        let queue = try PendingQueue(path: path)
        try queue.enqueue(.save, a)
        let bytes = try #require(try FileSystem.read(path))
        try FileSystem.writeAtomically(path, bytes + Array("{\"op\":\"sa".utf8))
        #expect(try PendingQueue(path: path).changes().map(\.key) == [a])
    }
}

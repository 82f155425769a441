import Testing

@testable import ItsypadBackend

#if canImport(Glibc)
import Glibc
#endif

@Suite("Locking")
struct LockTests {
    @Test("writers time out with .locked while another holds the lock; readers are not blocked")
    func timeout() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        try fixture.backend.save(tab("a"))
        let backend = fixture.sibling(lockTimeout: 0.2)

        let descriptor = open(fixture.layout.lockFile, O_RDWR | O_CLOEXEC)
        try #require(descriptor >= 0)
        try #require(lockSoon(descriptor))
        #expect(throws: BackendError.locked) { try backend.modify(saves: [RecordSave(record: tab("b"))], deletes: [], device: "B") }
        #expect(throws: BackendError.locked) { try backend.compact() }
        #expect(try backend.fetchAll(since: nil).changes.map(\.recordName) == ["a"])

        close(descriptor)
        #expect(try backend.save(tab("b")).first?.recordChangeTag == "2")
    }

    @Test("a writer waits for the lock when it is released within the time-out")
    func waits() throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let descriptor = open(fixture.layout.lockFile, O_RDWR | O_CLOEXEC)
        try #require(descriptor >= 0)
        try #require(lockSoon(descriptor))
        let releaser = Thread(descriptor: descriptor, afterMilliseconds: 100)
        releaser.start()
        defer { releaser.join() }
        #expect(try fixture.sibling(lockTimeout: 5).save(tab("a")).first?.recordChangeTag == "1")
    }

    @Test("concurrent writers on separate instances never reuse a seq or lose a batch")
    func concurrentWriters() async throws {
        let fixture = try TemporaryBackend()
        defer { fixture.remove() }
        let start = try fixture.backend.currentToken()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<2 {
                let backend = fixture.sibling()
                group.addTask {
                    for index in 0..<25 {
                        try backend.save(tab("w\(writer)-\(index)"), device: "w\(writer)")
                    }
                }
            }
            try await group.waitForAll()
        }
        let changes = try fixture.backend.fetchAll(since: start).changes
        #expect(changes.compactMap { $0.savedRecord?.recordChangeTag } == (1...50).map(String.init))
        #expect(Set(changes.map(\.recordName)).count == 50)
        #expect(try fixture.backend.fetchAll(since: nil).changes.count == 50)
    }
}

/// Closes a descriptor (releasing its flock) on another thread after a delay.
private final class Thread: @unchecked Sendable {
    private let descriptor: Int32
    private let delay: UInt32
    private var handle = pthread_t()

    init(descriptor: Int32, afterMilliseconds milliseconds: UInt32) {
        self.descriptor = descriptor
        self.delay = milliseconds * 1000
    }

    func start() {
        let context = Unmanaged.passRetained(self).toOpaque()
        pthread_create(
            &handle, nil,
            { context in
                let thread = Unmanaged<Thread>.fromOpaque(context!).takeRetainedValue()
                usleep(thread.delay)
                close(thread.descriptor)
                return nil
            }, context)
    }

    func join() {
        pthread_join(handle, nil)
    }
}

/// Takes the flock, retrying briefly: a process another test is spawning may hold an inherited
/// descriptor to a lock file for the instant between its fork and its exec.
private func lockSoon(_ descriptor: Int32) -> Bool {
    for _ in 0..<200 {
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return true }
        usleep(5_000)
    }
    return false
}

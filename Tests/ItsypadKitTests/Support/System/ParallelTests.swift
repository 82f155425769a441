import Synchronization
import Testing

@testable import ItsypadSupport

#if canImport(Glibc)
import Glibc
#endif

struct ParallelTests {
    struct Failure: Error, Equatable {
        let part: Int
    }

    @Test("every part's result, in order, whatever the threads", arguments: [1, 2, 4, 16])
    func resultsInOrder(threads: Int) throws {
        for parts in [0, 1, 3, 100] {
            #expect(try Parallel.map(parts: parts, threads: threads) { $0 * $0 } == (0..<parts).map { $0 * $0 })
        }
    }

    @Test("the parts are shared among threads")
    func partsRunOnManyThreads() throws {
        let threads = Mutex<Set<UInt>>([])
        _ = try Parallel.map(parts: 64, threads: 2) { _ in
            // Long enough that the other thread takes parts before this one has done them all.
            usleep(2_000)
            threads.withLock { _ = $0.insert(UInt(pthread_self())) }
        }
        #expect(threads.withLock { $0.count } == 2)
    }

    @Test("the error of the first part that throws, after every part has run")
    func firstErrorByIndex() {
        let ran = Mutex(0)
        #expect(throws: Failure(part: 3)) {
            try Parallel.map(parts: 50, threads: 4) { part in
                ran.withLock { $0 += 1 }
                if part % 10 == 3 { throw Failure(part: part) }
                return part
            }
        }
        #expect(ran.withLock { $0 } == 50)
    }
}

import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Work shared among this machine's processors, for the few jobs where one core is the bottleneck
/// (a first sync reads and decodes every record file of the backend). Plain threads: no
/// Foundation, no Dispatch, and nothing to set up for the commands that never need it.
package enum Parallel {
    /// The processors this process may run on, at most `maxThreads`.
    package static var threads: Int { min(max(Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), 1), maxThreads) }

    /// More threads than this cost more in start-up and in the file system's locks than they give.
    static let maxThreads = 4

    /// `body` of each part in `0..<parts`, in order: the parts are handed out one at a time to up
    /// to `threads` threads (this one among them). Throws the error of the first part (by index)
    /// that threw, once every part has finished.
    package static func map<Result: Sendable>(
        parts: Int, threads: Int = Parallel.threads, _ body: @escaping @Sendable (Int) throws -> Result
    ) throws -> [Result] {
        let helpers = min(threads, parts) - 1
        guard helpers > 0 else { return try (0..<parts).map(body) }
        let job = Job(parts: parts, body: body)
        var started: [pthread_t] = []
        for _ in 0..<helpers {
            var thread = pthread_t()
            let context = Unmanaged<Worker>.passRetained(job).toOpaque()
            if pthread_create(
                &thread, nil,
                { context in
                    Unmanaged<Worker>.fromOpaque(context!).takeRetainedValue().work()
                    return nil
                }, context) == 0
            {
                started.append(thread)
            } else {
                // No thread to be had: this one does the share it would have done.
                Unmanaged<Worker>.fromOpaque(context).release()
            }
        }
        job.work()
        for thread in started { pthread_join(thread, nil) }
        return try job.results()
    }

    /// What a thread runs: not generic, as a C function that starts a thread cannot be.
    private class Worker: @unchecked Sendable {
        func work() {}
    }

    /// The parts of one `map` and their outcomes, shared by its threads.
    private final class Job<Result: Sendable>: Worker, @unchecked Sendable {
        let parts: Int
        let body: @Sendable (Int) throws -> Result
        /// The next part to hand out, and the outcomes so far (by part).
        let state: Mutex<(next: Int, outcomes: [Int: Swift.Result<Result, any Error>])>

        init(parts: Int, body: @escaping @Sendable (Int) throws -> Result) {
            self.parts = parts
            self.body = body
            state = Mutex((0, [:]))
        }

        override func work() {
            while true {
                let part = state.withLock { state -> Int? in
                    guard state.next < parts else { return nil }
                    defer { state.next += 1 }
                    return state.next
                }
                guard let part else { return }
                let outcome = Swift.Result { try body(part) }
                state.withLock { $0.outcomes[part] = outcome }
            }
        }

        func results() throws -> [Result] {
            let outcomes = state.withLock { $0.outcomes }
            return try (0..<parts).map { try outcomes[$0]!.get() }
        }
    }
}

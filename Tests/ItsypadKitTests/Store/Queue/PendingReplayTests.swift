import Testing

@testable import ItsypadModel
@testable import ItsypadStore
@testable import ItsypadSupport

/// The compact replay (`PendingQueue.Replay`) against the queue's rules written plainly: random
/// runs of enqueues, confirmations (some of versions since replaced), discards, compactions and
/// reopenings, over clips (packed), tabs and a clip whose name is no canonical id.
@Suite struct PendingReplayTests {
    /// The rules of `PendingQueue`, one dictionary and one ordered list.
    struct Reference {
        var order: [RecordKey] = []
        var waiting: [RecordKey: PendingChange] = [:]
        var version = 0

        mutating func enqueue(_ operation: PendingChange.Operation, _ key: RecordKey, tag: String?, hard: Bool) {
            version += 1
            if waiting[key] == nil { order.append(key) }
            waiting[key] = PendingChange(key: key, operation: operation, version: version, tag: tag, hard: hard && operation == .delete)
        }

        mutating func confirm(_ sent: PendingChange) {
            guard let change = waiting[sent.key], change.version <= sent.version else { return }
            forget(sent.key)
        }

        mutating func forget(_ key: RecordKey) {
            waiting[key] = nil
            order.removeAll { $0 == key }
        }

        /// Compaction writes the waiting changes in order with their versions, and replay numbers
        /// each line past the one before it.
        mutating func compact() {
            version = 0
            for key in order {
                version = max(version + 1, waiting[key]!.version)
                waiting[key]!.version = version
            }
        }

        var changes: [PendingChange] { order.map { waiting[$0]! } }
    }

    static func keys() -> [RecordKey] {
        let clips = (0..<24).map { number in
            let hex = String(number * 7919 + 1, radix: 16)
            return RecordKey(.clip, "0000\(number % 10)000-0000-4000-8000-" + String(repeating: "0", count: 12 - hex.count) + hex)
        }
        return clips + (0..<6).map { RecordKey(.tab, "tab \($0)") } + [
            RecordKey(.clip, "not a canonical id"), RecordKey(.setting, "theme"),
        ]
    }

    @Test(arguments: 1...12 as ClosedRange<UInt64>)
    func replaysAsTheRulesSay(seed: UInt64) throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/sync/pending.log"
        var random = SeededGenerator(seed: seed)
        let keys = PendingReplayTests.keys()
        var reference = Reference()
        var queue = try PendingQueue(path: path)
        var inFlight: [PendingChange] = []
        for step in 0..<300 {
            let key = keys.randomElement(using: &random)!
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<45:
                let operation: PendingChange.Operation = Bool.random(using: &random) ? .save : .delete
                let tag = Int.random(in: 0..<4, using: &random) == 0 ? "tag \(step)" : nil
                let hard = Bool.random(using: &random)
                try queue.enqueue(operation, key, tag: tag, hard: hard)
                reference.enqueue(operation, key, tag: tag, hard: hard)
            case 45..<55:
                // Read now, confirmed later: a change enqueued meanwhile stays.
                inFlight = Array(try queue.changes().shuffled(using: &random).prefix(5))
            case 55..<70:
                try queue.confirm(inFlight)
                for change in inFlight { reference.confirm(change) }
                inFlight = []
            case 70..<75:
                try queue.discard([key])
                reference.forget(key)
            case 75..<80:
                try queue.compact { _ in true }
                reference.compact()
            case 80..<88:
                queue = try PendingQueue(path: path)
            default:
                #expect(try queue.change(for: key) == reference.waiting[key], "seed \(seed), step \(step), \(key)")
            }
            if step % 25 == 24 {
                #expect(try PendingQueue(path: path).changes() == reference.changes, "seed \(seed), step \(step)")
                #expect(try queue.changes() == reference.changes, "seed \(seed), step \(step): the queue read before")
                let waiting = try PendingQueue(path: path).keys()
                #expect(keys.filter(waiting.contains) == keys.filter { reference.waiting[$0] != nil }, "seed \(seed), step \(step)")
            }
        }
    }
}

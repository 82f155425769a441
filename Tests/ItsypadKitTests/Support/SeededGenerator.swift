/// A deterministic random source for randomized tests: the same seed gives the same run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return state ^ (state >> 29)
    }

    /// True with probability `chance` (0…1).
    mutating func chance(_ chance: Double) -> Bool {
        chance > 0 && Double.random(in: 0..<1, using: &self) < chance
    }
}

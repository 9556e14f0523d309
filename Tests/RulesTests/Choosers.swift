import TestSupport

/// Where the ownership model's nondeterminism comes from: which actor steps, crashes,
/// rebalances, FCM's answers. `choose(n)` returns 0..<n.
protocol Chooser {
    mutating func choose(_ count: Int) -> Int
}

/// Seeded random choices (TestSupport's SplitMix64), for the larger configurations.
struct RandomChooser: Chooser, RandomNumberGenerator {
    var generator: SplitMix64

    init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    mutating func next() -> UInt64 { generator.next() }

    mutating func choose(_ count: Int) -> Int { count <= 1 ? 0 : Int(next() % UInt64(count)) }
}

/// Every sequence of choices, depth first (stateless model checking by re-execution): a run
/// follows `prefix`, then takes 0 at each new choice point and records how many options there
/// were; ``advance()`` moves to the next unexplored sequence.
struct ExhaustiveChooser: Chooser {
    private(set) var taken: [Int] = []
    private var options: [Int] = []
    private var position = 0

    mutating func choose(_ count: Int) -> Int {
        guard count > 1 else { return 0 }
        defer { position += 1 }
        if position < taken.count {
            options[position] = count
            return min(taken[position], count - 1)
        }
        taken.append(0)
        options.append(count)
        return 0
    }

    /// Prepares the next run; false when every sequence was explored.
    mutating func advance() -> Bool {
        taken = Array(taken.prefix(position))
        options = Array(options.prefix(position))
        while let last = taken.last {
            if last + 1 < options[taken.count - 1] {
                taken[taken.count - 1] = last + 1
                position = 0
                return true
            }
            taken.removeLast()
            options.removeLast()
        }
        return false
    }
}

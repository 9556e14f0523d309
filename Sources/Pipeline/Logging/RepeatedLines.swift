/// Which lines of a stream of log lines to write: the first of its kind, then at most one per
/// ``period``, saying how many like it were held back since. Pure: kinds and instants in,
/// verdicts out; ``KafkaLogs`` keeps one under its lock.
///
/// A broker that is down makes librdkafka fail a connection attempt every 50–100 ms, each a line:
/// thousands a minute that say one thing. What an operator needs is the change (the first line)
/// and that it goes on (a line every 30 s with a count).
struct RepeatedLines: Sendable {
    /// At most one line of a kind per this long.
    let period: Duration
    /// Each kind seen within ``period``: when a line of it was last written, and the lines of it
    /// held back since.
    private var kinds: [String: (written: ContinuousClock.Instant, heldBack: Int)] = [:]
    /// Kinds remembered at most: the oldest are forgotten beyond it (a new one is written).
    static let capacity = 256

    init(period: Duration) {
        self.period = period
    }

    enum Verdict: Equatable {
        /// Write the line, saying how many like it were held back since the last one written.
        case write(heldBack: Int)
        /// Hold it back: one like it was written less than a period ago.
        case hold
    }

    mutating func admit(_ kind: String, at now: ContinuousClock.Instant) -> Verdict {
        if let seen = kinds[kind], now - seen.written < period {
            kinds[kind]?.heldBack += 1
            return .hold
        }
        let heldBack = kinds[kind]?.heldBack ?? 0
        if kinds[kind] == nil, kinds.count >= Self.capacity { forgetOldest(at: now) }
        kinds[kind] = (now, 0)
        return .write(heldBack: heldBack)
    }

    /// Forgets the kinds last written a period ago or more, else the oldest one.
    private mutating func forgetOldest(at now: ContinuousClock.Instant) {
        kinds = kinds.filter { now - $0.value.written < period }
        if kinds.count >= Self.capacity, let oldest = kinds.min(by: { $0.value.written < $1.value.written })?.key {
            kinds[oldest] = nil
        }
    }
}

/// The phases every run goes through, a worker's (``Pipeline``) or a ``Replay``'s, as a pure
/// value: ``DeliveryEngine`` feeds it what happens and does what it answers.
///
/// ```
/// idle ──start──▶ reading ──read ended──▶ draining ──drain ended──▶ closing ──closed──▶ closed
///                   │ stop / failure: the reader is told to end (once)
/// ```
///
/// A stop or a failure may come in any phase, even before the start (the run then reads
/// nothing); only the first failure is kept, and it is what the run reports.
struct EngineLifecycle: Equatable, Sendable {
    enum Phase: Int, Comparable, Sendable {
        case idle, reading, draining, closing, closed
        static func < (a: Phase, b: Phase) -> Bool { a.rawValue < b.rawValue }
    }

    /// What the shell must do after an input.
    enum Action: Equatable, Sendable {
        case none
        /// Wake the reader: it takes no more messages.
        case stopReading
    }

    private(set) var phase = Phase.idle
    private(set) var stopRequested = false
    /// The first failure (FCM refused the credentials, Kafka failed): the run ends with it.
    private(set) var failure: String?

    /// Whether the reader should take no more messages.
    var readingEnds: Bool { stopRequested || failure != nil || phase > .reading }

    /// Whether the run is reading (or waiting for partitions to read).
    var isReading: Bool { phase == .reading && !readingEnds }

    /// The run begins. False when it ran already: a run happens once.
    mutating func start() -> Bool {
        guard phase == .idle else { return false }
        phase = .reading
        return true
    }

    mutating func requestStop() -> Action {
        let wasReading = !readingEnds
        stopRequested = true
        return wasReading && phase == .reading ? .stopReading : .none
    }

    mutating func fail(_ reason: String) -> Action {
        let wasReading = !readingEnds
        if failure == nil { failure = reason }
        return wasReading && phase == .reading ? .stopReading : .none
    }

    /// The reader ended (told to, or its source ended): events in flight drain next.
    mutating func readEnded() {
        if phase == .reading { phase = .draining }
    }

    /// Events in flight drained, or the shutdown timeout passed: the final commit comes next.
    mutating func drainEnded() {
        if phase == .draining { phase = .closing }
    }

    /// The source is closed.
    mutating func closed() {
        if phase == .closing { phase = .closed }
    }
}

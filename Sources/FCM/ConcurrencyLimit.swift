/// How many sends may be in flight, sized from what FCM's answers show: by Little's law, a rate
/// `λ` at answer time `W` needs `λ × W` sends in flight. Pure: completions and instants in, a
/// limit out; ``SendGate`` keeps one under its lock.
///
/// The estimate follows BBR's: the best rate of the last few seconds (what the path delivered
/// at most) times the shortest answer time of the last few (FCM's own, without any queueing on
/// our side), with a gain above 1, so that whenever the limit is what holds the rate back, the
/// next estimate is higher and the limit grows, until something else (CPU, the server, a rate
/// cap, the ceiling) holds the rate; then it stays just above what that rate needs. A floor
/// keeps a quiet worker ready, and the ceiling bounds memory.
///
/// ```
/// limit = clamp(gain × maxRate(rateWindow) × minAnswerTime(answerWindow) + floor, floor, ceiling)
/// ```
///
/// When the worker itself is the bottleneck (CPU), the extra sends the gain lets in wait in
/// socket buffers and FCM's front end, so every answer time measured grows with the sends in
/// flight, and the estimate would feed on itself up to the ceiling (measured at about twice
/// what carried the rate; docs/benchmarks-history.md). So, as BBR's ProbeRTT, the limit is halved for two
/// answer times when for a whole `probeInterval` no answer came within a tenth of the shortest
/// known (the *baseline*: the shortest before the first halving, then the shortest each
/// halving measured, or any shorter answer since): what waited drains, and the answers of that
/// moment show the answer time without our queue, which the answer window then keeps. As
/// BBR's, the halving is skipped while answers still come that fast: some sends then meet no
/// queue of ours, and a halving would measure what the window already holds, at the cost of
/// part of the rate for two answer times (what that costs a saturated run:
/// docs/benchmarks-history.md).
public struct ConcurrencyLimit: Sendable {
    public struct Parameters: Sendable, Equatable {
        /// The limit at rest, and what is added above the estimate. Default 1,000: with fewer
        /// in flight each answer pays its own wakeups, and a floor of 100 measured slower, at
        /// more CPU per event (docs/benchmarks-history.md).
        public var floor = 1_000
        /// The limit at most (memory). Default 5,000: 14,000 sends a second at 350 ms answers.
        public var ceiling = 5_000
        /// Above 1, so that a limit-bound rate always raises the next estimate. Default 1.5.
        public var gain = 1.5
        /// Rates are counted per bucket of this length. Default 100 ms.
        public var bucket: Duration = .milliseconds(100)
        /// The best rate over this many buckets counts. Default 30 (3 s).
        public var rateBuckets = 30
        /// The shortest answer time over this many buckets counts. Default 100 (10 s), so the
        /// limit follows answer times that grow for good.
        public var answerBuckets = 100
        /// How long answers may all stay above the baseline's tolerance before the limit is
        /// halved to measure answer times without our queue. Default 8 s: within the answer
        /// window, so the window always holds such a measurement.
        public var probeInterval: Duration = .seconds(8)
        /// An answer within this share above the baseline met no queue of ours. Default 0.1.
        public var baselineTolerance = 0.1

        public init() {}
    }

    public let parameters: Parameters
    /// The current limit.
    public private(set) var limit: Int

    /// Per bucket: completions and the shortest answer time; the newest last.
    private var buckets: [(completions: Int, shortest: Duration)] = []
    private var bucketStart: ContinuousClock.Instant
    /// The next halving, and the end of the one under way.
    private var nextProbe: ContinuousClock.Instant
    private var probeEnd: ContinuousClock.Instant?
    /// The shortest answer time known to carry no queue of ours, and the shortest the halving
    /// under way has seen.
    private var baseline: Duration?
    private var probeShortest: Duration?

    public init(_ parameters: Parameters = Parameters(), now: ContinuousClock.Instant = .now) {
        self.parameters = parameters
        self.limit = max(1, min(parameters.floor, parameters.ceiling))
        self.bucketStart = now
        self.nextProbe = now + parameters.probeInterval
    }

    /// A send got its answer (any answer: FCM answering slowly is what this measures) after
    /// `answerTime`. Returns the limit, updated when a bucket closed.
    @discardableResult
    public mutating func completed(answerTime: Duration, at now: ContinuousClock.Instant) -> Int {
        advance(to: now)
        if buckets.isEmpty { buckets.append((0, .seconds(3600))) }
        buckets[buckets.count - 1].completions += 1
        buckets[buckets.count - 1].shortest = min(buckets[buckets.count - 1].shortest, answerTime)
        return limit
    }

    /// Closes the buckets that have ended by `now` and recomputes the limit from them.
    public mutating func advance(to now: ContinuousClock.Instant) {
        guard now - bucketStart >= parameters.bucket else { return }
        let elapsed = Int((now - bucketStart) / parameters.bucket)
        if let closing = buckets.last, closing.completions > 0 { observe(shortest: closing.shortest, closedAt: bucketStart + parameters.bucket) }
        // The open bucket closes; empty ones stand for the time nothing completed.
        for _ in 0..<min(elapsed, parameters.answerBuckets) { buckets.append((0, .seconds(3600))) }
        bucketStart += parameters.bucket * elapsed
        if buckets.count > parameters.answerBuckets { buckets.removeFirst(buckets.count - parameters.answerBuckets) }
        recompute(now: now)
    }

    private mutating func recompute(now: ContinuousClock.Instant) {
        let estimate = estimated()
        if let end = probeEnd, now < end {
            limit = max(min(parameters.floor, parameters.ceiling), estimate / 2)
            return
        }
        if probeEnd != nil {
            // What the halving measured is the baseline now, even if longer than the last one:
            // answers that slowed for good are FCM's, not our queue's.
            probeEnd = nil
            baseline = probeShortest ?? baseline
            probeShortest = nil
            nextProbe = now + parameters.probeInterval
        }
        // Halving only matters when the gain's extra is more than the floor.
        if now >= nextProbe, estimate > 2 * parameters.floor, let shortest = shortestAnswer {
            probeEnd = now + max(.milliseconds(200), shortest * 2)
            limit = max(parameters.floor, estimate / 2)
            return
        }
        if now >= nextProbe { nextProbe = now + parameters.probeInterval }
        limit = estimate
    }

    /// A bucket that ended at `end` had `shortest` as its shortest answer time: one near the
    /// baseline puts the next halving off by a `probeInterval`.
    private mutating func observe(shortest: Duration, closedAt end: ContinuousClock.Instant) {
        if probeEnd != nil {
            probeShortest = min(probeShortest ?? shortest, shortest)
            return
        }
        let known = baseline ?? shortest
        baseline = min(known, shortest)
        if shortest <= known * (1 + parameters.baselineTolerance) { nextProbe = max(nextProbe, end + parameters.probeInterval) }
    }

    private var shortestAnswer: Duration? {
        let shortest = buckets.dropLast().map(\.shortest).min() ?? .seconds(3600)
        return shortest < .seconds(3600) ? shortest : nil
    }

    private func estimated() -> Int {
        // The newest bucket is still filling; the estimate uses the closed ones.
        let closed = buckets.dropLast()
        let recent = closed.suffix(parameters.rateBuckets)
        let best = recent.map(\.completions).max() ?? 0
        let shortest = closed.map(\.shortest).min() ?? .seconds(3600)
        guard best > 0, shortest < .seconds(3600) else {
            return max(1, min(parameters.floor, parameters.ceiling))
        }
        let rate = Double(best) / seconds(parameters.bucket)
        let estimate = parameters.gain * rate * seconds(shortest) + Double(parameters.floor)
        return max(1, min(parameters.ceiling, max(parameters.floor, Int(estimate.rounded(.up)))))
    }

    private func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}

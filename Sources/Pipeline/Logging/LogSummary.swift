import Logging
import Synchronization

/// Lines of failures that repeat, written as incidents (``RepeatedLines``): the first line of a
/// kind as it is, then every ``period`` while it goes on the same line with how many like it
/// came since (`repeated`) and for how long (`lasting`), and when none has come for a period,
/// `ended: …` at notice level with how many in all (`total`) and how long (`lasted`).
///
/// One per process: the consumer's and the producer's librdkafka lines, commits, record writes
/// and dead FCM connections share it, so one broker outage is one incident however many clients
/// see it. ``run()`` ticks it: without it, counts and ends are written only when the next line
/// of their kind comes. Safe from any thread: the state is under a lock, lines are written
/// outside it.
public final class LogSummary: Sendable {
    /// A line as it would be written.
    public struct Line: Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: Logger.Metadata
    }

    public let logger: Logger
    public let period: Duration
    private let lines: Mutex<RepeatedLines<Line>>
    private let now: @Sendable () -> ContinuousClock.Instant

    /// - Parameter period: how often a repeating line is counted, and how long without one
    ///   before its incident has ended (`log.summary_period_ms`).
    public convenience init(logger: Logger, period: Duration = .seconds(30)) {
        self.init(logger: logger, period: period, now: { .now })
    }

    init(logger: Logger, period: Duration, now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.logger = logger
        self.period = period
        self.lines = Mutex(RepeatedLines(period: period))
        self.now = now
    }

    /// Logs `message` as the first of its incident, as a count, or not at all. `kind` says which
    /// lines are alike (what names the partition, project or connection belongs in it).
    public func log(_ level: Logger.Level, _ message: @autoclosure () -> String, kind: String, metadata: Logger.Metadata = [:]) {
        guard logger.logLevel <= level else { return }
        let line = Line(level: level, message: message(), metadata: metadata)
        write(lines.withLock { $0.admit(kind, line, at: now()) })
    }

    /// Writes the counts and ends due now.
    public func tick() {
        write(lines.withLock { $0.tick(at: now()) })
    }

    /// Ticks every sixth of a period until the task is cancelled: an incident's end is written
    /// at most a period and a sixth after its last line.
    public func run() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: period / 6)
            tick()
        }
    }

    private func write(_ summaries: [RepeatedLines<Line>.Summary]) {
        for summary in summaries {
            switch summary {
            case .started(let line):
                logger.log(level: line.level, "\(line.message)", metadata: line.metadata)
            case .continuing(let line, let count, _, let lasting):
                var metadata = line.metadata
                metadata["repeated"] = "\(count)"
                metadata["lasting"] = "\(lasting.roundedToSeconds)"
                logger.log(level: line.level, "\(line.message)", metadata: metadata)
            case .ended(let line, let total, let lasted):
                var metadata = line.metadata
                metadata["total"] = "\(total)"
                metadata["lasted"] = "\(lasted.roundedToSeconds)"
                logger.log(level: .notice, "ended: \(line.message)", metadata: metadata)
            }
        }
    }
}

extension Duration {
    /// `42s`, `2m5s`: a wait as a log line says it.
    public var roundedToSeconds: String {
        let seconds = max(0, components.seconds)
        return seconds >= 60 ? "\(seconds / 60)m\(seconds % 60)s" : "\(seconds)s"
    }
}

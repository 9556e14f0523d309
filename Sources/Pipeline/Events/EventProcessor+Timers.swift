import Dates
import Kafka
import Mapping

// `send_at` (docs/timers.md): an event whose push is due later is written to the timer topic,
// keyed by its subject, and is done once Kafka has it, as a dead-lettered event is; the timer
// engine (`TimerPipeline`) hands it back to ``EventProcessor/process(_:)`` at its due time, when
// it is rendered and sent as if read then.
extension EventProcessor {
    /// Where pushes that wait are written (`timers.*`).
    public struct TimerOptions: Sendable {
        /// The timer topic (`timers.topic`), with `layout.partitionCount` partitions.
        public var topic: String
        public var layout: TimerLayout
        /// The furthest ahead a `send_at` may be (``SendAt/maxDelaySeconds``): a push due later
        /// is dead-lettered as `send_at_too_far` rather than kept for months.
        public var maxDelaySeconds = Int64(SendAt.maxDelaySeconds)

        public init(topic: String, layout: TimerLayout = TimerLayout()) {
            (self.topic, self.layout) = (topic, layout)
        }
    }

    /// The wall clock events are judged by (``Options/clock``): a timer engine fires by it.
    public var clock: any WallClock { options.clock }

    /// The skip code of a push due later in a run that keeps no timers (a replay).
    public static let notArmedCode = "timer_not_armed"

    /// How often quiet hours may defer one push again at its due time (the user's hours or zone
    /// changed meanwhile) before it is sent inside them.
    static let maxRedefers = 3

    /// Writes `message`'s timer for `deferral`: done once Kafka acknowledged it (and its
    /// outcome record, if any); not done if the worker stops first (the event is read again).
    func schedule(_ message: KafkaMessage, _ deferral: Deferral, _ facts: EventFacts, redefers: Int) async -> Outcome {
        let now = options.clock.nowMilliseconds()
        let due = RFC3339.format(milliseconds: deferral.due)
        guard let timers = options.timers else {
            var verdict = EventVerdict(disposition: .skipped(reason: deferral.notArmedReason))
            verdict.skipCode = Self.notArmedCode
            return await conclude(message, verdict, facts)
        }
        guard deferral.due - now <= timers.maxDelaySeconds * 1000 else {
            let reason = DeadLetterReason(
                code: "send_at_too_far",
                reason: "its send_at (\(due)) is more than \(EventAge.text(seconds: timers.maxDelaySeconds)) ahead, the furthest a timer is kept")
            return await conclude(message, EventVerdict(disposition: .deadLetter(reason)), facts)
        }
        let ladder = timers.layout.ladder
        // Under a second ahead: the lowest level, whose wake is the due time itself.
        let level = ladder.level(remainingMilliseconds: deferral.due - now) ?? 0
        let subject = Array(deferral.subject.utf8)
        let reason = TimerRecord.Reason(rawValue: deferral.reason.rawValue) ?? .sendAt
        var timer = TimerRecord.scheduling(message, subject: subject, due: deferral.due, reason: reason, level: level, ladder: ladder, now: now)
        timer.redefers = redefers
        let record = OutputRecords.timer(
            timer, topic: timers.topic, partition: timers.layout.partition(key: subject, level: level), nowMilliseconds: now)
        guard await write(record, for: message) else { return Outcome(verdict: EventVerdict(disposition: .abandoned), done: false) }
        if let eventType = facts.eventType { metrics.timerScheduled(reason: reason.rawValue, eventType: eventType, redeferred: redefers > 0) }
        return await conclude(message, EventVerdict(disposition: .deferred(due: deferral.due)), facts)
    }

    /// Sends a timer's push at its due time (the timer engine's fire): its source event,
    /// rendered and sent as if read now. True when done (sent, withheld, dead-lettered, or
    /// written to the timer topic again); false leaves the timer record to be read again.
    ///
    /// - Parameter cancelled: the cancellation that covers it (`pushbridge timers cancel`): it
    ///   is not sent, and ends as skipped with ``cancelledCode``.
    public func fire(_ timer: TimerRecord, cancelled: TimerCancel? = nil) async -> Bool {
        await process(timer.sourceMessage, firing: timer, cancelled: cancelled).done
    }

    /// The skip code of a push whose timer was cancelled.
    public static let cancelledCode = "timer_cancelled"

    /// The verdict on a push whose timer `cancel` covers.
    static func cancelledVerdict(_ cancel: TimerCancel) -> EventVerdict {
        let why = cancel.reason.isEmpty ? "" : ": \(cancel.reason)"
        var verdict = EventVerdict(disposition: .skipped(reason: "its timer was cancelled (pushbridge timers cancel)\(why)"))
        verdict.skipCode = cancelledCode
        return verdict
    }
}

import CoreMetrics

// The timer topic's metrics (docs/timers.md, *Metrics*): what was scheduled, forwarded and
// fired, how late fires are, and what a worker's timer engine holds.
extension PipelineMetrics {
    /// A timer record written for a push that waits; `redeferred`: quiet hours held it again
    /// at its due time.
    func timerScheduled(reason: String, eventType: String, redeferred: Bool = false) {
        counter("pushbridge_timers_scheduled_total", [("reason", reason), ("event_type", eventType)]).increment()
        if redeferred { counter("pushbridge_timers_redeferred_total", []).increment() }
    }

    /// A timer record forwarded to `level` (Kafka acknowledged it).
    func timerForwarded(level: Int) {
        counter("pushbridge_timers_forwarded_total", [("level", String(level))]).increment()
    }

    /// A timer's push handed to the worker at its due time, `lateMilliseconds` after it.
    func timerFired(reason: String, lateMilliseconds: Int64) {
        counter("pushbridge_timers_fired_total", [("reason", reason)]).increment()
        timerLateness.recordMilliseconds(max(0, lateMilliseconds))
    }

    /// A timer released while a cancellation (`pushbridge timers cancel`) covered it: not sent.
    func timerCancelled() {
        counter("pushbridge_timers_cancelled_total", []).increment()
    }

    /// The timer engine's records read and waiting for their release, and the timer topic's
    /// partitions it holds: refreshed per scrape.
    public func timers(waiting: Int, partitions: Int) {
        Gauge(label: "pushbridge_timers_waiting", factory: factory).record(waiting)
        Gauge(label: "pushbridge_timers_partitions", factory: factory).record(partitions)
    }

    /// An event that joined a digest window (`digest`), to be sent with it at its end.
    func digestJoined(eventType: String) {
        counter("pushbridge_digest_members_total", [("event_type", eventType)]).increment()
    }

    /// A digest window's push about to be sent at its end: its one event, or `many`.
    func digestClosed(eventType: String, many: Bool) {
        counter("pushbridge_digest_windows_closed_total", [("event_type", eventType), ("sent", many ? "many" : "single")]).increment()
    }
}

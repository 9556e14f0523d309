import CoreMetrics
import FCM
import Foundation
import Kafka
import Synchronization

/// The pipeline's metrics, through swift-metrics (the executable bootstraps Prometheus and
/// serves them at `/metrics`; docs/operations.md lists them).
public final class PipelineMetrics: Sendable {
    let eventsConsumed: Counter
    let eventsDelivered: Counter
    let eventsSkipped: Counter
    let eventsAlreadyDone: Counter
    /// Events whose push waits in the timer topic (`send_at`).
    let eventsDeferred: Counter
    let eventsDeadLettered: Counter
    let usersWithoutDevices: Counter
    /// Notifications not sent because another member claimed their state partition.
    let rulesFenced: Counter
    /// Events of capped or deduplicated mappings written to the by-subject topic (re-key mode).
    let rulesRekeyed: Counter
    let devicesWithUnknownApp: Counter
    let commitErrors: Counter
    let recordWriteErrors: Counter
    let eventsInFlight: Meter
    let sendsInFlight: Gauge
    private let pausedPartitions: Gauge
    private let assignedPartitions: Gauge
    /// Each pipeline's partitions (assigned, paused): a worker in re-key mode runs two
    /// pipelines on one set of metrics, and the gauges show their sums.
    private let partitionCounts = Mutex<[ObjectIdentifier: (assigned: Int, paused: Int)]>([:])
    let sendLatency: CoreMetrics.Timer
    let lag: CoreMetrics.Timer
    /// A timer's fire − its due time (`pushbridge_timers_late_seconds`).
    let timerLateness: CoreMetrics.Timer
    private let sendsInFlightCount = Atomic<Int>(0)
    private let counters = Mutex<[String: Counter]>([:])
    /// `pushbridge_sends_total{result="ok"}` by project.
    private let okCounters = Mutex<[String: Counter]>([:])
    /// The registry's counts at the last scrape.
    private let registryCounts = Mutex<(applied: Int, invalid: Int, dropped: [String: Int], unknownZones: Int)>((0, 0, [:], 0))
    private let traceCounts = Mutex<(exported: Int, dropped: Int)>((0, 0))

    /// Where the metrics go: the global one the executable bootstraps, or a test's own.
    let factory: MetricsFactory

    public init(factory: MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
        eventsConsumed = Counter(label: "pushbridge_events_consumed_total", factory: factory)
        eventsDelivered = Counter(label: "pushbridge_events_total", dimensions: [("result", "delivered")], factory: factory)
        eventsSkipped = Counter(label: "pushbridge_events_total", dimensions: [("result", "skipped")], factory: factory)
        eventsAlreadyDone = Counter(label: "pushbridge_events_total", dimensions: [("result", "already_done")], factory: factory)
        eventsDeferred = Counter(label: "pushbridge_events_total", dimensions: [("result", "deferred")], factory: factory)
        eventsDeadLettered = Counter(label: "pushbridge_events_total", dimensions: [("result", "dead_lettered")], factory: factory)
        usersWithoutDevices = Counter(label: "pushbridge_users_without_devices_total", factory: factory)
        rulesFenced = Counter(label: "pushbridge_rules_fenced_total", factory: factory)
        rulesRekeyed = Counter(label: "pushbridge_rules_rekeyed_total", factory: factory)
        devicesWithUnknownApp = Counter(label: "pushbridge_registry_devices_unknown_app_total", factory: factory)
        commitErrors = Counter(label: "pushbridge_commit_errors_total", factory: factory)
        recordWriteErrors = Counter(label: "pushbridge_record_write_errors_total", factory: factory)
        eventsInFlight = Meter(label: "pushbridge_events_in_flight", factory: factory)
        sendsInFlight = Gauge(label: "pushbridge_sends_in_flight", factory: factory)
        pausedPartitions = Gauge(label: "pushbridge_partitions_paused", factory: factory)
        assignedPartitions = Gauge(label: "pushbridge_partitions_assigned", factory: factory)
        assignedPartitions.record(0)  // present from the start, so "no assignment" can alert
        sendLatency = CoreMetrics.Timer(label: "pushbridge_send_latency_seconds", preferredDisplayUnit: .seconds, factory: factory)
        lag = CoreMetrics.Timer(label: "pushbridge_delivery_lag_seconds", preferredDisplayUnit: .seconds, factory: factory)
        timerLateness = CoreMetrics.Timer(label: "pushbridge_timers_late_seconds", preferredDisplayUnit: .seconds, factory: factory)
    }

    /// The pipeline of `coordinator` holds `count` partitions.
    func partitionsAssigned(_ count: Int, by coordinator: PipelineCoordinator) {
        assignedPartitions.record(updateCounts(coordinator) { $0.assigned = count }.assigned)
    }

    /// The pipeline of `coordinator` has `count` partitions paused.
    func partitionsPaused(_ count: Int, by coordinator: PipelineCoordinator) {
        pausedPartitions.record(updateCounts(coordinator) { $0.paused = count }.paused)
    }

    /// Changes `coordinator`'s counts: the sums over every pipeline.
    private func updateCounts(
        _ coordinator: PipelineCoordinator, _ change: (inout (assigned: Int, paused: Int)) -> Void
    ) -> (assigned: Int, paused: Int) {
        partitionCounts.withLock { counts in
            change(&counts[ObjectIdentifier(coordinator), default: (0, 0)])
            return counts.values.reduce((0, 0)) { ($0.0 + $1.assigned, $0.1 + $1.paused) }
        }
    }

    func sendStarted() {
        sendsInFlight.record(sendsInFlightCount.add(1, ordering: .relaxed).newValue)
    }

    /// A send counted by ``sendStarted()`` that did not go after all.
    func sendWithdrawn() {
        sendsInFlight.record(sendsInFlightCount.subtract(1, ordering: .relaxed).newValue)
    }

    /// One send's end, counted under the Firebase project it went to (`project` label).
    func sendFinished(
        _ result: Result<String, some Error>, project: String, attempts: Int, quotaRefusals: [FCMError.QuotaScope] = [], duration: Duration
    ) {
        sendsInFlight.record(sendsInFlightCount.subtract(1, ordering: .relaxed).newValue)
        sendLatency.recordNanoseconds(duration.nanoseconds)
        if attempts > 1 { counter("pushbridge_send_retries_total", [("project", project)]).increment(by: attempts - 1) }
        for scope in quotaRefusals {
            if scope == .project { counter("pushbridge_fcm_quota_pauses_total", [("project", project)]).increment() }
            counter("pushbridge_fcm_quota_exceeded_total", [("scope", scope.rawValue), ("project", project)]).increment()
        }
        switch result {
        case .success:
            // The hot path: one lookup by project, no key built.
            okCounters.withLock { counters in
                if let c = counters[project] { return c }
                let c = Counter(label: "pushbridge_sends_total", dimensions: [("result", "ok"), ("project", project)], factory: factory)
                counters[project] = c
                return c
            }.increment()
        case .failure(let error):
            counter("pushbridge_sends_total", [("result", (error as? CodedError)?.metricCode ?? "error"), ("project", project)]).increment()
        }
    }

    /// `pushbridge_build_info{version,commit,librdkafka,libcurl} 1`: what this worker runs.
    public func buildInfo(_ labels: [(String, String)]) {
        Gauge(label: "pushbridge_build_info", dimensions: labels, factory: factory).record(1)
    }

    /// One Firebase project's FCM state (`project` label), refreshed per scrape: how long FCM
    /// has not been answering (0 while it answers), how many devices and topics are held after
    /// FCM throttled them, the HTTP/2 connections open, and the sends in flight FCM's answer
    /// times call for. `maxSendsPerSecond`: the rate cap that holds (the configured one or the
    /// project share, the lower); 0 for none. `waitingForRoom`: events waiting for one of its send
    /// slots (with several projects, set aside until it has room). `accessTokenTimeLeft`: how long
    /// its access token is valid for (refreshed in the background from 5 min before; under 1 min,
    /// or 0, sends wait for a token).
    public func fcm(
        project: String, waiting: Duration?, heldTargets: Int, connections: Int, sendsInFlightLimit: Int, maxSendsPerSecond: Double?,
        waitingForRoom: Int, accessTokenTimeLeft: Duration
    ) {
        let dimensions = [("project", project)]
        Gauge(label: "pushbridge_fcm_waiting_seconds", dimensions: dimensions, factory: factory).record(Double((waiting ?? .zero).nanoseconds) / 1e9)
        Gauge(label: "pushbridge_fcm_held_targets", dimensions: dimensions, factory: factory).record(heldTargets)
        Gauge(label: "pushbridge_fcm_connections", dimensions: dimensions, factory: factory).record(connections)
        Gauge(label: "pushbridge_fcm_sends_in_flight_limit", dimensions: dimensions, factory: factory).record(sendsInFlightLimit)
        Gauge(label: "pushbridge_fcm_max_sends_per_second", dimensions: dimensions, factory: factory).record(maxSendsPerSecond ?? 0)
        Gauge(label: "pushbridge_fcm_waiting_for_room", dimensions: dimensions, factory: factory).record(waitingForRoom)
        Gauge(label: "pushbridge_fcm_access_token_seconds_left", dimensions: dimensions, factory: factory).record(
            Double(accessTokenTimeLeft.components.seconds))
    }

    /// The device registry's state, refreshed per scrape: records behind the end offsets it
    /// knows, whether it has caught up with those seen at start, and the records applied and
    /// skipped as invalid since the start (counters, moved on by what is new); `unknownTimeZones`:
    /// users' lookups judged in the default zone, their `time_zone` unknown to this machine.
    public func registry(
        lag: Int64, caughtUp: Bool, applied: Int, invalid: Int, droppedPreferences: [String: Int] = [:], unknownTimeZones: Int = 0
    ) {
        Gauge(label: "pushbridge_registry_lag_records", factory: factory).record(lag)
        Gauge(label: "pushbridge_registry_caught_up", factory: factory).record(caughtUp ? 1 : 0)
        registryCounts.withLock { last in
            if applied > last.applied { Counter(label: "pushbridge_registry_records_total", factory: factory).increment(by: applied - last.applied) }
            if invalid > last.invalid {
                Counter(label: "pushbridge_registry_invalid_records_total", factory: factory).increment(by: invalid - last.invalid)
            }
            for (member, count) in droppedPreferences where count > last.dropped[member, default: 0] {
                counter("pushbridge_registry_invalid_preferences_total", [("member", member)]).increment(by: count - last.dropped[member, default: 0])
                last.dropped[member] = count
            }
            if unknownTimeZones > last.unknownZones {
                Counter(label: "pushbridge_rules_unknown_time_zone_total", factory: factory).increment(by: unknownTimeZones - last.unknownZones)
                last.unknownZones = unknownTimeZones
            }
            (last.applied, last.invalid) = (max(applied, last.applied), max(invalid, last.invalid))
        }
    }

    /// From the record's timestamp (the producer's create time, or the broker's log-append time)
    /// to the event being done: how far behind the producers the pushes are.
    func deliveryLag(sinceMilliseconds ms: Int64) {
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        lag.recordNanoseconds(max(0, now - ms) * 1_000_000)
    }

    func deadLettered(code: String) {
        eventsDeadLettered.increment()
        counter("pushbridge_dead_lettered_total", [("reason", code)]).increment()
    }

    /// An event older than its mapping's `max_age`, done without a send (skipped or
    /// dead-lettered). Labelled by event type, which only mapped types can have.
    func tooOld(eventType: String) {
        counter("pushbridge_events_too_old_total", [("event_type", eventType)]).increment()
    }

    /// A push a user's rule withheld (docs/rules.md): one per withheld push or device.
    func withheld(rule: String, eventType: String) {
        counter("pushbridge_pushes_withheld_total", [("rule", rule), ("event_type", eventType)]).increment()
    }

    /// A record of a capped or deduplicated mapping that is not in its subject's partition
    /// (direct mode): dead-lettered `not_keyed_by_subject`.
    func rulesMisrouted(topic: String) {
        counter("pushbridge_rules_misrouted_total", [("topic", topic)]).increment()
    }

    /// A critical push sent though a rule would have withheld it.
    func bypassed(rule: String, eventType: String) {
        counter("pushbridge_rules_bypassed_total", [("rule", rule), ("event_type", eventType)]).increment()
    }

    /// An event no variant of its type takes, done without a send (skipped or dead-lettered).
    func unmatched(eventType: String) {
        counter("pushbridge_events_unmatched_total", [("event_type", eventType)]).increment()
    }

    /// An event of a type with variants, done (delivered, or dead-lettered after its variant was
    /// chosen), by the variant it took.
    func variant(eventType: String, variant: String) {
        counter("pushbridge_events_by_variant_total", [("event_type", eventType), ("variant", variant)]).increment()
    }

    /// A connection closed as dead after a silence with requests waiting (FCM's, the token
    /// endpoint's, the Schema Registry's), by `host:port`.
    public func deadConnection(host: String) {
        counter("pushbridge_dead_connections_total", [("host", host)]).increment()
    }

    /// An outcome record written (`topics.outcomes`), by its result: sent, invalidated, failed,
    /// skipped (withheld on purpose), dead_lettered.
    func outcomeRecord(result: String) {
        counter("pushbridge_outcome_records_total", [("result", result)]).increment()
    }

    /// Spans sent to the collector and dropped (a full queue, a failed request) since the start,
    /// refreshed per scrape: the counters move on by what is new.
    public func traceSpans(exported: Int, dropped: Int) {
        traceCounts.withLock { last in
            if exported > last.exported { counter("pushbridge_trace_spans_total", [("result", "exported")]).increment(by: exported - last.exported) }
            if dropped > last.dropped { counter("pushbridge_trace_spans_total", [("result", "dropped")]).increment(by: dropped - last.dropped) }
            last = (max(exported, last.exported), max(dropped, last.dropped))
        }
    }

    func tokenInvalidated(code: String) {
        counter("pushbridge_invalidated_tokens_total", [("reason", code)]).increment()
    }

    /// Per-partition progress, refreshed after commits.
    func partition(_ p: TopicPartition, committed: Int64?, uncommitted: Int) {
        let dims = [("topic", p.topic), ("partition", String(p.partition))]
        if let committed { Gauge(label: "pushbridge_committed_offset", dimensions: dims, factory: factory).record(committed) }
        Gauge(label: "pushbridge_uncommitted_events", dimensions: dims, factory: factory).record(uncommitted)
    }

    /// Partitions this worker no longer holds: their series go, so a dashboard or an alert
    /// never reads a former owner's last values.
    func forget(_ partitions: [TopicPartition]) {
        for p in partitions {
            let dims = [("topic", p.topic), ("partition", String(p.partition))]
            Gauge(label: "pushbridge_committed_offset", dimensions: dims, factory: factory).destroy()
            Gauge(label: "pushbridge_uncommitted_events", dimensions: dims, factory: factory).destroy()
        }
    }

    /// The counter for `label` with these dimensions, made once (a lookup per event, not a
    /// registration).
    func counter(_ label: String, _ dimensions: [(String, String)]) -> Counter {
        var key = label
        for (_, value) in dimensions { key += "\u{0}" + value }
        return counters.withLock { counters in
            if let c = counters[key] { return c }
            let c = Counter(label: label, dimensions: dimensions, factory: factory)
            counters[key] = c
            return c
        }
    }
}

/// An error with a short code for metric labels.
protocol CodedError: Error {
    var metricCode: String { get }
}

extension Duration {
    var nanoseconds: Int64 {
        let (s, atto) = components
        return s * 1_000_000_000 + atto / 1_000_000_000
    }
}

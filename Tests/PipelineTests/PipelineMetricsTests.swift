import CoreMetrics
import FCM
import Kafka
import MetricsTestKit
import Testing

@testable import Pipeline

/// The pipeline's metrics as a metrics backend receives them (swift-metrics' test backend), with
/// the labels and dimensions docs/operations.md lists.
@Suite("PipelineMetrics: what each call records")
struct PipelineMetricsTests {
    @Test("a send's end: its result by project, its retries, each quota refusal by scope, and the sends in flight")
    func sends() throws {
        let backend = TestMetrics()
        let metrics = PipelineMetrics(factory: backend)
        metrics.sendStarted()
        metrics.sendStarted()
        #expect(try backend.expectGauge("pushbridge_sends_in_flight").lastValue == 2)
        metrics.sendFinished(
            Result<String, FCMError>.success("projects/p/messages/1"), project: "p", attempts: 3, quotaRefusals: [.project, .device],
            duration: .milliseconds(40))
        metrics.sendFinished(Result<String, FCMError>.failure(.cancelled), project: "p", attempts: 1, duration: .milliseconds(1))
        #expect(try backend.expectCounter("pushbridge_sends_total", [("result", "ok"), ("project", "p")]).totalValue == 1)
        #expect(try backend.expectCounter("pushbridge_sends_total", [("result", "SHUTDOWN"), ("project", "p")]).totalValue == 1)
        #expect(try backend.expectCounter("pushbridge_send_retries_total", [("project", "p")]).totalValue == 2)
        #expect(try backend.expectCounter("pushbridge_fcm_quota_pauses_total", [("project", "p")]).totalValue == 1)
        #expect(try backend.expectCounter("pushbridge_fcm_quota_exceeded_total", [("scope", "device"), ("project", "p")]).totalValue == 1)
        #expect(try backend.expectGauge("pushbridge_sends_in_flight").lastValue == 0)
        #expect(try backend.expectTimer("pushbridge_send_latency_seconds").values.count == 2)
    }

    @Test("a connection closed as dead is counted by its host")
    func deadConnections() throws {
        let backend = TestMetrics()
        let metrics = PipelineMetrics(factory: backend)
        metrics.deadConnection(host: "fcm.googleapis.com:443")
        metrics.deadConnection(host: "fcm.googleapis.com:443")
        metrics.deadConnection(host: "oauth2.googleapis.com:443")
        #expect(try backend.expectCounter("pushbridge_dead_connections_total", [("host", "fcm.googleapis.com:443")]).totalValue == 2)
        #expect(try backend.expectCounter("pushbridge_dead_connections_total", [("host", "oauth2.googleapis.com:443")]).totalValue == 1)
    }

    @Test("a project's FCM state: waiting on FCM in seconds, 0 while it answers; no rate cap reads 0")
    func fcmState() throws {
        let backend = TestMetrics()
        let metrics = PipelineMetrics(factory: backend)
        metrics.fcm(
            project: "p", waiting: .milliseconds(1_500), heldTargets: 2, connections: 3, sendsInFlightLimit: 1_000, maxSendsPerSecond: nil,
            waitingForRoom: 0, accessTokenTimeLeft: .seconds(3_000))
        #expect(try backend.expectGauge("pushbridge_fcm_waiting_seconds", [("project", "p")]).lastValue == 1.5)
        #expect(try backend.expectGauge("pushbridge_fcm_max_sends_per_second", [("project", "p")]).lastValue == 0)
        #expect(try backend.expectGauge("pushbridge_fcm_connections", [("project", "p")]).lastValue == 3)
        metrics.fcm(
            project: "p", waiting: nil, heldTargets: 0, connections: 1, sendsInFlightLimit: 1_000, maxSendsPerSecond: 500, waitingForRoom: 0,
            accessTokenTimeLeft: .seconds(2_999))
        #expect(try backend.expectGauge("pushbridge_fcm_waiting_seconds", [("project", "p")]).lastValue == 0)
    }

    @Test("a partition's committed offset while held; its series gone once it is not (no former owner's last value)")
    func partitions() throws {
        let backend = TestMetrics()
        let metrics = PipelineMetrics(factory: backend)
        let partition = TopicPartition(topic: "events", partition: 3)
        metrics.partition(partition, committed: 120, uncommitted: 7)
        #expect(try backend.expectGauge("pushbridge_committed_offset", [("topic", "events"), ("partition", "3")]).lastValue == 120)
        metrics.forget([partition])
        #expect(throws: (any Error).self) { try backend.expectGauge("pushbridge_committed_offset", [("topic", "events"), ("partition", "3")]) }
    }

    @Test("dead-lettered events by reason, and in the events total")
    func deadLetters() throws {
        let backend = TestMetrics()
        let metrics = PipelineMetrics(factory: backend)
        metrics.deadLettered(code: "invalid_json")
        metrics.deadLettered(code: "invalid_json")
        #expect(try backend.expectCounter("pushbridge_dead_lettered_total", [("reason", "invalid_json")]).totalValue == 2)
        #expect(try backend.expectCounter("pushbridge_events_total", [("result", "dead_lettered")]).totalValue == 2)
    }
}

import FCMEmulator
import Foundation
import JSON
import Kafka
import TestSupport
import Testing

/// `tracing.*` on tansu: a worker continues the trace each event came with (a `traceparent`
/// header, CloudEvents' `ce_traceparent` header, a structured CloudEvent's `traceparent`
/// attribute) into its spans, and sends them over OTLP/HTTP JSON to a receiver that checks each
/// request against OpenTelemetry's Protobuf definitions (``OTLPReceiver``).
@Suite("Traces over OTLP (tansu, a receiver that parses OTLP/JSON with opentelemetry-proto)", .serialized)
struct TracingEndToEndTests {
    static let plain = "0af7651916cd43dd8448eb211c80319c"
    static let binary = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let structured = "5bf92f3577b34da6a3ce929d0e0e4737"
    static let unsampled = "6bf92f3577b34da6a3ce929d0e0e4738"
    static let parentSpan = "b7ad6b7169203331"

    @Test(
        "consume → render → send (each attempt, one of them retried after a 503) → commit, as children of the event's trace; outcome records carry the event's span's traceparent"
    )
    func traceAcrossRetry() async throws {
        let receiver = try await OTLPReceiver.start()
        var faults = EmulatorFaults()
        faults.burst = .init(status: 503, count: 1)  // the first send fails once, then is retried
        let e = try await EndToEnd(partitions: 1, faults: faults)
        try await e.createTopic("outcomes", partitions: 1)
        let worker = try await e.startWorker(
            group: "e2e-tracing", sections: "tracing: {endpoint: \"\(receiver.endpoint)\", sample_ratio: 0.000001, export_interval_ms: 200}",
            outcomes: "outcomes")
        func parent(_ trace: String, sampled: Bool = true) -> String { "00-\(trace)-\(Self.parentSpan)-\(sampled ? "01" : "00")" }
        try await e.events.produce(records: [
            KafkaProducerRecord(
                topic: e.topic, value: Array(#"{"type":"user.welcome","id":"t-plain","name":"N","token":"t-plain"}"#.utf8),
                headers: [KafkaHeader(name: "traceparent", string: parent(Self.plain)), KafkaHeader(name: "tracestate", string: "vendor=1")]),
            KafkaProducerRecord(
                topic: e.topic, value: Array(#"{"name":"N","token":"t-binary"}"#.utf8),
                headers: [
                    KafkaHeader(name: "ce_specversion", string: "1.0"), KafkaHeader(name: "ce_type", string: "user.welcome"),
                    KafkaHeader(name: "ce_id", string: "t-binary"), KafkaHeader(name: "ce_source", string: "/tests"),
                    KafkaHeader(name: "ce_traceparent", string: parent(Self.binary)), KafkaHeader(name: "content-type", string: "application/json"),
                ]),
            KafkaProducerRecord(
                topic: e.topic,
                value: Array(
                    #"{"specversion":"1.0","type":"user.welcome","id":"t-structured","source":"/tests","traceparent":"\#(parent(Self.structured))","data":{"name":"N","token":"t-structured"}}"#
                        .utf8),
                headers: [KafkaHeader(name: "content-type", string: "application/cloudevents+json")]),
            KafkaProducerRecord(
                topic: e.topic, value: Array(#"{"type":"user.welcome","id":"t-unsampled","name":"N","token":"t-unsampled"}"#.utf8),
                headers: [KafkaHeader(name: "traceparent", string: parent(Self.unsampled, sampled: false))]),
        ])
        #expect(try await e.waitUntilCommitted(group: "e2e-tracing"), "\(worker.output.suffix(2000))")
        let traced = [Self.plain, Self.binary, Self.structured]
        // Each traced event's root span ends with the commit past it, then goes out within 200 ms.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline,
            !traced.allSatisfy({ id in receiver.spans.contains { $0["traceId"] as? String == id && $0["name"] as? String == "process events" } })
        {
            try await Task.sleep(for: .milliseconds(200))
        }
        let spans = receiver.spans
        #expect(spans.allSatisfy { $0["invalid"] == nil }, "the receiver refused a request: \(spans.filter { $0["invalid"] != nil })")
        var roots: [String: [String: Any]] = [:]
        var retried = 0
        for id in traced {
            let trace = spans.filter { $0["traceId"] as? String == id }
            let root = try #require(trace.first { $0["name"] as? String == "process events" }, "no root span for \(id): \(spans)")
            roots[id] = root
            #expect(root["kind"] as? String == "SPAN_KIND_CONSUMER")
            #expect(root["parentSpanId"] as? String == Self.parentSpan, "a child of the producer's span")
            #expect((root["resource"] as? [String: String])?["service.name"] == "pushbridge")
            let children = trace.filter { $0["parentSpanId"] as? String == root["spanId"] as? String }
            let names = children.compactMap { $0["name"] as? String }
            #expect(names.filter { $0 == "render" }.count == 1 && names.filter { $0 == "commit" }.count == 1, "\(id): \(names)")
            let sends = children.filter { $0["name"] as? String == "send" }.sorted { Self.nanos($0, "start") < Self.nanos($1, "start") }
            #expect(!sends.isEmpty && sends.allSatisfy { $0["kind"] as? String == "SPAN_KIND_CLIENT" }, "\(id): \(names)")
            #expect(Self.attribute(sends.last, "pushbridge.fcm.message")?.hasPrefix("projects/demo-project/messages/") == true, "\(sends)")
            if sends.count == 2 {
                retried += 1
                #expect(Self.attribute(sends[0], "error.type") == "UNAVAILABLE" && Self.attribute(sends[0], "http.response.status_code") == "503")
                #expect((sends[0]["status"] as? [String: Any])?["code"] as? String == "STATUS_CODE_ERROR")
                #expect(Self.nanos(sends[0], "end") <= Self.nanos(sends[1], "start"))
            }
            // The tree's times nest: render and the sends inside the root, the commit at its end.
            let commit = try #require(children.first { $0["name"] as? String == "commit" })
            #expect(children.allSatisfy { Self.nanos($0, "start") >= Self.nanos(root, "start") && Self.nanos($0, "end") <= Self.nanos(root, "end") })
            #expect(Self.nanos(commit, "start") >= Self.nanos(sends.last!, "end"))
            #expect(Self.attribute(root, "messaging.destination.name") == "events" && Self.attribute(root, "pushbridge.outcome") == "delivered")
        }
        #expect(retried == 1, "one event's first attempt got the 503")
        #expect(Self.attribute(roots[Self.binary], "messaging.message.id") == "t-binary", "the CloudEvent's ID")
        #expect(Self.attribute(roots[Self.plain], "messaging.message.id")?.hasPrefix("events/0/") == true, "no ID pointer: the coordinates")
        #expect(!spans.contains { $0["traceId"] as? String == Self.unsampled }, "a traceparent whose sampled flag is clear is not traced")
        // Outcome records carry the traceparent of the event's own span, or the one an untraced
        // event came with.
        let outcomes = try await e.read("outcomes", count: 4).compactMap { try? JSONParser.parse($0.value) }
        for id in traced {
            let root = try #require(roots[id])
            let expected = "00-\(id)-\(root["spanId"] as? String ?? "")-01"
            #expect(outcomes.contains { $0["traceparent"] == .string(expected) }, "\(id): \(outcomes)")
        }
        #expect(outcomes.contains { $0["traceparent"] == .string(parent(Self.unsampled, sampled: false)) })
        #expect(try worker.metric("pushbridge_trace_spans_total{result=\"exported\"}") >= 12, "three events of four spans or more")
        #expect(try worker.metric("pushbridge_trace_spans_total{result=\"dropped\"}") == 0)
        await expectCleanExit(worker)
        await e.stop()
    }

    static func nanos(_ span: [String: Any], _ which: String) -> UInt64 {
        UInt64(span["\(which)TimeUnixNano"] as? String ?? "") ?? 0
    }

    /// A span attribute's value as text (`intValue`s are strings in OTLP JSON).
    static func attribute(_ span: [String: Any]?, _ key: String) -> String? {
        let attributes = span?["attributes"] as? [[String: Any]] ?? []
        guard let value = attributes.first(where: { $0["key"] as? String == key })?["value"] as? [String: Any] else { return nil }
        return (value["stringValue"] ?? value["intValue"]).map { "\($0)" }
    }
}

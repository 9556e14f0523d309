import Kafka
import Synchronization
import Testing
import Tracing
import W3CTraceContext

@testable import EventTracing

/// Spans kept in a list, in the order they ended.
final class Collected: SpanExporting {
    private let store = Mutex<[FinishedSpan]>([])
    var spans: [FinishedSpan] { store.withLock { $0 } }
    func export(_ span: FinishedSpan) { store.withLock { $0.append(span) } }
    func flush() {}
}

@Suite("An event's trace: where its context comes from, sampling, the span tree")
struct EventTraceTests {
    static let parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

    static func message(_ headers: [KafkaHeader], value: String = #"{"type":"t"}"#, offset: Int64 = 7) -> KafkaMessage {
        KafkaMessage(topic: "events", partition: 2, offset: offset, key: nil, value: Array(value.utf8), headers: headers)
    }

    @Test("traceparent, else CloudEvents' ce_traceparent (binary mode), else a structured CloudEvent's attribute; an invalid one is none")
    func sources() throws {
        let ce = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        #expect(TraceHeaders.context(in: [KafkaHeader(name: "traceparent", string: Self.parent)])?.traceParentHeaderValue == Self.parent)
        #expect(TraceHeaders.context(in: [KafkaHeader(name: "ce_traceparent", string: ce)])?.traceParentHeaderValue == ce)
        #expect(
            TraceHeaders.context(in: [KafkaHeader(name: "ce_traceparent", string: ce), KafkaHeader(name: "traceparent", string: Self.parent)])?
                .traceParentHeaderValue == Self.parent)
        let state = TraceHeaders.context(in: [
            KafkaHeader(name: "traceparent", string: Self.parent), KafkaHeader(name: "tracestate", string: "a=1,b=2"),
        ])
        #expect(state?.traceStateHeaderValue == "a=1, b=2")
        #expect(TraceHeaders.context(in: [KafkaHeader(name: "traceparent", string: "00-zz-b7ad6b7169203331-01")]) == nil)
        #expect(TraceHeaders.context(in: [KafkaHeader(name: "content-type", string: "application/json")]) == nil)
        let structured = TraceHeaders.structured(Array(#"{"specversion":"1.0","type":"t","traceparent":"\#(ce)","data":{"big":[1,2,3]}}"#.utf8))
        #expect(structured?.parent == ce && structured?.state == nil)
        #expect(TraceHeaders.structured(Array(#"{"type":"t","traceparent":"\#(ce)"}"#.utf8)) == nil, "not a CloudEvent")
        #expect(TraceHeaders.structured(Array("not json".utf8)) == nil)
        #expect(TraceHeaders.contains(Array(#"{"a":"traceparent","b":1}"#.utf8), Array(#""traceparent""#.utf8)))
        #expect(!TraceHeaders.contains(Array(#"{"a":"traceparen","b":"raceparent"}"#.utf8), Array(#""traceparent""#.utf8)))
        #expect(TraceHeaders.contains(Array(#""traceparent""#.utf8), Array(#""traceparent""#.utf8)))
        #expect(!TraceHeaders.contains(Array(#""tr"#.utf8), Array(#""traceparent""#.utf8)))
    }

    @Test("sampling: a sampled parent is followed, an unsampled one too; a trace that starts here by the ratio")
    func sampling() throws {
        let sampled = try TraceContext(traceParentHeaderValue: Self.parent)
        let unsampled = try TraceContext(traceParentHeaderValue: String(Self.parent.dropLast(2)) + "00")
        let never = PushTracer(sampleRatio: 0, exporter: Collected())
        let always = PushTracer(sampleRatio: 1, exporter: Collected())
        #expect(never.samples(parent: sampled) && !always.samples(parent: unsampled))
        #expect(!never.samples(parent: nil) && always.samples(parent: nil))
        let tenth = PushTracer(sampleRatio: 0.1, exporter: Collected())
        let taken = (0..<20_000).count { _ in tenth.samples(parent: nil) }
        #expect((1_500...2_500).contains(taken), "\(taken) of 20,000 at 0.1")
        #expect(
            EventTrace.begin(Self.message([KafkaHeader(name: "traceparent", string: String(Self.parent.dropLast(2)) + "00")]), tracer: always) == nil)
    }

    @Test(
        "process → render, a send per attempt, commit: children of the event's root, itself a child of the producer's span; the root ends with the commit past it"
    )
    func tree() throws {
        let exporter = Collected()
        let tracer = PushTracer(sampleRatio: 0, exporter: exporter)
        let trace = try #require(EventTrace.begin(Self.message([KafkaHeader(name: "traceparent", string: Self.parent)]), tracer: tracer))
        let t0 = ContinuousClock.now
        trace.rendered(from: t0, to: t0 + .microseconds(50), eventType: "t", eventID: "e-1")
        trace.attempt(
            1, project: "p", started: t0 + .milliseconds(1), ended: t0 + .milliseconds(2), messageName: nil, error: ("UNAVAILABLE", 503, "down"))
        trace.attempt(2, project: "p", started: t0 + .milliseconds(5), ended: t0 + .milliseconds(6), messageName: "projects/p/messages/1", error: nil)
        trace.done("delivered", topic: "events", partition: 2, offset: 7)
        tracer.committed([TopicPartitionOffset(topic: "events", partition: 2, offset: 7)])
        #expect(exporter.spans.map(\.name) == ["render", "send", "send"], "offset 7 is not committed past by a commit of 7")
        tracer.committed([TopicPartitionOffset(topic: "events", partition: 1, offset: 100)])
        #expect(exporter.spans.count == 3, "another partition's commit")
        tracer.committed([TopicPartitionOffset(topic: "events", partition: 2, offset: 8)])
        let spans = exporter.spans
        #expect(spans.map(\.name) == ["render", "send", "send", "commit", "process events"])
        let root = spans[4]
        #expect(root.traceContext.traceID.description == "0af7651916cd43dd8448eb211c80319c")
        #expect(root.parentSpanID?.description == "b7ad6b7169203331" && root.kind == .consumer)
        #expect(spans.dropLast().allSatisfy { $0.parentSpanID == root.traceContext.spanID && $0.traceContext.traceID == root.traceContext.traceID })
        #expect(spans[1].status?.code == .error && spans[1].attributes.get("http.response.status_code") == .int64(503))
        #expect(spans[2].attributes.get("pushbridge.fcm.message") == .string("projects/p/messages/1"))
        #expect(spans[1].endNanos - spans[1].startNanos == 1_000_000, "attempt times on the wall clock, 1 ms apart")
        #expect(root.attributes.get("pushbridge.outcome") == .string("delivered") && root.attributes.get("messaging.kafka.offset") == .int64(7))
        #expect(trace.traceParent == "00-0af7651916cd43dd8448eb211c80319c-\(root.traceContext.spanID)-01")
    }

    @Test("CommitWaits: a commit of o covers offsets below o of its partition; beyond capacity the oldest are given up")
    func commitWaits() {
        let tracer = PushTracer(sampleRatio: 1, exporter: Collected())
        func trace() -> EventTrace { EventTrace.begin(Self.message([]), tracer: tracer)! }
        var waits = CommitWaits()
        let p = TopicPartition(topic: "events", partition: 0)
        _ = waits.add(trace(), at: p, offset: 3)
        _ = waits.add(trace(), at: p, offset: 5)
        #expect(waits.committed([TopicPartitionOffset(p, offset: 4)]).count == 1 && waits.count == 1)
        #expect(waits.committed([TopicPartitionOffset(p, offset: 6)]).count == 1 && waits.count == 0)
        for i in 0..<CommitWaits.capacity { _ = waits.add(trace(), at: p, offset: Int64(i)) }
        #expect(waits.add(trace(), at: p, offset: 99_999).count == 1 && waits.count == CommitWaits.capacity)
    }
}

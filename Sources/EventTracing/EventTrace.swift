import Kafka
import Synchronization
import Tracing
import W3CTraceContext

/// The spans of one sampled event, children of the trace context it came with (if any):
///
/// ```
/// process <topic>   consumer: from when the worker took the record to the commit that covers it
/// ├─ render         the mapping: the event decoded, its messages rendered
/// ├─ send           one per attempt (client): FCM's answer, or why there was none
/// ├─ send           …
/// └─ commit         from the event being done to the broker acknowledging the commit past it
/// ```
///
/// Attributes follow OpenTelemetry's messaging conventions for the root
/// (https://opentelemetry.io/docs/specs/semconv/messaging/kafka/) and HTTP's for the sends.
/// An event the sampler leaves out has none (``begin(_:tracer:)`` returns nil).
public final class EventTrace: Sendable {
    let tracer: PushTracer
    public let root: PushSpan
    private let doneAt = Mutex<ContinuousClock.Instant?>(nil)

    init(tracer: PushTracer, root: PushSpan) {
        self.tracer = tracer
        self.root = root
    }

    /// The root span of `message`'s event, as a child of the trace context it came with, if the
    /// sampler takes it; nil otherwise.
    public static func begin(_ message: KafkaMessage, tracer: PushTracer) -> EventTrace? {
        var parent = TraceHeaders.context(in: message.headers)
        if parent == nil, let attributes = TraceHeaders.structured(message.value) {
            parent = try? TraceContext(traceParentHeaderValue: attributes.parent, traceStateHeaderValue: attributes.state)
        }
        guard tracer.samples(parent: parent) else { return nil }
        var context = InstrumentationContext.topLevel
        context.traceContext = parent
        let root = tracer.startSpan("process \(message.topic)", context: context, ofKind: .consumer, at: DefaultTracerClock.now)
        root.attributes["messaging.system"] = "kafka"
        root.attributes["messaging.operation.type"] = "process"
        root.attributes["messaging.destination.name"] = message.topic
        root.attributes["messaging.destination.partition.id"] = "\(message.partition)"
        root.attributes["messaging.kafka.offset"] = Int64(message.offset)
        return EventTrace(tracer: tracer, root: root)
    }

    /// The `traceparent` that names this event's root span: outcome and dead-letter records
    /// carry it, so whoever reads them can continue the trace.
    public var traceParent: String { root.traceContext.traceParentHeaderValue }

    /// The mapping took `from`…`to`, and made of the event what `attributes` say (type, ID).
    public func rendered(from: ContinuousClock.Instant, to: ContinuousClock.Instant, eventType: String?, eventID: String?) {
        let span = child("render", .internal, at: from)
        if let eventType {
            span.attributes["pushbridge.event.type"] = eventType
            root.attributes["pushbridge.event.type"] = eventType
        }
        if let eventID {
            span.attributes["messaging.message.id"] = eventID
            root.attributes["messaging.message.id"] = eventID
        }
        span.end(at: tracer.instant(to))
    }

    /// One attempt of a send to FCM: `messageName` when it was accepted, else the error's code
    /// and HTTP status (nil: no answer).
    public func attempt(
        _ number: Int, project: String, started: ContinuousClock.Instant, ended: ContinuousClock.Instant, messageName: String?,
        error: (code: String, httpStatus: Int?, message: String)?
    ) {
        let span = child("send", .client, at: started)
        span.attributes["pushbridge.fcm.project"] = project
        span.attributes["pushbridge.fcm.attempt"] = number
        if let messageName {
            span.attributes["http.response.status_code"] = 200
            span.attributes["pushbridge.fcm.message"] = messageName
        }
        if let error {
            if let status = error.httpStatus { span.attributes["http.response.status_code"] = status }
            span.attributes["error.type"] = error.code
            span.setStatus(SpanStatus(code: .error, message: error.message))
        }
        span.end(at: tracer.instant(ended))
    }

    /// The event is done (its verdict in `outcome`: delivered, skipped, dead_letter): its root
    /// ends with the commit that covers it.
    public func done(_ outcome: String, topic: String, partition: Int32, offset: Int64) {
        root.attributes["pushbridge.outcome"] = outcome
        doneAt.withLock { $0 = .now }
        let dropped = tracer.commits.withLock { $0.add(self, at: TopicPartition(topic: topic, partition: partition), offset: offset) }
        for trace in dropped { trace.end(status: SpanStatus(code: .error, message: "no commit seen for it")) }
    }

    /// The event did not get done here (the worker stopped, the partition went elsewhere).
    public func notDone(_ why: String) {
        end(status: SpanStatus(code: .error, message: why))
    }

    /// The commit that covers the event was acknowledged at `at`.
    func committed(_ offset: TopicPartitionOffset, at: ContinuousClock.Instant) {
        let span = child("commit", .internal, at: doneAt.withLock { $0 } ?? at)
        span.attributes["messaging.kafka.offset"] = offset.offset.rawValue
        span.end(at: tracer.instant(at))
        end(status: nil)
    }

    private func end(status: SpanStatus?) {
        if let status { root.setStatus(status) }
        root.end(at: DefaultTracerClock.now)
    }

    private func child(_ name: String, _ kind: SpanKind, at start: ContinuousClock.Instant) -> PushSpan {
        tracer.startSpan(name, context: root.context, ofKind: kind, at: tracer.instant(start))
    }
}

extension PushTracer {
    /// The commit of `offsets` was acknowledged: the traced events below them end.
    public func committed(_ offsets: [TopicPartitionOffset], at: ContinuousClock.Instant = .now) {
        for (trace, offset) in commits.withLock({ $0.committed(offsets) }) { trace.committed(offset, at: at) }
    }
}

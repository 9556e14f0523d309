import Synchronization
import Tracing
import W3CTraceContext

/// A span of a ``PushTracer``: recorded under a lock, handed to the tracer's exporter when it
/// ends (once). Only sampled spans exist: an event the sampler leaves out makes none.
public final class PushSpan: Span {
    public let context: InstrumentationContext
    /// This span's own W3C context (its trace, its span ID, the sampled flag, the trace state).
    public let traceContext: TraceContext
    /// The span it is a child of (in this process or the producer's), if any.
    public let parentSpanID: SpanID?
    public let kind: SpanKind
    let startNanos: UInt64
    private let state: Mutex<State>
    private let tracer: PushTracer

    struct State {
        var operationName: String
        var attributes: SpanAttributes = [:]
        var status: SpanStatus?
        var events: [SpanEvent] = []
        var links: [SpanLink] = []
        var ended = false
    }

    init(
        operationName: String, context: InstrumentationContext, traceContext: TraceContext, parentSpanID: SpanID?, kind: SpanKind,
        startNanos: UInt64, tracer: PushTracer
    ) {
        self.context = context
        self.traceContext = traceContext
        self.parentSpanID = parentSpanID
        self.kind = kind
        self.startNanos = startNanos
        self.tracer = tracer
        self.state = Mutex(State(operationName: operationName))
    }

    public var operationName: String {
        get { state.withLock { $0.operationName } }
        set { state.withLock { $0.operationName = newValue } }
    }

    public var attributes: SpanAttributes {
        get { state.withLock { $0.attributes } }
        set { state.withLock { $0.attributes = newValue } }
    }

    public var isRecording: Bool { state.withLock { !$0.ended } }

    public func setStatus(_ status: SpanStatus) {
        state.withLock { $0.status = status }
    }

    public func addEvent(_ event: SpanEvent) {
        state.withLock { $0.events.append(event) }
    }

    public func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {
        var event = SpanEvent(name: "exception", at: instant(), attributes: attributes)
        event.attributes["exception.message"] = "\(error)"
        addEvent(event)
    }

    public func addLink(_ link: SpanLink) {
        state.withLock { $0.links.append(link) }
    }

    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        let end = instant().nanosecondsSinceEpoch
        guard
            let finished = state.withLock({ s -> FinishedSpan? in
                guard !s.ended else { return nil }
                s.ended = true
                return FinishedSpan(
                    name: s.operationName, traceContext: traceContext, parentSpanID: parentSpanID, kind: kind, startNanos: startNanos,
                    endNanos: max(end, startNanos), attributes: s.attributes, status: s.status, events: s.events)
            })
        else { return }
        tracer.finished(finished)
    }
}

/// An ended span, as the exporter sends it.
public struct FinishedSpan: Sendable {
    public var name: String
    public var traceContext: TraceContext
    public var parentSpanID: SpanID?
    public var kind: SpanKind
    public var startNanos: UInt64
    public var endNanos: UInt64
    public var attributes: SpanAttributes
    public var status: SpanStatus?
    public var events: [SpanEvent]
}

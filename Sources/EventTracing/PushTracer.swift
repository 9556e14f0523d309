import Kafka
import Synchronization
import Tracing
import W3CTraceContext

/// pushbridge's tracer, for swift-distributed-tracing's `Tracer` API: spans with W3C trace
/// context (https://www.w3.org/TR/trace-context/), sampled as OpenTelemetry's default
/// `parentbased_traceidratio` sampler does (https://opentelemetry.io/docs/specs/otel/trace/sdk/#sampling):
/// a span whose parent came with the sampled flag is sampled, one whose parent came without
/// it is not, and a trace that starts here is sampled with probability ``sampleRatio``. Ended
/// spans go to the exporter (``SpanExporting``). Only sampled events make spans at all
/// (``beginEvent(_:structured:)``), so an event left out costs a header scan.
public final class PushTracer: Tracer {
    public typealias Span = PushSpan

    /// The share of traces that start here which are sampled, 0…1.
    public let sampleRatio: Double
    private let threshold: UInt64
    let exporter: any SpanExporting
    /// Traced events done and not yet committed, by partition (``awaitCommit``).
    let commits = Mutex(CommitWaits())
    /// Where the continuous clock stood against the wall clock when the tracer was made:
    /// attempts are timed on the continuous clock, spans in Unix nanoseconds.
    private let anchor: (continuous: ContinuousClock.Instant, wallNanos: UInt64)

    public init(sampleRatio: Double, exporter: any SpanExporting) {
        self.sampleRatio = min(1, max(0, sampleRatio))
        self.threshold = self.sampleRatio >= 1 ? .max : UInt64(self.sampleRatio * 18_446_744_073_709_551_615.0)
        self.exporter = exporter
        self.anchor = (.now, DefaultTracerClock.now.nanosecondsSinceEpoch)
    }

    /// A continuous-clock instant as a span instant.
    public func instant(_ instant: ContinuousClock.Instant) -> DefaultTracerClock.Instant {
        let offset = instant - anchor.continuous
        let nanos = Int64(offset.components.seconds) * 1_000_000_000 + offset.components.attoseconds / 1_000_000_000
        return DefaultTracerClock.Instant(nanosecondsSinceEpoch: UInt64(max(0, Int64(anchor.wallNanos) + nanos)))
    }

    /// Whether a trace with this parent (nil: one that starts here) is sampled.
    public func samples(parent: TraceContext?) -> Bool {
        if let parent { return parent.flags.contains(.sampled) }
        return threshold == .max || (threshold > 0 && UInt64.random(in: 0 ... .max) < threshold)
    }

    public func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> PushSpan {
        var context = context()
        let parent = context.traceContext
        let own: TraceContext
        if let parent {
            own = TraceContext(traceID: parent.traceID, spanID: .random(), flags: parent.flags, state: parent.state)
        } else {
            own = TraceContext(traceID: .random(), spanID: .random(), flags: samples(parent: nil) ? .sampled : [], state: TraceState())
        }
        context.traceContext = own
        return PushSpan(
            operationName: operationName, context: context, traceContext: own, parentSpanID: parent?.spanID, kind: kind,
            startNanos: instant().nanosecondsSinceEpoch, tracer: self)
    }

    func finished(_ span: FinishedSpan) {
        guard span.traceContext.flags.contains(.sampled) else { return }
        exporter.export(span)
    }

    public func forceFlush() {
        exporter.flush()
    }

    // MARK: Instrument

    public func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract)
    where Extract.Carrier == Carrier {
        guard let parent = extractor.extract(key: TraceHeaders.traceParent, from: carrier) else { return }
        let state = extractor.extract(key: TraceHeaders.traceState, from: carrier)
        if let trace = try? TraceContext(traceParentHeaderValue: parent, traceStateHeaderValue: state) { context.traceContext = trace }
    }

    public func inject<Carrier, Inject: Injector>(_ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        guard let trace = context.traceContext else { return }
        injector.inject(trace.traceParentHeaderValue, forKey: TraceHeaders.traceParent, into: &carrier)
        if let state = trace.traceStateHeaderValue { injector.inject(state, forKey: TraceHeaders.traceState, into: &carrier) }
    }
}

/// Where ended spans go: the OTLP exporter, or a list in tests.
public protocol SpanExporting: Sendable {
    func export(_ span: FinishedSpan)
    /// Sends what is buffered now.
    func flush()
}

/// The W3C trace context of the span a context belongs to.
enum TraceContextKey: InstrumentationContextKey {
    typealias Value = TraceContext
}

extension InstrumentationContext {
    /// The W3C trace context: the parent's, extracted from a record, or a span's own.
    public var traceContext: TraceContext? {
        get { self[TraceContextKey.self] }
        set { self[TraceContextKey.self] = newValue }
    }
}

/// Kafka headers as a carrier of trace context, for ``PushTracer/extract(_:into:using:)`` and
/// ``PushTracer/inject(_:into:using:)``: `traceparent`, else CloudEvents' `ce_traceparent`.
public struct KafkaHeadersCarrier: Extractor, Injector {
    public init() {}

    public func extract(key: String, from carrier: [KafkaHeader]) -> String? {
        let value = carrier.first { $0.name == key }?.value ?? carrier.first { $0.name == "ce_" + key }?.value
        return value.map { String(decoding: $0, as: UTF8.self) }
    }

    public func inject(_ value: String, forKey key: String, into carrier: inout [KafkaHeader]) {
        carrier.removeAll { $0.name == key }
        carrier.append(KafkaHeader(name: key, string: value))
    }
}

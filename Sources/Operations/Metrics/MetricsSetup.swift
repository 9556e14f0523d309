import CoreMetrics
import Prometheus
import Synchronization

/// Prometheus behind swift-metrics: the pipeline records through plain swift-metrics types, and
/// ``exposition()`` renders everything for `/metrics`.
public final class MetricsSetup: Sendable {
    public let registry: PrometheusCollectorRegistry
    public let factory: PrometheusMetricsFactory

    private static let bootstrapped = Mutex(false)

    /// Buckets of `pushbridge_send_latency_seconds`: 5 ms … 10 s.
    public static let latencyBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    /// Buckets of `pushbridge_delivery_lag_seconds` (record timestamp → done): 1 ms … 5 min,
    /// fine below 100 ms where a healthy worker is.
    public static let lagBuckets: [Duration] =
        [1, 2, 3, 5, 7, 10, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200, 300, 500, 750]
        .map { Duration.milliseconds($0) } + [1, 2, 5, 10, 30, 60, 300].map { Duration.seconds($0) }

    public init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.latencyBuckets
        factory.durationHistogramBuckets["pushbridge_delivery_lag_seconds"] = Self.lagBuckets
        factory.durationHistogramBuckets["pushbridge_timers_late_seconds"] = Self.lagBuckets
        self.factory = factory
    }

    /// Makes this the process's metrics backend. swift-metrics allows one bootstrap per process;
    /// later calls are ignored and return false.
    @discardableResult
    public func bootstrap() -> Bool {
        Self.bootstrapped.withLock { done in
            guard !done else { return false }
            MetricsSystem.bootstrap(factory)
            done = true
            return true
        }
    }

    /// The Prometheus text exposition of every metric.
    public func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }
}

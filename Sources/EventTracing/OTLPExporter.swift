import HTTP2
import Synchronization
import Threading

/// Sends ended spans to an OpenTelemetry collector over OTLP/HTTP with JSON bodies
/// (https://opentelemetry.io/docs/specs/otlp/#otlphttp): `POST <endpoint>/v1/traces`,
/// `Content-Type: application/json`, in batches, as OpenTelemetry's batch span processor does
/// (https://opentelemetry.io/docs/specs/otel/trace/sdk/#batching-processor): at most
/// ``Configuration/maxBatch`` spans a request, sent when that many wait or every
/// ``Configuration/interval``; at most ``Configuration/maxQueue`` wait, and spans beyond are
/// dropped and counted. A request that fails is not retried (its spans are counted as
/// dropped): tracing never holds events up.
///
/// Over the project's own HTTP/2 client (libcurl): TLS endpoints speak HTTP/2, `http://` ones
/// HTTP/1.1, as collectors take both. Why not swift-otel's exporter: docs/benchmarks.md.
public final class OTLPExporter: SpanExporting {
    public struct Configuration: Sendable {
        /// The collector's base URL, e.g. `http://otel-collector:4318`; spans go to `/v1/traces`.
        public var endpoint: String
        public var serviceName = "pushbridge"
        public var serviceVersion = ""
        public var interval: Duration = .seconds(5)
        public var maxBatch = 512
        public var maxQueue = 2_048
        public var timeout: Duration = .seconds(10)
        public var caFile: String?

        public init(endpoint: String) {
            self.endpoint = endpoint
        }
    }

    /// What the exporter has done, for metrics.
    public struct Counts: Sendable, Equatable {
        public var exported = 0
        public var dropped = 0
        public var failedRequests = 0
    }

    public let configuration: Configuration
    private let http: HTTP2Client
    private let url: String
    private let state = Mutex<(queue: [FinishedSpan], counts: Counts, flushAsked: Bool)>(([], Counts(), false))
    private let signal = ChangeSignal()
    private let onFailure: @Sendable (_ message: String, _ endpoint: String) -> Void

    /// - Parameter onFailure: told of each request that failed (the worker logs it as an
    ///   incident: a collector that is down fails every batch).
    public init(
        configuration: Configuration, onFailure: @escaping @Sendable (_ message: String, _ endpoint: String) -> Void
    ) throws(HTTP2ClientError) {
        self.configuration = configuration
        var http = HTTP2Client.Configuration(caFile: configuration.caFile)
        http.requestTimeout = configuration.timeout
        http.maxConnections = 2
        self.http = try HTTP2Client(configuration: http)
        var base = configuration.endpoint
        while base.hasSuffix("/") { base.removeLast() }
        self.url = base + "/v1/traces"
        self.onFailure = onFailure
    }

    public var counts: Counts { state.withLock { $0.counts } }

    public func export(_ span: FinishedSpan) {
        let full = state.withLock { s -> Bool in
            guard s.queue.count < configuration.maxQueue else {
                s.counts.dropped += 1
                return false
            }
            s.queue.append(span)
            return s.queue.count >= configuration.maxBatch
        }
        if full { signal.notify() }
    }

    public func flush() {
        state.withLock { $0.flushAsked = true }
        signal.notify()
    }

    /// Sends batches until the task is cancelled; then ``shutdown()`` sends what is left.
    public func run() async {
        while !Task.isCancelled {
            _ = await signal.wait(until: .now + configuration.interval) {
                state.withLock { $0.queue.count >= configuration.maxBatch || $0.flushAsked }
            }
            if Task.isCancelled { return }
            await sendAll()
        }
    }

    /// Sends what is left and closes the connection (after ``run()`` has ended).
    public func shutdown() async {
        await sendAll()
        await http.shutdown()
    }

    private func sendAll() async {
        while true {
            let batch = state.withLock { s -> [FinishedSpan] in
                s.flushAsked = false
                let batch = Array(s.queue.prefix(configuration.maxBatch))
                s.queue.removeFirst(batch.count)
                return batch
            }
            guard !batch.isEmpty else { return }
            await send(batch)
        }
    }

    private func send(_ batch: [FinishedSpan]) async {
        let body = OTLPJSON.request(
            batch, resource: [("service.name", configuration.serviceName), ("service.version", configuration.serviceVersion)],
            scope: ("pushbridge", configuration.serviceVersion))
        let request = HTTPRequest(url: url, headers: ["content-type": "application/json"], body: body)
        let failure: String?
        do {
            let response = try await http.send(request)
            failure =
                (200..<300).contains(response.status) ? nil : "HTTP \(response.status): \(String(decoding: response.body.prefix(200), as: UTF8.self))"
        } catch {
            failure = "\(error)"
        }
        state.withLock { s in
            if failure == nil {
                s.counts.exported += batch.count
            } else {
                s.counts.dropped += batch.count
                s.counts.failedRequests += 1
            }
        }
        if let failure {
            onFailure("cannot export spans to \(url): \(failure); \(batch.count) dropped", url)
        }
    }
}

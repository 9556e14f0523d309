import FCM
import HTTP2
import Kafka
import Logging
import Mapping
import Operations
import Pipeline

/// What `run` and `replay` share, assembled from the config: the FCM client, the producer for
/// dead-letter and invalidation records, and the processor that takes an event to done.
struct Delivery: Sendable {
    let account: ServiceAccount
    let client: FCMClient
    let producer: KafkaProducer
    let processor: EventProcessor
    let validateOnly: Bool

    /// - Parameters:
    ///   - maxSendsPerSecond: overrides `fcm.max_sends_per_second` (replay's `--rate`).
    ///   - maxAge: `.ignore` sends events older than their `max_age` (replay's `--ignore-max-age`).
    init(
        settings: PushbridgeConfig, mappings: MappingSet, validateOnly: Bool, maxSendsPerSecond: Double? = nil,
        maxAge: MaxAgeCheck = .enforce, metrics: PipelineMetrics, logger: Logger
    ) throws {
        account = try ServiceAccount.load(path: settings.fcm.serviceAccountFile)
        var fcm = FCMClient.Configuration(serviceAccount: account)
        fcm.baseURL = settings.fcm.endpoint
        fcm.caFile = settings.fcm.caFile
        fcm.maxStreams = settings.fcm.maxStreams
        fcm.maxConnections = settings.fcm.connections
        fcm.maxSendsPerSecond = maxSendsPerSecond ?? settings.fcm.maxSendsPerSecond
        fcm.concurrency.ceiling = settings.delivery.maxSendsInFlight
        fcm.requestTimeout = settings.fcm.requestTimeout
        fcm.retry.maxAttempts = settings.fcm.retry.maxAttempts
        fcm.retry.initialBackoff = settings.fcm.retry.initialBackoff
        fcm.retry.maxBackoff = settings.fcm.retry.maxBackoff
        fcm.retry.budget = settings.fcm.retry.budget
        fcm.retry.quotaPause = settings.fcm.retry.quotaPause
        // One proxy for the sends and the token exchange: they share the client's connections.
        fcm.proxy = settings.fcm.proxyURL.map { HTTPProxy(url: $0, noProxy: settings.fcm.noProxy ?? []) }
        client = try FCMClient(configuration: fcm)

        producer = try KafkaProducer(
            configuration: OutputRecords.producerConfiguration(
                brokers: settings.kafka.brokers, properties: settings.kafka.properties))

        var options = EventProcessor.Options(deadLetterTopic: settings.topics.deadLetter, tokenInvalidationTopic: settings.topics.tokenInvalidation)
        options.validateOnly = validateOnly || settings.fcm.validateOnly
        options.skipUnknownEventTypes = settings.delivery.unknownEventTypes == .skip
        options.maxAge = maxAge
        self.validateOnly = options.validateOnly
        processor = EventProcessor(mappings: mappings, sender: client, producer: producer, options: options, metrics: metrics, logger: logger)
    }

    /// Fetches an access token; a refused account or an untrusted endpoint throws a
    /// configuration error here, before any event is taken.
    func warmUp() async throws {
        try await client.warmUp()
    }

    func close() async {
        await client.shutdown()
        await producer.close()
    }
}

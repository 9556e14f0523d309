import FCM
import Foundation
import Kafka
import Logging
import Mapping
import Operations
import Pipeline
import ServiceLifecycle
import Synchronization

/// `pushbridge run`'s pipeline, assembled from the config: the mapping set, the FCM client, the
/// producer for dead-letter and invalidation records, and the consumer group member.
/// A swift-service-lifecycle `Service`: graceful shutdown drains and commits.
final class Worker: Service, Sendable {
    let pipeline: Pipeline
    let delivery: Delivery
    let metrics: PipelineMetrics
    let logger: Logger
    private let failureBox = Mutex<String?>(nil)

    init(settings: PushbridgeConfig, validateOnly: Bool, logger: Logger) throws {
        self.logger = logger
        let mappings = try MappingFiles.load(settings.mappings, printingWarnings: false)
        for warning in mappings.warnings {
            logger.warning("mapping: \(warning.message)", metadata: ["at": "\(warning.file):\(warning.line):\(warning.column)"])
        }
        let metrics = PipelineMetrics()
        self.metrics = metrics
        delivery = try Delivery(settings: settings, mappings: mappings, validateOnly: validateOnly, metrics: metrics, logger: logger)
        let processor = delivery.processor

        var consumer = KafkaConsumerConfiguration(bootstrapServers: settings.kafka.brokers, groupID: settings.kafka.group)
        consumer.groupInstanceID = settings.kafka.instanceID
        consumer.assignmentStrategy = KafkaConsumerConfiguration.AssignmentStrategy(rawValue: settings.kafka.assignmentStrategy) ?? .cooperativeSticky
        consumer.sessionTimeout = settings.kafka.sessionTimeout
        consumer.properties = settings.kafka.properties
        var configuration = Pipeline.Configuration(consumer: consumer, topics: settings.kafka.topics)
        configuration.limits = PartitionTable.Limits(
            maxEventsInFlight: settings.delivery.maxEventsInFlight, partitionBuffer: settings.delivery.partitionBuffer)
        configuration.maxEventsRunning = settings.delivery.maxSendsInFlight
        configuration.commitInterval = settings.delivery.commitInterval
        configuration.commitEveryEvents = settings.delivery.commitEveryEvents
        configuration.offsetMap = settings.delivery.offsetMap
        configuration.shutdownTimeout = settings.delivery.shutdownTimeout
        configuration.projectQuota = settings.fcm.projectSendsPerSecond.map(ProjectQuotaShare.init)
        pipeline = try Pipeline(configuration: configuration, processor: processor, metrics: metrics, logger: logger)
        logger.info(
            "started",
            metadata: [
                "group": "\(settings.kafka.group)", "topics": "\(settings.kafka.topics.joined(separator: ","))",
                "mappings": "\(mappings.eventTypes.count) event types", "fcm": "\(settings.fcm.endpoint)", "proxy": "\(settings.fcm.proxySummary)",
                "project": "\(delivery.account.projectID)", "validate_only": "\(delivery.validateOnly)",
            ])
    }

    /// Refreshes the gauges that describe FCM's state now; called per scrape.
    func refreshGauges() {
        let client = delivery.client
        metrics.fcm(
            waiting: client.availability.waiting(at: .now), heldTargets: client.heldTargets,
            connections: client.connections.open, sendsInFlightLimit: client.concurrencyLimit, maxSendsPerSecond: client.maxSendsPerSecond)
    }

    /// Why the worker stopped on its own, if it did.
    var failure: String? { failureBox.withLock { $0 } }

    func run() async throws {
        // Fetch an access token now: readiness reports it, and a refused account stops the
        // worker before it takes any event.
        let warmUp = Task { [delivery, logger, pipeline] in
            do {
                try await delivery.warmUp()
            } catch let error as FCMError where error.kind == .configuration {
                logger.critical("FCM refuses this setup: \(error)")
                self.failureBox.withLock { $0 = error.description }
                pipeline.stop()
            } catch {
                logger.warning("no FCM access token yet; sends will retry: \(error)")
            }
        }
        do {
            try await withGracefulShutdownHandler {
                try await pipeline.run()
            } onGracefulShutdown: { [pipeline, logger] in
                logger.info("stopping: draining events in flight, then committing")
                pipeline.stop()
            }
        } catch {
            failureBox.withLock { $0 = $0 ?? "\(error)" }
            logger.critical("pipeline stopped: \(error)")
        }
        warmUp.cancel()
        await delivery.close()
        logger.info("stopped")
    }

    /// FCM has not answered for this long before readiness says so: a lone 503 among
    /// successes is not an outage.
    static let waitingReadinessThreshold: Duration = .seconds(5)

    /// `/readyz`: ready while consuming (holding partitions or waiting for them) with an FCM
    /// token, and FCM answering.
    func readiness() -> (ready: Bool, reason: String) {
        guard pipeline.isRunning else { return (false, "not consuming") }
        guard delivery.client.hasAccessToken else { return (false, "no FCM access token yet") }
        let availability = delivery.client.availability
        if let waiting = availability.waiting(at: .now), waiting >= Self.waitingReadinessThreshold {
            return (
                false,
                "waiting on FCM for \(waiting.components.seconds) s (\(availability.lastFailure ?? "no answer")); events are held and retried, not dead-lettered"
            )
        }
        let partitions = pipeline.assignment.count
        return (true, partitions == 0 ? "waiting for an assignment" : "consuming \(partitions) partitions")
    }
}

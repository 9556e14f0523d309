import Dates
import DeviceRegistry
import EventTracing
import FCM
import Foundation
import Kafka
import Logging
import Mapping
import Operations
import Pipeline
import ServiceLifecycle
import Synchronization
import Threading

/// `pushbridge run`'s pipeline, assembled from the config: the mapping set, the FCM client, the
/// producer for dead-letter and invalidation records, and the consumer group member.
/// A swift-service-lifecycle `Service`: graceful shutdown drains and commits.
public final class Worker: Service, Sendable {
    let pipeline: Pipeline
    /// Re-key mode's stage 2: the by-subject topic's pipeline, in the group `<kafka.group>.rules`,
    /// which decides `cap` and `dedup` (docs/rules.md#caps-and-dedup); nil otherwise.
    let rulesPipeline: Pipeline?
    /// The timer engine of mappings with `send_at` (docs/timers.md), in the group
    /// `<kafka.group>.timers`; nil when no mapping has one.
    let timerPipeline: TimerPipeline?
    let delivery: Delivery
    let metrics: PipelineMetrics
    let logger: Logger
    /// The device registry, with `registry.topic`.
    let registry: WorkerRegistry?
    /// Where sampled events' spans go, with `tracing.endpoint`.
    let traceExporter: OTLPExporter?
    private let failureBox = Mutex<String?>(nil)
    /// Set by a graceful shutdown, so a wait for the registry to catch up ends too.
    private let stopping = Atomic<Bool>(false)
    private let stoppingSignal = ChangeSignal()

    /// - Parameter mappings: `settings.mappings`, loaded (the command reports their errors).
    /// - Parameter build: what this worker runs, logged when it starts and exported as
    ///   `pushbridge_build_info`.
    /// - Parameter environment: where ``WorkerClock`` looks for `PUSHBRIDGE_TEST_CLOCK`.
    public init(
        settings: PushbridgeConfig, mappings: MappingSet, validateOnly: Bool, build: BuildInfo, logger: Logger,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        self.logger = logger
        let clock = try WorkerClock.choose(environment: environment, brokers: settings.kafka.brokers)
        if !(clock is SystemWallClock) {
            let now = RFC3339.format(milliseconds: clock.nowMilliseconds())
            logger.warning("running on a test clock (\(WorkerClock.variable)): max_age, apns-expiration and quiet hours are judged at \(now) now")
        }
        for warning in mappings.warnings {
            logger.warning("mapping: \(warning.message)", metadata: ["at": "\(warning.file):\(warning.line):\(warning.column)"])
        }
        let metrics = PipelineMetrics()
        metrics.buildInfo(build.labels)
        self.metrics = metrics
        let failures = LogSummary(logger: logger, period: settings.log.summaryPeriod)
        let registry = try WorkerRegistry(settings: settings, logger: logger, kafkaLogs: KafkaLogs(summary: failures))
        if let registry, mappings.readsPreferences, try registry.store.rereadForPreferences() {
            logger.warning(
                "registry: this file was filled by a pushbridge that did not store preferences, and the mappings read them: reading the registry topic again from its start (lookups go on meanwhile)",
                metadata: ["path": "\(registry.store.path)"])
        }
        self.registry = registry
        let tracing = try Self.tracing(settings.tracing, build: build, failures: failures)
        traceExporter = tracing?.exporter
        delivery = try Delivery(
            settings: settings, mappings: mappings, validateOnly: validateOnly, directory: registry?.directory, metrics: metrics, logger: logger,
            failures: failures, tracer: tracing?.tracer, clock: clock, rules: true, timers: true)
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
        configuration.orderActivities = settings.delivery.orderActivities
        configuration.shutdownTimeout = settings.delivery.shutdownTimeout
        configuration.projectQuotas = delivery.projectQuotas
        pipeline = try Pipeline(configuration: configuration, processor: processor, metrics: metrics, logger: logger)
        if let rulesProcessor = delivery.rulesProcessor {
            var rules = configuration
            rules.consumer.groupID = "\(settings.kafka.group).rules"
            rules.consumer.groupInstanceID = settings.kafka.instanceID.map { "\($0).rules" }
            rules.topics = [settings.rules.bySubject(group: settings.kafka.group)]
            rules.projectQuotas = [:]
            rulesPipeline = try Pipeline(configuration: rules, processor: rulesProcessor, metrics: metrics, logger: logger)
        } else {
            rulesPipeline = nil
        }
        timerPipeline = try Self.timerPipeline(
            settings: settings, mappings: mappings, consumer: consumer, engine: configuration, delivery: delivery, metrics: metrics, logger: logger)
        logger.info(
            "started",
            metadata: [
                "group": "\(settings.kafka.group)", "topics": "\(settings.kafka.topics.joined(separator: ","))",
                "mappings": "\(mappings.eventTypes.count) event types", "fcm": "\(settings.fcm.endpoint)", "proxy": "\(settings.fcm.proxySummary)",
                "projects": "\(delivery.projectsDescription)", "validate_only": "\(delivery.validateOnly)",
                "schema_registry": "\(settings.schemaRegistry.summary)", "version": "\(build.version)", "commit": "\(build.commit)",
                "librdkafka": "\(build.librdkafka)", "libcurl": "\(build.libcurl)", "nghttp2": "\(build.nghttp2)",
                "tracing": "\(settings.tracing.summary)",
            ])
    }

    /// The tracer and its exporter, with `tracing.endpoint`. An export that fails is logged as
    /// an incident: a collector that is down fails every batch.
    static func tracing(
        _ settings: PushbridgeConfig.Tracing, build: BuildInfo, failures: LogSummary
    ) throws -> (tracer: PushTracer, exporter: OTLPExporter)? {
        guard let endpoint = settings.endpoint else { return nil }
        var configuration = OTLPExporter.Configuration(endpoint: endpoint)
        configuration.serviceName = settings.serviceName
        configuration.serviceVersion = build.version
        configuration.interval = settings.exportInterval
        configuration.caFile = settings.caFile
        let exporter = try OTLPExporter(configuration: configuration) { message, endpoint in
            failures.log(.warning, message, kind: "otlp export \(endpoint)", metadata: ["endpoint": "\(endpoint)"])
        }
        return (PushTracer(sampleRatio: settings.sampleRatio, exporter: exporter), exporter)
    }

    /// Refreshes the gauges that describe each project's FCM state, the registry and the
    /// trace exporter now; called per scrape.
    public func refreshGauges() {
        if let counts = traceExporter?.counts { metrics.traceSpans(exported: counts.exported, dropped: counts.dropped) }
        if let timerPipeline { metrics.timers(waiting: timerPipeline.waiting, partitions: timerPipeline.assignment.count) }
        if let registry {
            let status = registry.follower.status
            metrics.registry(
                lag: status.lag, caughtUp: status.caughtUp, applied: status.applied, invalid: status.invalid,
                droppedPreferences: status.droppedPreferences, unknownTimeZones: registry.directory.unknownZones.lookups)
        }
        for client in delivery.projects.clients.values {
            metrics.fcm(
                project: client.projectID, waiting: client.waitingOnFCM(at: .now)?.duration, heldTargets: client.heldTargets,
                connections: client.connections.open, sendsInFlightLimit: client.concurrencyLimit, maxSendsPerSecond: client.maxSendsPerSecond,
                waitingForRoom: client.waitingForRoom, accessTokenTimeLeft: client.accessTokenTimeLeft)
        }
    }

    /// Why the worker stopped on its own, if it did.
    public var failure: String? { failureBox.withLock { $0 } }

    public func run() async throws {
        do {
            try await withGracefulShutdownHandler {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await self.warmUp() }
                    group.addTask { await self.delivery.processor.failures.run() }
                    if let traceExporter { group.addTask { await traceExporter.run() } }
                    if let registry {
                        group.addTask { try await self.follow(registry) }
                        // Events name users: none is taken before the registry has every user
                        // it had at start, or users would look as if they had no devices.
                        guard await catchUp(registry) else {
                            group.cancelAll()  // the follower runs until cancelled
                            return
                        }
                    }
                    // No event is deferred to a timer topic the timer engine would refuse.
                    try await timerPipeline?.checkTopic()
                    // Every pipeline until all end; one ending (stopped, or failed) stops the others.
                    try await withThrowingTaskGroup(of: Void.self) { pipelines in
                        pipelines.addTask { try await self.runStopping(self.pipeline.run) }
                        if let rulesPipeline { pipelines.addTask { try await self.runStopping(rulesPipeline.run) } }
                        if let timerPipeline { pipelines.addTask { try await self.runStopping(timerPipeline.run) } }
                        try await pipelines.waitForAll()
                    }
                    group.cancelAll()
                }
            } onGracefulShutdown: { [logger] in
                logger.info("stopping: draining events in flight, then committing")
                self.stop()
                self.stopPipelines()
            }
        } catch {
            failureBox.withLock { $0 = $0 ?? "\(error)" }
            logger.critical("pipeline stopped: \(error)")
        }
        await traceExporter?.shutdown()
        await delivery.close()
        logger.info("stopped")
    }

    /// Runs a pipeline; when it ends (stopped, or failed), the others stop too.
    private func runStopping(_ run: () async throws -> Void) async throws {
        defer { stopPipelines() }
        try await run()
    }

    private func stopPipelines() {
        pipeline.stop()
        rulesPipeline?.stop()
        timerPipeline?.stop()
    }

    /// Fetches an access token now: readiness reports it, and a refused account stops the worker
    /// before it takes any event. Ends when the token comes, or the worker stops.
    private func warmUp() async {
        let projects = delivery.projects
        for name in projects.names {
            let project: Logger.Metadata = ["project": "\(name)"]
            do {
                try await projects.clients[name]!.warmUp()
            } catch let error as FCMError where error.kind == .configuration {
                logger.critical("FCM refuses this setup: \(error)", metadata: project)
                failureBox.withLock { $0 = error.description }
                stop()
                stopPipelines()
                return
            } catch is CancellationError {
                return  // the worker stops
            } catch {
                logger.warning("no FCM access token yet; sends will retry: \(error)", metadata: project)
            }
        }
    }

    /// Ends a wait for the registry (the pipeline is stopped by its own `stop()`).
    private func stop() {
        stopping.store(true, ordering: .relaxed)
        stoppingSignal.notify()
    }

    /// Keeps the registry current until cancelled; a failure stops the worker (events to users
    /// would be sent to a stale view of their devices).
    private func follow(_ registry: WorkerRegistry) async throws {
        do {
            try await registry.follower.run()
        } catch {
            logger.critical("the device registry stopped: \(error)")
            failureBox.withLock { $0 = $0 ?? "device registry: \(error)" }
            stop()
            stopPipelines()
            throw error
        }
    }

    /// Waits until the registry has caught up with the end offsets it saw at start: true; false
    /// when the worker stops first.
    private func catchUp(_ registry: WorkerRegistry) async -> Bool {
        logger.info("reading the device registry before taking events", metadata: ["topic": "\(registry.follower.topic)"])
        let started = ContinuousClock.now
        let caughtUp = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await registry.follower.waitUntilCaughtUp() }
            group.addTask {
                _ = await self.stoppingSignal.wait { self.stopping.load(ordering: .relaxed) }
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        if caughtUp {
            let status = registry.follower.status
            logger.info(
                "device registry caught up",
                metadata: [
                    "records": "\(status.applied)", "invalid": "\(status.invalid)",
                    "took": "\(ContinuousClock.now - started)",
                ])
        }
        return caughtUp
    }

    /// FCM has not answered for this long (sends failing without an answer, or in flight with
    /// none) before readiness says so: a lone 503 among successes is not an outage.
    static let waitingReadinessThreshold: Duration = .seconds(5)

    /// `/readyz`: ready while consuming (holding partitions or waiting for them) with an FCM
    /// token for every project, and FCM answering each.
    public func readiness() -> (ready: Bool, reason: String) {
        if let registry, !registry.follower.caughtUp {
            return (false, "reading the device registry: \(registry.follower.lag) records behind the end offsets seen at start")
        }
        guard pipeline.isRunning else { return (false, "not consuming") }
        if let rulesPipeline, !rulesPipeline.isRunning { return (false, "the rules pipeline (by-subject topic) is not consuming") }
        let projects = delivery.projects
        for name in projects.names {
            let client = projects.clients[name]!
            let which = projects.names.count > 1 ? " for project \(name)" : ""
            guard client.hasAccessToken else {
                let left = client.accessTokenTimeLeft
                guard left > .zero else { return (false, "no FCM access token\(which) yet") }
                // Refreshed from 5 min before expiry: a minute left means refreshes have failed for minutes.
                let seconds = left.components.seconds
                return (false, "the FCM access token\(which) expires in \(seconds) s and refreshing it has failed; sends wait for a new one")
            }
            if let waiting = client.waitingOnFCM(at: .now), waiting.duration >= Self.waitingReadinessThreshold {
                return (
                    false,
                    "waiting on FCM\(which) for \(waiting.duration.components.seconds) s (\(waiting.reason)); events are held and retried, not dead-lettered"
                )
            }
        }
        let partitions = pipeline.assignment.count
        var reason = partitions == 0 ? "waiting for an assignment" : "consuming \(partitions) partitions"
        // The timer engine does not decide readiness (taking a pod out of a Service helps no
        // timer); what it holds is told.
        if let timerPipeline { reason += "; timers: \(timerPipeline.assignment.count) partitions, \(timerPipeline.waiting) waiting" }
        return (true, reason)
    }
}

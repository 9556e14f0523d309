import Dates
import EventTracing
import FCM
import Foundation
import HTTP2
import Kafka
import Logging
import Mapping
import Operations
import Pipeline
import Rules
import RulesStore
import SchemaRegistry

/// What `run` and `replay` share, assembled from the config: the FCM client, the producer for
/// dead-letter and invalidation records, and the processor that takes an event to done.
public struct Delivery: Sendable {
    public let projects: FCMProjects
    public let producer: KafkaProducer
    public let processor: EventProcessor
    /// Re-key mode's stage 2 (`cap` or `dedup` on a topic not keyed by user): the processor of
    /// the by-subject topic, which decides them; nil otherwise.
    public let rulesProcessor: EventProcessor?
    public let validateOnly: Bool
    /// Each project's send rate for the whole group, by name (`fcm.project_sends_per_second`).
    public let projectQuotas: [String: ProjectQuotaShare]
    /// Writer schemas of Avro and Protobuf records, with `schema_registry.url`.
    public let schemaRegistry: SchemaRegistryClient?

    /// - Parameters:
    ///   - maxSendsPerSecond: overrides `fcm.max_sends_per_second`, for each project (replay's `--rate`).
    ///   - maxAge: `.ignore` sends events older than their `max_age` (replay's `--ignore-max-age`).
    ///   - clock: what events are judged by (``WorkerClock``).
    ///   - rules: run the rules engine that decides `cap` and `dedup` (`run`).
    ///   - timers: write pushes with a later `send_at` to the timer topic (`run`); without it they
    ///     are skipped as `timer_not_armed` (a replay).
    ///   - rulesStage: without the engine (`replay`), the by-subject topic to write events of
    ///     mappings with `cap` or `dedup` to, as the workers' stage 1 does, for their rules stage
    ///     to decide (``ReplayJob/statefulRouting(settings:mappings:request:)`` says whether);
    ///     nil: they are sent as any other event.
    /// - Throws: when a service account cannot be loaded, or a mapping names a project the config
    ///   does not have (``ProjectChoiceError``, with each mapping's file and line).
    public init(
        settings: PushbridgeConfig, mappings: MappingSet, validateOnly: Bool, maxSendsPerSecond: Double? = nil,
        maxAge: MaxAgeCheck = .enforce, directory: (any DeviceDirectory)? = nil, metrics: PipelineMetrics, logger: Logger,
        failures: LogSummary? = nil, tracer: PushTracer? = nil, clock: any WallClock = SystemWallClock(), rules: Bool = false,
        timers: Bool = false, rulesStage: String? = nil
    ) throws {
        // Failures that repeat (Kafka down, FCM connections dying) as incidents: one per process.
        let failures = failures ?? LogSummary(logger: logger, period: settings.log.summaryPeriod)
        let fcmSettings = settings.fcm
        // One project unless fcm.projects names several: fcm.service_account (nil:
        // GOOGLE_APPLICATION_CREDENTIALS), which is the default.
        let configured: [(name: String, accountFile: String?, project: PushbridgeConfig.Project?)] =
            fcmSettings.projects.isEmpty
            ? [(FCMProjects.singleName, fcmSettings.serviceAccountFile, nil)]
            : fcmSettings.projects.map { ($0.key, $0.value.serviceAccountFile, $0.value) }
        let defaultName =
            fcmSettings.projects.isEmpty
            ? FCMProjects.singleName : fcmSettings.defaultProject ?? (configured.count == 1 ? configured[0].name : nil)
        try ProjectChoiceError.check(
            mappings.projectChoices, projects: Set(configured.map(\.name)), defaultProject: defaultName, registry: settings.registry.topic)

        var clients: [String: FCMClient] = [:]
        var quotas: [String: ProjectQuotaShare] = [:]
        for (name, accountFile, project) in configured {
            let account = try ServiceAccount.load(path: accountFile)
            var fcm = FCMClient.Configuration(serviceAccount: account)
            fcm.baseURL = fcmSettings.endpoint
            fcm.caFile = fcmSettings.caFile
            fcm.maxStreams = fcmSettings.maxStreams
            fcm.maxConnections = fcmSettings.connections
            fcm.maxSendsPerSecond = maxSendsPerSecond ?? project?.maxSendsPerSecond ?? fcmSettings.maxSendsPerSecond
            fcm.concurrency.ceiling = settings.delivery.maxSendsInFlight
            fcm.requestTimeout = fcmSettings.requestTimeout
            fcm.livenessTimeout = fcmSettings.livenessTimeout
            fcm.engine = HTTP2Client.Engine(rawValue: fcmSettings.httpEngine) ?? .nghttp2
            fcm.onDeadConnection = { [failures, metrics] dead in
                failures.log(
                    .warning, "FCM connection closed as dead: \(dead)", kind: "dead connection \(name) \(dead.authority)",
                    metadata: ["host": "\(dead.authority)", "streams": "\(dead.requests)", "project": "\(name)"])
                metrics.deadConnection(host: dead.authority)
            }
            fcm.onAvailabilityChange = { [logger] change in
                let project: Logger.Metadata = ["project": "\(name)"]
                switch change {
                case .stoppedAnswering(let reason):
                    logger.warning("FCM stopped answering: \(reason); events wait, and the wait uses up no retry budget", metadata: project)
                case .stillNotAnswering(let duration, let failed, let last):
                    logger.warning(
                        "FCM still not answering after \(duration.roundedToSeconds): \(failed) attempts failed so far; last: \(last)",
                        metadata: project)
                case .answeringAgain(let duration, let failed):
                    logger.notice("FCM answering again after \(duration.roundedToSeconds) (\(failed) attempts failed meanwhile)", metadata: project)
                }
            }
            fcm.retry.maxAttempts = fcmSettings.retry.maxAttempts
            fcm.retry.initialBackoff = fcmSettings.retry.initialBackoff
            fcm.retry.maxBackoff = fcmSettings.retry.maxBackoff
            fcm.retry.budget = fcmSettings.retry.budget
            fcm.retry.quotaPause = fcmSettings.retry.quotaPause
            // One proxy for the sends and the token exchange: they share the client's connections.
            fcm.proxy = fcmSettings.proxyURL.map { HTTPProxy(url: $0, noProxy: fcmSettings.noProxy ?? []) }
            clients[name] = try FCMClient(configuration: fcm)
            if let rate = project?.projectSendsPerSecond ?? fcmSettings.projectSendsPerSecond {
                quotas[name] = ProjectQuotaShare(projectSendsPerSecond: rate)
            }
        }
        projects = try FCMProjects(clients, default: defaultName)
        projectQuotas = quotas

        producer = try KafkaProducer(
            configuration: OutputRecords.producerConfiguration(brokers: settings.kafka.brokers, properties: settings.kafka.properties),
            logHandler: KafkaLogs(summary: failures).lineHandler)

        var options = EventProcessor.Options(deadLetterTopic: settings.topics.deadLetter, tokenInvalidationTopic: settings.topics.tokenInvalidation)
        options.validateOnly = validateOnly || settings.fcm.validateOnly
        options.skipUnknownEventTypes = settings.delivery.unknownEventTypes == .skip
        options.skipUsersWithoutDevices = settings.registry.noDevices == .skip
        options.maxAge = maxAge
        options.valueFormats = settings.kafka.valueFormats
        options.outcomeTopic = settings.topics.outcomes
        options.clock = clock
        if timers, !mappings.deferring.isEmpty { options.timers = Self.timerOptions(settings) }
        self.validateOnly = options.validateOnly
        schemaRegistry = try Self.schemaRegistry(settings, logger: logger)
        let stateful = rules && mappings.hasStatefulRules
        let direct = stateful && settings.rules.keyedBy == .user
        let rulesEngine = try stateful ? Self.rulesEngine(settings, producer: producer, clock: clock) : nil
        if stateful && !direct {
            var stage2 = options
            stage2.sourceFromHeader = true
            rulesProcessor = EventProcessor(
                mappings: mappings, sender: projects, producer: producer, directory: directory, schemas: schemaRegistry, options: stage2,
                metrics: metrics, logger: logger, failures: failures, tracer: tracer, rules: rulesEngine)
            options.rekeyTopic = settings.rules.bySubject(group: settings.kafka.group)
        } else {
            rulesProcessor = nil
            options.rekeyTopic = rulesStage
        }
        processor = EventProcessor(
            mappings: mappings, sender: projects, producer: producer, directory: directory, schemas: schemaRegistry, options: options,
            metrics: metrics, logger: logger, failures: failures, tracer: tracer, rules: direct ? rulesEngine : nil)
        if let rulesEngine, !mappings.digesting.isEmpty {
            // Windows are closed by the processor that decides their events: stage 2's, or the direct one.
            let closing = rulesProcessor ?? processor
            rulesEngine.setDigestCloser { window, closed, partition in await closing.closeDigest(window, closed, partition: partition) }
        }
    }

    /// The rules engine of `cap` and `dedup`, its state in `rules.state_path` (or in memory,
    /// `rules.state_store: memory`), its claims and facts written by `producer` (the record
    /// producer: `acks=all`, ``OutputRecords/producerConfiguration(brokers:properties:)``). Its
    /// partitions are the source's with `rules.source.keyed_by: user` (partitioned as
    /// `rules.source.partitioner` says), else the by-subject topic's, which `producer` writes with
    /// librdkafka's default partitioner. Public for `pushbridge demo`, which puts its pipeline
    /// together itself.
    public static func rulesEngine(_ settings: PushbridgeConfig, producer: KafkaProducer, clock: any WallClock) throws -> any StatefulRulesEngine {
        let partitioner: KafkaPartitioner
        if settings.rules.keyedBy == .user {
            guard let name = settings.rules.partitioner, let p = KafkaPartitioner(rawValue: name.rawValue) else {
                throw RulesSetupError(description: "rules.source.keyed_by: user needs rules.source.partitioner (docs/rules.md)")
            }
            partitioner = p
        } else {
            partitioner = .consistent
        }
        let member = settings.kafka.instanceID ?? "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)"
        func engine<Store: RulesStateStore>(over store: Store) -> RulesEngine<Store> {
            var configuration = RulesEngine<Store>.Configuration(
                bootstrapServers: settings.kafka.brokers, changelogTopic: settings.rules.changelog(group: settings.kafka.group),
                partitioner: partitioner, member: member)
            configuration.properties = settings.kafka.properties
            return RulesEngine(configuration, producer: producer, store: store, wall: clock) { clock.nowMilliseconds() }
        }
        switch settings.rules.stateStore {
        case .memory:
            return engine(over: MemoryRulesStore())
        case .file:
            let directory = URL(fileURLWithPath: settings.rules.statePath).deletingLastPathComponent().path
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            return engine(over: try RulesStore(path: settings.rules.statePath))
        }
    }

    /// The projects as the startup log names them: `name=project-id`, sorted.
    public var projectsDescription: String {
        projects.names.map { "\($0)=\(projects.clients[$0]!.projectID)" }.joined(separator: ",")
    }

    /// Fetches an access token; a refused account or an untrusted endpoint throws a
    /// configuration error here, before any event is taken.
    public func warmUp() async throws {
        try await projects.warmUp()
    }

    /// The registry client, with `schema_registry.url` (the config loader refuses topics read as
    /// avro or protobuf without one).
    public static func schemaRegistry(_ settings: PushbridgeConfig, logger: Logger) throws -> SchemaRegistryClient? {
        guard let url = settings.schemaRegistry.url else { return nil }
        var configuration = SchemaRegistryClient.Configuration(
            url: url, username: settings.schemaRegistry.username, password: settings.schemaRegistry.password,
            caFile: settings.schemaRegistry.caFile)
        configuration.requestTimeout = settings.schemaRegistry.requestTimeout
        return try SchemaRegistryClient(configuration: configuration, logger: logger)
    }

    public func close() async {
        await schemaRegistry?.shutdown()
        await projects.shutdown()
        await producer.close()
    }
}

/// Mappings that name a project the config does not have, or target users with no device
/// registry configured: refused when the worker starts, each with its file and line, rather than
/// dead-lettering every event of theirs.
public struct ProjectChoiceError: Error, CustomStringConvertible {
    public var problems: [String]
    public var description: String { problems.joined(separator: "\n") }

    static func check(
        _ choices: [ProjectChoice], projects: Set<String>, defaultProject: String?, registry: String?
    ) throws(ProjectChoiceError) {
        let known = projects.sorted().joined(separator: ", ")
        var problems: [String] = []
        for choice in choices {
            let place = "\(choice.file):\(choice.line): event \"\(choice.eventType)\""
            if let name = choice.name, !projects.contains(name) {
                let what = choice.field == nil ? "project" : "project default"
                problems.append("\(place): \(what) \"\(name)\" is not one of fcm.projects (\(known))")
            } else if choice.name == nil, choice.field == nil, defaultProject == nil {
                problems.append("\(place) names no project, and there is no default: set fcm.default_project, or project: in the mapping")
            }
            for app in choice.apps where !projects.contains(app) {
                problems.append("\(place): target app \"\(app)\" is not one of fcm.projects (\(known))")
            }
            if choice.targetsUser, registry == nil {
                problems.append("\(place) targets a user, and no device registry is configured: set registry.topic (docs/registry.md)")
            }
            if choice.namesUser, registry == nil {
                problems.append(
                    "\(place) names a user whose preferences its rules read (user:), and no device registry is configured: set registry.topic (docs/rules.md)"
                )
            }
        }
        guard problems.isEmpty else { throw ProjectChoiceError(problems: problems) }
    }
}

extension SchemaRegistryClient: SchemaSource {}

/// The rules engine cannot run with this config.
public struct RulesSetupError: Error, CustomStringConvertible {
    public var description: String
}

import DeviceRegistry
import Kafka
import Logging
import Mapping
import Operations
import Pipeline
import SchemaRegistry
import ServiceLifecycle
import Synchronization

/// `pushbridge replay`'s job: resolves the plan, then reads its ranges and sends them again (or
/// renders them, a dry run) through the same machinery as a ``Worker``, in assign mode.
/// A swift-service-lifecycle `Service`: a graceful shutdown stops the reading and lets the
/// events in flight finish; what finished is committed (with a commit group) and reported in
/// ``outcome``.
public final class ReplayJob: Service, Sendable {
    /// What to replay, and how (`pushbridge replay`'s flags).
    public struct Request: Sendable {
        public enum Sending: Sendable, Equatable {
            case send
            /// With FCM's validate_only: FCM checks everything and delivers nothing.
            case validateOnly
            /// Render only, each result to ``ReplayReporter/rendered(_:_:)``; nothing is sent or written.
            case dryRun
        }

        public var topic: String
        /// Nil: every partition, or those the start names.
        public var partitions: [Int32]?
        public var from: OffsetPosition
        /// Exclusive. Nil: the high watermark seen when the job starts.
        public var to: OffsetPosition?
        /// Only these event types; empty: all.
        public var eventTypes: Set<String> = []
        public var sending = Sending.send
        /// At most this many FCM sends per second, for each project (nil: the config's).
        public var maxSendsPerSecond: Double?
        /// A group of the replay's own that its progress is committed to; nil: none.
        public var commitGroup: String?
        public var maxAge = MaxAgeCheck.enforce
        public var maxEventsInFlight = 1_000
        /// Events of mappings with `cap` or `dedup`: handed to the workers' rules stage, or sent
        /// as any other (``ReplayJob/statefulRouting(settings:mappings:request:)``).
        public var capsAndDedup = CapsAndDedup.rulesStage
        /// Write pushes due later to the timer topic, as a worker does (`--rearm-timers`);
        /// false: skip them as `timer_not_armed`.
        public var rearmTimers = false

        public init(topic: String, from: OffsetPosition, to: OffsetPosition? = nil) {
            self.topic = topic
            self.from = from
            self.to = to
        }
    }

    /// What the replay did, once ``run()`` has returned.
    public struct Outcome: Sendable {
        public var plan: ReplayPlan
        public var summary: Replay.Summary
        /// From the start of the read until the FCM clients and the producer were closed.
        public var elapsed: Duration
        /// A graceful shutdown (SIGINT, SIGTERM) stopped it.
        public var interrupted: Bool
    }

    /// Why the replay did not start; ``run()`` throws it.
    public struct Failure: Error, CustomStringConvertible {
        public enum Kind: Sendable {
            /// The request does not fit the topic, or the device registry cannot be read.
            case badInput
            /// Kafka or FCM refused the setup.
            case refused
        }

        public var kind: Kind
        public var description: String
    }

    let settings: PushbridgeConfig
    let mappings: MappingSet
    let request: Request
    let reporter: any ReplayReporter
    let logger: Logger
    private let outcomeBox = Mutex<Outcome?>(nil)

    /// - Parameter mappings: the config's, or those the request names, loaded.
    public init(settings: PushbridgeConfig, mappings: MappingSet, request: Request, reporter: any ReplayReporter, logger: Logger) {
        self.settings = settings
        self.mappings = mappings
        self.request = request
        self.reporter = reporter
        self.logger = logger
    }

    /// Whether pushes due later go to the timer topic: asked, and some mapping defers.
    private var rearming: Bool { request.rearmTimers && !mappings.deferring.isEmpty }

    /// What the replay did; nil until ``run()`` has returned without throwing.
    public var outcome: Outcome? { outcomeBox.withLock { $0 } }

    /// Plans, sets up the delivery (or the dry run), replays, and closes what it opened.
    /// - Throws: ``Failure`` when the replay cannot start.
    public func run() async throws {
        let routing = try Self.statefulRouting(settings: settings, mappings: mappings, request: request)
        let plan = try await resolvePlan(checking: request.sending == .dryRun ? nil : routing.topic, timers: rearming && request.sending != .dryRun)
        reporter.planned(plan)
        let output = try await startOutput(routing)
        let started = ContinuousClock.now
        let summary: Result<Replay.Summary, any Error>
        do {
            summary = .success(try await replay(plan, into: output, routing: routing))
        } catch {
            summary = .failure(error)
        }
        await output.close()
        let outcome = Outcome(
            plan: plan, summary: try summary.get(), elapsed: ContinuousClock.now - started, interrupted: Task.isShuttingDownGracefully)
        outcomeBox.withLock { $0 = outcome }
    }

    /// The replay's ranges; also checks that `bySubject`, the rules stage's topic the replay
    /// will write to, exists (a missing one would fail each write only after librdkafka's
    /// message timeout, minutes later).
    private func resolvePlan(checking bySubject: String?, timers: Bool) async throws(Failure) -> ReplayPlan {
        do {
            // Closed before the replay starts: it only answers the planning questions.
            let logs = KafkaLogs(logger: logger)
            return try await KafkaConsumer.withConsumer(
                configuration: .standalone(brokers: settings.kafka.brokers, properties: settings.kafka.properties),
                errorHandler: logs.errorHandler, logHandler: logs.lineHandler
            ) { [request] planner in
                if let bySubject { try await Self.checkRulesStage(bySubject, planner) }
                if timers { try await Self.checkTimerTopic(settings, planner) }
                return try await ReplayPlan.resolve(
                    topic: request.topic, partitions: request.partitions, from: request.from, to: request.to, lookup: planner)
            }
        } catch let invalid as ReplayPlan.Invalid {
            throw Failure(kind: .badInput, description: invalid.description)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(kind: .refused, description: "cannot plan the replay: \(error)")
        }
    }

    /// Where the events go: a delivery with an access token, or a dry run's own registry client.
    private func startOutput(_ routing: StatefulRouting) async throws -> Output {
        if request.sending == .dryRun {
            // Avro and Protobuf records render as a run would.
            return .dryRun(try Delivery.schemaRegistry(settings, logger: logger))
        }
        // Users' devices come from a worker's registry store as it is now (read-only: the worker
        // keeps it current): run the replay where a worker's store is.
        var directory: RegistryDirectory?
        if settings.registry.topic != nil {
            do {
                directory = RegistryDirectory(
                    store: try RegistryStore(path: settings.registry.path, readOnly: true), logger: logger,
                    defaultZone: WorkerRegistry.defaultZone(settings))
            } catch {
                throw Failure(kind: .badInput, description: "cannot read the device registry at \(settings.registry.path) (registry.path): \(error)")
            }
        }
        let delivery: Delivery
        do {
            delivery = try Delivery(
                settings: settings, mappings: mappings, validateOnly: request.sending == .validateOnly, maxSendsPerSecond: request.maxSendsPerSecond,
                maxAge: request.maxAge, directory: directory, metrics: PipelineMetrics(), logger: logger, timers: rearming,
                rulesStage: routing.topic)
        } catch {
            throw Failure(kind: .refused, description: "FCM refuses this setup: \(error)")
        }
        reporter.fcmClientsReady()
        do {
            try await cancelWhenGracefulShutdown { try await delivery.warmUp() }
        } catch is CancellationError where Task.isShuttingDownGracefully {
            // Stopped before the first event: the replay reads nothing and says where to resume.
        } catch {
            await delivery.close()
            throw Failure(kind: .refused, description: "FCM refuses this setup: \(error)")
        }
        return .delivery(delivery)
    }

    /// Reads the plan's ranges until they end or a graceful shutdown stops the reading (at once
    /// if it came earlier), then lets the events in flight finish.
    private func replay(_ plan: ReplayPlan, into output: Output, routing: StatefulRouting) async throws -> Replay.Summary {
        var configuration = Replay.Configuration(
            consumer: .standalone(brokers: settings.kafka.brokers, properties: settings.kafka.properties, group: request.commitGroup), plan: plan)
        configuration.eventTypes = request.eventTypes
        configuration.schemas = output.schemas(settings)
        configuration.commit = request.commitGroup != nil
        configuration.maxAge = request.maxAge
        configuration.maxEventsInFlight = request.maxEventsInFlight
        configuration.shutdownTimeout = settings.delivery.shutdownTimeout
        configuration.rulesStage = routing.topic
        configuration.rearmTimers = rearming
        let mode: Replay.Mode
        switch output {
        case .delivery(let delivery): mode = .send(delivery.processor)
        case .dryRun: mode = .dryRun(inspect: { [reporter] in reporter.rendered($0, $1) })
        }
        let replay = try Replay(configuration: configuration, mappings: mappings, mode: mode, logger: logger)
        return try await withGracefulShutdownHandler {
            try await replay.run { [reporter] progress, elapsed in reporter.progress(progress, elapsedSeconds: elapsed) }
        } onGracefulShutdown: { [reporter] in
            reporter.stopping()
            replay.stop()
        }
    }

    private enum Output {
        case delivery(Delivery)
        case dryRun(SchemaRegistryClient?)

        func schemas(_ settings: PushbridgeConfig) -> RecordSchemas {
            switch self {
            case .delivery(let delivery): delivery.processor.schemas
            case .dryRun(let registry): RecordSchemas(source: registry, valueFormats: settings.kafka.valueFormats)
            }
        }

        func close() async {
            switch self {
            case .delivery(let delivery): await delivery.close()
            case .dryRun(let registry): await registry?.shutdown()
            }
        }
    }
}

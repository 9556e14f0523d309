import EventTracing
import Kafka
import Logging
import Synchronization

/// What the pipeline does when the group moves partitions:
/// - assigned: read the committed offsets and their offset maps, and start tracking;
/// - revoked: stop taking their work, let in-flight events finish (bounded), commit, forget;
/// - lost: forget at once (another member may own them already; a commit would fail).
///
/// A timer engine's records waiting for their release are given up at once on revoke
/// (``AbandonsOnRevoke``): only begun work is drained.
final class RebalanceHandlers: Sendable {
    let coordinator: PipelineCoordinator
    let configuration: Pipeline.Configuration
    /// Given its share of each project's send rate; nil: an engine that sends nothing itself.
    let sender: (any PushSending)?
    /// Work in flight a revoke does not wait for; nil: none.
    let waiting: (any AbandonsOnRevoke)?
    let metrics: PipelineMetrics
    let logger: Logger
    /// Where commit failures go (the pipeline's).
    let failures: LogSummary
    /// Told of commits, which end traced events' spans.
    let tracer: PushTracer?
    /// The rules engine, told which partitions to own; nil: no mapping has `cap` or `dedup`.
    let rules: (any StatefulRulesEngine)?
    /// Stops the run with a reason.
    let failed: (@Sendable (String) -> Void)?
    /// Set right after the source is created (the handler must exist first).
    let consumer = Mutex<(any MessageSource)?>(nil)
    /// Its partitions count in `pushbridge_partitions_assigned`: the event pipelines' do; the
    /// timer engine's are `pushbridge_timers_partitions` (an alert that no worker consumes
    /// events must not be silenced by timer partitions).
    let countsPartitions: Bool

    init(
        coordinator: PipelineCoordinator, configuration: Pipeline.Configuration, sender: (any PushSending)?, metrics: PipelineMetrics,
        logger: Logger, failures: LogSummary, tracer: PushTracer?, waiting: (any AbandonsOnRevoke)? = nil,
        rules: (any StatefulRulesEngine)? = nil, failed: (@Sendable (String) -> Void)? = nil, countsPartitions: Bool = true
    ) {
        self.countsPartitions = countsPartitions
        self.rules = rules
        self.failed = failed
        self.waiting = waiting
        self.failures = failures
        self.tracer = tracer
        self.coordinator = coordinator
        self.configuration = configuration
        self.sender = sender
        self.metrics = metrics
        self.logger = logger
    }

    var handler: KafkaRebalanceHandler {
        KafkaRebalanceHandler(
            onAssign: { [self] in await assigned($0) },
            onRevoke: { [self] in await revoked($0) },
            onLost: { [self] in await lost($0) })
    }

    private func assigned(_ partitions: [TopicPartition]) async {
        guard let consumer = consumer.withLock({ $0 }) else { return }
        var offsets = partitions.map { TopicPartitionOffset($0, offset: .invalid) }
        do {
            offsets = try await consumer.committedOffsets(partitions)
        } catch {
            // Without the committed metadata the offset map is unknown: events already done
            // beyond the committed offset are sent again. Never a loss.
            logger.warning(
                "cannot read committed offsets; the offset map is not used this time",
                metadata: ["error": "\(error)", "partitions": "\(partitions.map(\.description).joined(separator: ","))"])
        }
        waiting?.assigned(partitions)
        coordinator.assign(offsets)
        await startRulesOwners(partitions, consumer)
        if countsPartitions { metrics.partitionsAssigned(coordinator.partitions.count, by: coordinator) }
        logger.info("assigned", metadata: ["partitions": "\(partitions.map(\.description).joined(separator: ","))"])
        await shareProjectQuota(consumer)
    }

    private func revoked(_ partitions: [TopicPartition]) async {
        guard let consumer = consumer.withLock({ $0 }) else { return }
        coordinator.beginRevoke(partitions)
        waiting?.abandon(partitions)
        rules?.revoking(partitions.map(\.partition))
        let drained = await coordinator.waitUntilDrained(partitions, timeout: configuration.revokeTimeout) {
            waiting?.abandoned(partitions) ?? 0
        }
        if !drained {
            let left = coordinator.inFlight(partitions) - (waiting?.abandoned(partitions) ?? 0)
            logger.warning(
                "revoke: events still in flight are given up; the new owner sends them again",
                metadata: ["in_flight": "\(left)", "partitions": "\(partitions.map(\.description).joined(separator: ","))"])
        }
        await coordinator.commit(partitions, through: consumer, metrics: metrics, log: failures, tracer: tracer)
        release(partitions)
        rules?.released(partitions.map(\.partition))
        logger.info("revoked", metadata: ["partitions": "\(partitions.map(\.description).joined(separator: ","))"])
        await shareProjectQuota(consumer)
    }

    private func lost(_ partitions: [TopicPartition]) async {
        waiting?.abandon(partitions)
        release(partitions)
        rules?.released(partitions.map(\.partition))
        logger.warning("lost", metadata: ["partitions": "\(partitions.map(\.description).joined(separator: ","))"])
        if let consumer = consumer.withLock({ $0 }) { await shareProjectQuota(consumer) }
    }

    /// The rules engine's owners restore and claim the state of `partitions` (direct mode: one
    /// source topic, its partitions the state partitions). Without the partition count no
    /// record can be checked to be in its subject's partition: the worker stops.
    private func startRulesOwners(_ partitions: [TopicPartition], _ consumer: any MessageSource) async {
        guard let rules, let topic = partitions.first?.topic else { return }
        do {
            let count = try await consumer.partitionCount(of: topic)
            let changelog: Int
            do {
                changelog = try await consumer.partitionCount(of: rules.changelogTopic)
            } catch  where error.code == .unknownTopicOrPartition {
                changelog = 0
            }
            guard changelog == count else {
                let problem = changelog == 0 ? "does not exist" : "has \(changelog) partitions"
                let why =
                    "the rules changelog \(rules.changelogTopic) \(problem), and \(topic) has \(count): create it with as many "
                    + "(kafka-topics.sh --create --topic \(rules.changelogTopic) --partitions \(count) --config cleanup.policy=delete), "
                    + "or set rules.changelog_topic"
                logger.critical("\(why)")
                failed?(why)
                return
            }
            rules.assigned(partitions.map(\.partition), partitionCount: Int32(count))
        } catch {
            let topics = "\(topic) and \(rules.changelogTopic)"
            logger.critical("cannot read the partition counts of \(topics), which the rules engine's state partitions follow: \(error)")
            failed?("the partition counts of \(topics) cannot be read: \(error)")
        }
    }

    /// Sets each project's cap to this worker's share of that project's rate
    /// (``ProjectQuotaShare``) for the partitions it holds now, out of those of its topics. When
    /// the partition counts cannot be read, the last shares stay.
    private func shareProjectQuota(_ consumer: any MessageSource) async {
        guard let sender, !configuration.projectQuotas.isEmpty else { return }
        // A pattern's topics are not all known here: a member holding only some of them would
        // count too few partitions and take more than its share. No split then.
        guard !configuration.topics.contains(where: { $0.hasPrefix("^") }) else {
            logger.warning("fcm.project_sends_per_second is not split over a pattern subscription (kafka.topics starting with ^); name the topics")
            return
        }
        let owned = coordinator.partitions
        let topics = Set(configuration.topics)
        var total = 0
        for topic in topics.sorted() {
            do {
                total += try await consumer.partitionCount(of: topic)
            } catch {
                logger.warning(
                    "cannot read the partition count of \(topic); the share of the project's send rate stays as it was",
                    metadata: ["error": "\(error)"])
                return
            }
        }
        for (project, quota) in configuration.projectQuotas.sorted(by: { $0.key < $1.key }) {
            guard let share = quota.sendsPerSecond(owned: owned.count, total: total) else { continue }
            sender.setProjectShare(project, sendsPerSecond: share)
            logger.info(
                "share of the project's FCM send rate",
                metadata: [
                    "project": "\(project)", "sends_per_second": "\(Int(share))", "partitions": "\(owned.count) of \(total)",
                    "project_sends_per_second": "\(Int(quota.projectSendsPerSecond))",
                ])
        }
    }

    /// Stops tracking `partitions`, and their metric series go with them.
    private func release(_ partitions: [TopicPartition]) {
        coordinator.remove(partitions)
        metrics.forget(partitions)
        if countsPartitions { metrics.partitionsAssigned(coordinator.partitions.count, by: coordinator) }
    }
}

/// Work in flight that a revoke does not wait for: a timer engine's records waiting for their
/// release (they may wait hours; the next owner reads them again from the committed offset).
protocol AbandonsOnRevoke: Sendable {
    /// `partitions` were assigned: they start afresh.
    func assigned(_ partitions: [TopicPartition])
    /// `partitions` are being given up: their waiting work is dropped, never finished here.
    func abandon(_ partitions: [TopicPartition])
    /// How many of the events in flight in `partitions` were abandoned.
    func abandoned(_ partitions: [TopicPartition]) -> Int
}

import Dates
import Kafka
import Logging
import Mapping
import Pipeline

/// The demo's deferred delivery (docs/timers.md): a timer topic on the demo's cluster, and the
/// timer engine `pushbridge run` starts when a mapping has `send_at`, firing through the same
/// processor. examples/mappings' `reminder.due` waits 20 s after its event.
final class DemoTimers: Sendable {
    /// 8 levels (1 s … 128 s) in one bucket: enough for the demo's delays.
    static let layout = TimerLayout(ladder: TimerLadder(levels: 8), buckets: 1)
    static let topic = "pushbridge.pushbridge-demo.timers"

    /// One element per fire.
    private let fires: AsyncStream<Void>
    private let fired: AsyncStream<Void>.Continuation

    init() {
        (fires, fired) = AsyncStream.makeStream(of: Void.self)
    }

    /// Creates the timer topic when a mapping defers; the processor's timer options, or nil.
    static func options(_ mappings: MappingSet, cluster: KafkaMockCluster) throws -> EventProcessor.TimerOptions? {
        guard !mappings.deferring.isEmpty else { return nil }
        try cluster.createTopic(topic, partitions: layout.partitionCount)
        return EventProcessor.TimerOptions(topic: topic, layout: layout)
    }

    /// The timer engine in the group `<group>.timers`, each fire counted.
    func engine(
        bootstrapServers: String, group: String, producer: any RecordProducing, processor: EventProcessor, metrics: PipelineMetrics,
        logger: Logger
    ) throws -> TimerPipeline {
        var consumer = KafkaConsumerConfiguration(bootstrapServers: [bootstrapServers], groupID: "\(group).timers")
        consumer.sessionTimeout = .seconds(10)
        var configuration = TimerPipeline.Configuration(consumer: consumer, topic: Self.topic)
        configuration.layout = Self.layout
        return try TimerPipeline(configuration: configuration, producer: producer, metrics: metrics, logger: logger) { [self] timer, _ in
            let done = await processor.fire(timer)
            fired.yield()
            return done
        }
    }

    /// Waits until `count` timers fired, or `timeout` passed: whether they did. Called once.
    func waitForFires(_ count: Int, timeout: Duration) async -> Bool {
        await Self.wait(for: count, in: fires, timeout: timeout)
    }
}

/// The demo's digests (docs/mapping.md, *Digests*): the rules engine closes each window at its
/// end through the same processor, as `pushbridge run` does; the demo counts the closes.
final class DemoDigests: Sendable {
    private let closes: AsyncStream<Void>
    private let closed: AsyncStream<Void>.Continuation

    init() {
        (closes, closed) = AsyncStream.makeStream(of: Void.self)
    }

    func close(with rules: any StatefulRulesEngine, processor: EventProcessor) {
        rules.setDigestCloser { [closed] window, closing, partition in
            let done = await processor.closeDigest(window, closing, partition: partition)
            if done { closed.yield() }
            return done
        }
    }

    /// Waits until `count` windows closed, or `timeout` passed: whether they did. Called once.
    func waitForCloses(_ count: Int, timeout: Duration) async -> Bool {
        await DemoTimers.wait(for: count, in: closes, timeout: timeout)
    }
}

extension DemoTimers {
    /// Waits until `stream` yielded `count` times, or `timeout` passed: whether it did.
    static func wait(for count: Int, in stream: AsyncStream<Void>, timeout: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                var seen = 0
                for await _ in stream {
                    seen += 1
                    if seen >= count { return true }
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}

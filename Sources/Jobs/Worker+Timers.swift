import Kafka
import Logging
import Mapping
import Operations
import Pipeline

// `send_at` in a worker (docs/timers.md): pushes due later are written to the timer topic by
// the event pipeline, and a timer engine in the group `<kafka.group>.timers` hands each back to
// the same EventProcessor at its due time.
extension Delivery {
    /// Where the event pipeline writes pushes that wait (`timers.*`).
    static func timerOptions(_ settings: PushbridgeConfig) -> EventProcessor.TimerOptions {
        EventProcessor.TimerOptions(topic: settings.timers.topic(group: settings.kafka.group), layout: timerLayout(settings))
    }

    /// The timer topic's layout (`timers.levels`, `timers.buckets`).
    public static func timerLayout(_ settings: PushbridgeConfig) -> TimerLayout {
        TimerLayout(ladder: TimerLadder(levels: settings.timers.levels), buckets: settings.timers.buckets)
    }
}

extension Worker {
    /// The timer engine of a worker whose mappings have `send_at`; nil for the others. Its
    /// consumer is the pipeline's (brokers, instance, strategy, properties) in the group
    /// `<kafka.group>.timers`; its fire is `processor`'s.
    static func timerPipeline(
        settings: PushbridgeConfig, mappings: MappingSet, consumer: KafkaConsumerConfiguration, engine: Pipeline.Configuration,
        delivery: Delivery, metrics: PipelineMetrics, logger: Logger
    ) throws -> TimerPipeline? {
        guard !mappings.deferring.isEmpty else { return nil }
        var consumer = consumer
        consumer.groupID = "\(settings.kafka.group).timers"
        consumer.groupInstanceID = settings.kafka.instanceID.map { "\($0).timers" }
        var configuration = TimerPipeline.Configuration(consumer: consumer, topic: settings.timers.topic(group: settings.kafka.group))
        configuration.layout = Delivery.timerLayout(settings)
        configuration.deadLetterTopic = settings.topics.deadLetter
        configuration.clock = delivery.processor.clock
        configuration.engine.commitInterval = engine.commitInterval
        configuration.engine.commitEveryEvents = engine.commitEveryEvents
        configuration.engine.offsetMap = engine.offsetMap
        configuration.engine.shutdownTimeout = engine.shutdownTimeout
        let processor = delivery.processor
        configuration.cancelTopic = settings.timers.cancelTopic(group: settings.kafka.group)
        return try TimerPipeline(configuration: configuration, producer: delivery.producer, metrics: metrics, logger: logger) { timer, context in
            await processor.fire(timer, cancelled: context.cancelled)
        }
    }
}

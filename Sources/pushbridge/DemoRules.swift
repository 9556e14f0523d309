import Dates
import Jobs
import Kafka
import Mapping
import Operations
import Pipeline

/// The demo's caps and dedup (docs/rules.md, "Caps and dedup"), as `pushbridge run` has them in
/// direct mode: the events topic keyed by user, a changelog topic with as many partitions, the
/// rules store in the demo's folder, and the worker's own engine (``Delivery/rulesEngine``).
enum DemoRules {
    /// How the demo's producer places keyed records: librdkafka's default partitioner, set
    /// explicitly; `rules.source.partitioner: consistent` names it (``KafkaPartitioner``).
    static let producerPartitioner = "consistent_random"

    /// The config a worker of the demo's group would have: `rules.source: {keyed_by: user,
    /// partitioner: consistent}`, `rules.state_path` in `directory`, the changelog topic its
    /// default (`pushbridge.<group>.rules-changelog`).
    static func settings(bootstrapServers: String, group: String, directory: String) -> PushbridgeConfig {
        var settings = PushbridgeConfig()
        settings.kafka.brokers = [bootstrapServers]
        settings.kafka.group = group
        settings.rules.keyedBy = .user
        settings.rules.partitioner = .consistent
        settings.rules.statePath = "\(directory)/rules.sqlite"
        return settings
    }

    /// The events of a mapping with `cap` or `dedup` keyed by their subject (the user a `user`
    /// target names; for one device without `user:`, that device), as a producer of a topic
    /// keyed by user writes them: direct mode dead-letters a record keyed otherwise
    /// (`not_keyed_by_subject`). The other events keep their keys.
    static func keyedBySubject(_ events: [DemoEvent], mappings: MappingSet) -> [DemoEvent] {
        guard mappings.hasStatefulRules else { return events }
        // Rendered here only for the subject: a stand-in phone for a user, whose ID is the subject.
        let standIn: MappingSet.DeviceLookup = { _ in [UserDevice(kind: .token, id: "stand-in", platform: "android")] }
        return events.map { event in
            let record = EventRecord(value: event.value, headers: event.headers.map { ($0.name, $0.value) })
            guard case .success(let rendered) = mappings.render(record, maxAge: .ignore, devices: standIn),
                mappings.stateful(of: rendered.event.type) != nil
            else { return event }
            var keyed = event
            keyed.key = Array(StatefulPush.subject(of: rendered).utf8)
            return keyed
        }
    }

    /// The engine, with its changelog topic created on the demo's cluster (as many partitions as
    /// the events topic); nil when no mapping has `cap` or `dedup`. `producer` writes its
    /// claims and facts (the worker's record producer: acks=all).
    static func engine(
        _ settings: PushbridgeConfig, mappings: MappingSet, cluster: KafkaMockCluster, partitions: Int32, producer: KafkaProducer
    ) throws -> (any StatefulRulesEngine)? {
        guard mappings.hasStatefulRules else { return nil }
        try cluster.createTopic(settings.rules.changelog(group: settings.kafka.group), partitions: partitions)
        return try Delivery.rulesEngine(settings, producer: producer, clock: SystemWallClock())
    }
}

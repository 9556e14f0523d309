import ArgumentParser
import DeviceRegistry
import FCM
import FCMEmulator
import Foundation
import JSON
import Jobs
import Kafka
import Localization
import Logging
import Mapping
import Pipeline
import Synchronization

struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the real pipeline end to end with no external services.",
        discussion: """
            Starts an in-process Kafka cluster (librdkafka's mock cluster) and the FCM emulator \
            (HTTPS + HTTP/2 on loopback, with its own CA and service account), loads the \
            mappings in examples/mappings, and produces the sample events in examples/events \
            plus a few that show the failure paths: a malformed event (dead-lettered), a dead \
            token (a token-invalidation record) and an event type with no mapping (skipped). \
            The device registry holds examples/registry's users: user-44 muted chats, and \
            user-43 gets quiet hours around the current time, so their chat messages are \
            withheld (docs/rules.md). post.liked is capped at 2 per user per hour: user-44 \
            gets three likes, and one is withheld by the cap; user-42's like is written twice \
            (the same event ID), and the repeat is withheld as a duplicate. A capped mapping's \
            events are keyed by their user, as caps need (rules.source: {keyed_by: user, \
            partitioner: consistent}); their state is in a rules store in a temporary folder, \
            with its changelog topic on the cluster. comment.created is digested (one push per \
            user and post per 10 s): user-42's three comments become one push, "Ana and others \
            left 3 comments", sent by the rules stage at the window's end (docs/mapping.md, \
            Digests). reminder.due has `send_at: {after: 20s}`: \
            it waits in the timer topic and is sent 20 s after its event, by the timer engine \
            (docs/timers.md).

            Then it runs the same consume → map → send → commit pipeline as `pushbridge run`, \
            prints every push the emulator accepted with how it reads on phones in a few \
            locales (from examples/resources), the pushes the users' rules withheld, the \
            dead-letter and invalidation records, and the committed offsets, and exits.

            Examples:
              pushbridge demo
              pushbridge demo --locale de --locale tr --extra-events 5000
            """
    )

    @Option(name: .long, help: "The examples directory (mappings/, events/, resources/).")
    var examples = "examples"

    @Option(name: .long, help: ArgumentHelp("Locales to preview each push in; repeatable or comma-separated.", valueName: "tag"))
    var locale: [String] = ["en", "fr", "ar"]

    @Option(name: .long, help: "Generated welcome events to add, to watch the pipeline under some load (not printed one by one).")
    var extraEvents = 0

    @Option(name: .long, help: "Partitions of the demo's events topic.")
    var partitions: Int32 = 3

    func run() async throws {
        var logger = Logger(label: "pushbridge.demo")
        logger.logLevel = ProcessInfo.processInfo.environment["PUSHBRIDGE_DEMO_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .error
        // examples/registry's mapping targets a user: the demo's registry knows their phones.
        let mappingSet = try MappingFiles.load(["\(examples)/mappings", "\(examples)/registry/mapping.yaml"])
        let events = DemoRules.keyedBySubject(try DemoEvents.load(directory: "\(examples)/events", extra: extraEvents), mappings: mappingSet)

        print("== starting an in-process Kafka cluster and the FCM emulator")
        let cluster = try KafkaMockCluster(brokers: 1)
        let topics = DemoTopics()
        try cluster.createTopic(topics.events, partitions: partitions)
        try cluster.createTopic(topics.deadLetter, partitions: 1)
        try cluster.createTopic(topics.invalidations, partitions: 1)
        try cluster.createTopic(topics.devices, partitions: 1)
        try cluster.createTopic(topics.outcomes, partitions: 1)
        let fcm = try await DemoFCM.start()
        defer { try? FileManager.default.removeItem(atPath: fcm.directory) }
        print("   kafka \(cluster.bootstrapServers), FCM emulator \(fcm.emulator.baseURL) (project \(fcm.account.projectID))")

        var producerConfiguration = KafkaProducerConfiguration(bootstrapServers: [cluster.bootstrapServers])
        producerConfiguration.properties["partitioner"] = DemoRules.producerPartitioner
        // librdkafka's lines go to the demo's logger (errors only, unless PUSHBRIDGE_DEMO_LOG):
        // its default writes them to stderr, amid the report.
        let kafkaLogs = KafkaLogs(logger: logger)
        let producer = try KafkaProducer(configuration: producerConfiguration, logHandler: kafkaLogs.lineHandler)
        print("== producing \(events.count) events to \(topics.events)")
        var ends: [Int32: Int64] = [:]
        for event in events {
            let report = try await producer.send(
                KafkaProducerRecord(topic: topics.events, key: event.key, value: event.value, headers: event.headers))
            ends[report.partition] = max(ends[report.partition] ?? 0, report.offset + 1)
        }
        DemoEvents.printVariants(events, mappings: mappingSet)

        // The device registry: examples/registry's records (user-42's two phones of the consumer
        // app; user-44, who muted chats) and user-43, whose quiet hours are around now, read
        // into a store before the first event, as a worker does.
        let registry = try await DemoRegistry.load(
            examples: examples, topic: topics.devices, producer: producer, bootstrapServers: cluster.bootstrapServers,
            directory: fcm.directory, logger: logger)
        async let _ = registry.follower.run()
        guard await registry.follower.waitUntilCaughtUp() else { throw CancellationError() }
        print("== device registry \(topics.devices): \(registry.store.userCount) users, \(registry.store.deviceCount) devices")
        print("   user-43's quiet hours: \(DemoRegistry.quietHoursNow.from)–\(DemoRegistry.quietHoursNow.to) UTC (the demo sets them around now)")

        // Caps and dedup: the engine `pushbridge run` has with rules.source.keyed_by: user.
        let rulesSettings = DemoRules.settings(bootstrapServers: cluster.bootstrapServers, group: topics.group, directory: fcm.directory)
        let rulesProducer = try KafkaProducer(
            configuration: OutputRecords.producerConfiguration(brokers: [cluster.bootstrapServers], properties: [:]),
            logHandler: kafkaLogs.lineHandler)
        let rules = try DemoRules.engine(rulesSettings, mappings: mappingSet, cluster: cluster, partitions: partitions, producer: rulesProducer)
        if rules != nil {
            print(
                "== caps and dedup: their events keyed by user (partitioner: consistent), changelog \(rulesSettings.rules.changelog(group: topics.group))"
            )
        }

        let client = try FCMClient(configuration: fcm.clientConfiguration)
        let recorder = RecordingProducer(producer)
        var options = EventProcessor.Options(deadLetterTopic: topics.deadLetter, tokenInvalidationTopic: topics.invalidations)
        options.skipUnknownEventTypes = true
        options.outcomeTopic = topics.outcomes
        options.timers = try DemoTimers.options(mappingSet, cluster: cluster)
        let metrics = PipelineMetrics()
        let processor = EventProcessor(
            mappings: mappingSet, sender: FCMProjects(single: client, name: DemoRegistry.app), producer: recorder,
            directory: registry.directory, options: options, metrics: metrics, logger: logger, rules: rules)
        let digests = DemoDigests()
        if let rules, !mappingSet.digesting.isEmpty { digests.close(with: rules, processor: processor) }
        var consumerConfiguration = KafkaConsumerConfiguration(bootstrapServers: [cluster.bootstrapServers], groupID: topics.group)
        consumerConfiguration.sessionTimeout = .seconds(10)
        let pipeline = try Pipeline(
            configuration: Pipeline.Configuration(consumer: consumerConfiguration, topics: [topics.events]),
            processor: processor, metrics: metrics, logger: logger)

        let timers = DemoTimers()
        let timerEngine = try options.timers.map { _ in
            try timers.engine(
                bootstrapServers: cluster.bootstrapServers, group: topics.group, producer: recorder, processor: processor, metrics: metrics,
                logger: logger)
        }

        print("== running the pipeline (group \(topics.group))")
        let started = ContinuousClock.now
        let run = Task { try await pipeline.run() }
        let timersRun = Task { try await timerEngine?.run() }
        let expected = ends.map { (TopicPartition(topic: topics.events, partition: $0.key), $0.value) }
        var lastPrint = ContinuousClock.now
        while true {
            let committed = pipeline.committedOffsets
            if expected.allSatisfy({ committed[$0.0] == $0.1 }) { break }
            if ContinuousClock.now - started > .seconds(120) {
                pipeline.stop()
                _ = try? await run.value
                throw ValidationError("the demo did not finish in 2 minutes; committed: \(committed)")
            }
            if ContinuousClock.now - lastPrint > .seconds(2) {
                let done = committed.values.reduce(0, +)
                print("   … \(done) of \(events.count) committed")
                lastPrint = .now
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        // Events in a digest window wait there; the others in the timer topic.
        let digestTypes = Set(mappingSet.digesting.map(\.eventType))
        let waiting = DemoReport.deferred(recorder.records, topics: topics)
        let digested = waiting.filter { digestTypes.contains($0["event_type"]?.stringValue ?? "") }
        let deferred = waiting.filter { !digestTypes.contains($0["event_type"]?.stringValue ?? "") }
        if !digested.isEmpty {
            let windows = Set(digested.compactMap { $0["due"]?.stringValue }).sorted()
            print(
                "== \(digested.count) events wait in \(windows.count) digest window\(windows.count == 1 ? "" : "s") until \(windows.joined(separator: ", "))"
            )
            guard await digests.waitForCloses(windows.count, timeout: .seconds(120)) else {
                throw ValidationError("the digest windows did not close within 2 minutes of their end")
            }
        }
        if !deferred.isEmpty {
            let dues = deferred.compactMap { $0["due"]?.stringValue }.joined(separator: ", ")
            let waits = deferred.count == 1 ? "1 push waits" : "\(deferred.count) pushes wait"
            print("== \(waits) in the timer topic \(DemoTimers.topic) until \(dues) (group \(topics.group).timers)")
            guard await timers.waitForFires(deferred.count, timeout: .seconds(120)) else {
                throw ValidationError("the deferred pushes did not fire within 2 minutes of their due time")
            }
        }
        let elapsed = ContinuousClock.now - started
        let committed = pipeline.committedOffsets
        pipeline.stop()
        timerEngine?.stop()
        try await run.value
        try await timersRun.value
        await client.shutdown()
        await producer.close()
        await rulesProducer.close()

        let catalogs = DemoResources.catalogs(examples: examples)
        let locales = locale.flatMap { $0.split(separator: ",").map(String.init) }
        DemoReport(
            messages: fcm.emulator.messages, attempts: fcm.emulator.attempts, written: recorder.records, topics: topics,
            committed: committed, events: events.count, elapsed: elapsed,
            printIndividually: events.count - extraEvents + registry.store.deviceCount - 1, digestTypes: digestTypes
        ).print(catalogs: catalogs, locales: locales)
        // The report is written before the cluster goes (its clients may log as it closes).
        fflush(nil)
        await fcm.emulator.stop()
    }
}

struct DemoTopics {
    /// The consumer group (the changelog topic of caps and dedup is named after it).
    let group = "pushbridge-demo"
    let events = "events"
    let deadLetter = "pushbridge.dead-letter"
    let invalidations = "pushbridge.token-invalidations"
    let devices = "pushbridge.devices"
    let outcomes = "pushbridge.outcomes"
}

/// Passes records on to Kafka and remembers what was acknowledged, for the demo's report.
final class RecordingProducer: RecordProducing {
    private let producer: KafkaProducer
    private let written = Mutex<[KafkaProducerRecord]>([])

    init(_ producer: KafkaProducer) { self.producer = producer }

    func send(_ record: KafkaProducerRecord) async throws(KafkaError) -> KafkaDeliveryReport {
        let report = try await producer.send(record)
        written.withLock { $0.append(record) }
        return report
    }

    var records: [KafkaProducerRecord] { written.withLock { $0 } }
}

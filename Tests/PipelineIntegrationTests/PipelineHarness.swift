import FCM
import FCMEmulator
import Foundation
import Kafka
import Logging
import Mapping
import Pipeline
import PipelineTestSupport
import Synchronization
import Testing

/// A real pipeline in this process: librdkafka's mock cluster, the FCM emulator over HTTPS +
/// HTTP/2, real producers and consumers. Each test gets its own.
final class PipelineHarness: Sendable {
    let cluster: KafkaMockCluster
    let emulator: FCMEmulator
    let account: ServiceAccount
    let caFile: String
    let events: WelcomeEvents
    var producer: KafkaProducer { events.producer }
    let mappings: MappingSet
    let topic = "events"
    let deadLetterTopic = "dead-letter"
    let invalidationTopic = "invalidations"

    /// - Parameter mapping: the mapping file's text (default: the welcome events').
    init(partitions: Int32 = 4, faults: EmulatorFaults = EmulatorFaults(), mapping: String = WelcomeEvents.mapping) async throws {
        cluster = try KafkaMockCluster(brokers: 3)
        try cluster.createTopic(topic, partitions: partitions)
        try cluster.createTopic(deadLetterTopic, partitions: 1)
        try cluster.createTopic(invalidationTopic, partitions: 1)
        let key = try EmulatorAccount(name: "pipeline-test")
        var configuration = FCMEmulator.Configuration(accounts: [key.email: key.privateKeyPEM])
        configuration.faults = faults
        emulator = try await FCMEmulator.start(configuration)
        caFile = FileManager.default.temporaryDirectory.appendingPathComponent("pipeline-ca-\(UUID().uuidString).pem").path
        try emulator.tls.caPEM.write(toFile: caFile, atomically: true, encoding: .utf8)
        account = try ServiceAccount(json: Data(key.keyFileJSON(tokenURI: emulator.tokenURI)))
        events = try WelcomeEvents(bootstrapServers: cluster.bootstrapServers, topic: topic)
        mappings = try MappingSet.load(files: [("test.yaml", mapping)])
    }

    @discardableResult
    func produce(_ count: Int, prefix: String) async throws -> [String] { try await events.produce(count, prefix: prefix) }

    func produceRaw(_ values: [String]) async throws { try await events.produceRaw(values) }

    func client(_ configure: (inout FCMClient.Configuration) -> Void = { _ in }) throws -> FCMClient {
        var c = FCMClient.Configuration(serviceAccount: account)
        c.baseURL = emulator.baseURL
        c.caFile = caFile
        c.retry.initialBackoff = .milliseconds(20)
        c.retry.maxBackoff = .milliseconds(500)
        c.concurrency.ceiling = 500
        configure(&c)
        return try FCMClient(configuration: c)
    }

    func pipeline(
        group: String, client: FCMClient, instanceID: String? = nil, outcomeTopic: String? = nil, metrics: PipelineMetrics = PipelineMetrics(),
        configure: (inout Pipeline.Configuration) -> Void = { _ in }
    ) throws -> Pipeline {
        var logger = Logger(label: "pipeline-test")
        logger.logLevel = .error
        var options = EventProcessor.Options(deadLetterTopic: deadLetterTopic, tokenInvalidationTopic: invalidationTopic)
        options.outcomeTopic = outcomeTopic
        let processor = EventProcessor(
            mappings: mappings, sender: FCMProjects(single: client), producer: producer, options: options, metrics: metrics, logger: logger)
        var consumer = KafkaConsumerConfiguration(bootstrapServers: [cluster.bootstrapServers], groupID: group)
        consumer.groupInstanceID = instanceID
        consumer.sessionTimeout = .seconds(6)
        consumer.heartbeatInterval = .milliseconds(500)
        var configuration = Pipeline.Configuration(consumer: consumer, topics: [topic])
        configuration.commitInterval = .milliseconds(200)
        configure(&configuration)
        return try Pipeline(configuration: configuration, processor: processor, metrics: PipelineMetrics(), logger: logger)
    }

    func committed(group: String) async throws -> [Int32: Int64] { try await events.committed(group: group) }

    func waitUntilCommitted(group: String, timeout: Duration = .seconds(60)) async throws -> Bool {
        try await events.waitUntilCommitted(group: group, timeout: timeout)
    }

    var acceptedTokens: [String: Int] { emulator.acceptedTokens }

    func read(_ topic: String, count: Int) async throws -> [KafkaMessage] { try await events.read(topic, count: count) }

    func stop() async {
        await events.close()
        await emulator.stop()
        try? FileManager.default.removeItem(atPath: caFile)
    }
}

/// An engine that runs until asked to stop: a ``Pipeline`` or a ``TimerPipeline``.
protocol RunsUntilStopped: Sendable {
    func run() async throws
    func stop()
}

extension Pipeline: RunsUntilStopped {}
extension TimerPipeline: RunsUntilStopped {}

/// Runs `engine` in a task; ``stop()`` waits for it.
struct Running<Engine: RunsUntilStopped> {
    let engine: Engine
    let task: Task<Void, any Error>

    init(_ engine: Engine) {
        self.engine = engine
        self.task = Task { try await engine.run() }
    }

    func stop() async throws {
        engine.stop()
        try await task.value
    }
}

typealias RunningPipeline = Running<Pipeline>
typealias RunningTimers = Running<TimerPipeline>

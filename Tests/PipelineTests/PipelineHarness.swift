import FCM
import FCMEmulator
import Foundation
import Kafka
import Logging
import Mapping
import Pipeline
import Synchronization
import Testing
import _CryptoExtras

/// A real pipeline in this process: librdkafka's mock cluster, the FCM emulator over HTTPS +
/// HTTP/2, real producers and consumers. Each test gets its own.
final class PipelineHarness: Sendable {
    static let mappingYAML = """
        version: 1
        events:
          user.welcome:
            target:
              token: {field: /token}
            title:
              key: welcome_title
              args:
                - {field: /name}
        """

    let cluster: KafkaMockCluster
    let emulator: FCMEmulator
    let account: ServiceAccount
    let caFile: String
    let producer: KafkaProducer
    let mappings: MappingSet
    let topic = "events"
    let deadLetterTopic = "dead-letter"
    let invalidationTopic = "invalidations"
    /// The next offset per partition after everything produced so far.
    let ends = Mutex<[Int32: Int64]>([:])

    init(partitions: Int32 = 4, faults: EmulatorFaults = EmulatorFaults()) async throws {
        cluster = try KafkaMockCluster(brokers: 3)
        try cluster.createTopic(topic, partitions: partitions)
        try cluster.createTopic(deadLetterTopic, partitions: 1)
        try cluster.createTopic(invalidationTopic, partitions: 1)
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let email = "pipeline-test@demo-project.iam.gserviceaccount.com"
        var configuration = FCMEmulator.Configuration(accounts: [email: key.pemRepresentation])
        configuration.faults = faults
        emulator = try await FCMEmulator.start(configuration)
        caFile = FileManager.default.temporaryDirectory.appendingPathComponent("pipeline-ca-\(UUID().uuidString).pem").path
        try emulator.tls.caPEM.write(toFile: caFile, atomically: true, encoding: .utf8)
        account = ServiceAccount(projectID: "demo-project", clientEmail: email, privateKeyPEM: key.pemRepresentation, tokenURI: emulator.tokenURI)
        producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: [cluster.bootstrapServers]))
        mappings = try MappingSet.load(files: [("test.yaml", Self.mappingYAML)])
    }

    /// Produces `count` welcome events with tokens `<prefix>-<i>`; returns the tokens.
    @discardableResult
    func produce(_ count: Int, prefix: String) async throws -> [String] {
        let tokens = (0..<count).map { "\(prefix)-\($0)" }
        try await withThrowingTaskGroup(of: KafkaDeliveryReport.self) { group in
            for token in tokens {
                let value = #"{"type":"user.welcome","id":"\#(token)","name":"N","token":"\#(token)"}"#
                group.addTask { try await self.producer.send(KafkaProducerRecord(topic: self.topic, key: Array(token.utf8), value: Array(value.utf8))) }
            }
            for try await r in group { record(r) }
        }
        return tokens
    }

    /// Produces raw values (e.g. malformed events).
    func produceRaw(_ values: [String]) async throws {
        for v in values { record(try await producer.send(KafkaProducerRecord(topic: topic, value: Array(v.utf8)))) }
    }

    private func record(_ r: KafkaDeliveryReport) {
        ends.withLock { $0[r.partition] = max($0[r.partition] ?? 0, r.offset + 1) }
    }

    func client(_ configure: (inout FCMClient.Configuration) -> Void = { _ in }) throws -> FCMClient {
        var c = FCMClient.Configuration(serviceAccount: account)
        c.baseURL = emulator.baseURL
        c.caFile = caFile
        c.retry.initialBackoff = .milliseconds(20)
        c.retry.maxBackoff = .milliseconds(500)
        c.maxConcurrentSends = 500
        configure(&c)
        return try FCMClient(configuration: c)
    }

    func pipeline(
        group: String, client: FCMClient, instanceID: String? = nil,
        configure: (inout Pipeline.Configuration) -> Void = { _ in }
    ) throws -> Pipeline {
        var logger = Logger(label: "pipeline-test")
        logger.logLevel = .error
        let options = EventProcessor.Options(deadLetterTopic: deadLetterTopic, tokenInvalidationTopic: invalidationTopic)
        let processor = EventProcessor(mappings: mappings, sender: client, producer: producer, options: options, metrics: PipelineMetrics(), logger: logger)
        var consumer = KafkaConsumerConfiguration(bootstrapServers: [cluster.bootstrapServers], groupID: group)
        consumer.groupInstanceID = instanceID
        consumer.sessionTimeout = .seconds(6)
        consumer.heartbeatInterval = .milliseconds(500)
        var configuration = Pipeline.Configuration(consumer: consumer, topics: [topic])
        configuration.commitInterval = .milliseconds(200)
        configure(&configuration)
        return try Pipeline(configuration: configuration, processor: processor, metrics: PipelineMetrics(), logger: logger)
    }

    /// The group's committed offsets as the broker has them.
    func committed(group: String) async throws -> [Int32: Int64] {
        let partitions = ends.withLock { Array($0.keys) }.map { TopicPartition(topic: topic, partition: $0) }
        let admin = try KafkaConsumer(configuration: KafkaConsumerConfiguration(bootstrapServers: [cluster.bootstrapServers], groupID: group))
        defer { Task { await admin.close() } }
        var result: [Int32: Int64] = [:]
        for o in try await admin.committed(partitions) where o.offset.isConcrete { result[o.partition] = o.offset.rawValue }
        return result
    }

    /// Waits until the group has committed everything produced, or `timeout` passes.
    func waitUntilCommitted(group: String, timeout: Duration = .seconds(60)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        let want = ends.withLock { $0 }
        while ContinuousClock.now < deadline {
            let have = (try? await committed(group: group)) ?? [:]
            if want.allSatisfy({ have[$0.key] == $0.value }) { return true }
            try await Task.sleep(for: .milliseconds(200))
        }
        return false
    }

    /// Tokens of accepted (not validate-only) sends, with how often each was accepted.
    var acceptedTokens: [String: Int] {
        var counts: [String: Int] = [:]
        for m in emulator.messages where !m.validateOnly { counts[m.token ?? "", default: 0] += 1 }
        return counts
    }

    /// Records in `topic` (assign mode from the beginning), until `count` arrived or 20 s passed.
    func read(_ topic: String, count: Int) async throws -> [KafkaMessage] {
        let c = try KafkaConsumer(configuration: KafkaConsumerConfiguration(bootstrapServers: [cluster.bootstrapServers]))
        try c.assign([TopicPartitionOffset(TopicPartition(topic: topic, partition: 0), offset: .beginning)])
        var out: [KafkaMessage] = []
        let reader = Task {
            for try await m in c.messages {
                out.append(m)
                if out.count >= count { break }
            }
            return out
        }
        let timer = Task {
            try await Task.sleep(for: .seconds(20))
            reader.cancel()
        }
        let result = try await reader.value
        timer.cancel()
        await c.close()
        return result
    }

    func stop() async {
        await producer.close()
        await emulator.stop()
        try? FileManager.default.removeItem(atPath: caFile)
    }
}

/// Runs `pipeline` in a task; ``stop()`` waits for it.
struct RunningPipeline {
    let pipeline: Pipeline
    let task: Task<Void, any Error>

    init(_ pipeline: Pipeline) {
        self.pipeline = pipeline
        self.task = Task { try await pipeline.run() }
    }

    func stop() async throws {
        pipeline.stop()
        try await task.value
    }
}

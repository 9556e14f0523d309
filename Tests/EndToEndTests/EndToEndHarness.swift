import FCMEmulator
import Foundation
import Kafka
import Mapping
import PipelineTestSupport
import Synchronization
import TestSupport
import Testing

/// A broker (tansu, or the mock cluster served from this process), the FCM emulator (in this
/// process: it is the test's oracle) and `pushbridge` commands as separate processes, configured
/// by real files.
final class EndToEnd: @unchecked Sendable {
    enum Broker {
        case tansu
        /// tansu with `s3://` storage on a local S3 server: survives ``restartBroker(downtime:)``.
        case durableTansu
        /// librdkafka's mock cluster: right watermarks, no group descriptions (brokers.md).
        case mock
    }

    let bootstrapServers: String
    /// librdkafka properties that get a client through the broker's ``Tansu/Security``.
    let clientProperties: [String: String]
    private let tansu: Tansu?
    private let s3: S3Server?
    let mock: KafkaMockCluster?
    let emulator: FCMEmulator
    let directory: URL
    let events: WelcomeEvents
    let topic = "events"
    let deadLetterTopic = "dead-letter"
    let invalidationTopic = "invalidations"

    /// - Parameters:
    ///   - brokers: how many brokers the mock cluster has (tansu is always one).
    ///   - security: TLS, mTLS or SASL/SCRAM in front of tansu; this side's own clients get
    ///     through with ``clientProperties``.
    ///   - projects: Firebase project IDs with a service account each besides the default one's
    ///     (`demo-project`, in `service-account.json`): key files `sa-PROJECT.json`.
    init(
        partitions: Int32 = 4, faults: EmulatorFaults = EmulatorFaults(), broker: Broker = .tansu, brokers: Int = 1,
        security: Tansu.Security = Tansu.Security(), projects: [String] = []
    ) async throws {
        switch broker {
        case .tansu, .durableTansu:
            let version = KafkaConsumer.librdkafkaVersion
            guard !version.hasPrefix("2.0.") else { throw TestSupportError("tansu needs librdkafka >= 2.1; run scripts/test.sh") }
            let s3 = broker == .durableTansu ? try await S3Server.start() : nil
            let tansu = try await Tansu.start(storage: s3.map { .s3(endpoint: $0.endpoint, bucket: $0.bucket) } ?? .memory, security: security)
            try await tansu.createTopic(topic, partitions: partitions)
            try await tansu.createTopic(deadLetterTopic, partitions: 1)
            try await tansu.createTopic(invalidationTopic, partitions: 1)
            (self.tansu, self.s3, mock, bootstrapServers) = (tansu, s3, nil, tansu.bootstrapServers)
            clientProperties = try tansu.clientProperties
        case .mock:
            let cluster = try KafkaMockCluster(brokers: brokers)
            try cluster.createTopic(topic, partitions: partitions)
            try cluster.createTopic(deadLetterTopic, partitions: 1)
            try cluster.createTopic(invalidationTopic, partitions: 1)
            (tansu, s3, mock, bootstrapServers) = (nil, nil, cluster, cluster.bootstrapServers)
            clientProperties = [:]
        }
        let key = try EmulatorAccount(name: "e2e")
        let others = try projects.map { try EmulatorAccount(projectID: $0, name: "e2e") }
        var configuration = FCMEmulator.Configuration(
            accounts: Dictionary(uniqueKeysWithValues: ([key] + others).map { ($0.email, $0.privateKeyPEM) }))
        configuration.faults = faults
        emulator = try await FCMEmulator.start(configuration)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try emulator.tls.caPEM.write(to: directory.appendingPathComponent("ca.pem"), atomically: true, encoding: .utf8)
        try key.writeKeyFile(to: directory.appendingPathComponent("service-account.json").path, tokenURI: emulator.tokenURI)
        for other in others {
            try other.writeKeyFile(to: directory.appendingPathComponent("sa-\(other.projectID).json").path, tokenURI: emulator.tokenURI)
        }
        try WelcomeEvents.mapping.write(to: directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        events = try WelcomeEvents(bootstrapServers: bootstrapServers, topic: topic, properties: clientProperties)
    }

    /// Fast retries, so faults pass in test time.
    static let testRetry = "initial_backoff_ms: 20, max_backoff_ms: 500, quota_pause_ms: 300"

    /// A config file for a worker of `group`; `delivery` is appended to the `delivery` section,
    /// `retry` is `fcm.retry`; `kafkaProperties` are `kafka.properties` (``clientProperties``
    /// by default); `credentials` are the `fcm` section's lines that name the service accounts; `outcomes` is `topics.outcomes`;
    /// `log` is the `log` section.
    func config(
        group: String, httpPort: Int, delivery: String = "", instanceID: String? = nil, caFile: String = "ca.pem",
        assignment: String = "cooperative-sticky", retry: String = testRetry, kafkaProperties: [String: String]? = nil,
        credentials: String = "service_account: service-account.json", sections: String = "", outcomes: String? = nil,
        log: String = "level: info, format: json"
    ) throws -> String {
        let properties = (kafkaProperties ?? clientProperties).sorted { $0.key < $1.key }
            .map { "    \($0.key): \"\($0.value)\"" }.joined(separator: "\n")
        let path = directory.appendingPathComponent("\(group)-\(httpPort).yaml").path
        let text = """
            kafka:
              brokers: [\(bootstrapServers)]
              group: \(group)
              topics: [\(topic)]
              session_timeout_ms: 6000
              assignment_strategy: \(assignment)
            \(instanceID.map { "  instance_id: \($0)" } ?? "")
              properties:
            \(properties)
            mappings: [mappings.yaml]
            fcm:
            \(credentials.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
              endpoint: \(emulator.baseURL)
              ca_file: \(caFile)
              retry: {\(retry)}
            topics: {dead_letter: \(deadLetterTopic), token_invalidation: \(invalidationTopic)\(outcomes.map { ", outcomes: \($0)" } ?? "")}
            delivery:
              commit_interval_ms: 200
            \(delivery.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
            http: {listen: "127.0.0.1:\(httpPort)"}
            log: {\(log)}
            \(sections)
            """
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Starts `pushbridge run` and waits until /healthz answers.
    func startWorker(
        group: String, delivery: String = "", instanceID: String? = nil, caFile: String = "ca.pem", assignment: String = "cooperative-sticky",
        retry: String = testRetry, kafkaProperties: [String: String]? = nil, credentials: String = "service_account: service-account.json",
        sections: String = "", outcomes: String? = nil, environment: [String: String] = [:], log: String = "level: info, format: json"
    ) async throws -> WorkerProcess {
        try await offPool { [self] in
            try FreePort.startServer { port in
                let config = try config(
                    group: group, httpPort: port, delivery: delivery, instanceID: instanceID, caFile: caFile, assignment: assignment, retry: retry,
                    kafkaProperties: kafkaProperties, credentials: credentials, sections: sections, outcomes: outcomes, log: log)
                let log = directory.appendingPathComponent("worker-\(port).log").path
                return try WorkerProcess.start(executable: pushbridgeExecutable, config: config, port: port, log: log, environment: environment)
            }
        }
    }

    /// Runs a `pushbridge` command to its end (with `environment` over this process's): exit
    /// status and combined output.
    func pushbridge(
        _ arguments: [String], timeout: Duration = .seconds(120), environment: [String: String] = [:]
    ) async throws -> (status: Int32, output: String) {
        try await ChildProcess.run(pushbridgeExecutable, arguments, timeout: timeout, environment: environment)
    }

    /// Starts a `pushbridge` command; its combined output goes to `log`.
    func startPushbridge(_ arguments: [String], log: String) throws -> ChildProcess {
        try ChildProcess(executable: pushbridgeExecutable, arguments: arguments, logFile: log)
    }

    /// Commits `offsets` for `group` from outside it, as a worker would have.
    func commit(group: String, _ offsets: [Int32: Int64]) async throws {
        let c = try KafkaConsumer(configuration: events.consumerConfiguration(group: group))
        try await c.commit(offsets.map { TopicPartitionOffset(TopicPartition(topic: topic, partition: $0.key), offset: KafkaOffset($0.value)) })
        await c.close()
    }

    @discardableResult
    func produce(_ count: Int, prefix: String) async throws -> [String] { try await events.produce(count, prefix: prefix) }

    func produceRaw(_ values: [String]) async throws { try await events.produceRaw(values) }

    func committed(group: String) async throws -> [Int32: Int64] { try await events.committed(group: group) }

    func waitUntilCommitted(group: String, timeout: Duration = .seconds(90)) async throws -> Bool {
        try await events.waitUntilCommitted(group: group, timeout: timeout, poll: .milliseconds(300))
    }

    var acceptedTokens: [String: Int] { emulator.acceptedTokens }

    /// The SCRAM front's log (``Tansu/scramLog``): one line per login or refusal.
    var scramLog: String { tansu?.scramLog ?? "" }

    func read(_ topic: String, count: Int) async throws -> [KafkaMessage] { try await events.read(topic, count: count) }

    /// Creates another topic on the broker.
    func createTopic(_ name: String, partitions: Int32) async throws {
        if let tansu { try await tansu.createTopic(name, partitions: partitions) } else { try mock?.createTopic(name, partitions: partitions) }
    }

    /// Kills tansu (`kill -9`) and starts it again on the same port and storage.
    func restartBroker(downtime: Duration) async throws {
        guard let tansu else { throw TestSupportError("only tansu can be restarted") }
        try await tansu.restart(hard: true, downtime: downtime)
    }

    func stop() async {
        await events.close()
        await emulator.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Stops `worker` with SIGTERM and records an issue unless it exits 0 within 60 s, with the end
/// of its log and, if it hung, where its threads wait (``WorkerProcess/terminateFailure(timeout:)``).
func expectCleanExit(_ worker: WorkerProcess, sourceLocation: SourceLocation = #_sourceLocation) async {
    if let failure = await worker.terminateFailure() {
        Issue.record(Comment(rawValue: failure), sourceLocation: sourceLocation)
    }
}

import FCMEmulator
import Foundation
import Kafka
import Mapping
import Synchronization
import TestSupport
import Testing
import _CryptoExtras

/// tansu, the FCM emulator (in this process: it is the test's oracle) and `pushbridge run`
/// workers as separate processes, configured by real files.
final class EndToEnd: @unchecked Sendable {
    static let mappings = """
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

    let tansu: Tansu
    let emulator: FCMEmulator
    let directory: URL
    let producer: KafkaProducer
    let topic = "events"
    let deadLetterTopic = "dead-letter"
    let invalidationTopic = "invalidations"
    let ends = Mutex<[Int32: Int64]>([:])

    init(partitions: Int32 = 4, faults: EmulatorFaults = EmulatorFaults()) async throws {
        let version = KafkaConsumer.librdkafkaVersion
        guard !version.hasPrefix("2.0.") else { throw TestSupportError("tansu needs librdkafka >= 2.1; run scripts/test.sh") }
        tansu = try Tansu()
        try tansu.createTopic(topic, partitions: partitions)
        try tansu.createTopic(deadLetterTopic, partitions: 1)
        try tansu.createTopic(invalidationTopic, partitions: 1)
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let email = "e2e@demo-project.iam.gserviceaccount.com"
        var configuration = FCMEmulator.Configuration(accounts: [email: key.pemRepresentation])
        configuration.faults = faults
        emulator = try await FCMEmulator.start(configuration)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try emulator.tls.caPEM.write(to: directory.appendingPathComponent("ca.pem"), atomically: true, encoding: .utf8)
        let account: [String: String] = [
            "type": "service_account", "project_id": "demo-project", "private_key_id": "k1",
            "private_key": key.pemRepresentation, "client_email": email, "token_uri": emulator.tokenURI,
        ]
        try JSONSerialization.data(withJSONObject: account).write(to: directory.appendingPathComponent("service-account.json"))
        try Self.mappings.write(to: directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: [tansu.bootstrapServers]))
    }

    /// A config file for a worker of `group`; `extra` is appended to the `delivery` section.
    func config(group: String, httpPort: Int, delivery: String = "", instanceID: String? = nil, caFile: String = "ca.pem") throws -> String {
        let path = directory.appendingPathComponent("\(group)-\(httpPort).yaml").path
        let text = """
            kafka:
              brokers: [\(tansu.bootstrapServers)]
              group: \(group)
              topics: [\(topic)]
              session_timeout_ms: 6000
            \(instanceID.map { "  instance_id: \($0)" } ?? "")
            mappings: [mappings.yaml]
            fcm:
              service_account: service-account.json
              endpoint: \(emulator.baseURL)
              ca_file: \(caFile)
              retry: {initial_backoff_ms: 20, max_backoff_ms: 500, quota_pause_ms: 300}
            topics: {dead_letter: \(deadLetterTopic), token_invalidation: \(invalidationTopic)}
            delivery:
              commit_interval_ms: 200
            \(delivery.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
            http: {listen: "127.0.0.1:\(httpPort)"}
            log: {level: info, format: json}
            """
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Starts `pushbridge run` and waits until /healthz answers.
    func startWorker(group: String, delivery: String = "", instanceID: String? = nil, caFile: String = "ca.pem") throws -> WorkerProcess {
        let port = try FreePort.next()
        let config = try config(group: group, httpPort: port, delivery: delivery, instanceID: instanceID, caFile: caFile)
        let log = directory.appendingPathComponent("worker-\(port).log").path
        let process = try ChildProcess(executable: pushbridgeExecutable, arguments: ["run", "--config", config], logFile: log)
        let worker = WorkerProcess(process: process, port: port, log: log)
        try FreePort.waitUntilListening(port: port, timeout: .seconds(30))
        return worker
    }

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

    func produceRaw(_ values: [String]) async throws {
        for v in values { record(try await producer.send(KafkaProducerRecord(topic: topic, value: Array(v.utf8)))) }
    }

    private func record(_ r: KafkaDeliveryReport) {
        ends.withLock { $0[r.partition] = max($0[r.partition] ?? 0, r.offset + 1) }
    }

    func committed(group: String) async throws -> [Int32: Int64] {
        let partitions = ends.withLock { Array($0.keys) }.map { TopicPartition(topic: topic, partition: $0) }
        let admin = try KafkaConsumer(configuration: KafkaConsumerConfiguration(bootstrapServers: [tansu.bootstrapServers], groupID: group))
        var result: [Int32: Int64] = [:]
        for o in try await admin.committed(partitions) where o.offset.isConcrete { result[o.partition] = o.offset.rawValue }
        await admin.close()
        return result
    }

    func waitUntilCommitted(group: String, timeout: Duration = .seconds(90)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        let want = ends.withLock { $0 }
        while ContinuousClock.now < deadline {
            let have = (try? await committed(group: group)) ?? [:]
            if want.allSatisfy({ have[$0.key] == $0.value }) { return true }
            try await Task.sleep(for: .milliseconds(300))
        }
        return false
    }

    var acceptedTokens: [String: Int] {
        var counts: [String: Int] = [:]
        for m in emulator.messages where !m.validateOnly { counts[m.token ?? "", default: 0] += 1 }
        return counts
    }

    /// Records of a one-partition topic from the beginning, until `count` arrived or 20 s passed.
    func read(_ topic: String, count: Int) async throws -> [KafkaMessage] {
        let c = try KafkaConsumer(configuration: KafkaConsumerConfiguration(bootstrapServers: [tansu.bootstrapServers]))
        try c.assign([TopicPartitionOffset(TopicPartition(topic: topic, partition: 0), offset: .beginning)])
        let reader = Task {
            var out: [KafkaMessage] = []
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
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A `pushbridge run` child process.
struct WorkerProcess {
    let process: ChildProcess
    let port: Int
    let log: String

    var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    func get(_ path: String) throws -> (status: Int, body: String) {
        try HTTPGet.get(port: port, path: path)
    }

    /// The value of a Prometheus sample line `name{labels} value` (summed over matching lines).
    func metric(_ prefix: String) throws -> Double {
        try get("/metrics").body.split(separator: "\n")
            .filter { $0.hasPrefix(prefix) }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
            .reduce(0, +)
    }

    /// SIGTERM to the worker itself (not its watchdog), then its own exit status (nil on timeout).
    func terminate(timeout: Duration = .seconds(60)) -> Int32? {
        guard let worker = process.programPID else { return nil }
        kill(worker, SIGTERM)
        return process.wait(timeout: timeout)
    }
}

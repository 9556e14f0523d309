import DeviceRegistry
import Foundation
import Kafka
import Logging
import TestSupport

/// The brokers the follower is tested against (docs/testing.md): librdkafka's mock cluster in
/// this process, and tansu as a separate process.
enum BrokerKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case mock, tansu
    var description: String { rawValue }
}

/// A real broker for one test, with a producer for registry records. Stopped when released.
final class RegistryBroker: Sendable {
    let kind: BrokerKind
    let bootstrapServers: String
    /// Set for `.mock`: fault injection.
    let mock: KafkaMockCluster?
    private let tansu: Tansu?
    private let producer: KafkaProducer

    private init(kind: BrokerKind, bootstrapServers: String, mock: KafkaMockCluster?, tansu: Tansu?) throws {
        self.kind = kind
        self.bootstrapServers = bootstrapServers
        self.mock = mock
        self.tansu = tansu
        var config = KafkaProducerConfiguration(bootstrapServers: [bootstrapServers])
        config.properties["log_level"] = "2"
        producer = try KafkaProducer(configuration: config)
    }

    static func start(_ kind: BrokerKind) async throws -> RegistryBroker {
        switch kind {
        case .mock:
            let cluster = try KafkaMockCluster(brokers: 3)
            return try RegistryBroker(kind: kind, bootstrapServers: cluster.bootstrapServers, mock: cluster, tansu: nil)
        case .tansu:
            let version = KafkaConsumer.librdkafkaVersion
            guard !version.hasPrefix("0.") && !version.hasPrefix("1.") && !version.hasPrefix("2.0.") else {
                throw TestSupportError(
                    "tansu needs librdkafka >= 2.1 at run time, but \(version) is loaded. Run the tests with scripts/test.sh, "
                        + "which puts .tools/librdkafka on LD_LIBRARY_PATH.")
            }
            let tansu = try await Tansu.start()
            return try RegistryBroker(kind: kind, bootstrapServers: tansu.bootstrapServers, mock: nil, tansu: tansu)
        }
    }

    /// A new topic with a unique name.
    func makeTopic(partitions: Int32) async throws -> String {
        let name = "registry-\(UUID().uuidString.prefix(8).lowercased())"
        switch kind {
        case .mock: try mock!.createTopic(name, partitions: partitions)
        case .tansu: try await tansu!.createTopic(name, partitions: partitions)
        }
        return name
    }

    /// Produces registry records (user, JSON value; nil value: a tombstone), in order, each acknowledged.
    func produce(_ records: [(user: String, value: String?)], to topic: String, partition: Int32? = nil) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, r) in records.enumerated() {
                if i >= 500 { try await group.next() }
                let record = KafkaProducerRecord(
                    topic: topic, partition: partition, key: Array(r.user.utf8), value: r.value.map { Array($0.utf8) } ?? [])
                group.addTask { _ = try await self.producer.send(record) }
            }
            try await group.waitForAll()
        }
    }

    /// Produces one record after another (order kept within the partition).
    func produceInOrder(_ records: [(user: String, value: String?)], to topic: String, partition: Int32? = nil) async throws {
        for r in records {
            _ = try await producer.send(
                KafkaProducerRecord(topic: topic, partition: partition, key: Array(r.user.utf8), value: r.value.map { Array($0.utf8) } ?? []))
        }
    }

    func follower(topic: String, store: RegistryStore, configuration: RegistryFollower.Configuration = .init()) -> RegistryFollower {
        RegistryFollower(
            bootstrapServers: [bootstrapServers], properties: ["log_level": "2", "topic.metadata.refresh.interval.ms": "1000"],
            topic: topic, store: store, logger: Logger(label: "registry-test"), configuration: configuration)
    }
}

/// A registry value listing these devices (tokens, Android).
func devicesJSON(_ ids: [String]) -> String {
    "{\"devices\": [" + ids.map { "{\"token\": \"\($0)\", \"platform\": \"android\"}" }.joined(separator: ", ") + "]}"
}

import Foundation
import Kafka
import TestSupport
import Testing

/// The Kafka-protocol brokers the tests run against (see docs/testing.md).
enum BrokerKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// librdkafka's mock cluster, in this process.
    case mock
    /// tansu, a separate broker process on a free loopback port.
    case tansu

    var testDescription: String { rawValue }
}

/// A real broker for one test, stopped when released.
final class TestBroker: @unchecked Sendable {
    let kind: BrokerKind
    let bootstrapServers: String
    /// Set for `.mock`: fault injection.
    let mock: KafkaMockCluster?
    private let tansu: Tansu?

    private init(kind: BrokerKind, bootstrapServers: String, mock: KafkaMockCluster?, tansu: Tansu?) {
        self.kind = kind
        self.bootstrapServers = bootstrapServers
        self.mock = mock
        self.tansu = tansu
    }

    static func start(_ kind: BrokerKind, brokers: Int = 3) async throws -> TestBroker {
        switch kind {
        case .mock:
            let cluster = try KafkaMockCluster(brokers: brokers)
            return TestBroker(kind: kind, bootstrapServers: cluster.bootstrapServers, mock: cluster, tansu: nil)
        case .tansu:
            return try await startTansu()
        }
    }

    private static func startTansu() async throws -> TestBroker {
        let version = KafkaConsumer.librdkafkaVersion
        guard !version.hasPrefix("0.") && !version.hasPrefix("1.") && !version.hasPrefix("2.0.") else {
            throw TestSupportError(
                "tansu needs librdkafka >= 2.1 at run time, but \(version) is loaded (Debian's 2.0.2 fails with "
                    + "'ApiVersionRequest failed: Local: Read underflow'). Run the tests with scripts/test.sh, "
                    + "which puts .tools/librdkafka on LD_LIBRARY_PATH.")
        }
        let tansu = try await Tansu.start()
        return TestBroker(kind: .tansu, bootstrapServers: tansu.bootstrapServers, mock: nil, tansu: tansu)
    }

    /// Creates a topic: through the mock API, or tansu's CLI (CreateTopics).
    func createTopic(_ name: String, partitions: Int32) async throws {
        switch kind {
        case .mock:
            try mock!.createTopic(name, partitions: partitions)
        case .tansu:
            try await tansu!.createTopic(name, partitions: partitions)
        }
    }

    /// A unique topic name with `partitions` partitions, created on this broker.
    func makeTopic(partitions: Int32, _ label: String = "t") async throws -> String {
        let name = "\(label)-\(UUID().uuidString.prefix(8).lowercased())"
        try await createTopic(name, partitions: partitions)
        return name
    }
}

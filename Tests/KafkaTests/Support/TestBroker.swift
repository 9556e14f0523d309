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
    private let process: ChildProcess?
    private let workDirectory: URL?

    private init(kind: BrokerKind, bootstrapServers: String, mock: KafkaMockCluster?, process: ChildProcess?, workDirectory: URL?) {
        self.kind = kind
        self.bootstrapServers = bootstrapServers
        self.mock = mock
        self.process = process
        self.workDirectory = workDirectory
    }

    deinit {
        process?.terminate()
        if let workDirectory { try? FileManager.default.removeItem(at: workDirectory) }
    }

    static func start(_ kind: BrokerKind, brokers: Int = 3) throws -> TestBroker {
        switch kind {
        case .mock:
            let cluster = try KafkaMockCluster(brokers: brokers)
            return TestBroker(kind: kind, bootstrapServers: cluster.bootstrapServers, mock: cluster, process: nil, workDirectory: nil)
        case .tansu:
            return try startTansu()
        }
    }

    private static func startTansu() throws -> TestBroker {
        let version = KafkaConsumer.librdkafkaVersion
        guard !version.hasPrefix("0.") && !version.hasPrefix("1.") && !version.hasPrefix("2.0.") else {
            throw TestSupportError(
                "tansu needs librdkafka >= 2.1 at run time, but \(version) is loaded (Debian's 2.0.2 fails with "
                    + "'ApiVersionRequest failed: Local: Read underflow'). Run the tests with scripts/test.sh, "
                    + "which puts .tools/librdkafka on LD_LIBRARY_PATH.")
        }
        let tansu = Repository.tool("bin/tansu")
        let port = try FreePort.next()
        let url = "tcp://127.0.0.1:\(port)"
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-tansu-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let process = try ChildProcess(
            executable: tansu,
            arguments: ["broker", "--listener-url", url, "--advertised-listener-url", url, "--storage-engine", "memory://tansu/"],
            logFile: dir.appendingPathComponent("tansu.log").path,
            environment: ["RUST_LOG": "warn"]
        )
        let broker = TestBroker(kind: .tansu, bootstrapServers: "127.0.0.1:\(port)", mock: nil, process: process, workDirectory: dir)
        try FreePort.waitUntilListening(port: port, timeout: .seconds(20))
        return broker
    }

    /// Creates a topic: through the mock API, or tansu's CLI (CreateTopics).
    func createTopic(_ name: String, partitions: Int32) throws {
        switch kind {
        case .mock:
            try mock!.createTopic(name, partitions: partitions)
        case .tansu:
            let p = try ChildProcess(
                executable: Repository.tool("bin/tansu"),
                arguments: ["topic", "create", "--broker", "tcp://\(bootstrapServers)", "--partitions", String(partitions), name],
                logFile: "/dev/null"
            )
            let status = p.wait(timeout: .seconds(30))
            guard status == 0 else { throw TestSupportError("tansu topic create \(name) exited \(status.map(String.init) ?? "late")") }
        }
    }

    /// A unique topic name with `partitions` partitions, created on this broker.
    func makeTopic(partitions: Int32, _ label: String = "t") throws -> String {
        let name = "\(label)-\(UUID().uuidString.prefix(8).lowercased())"
        try createTopic(name, partitions: partitions)
        return name
    }
}

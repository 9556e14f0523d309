import Foundation
import Synchronization
import TestSupport
import Testing
import Threading

@testable import Kafka

/// librdkafka's log lines reach the handler, and one set of raw properties serves the consumer
/// and the producer without a `CONFWARN` (a client ignores, with a warning, a property that
/// belongs to the other kind).
@Suite("librdkafka log lines and properties per client")
struct KafkaLogHandlerTests {
    @Test("the linked librdkafka's own table says which client each property is for")
    func propertyScopes() {
        let table = RDKafkaPropertyScopes.table
        #expect(table.count > 150, "the whole table, global and topic properties: \(table.count)")
        #expect(table["fetch.wait.max.ms"] == .consumer)
        #expect(table["auto.offset.reset"] == .consumer, "a topic-level property")
        #expect(table["linger.ms"] == .producer, "an alias")
        #expect(table["acks"] == .producer, "a topic-level alias")
        #expect(table["sasl.password"] == .both)
        #expect(table["security.protocol"] == .both)
        #expect(RDKafkaPropertyScopes.applies("no.such.property", to: .consumer), "unknown names are left to librdkafka to refuse")
    }

    @Test("the table's rows are read; its headings, legend and separators are not")
    func parse() {
        let text = """
            ## Global configuration properties

            Property                                 | C/P | Range           |       Default | Importance | Description
            -----------------------------------------|-----|-----------------|--------------:|------------| --------------------------
            client.id                                |  *  |                 |       rdkafka | low        | Client identifier. <br>*Type: string*
            group.id                                 |  C  |                 |               | high       | Client group id string | with a bar.
            acks                                     |  P  | -1 .. 1000      |            -1 | high       | Alias for `request.required.acks`

            ### C/P legend: C = Consumer, P = Producer, * = both
            """
        #expect(RDKafkaPropertyScopes.parse(text) == ["client.id": .both, "group.id": .consumer, "acks": .producer])
    }

    /// Both clients of a worker get the same raw properties: one for the consumer only, one for
    /// the producer only, and a deprecated one, which librdkafka rightly warns about and which
    /// shows that its warnings reach the handler (it warns about the deprecated property first,
    /// then about those meant for the other client, in one go while the handle is made).
    @Test("a client given the other client's properties warns about none of them; its warnings reach the handler at level 4")
    func noWarningForTheOtherClientsProperties() async throws {
        let broker = try await TestBroker.start(.mock, brokers: 1)
        let properties = ["fetch.wait.max.ms": "100", "acks": "all", "batch.num.messages": "500", "topic.metadata.refresh.fast.cnt": "5"]
        let consumerLines = Lines()
        var consumerConfiguration = KafkaConsumerConfiguration(bootstrapServers: [broker.bootstrapServers], groupID: "g")
        consumerConfiguration.properties = properties
        let consumer = try KafkaConsumer(configuration: consumerConfiguration, logHandler: consumerLines.append)
        let producerLines = Lines()
        var producerConfiguration = KafkaProducerConfiguration(bootstrapServers: [broker.bootstrapServers])
        producerConfiguration.properties = properties
        let producer = try KafkaProducer(configuration: producerConfiguration, logHandler: producerLines.append)

        for lines in [consumerLines, producerLines] {
            #expect(await lines.waitFor(timeout: .seconds(30)) { $0.message.contains("topic.metadata.refresh.fast.cnt is deprecated") })
        }
        // Closing serves what is still queued: a warning logged after the deprecation one is in.
        await consumer.close()
        await producer.close()
        for lines in [consumerLines, producerLines] {
            let warnings = lines.entries.filter { $0.facility == "CONFWARN" }
            #expect(warnings.map(\.level) == [4], "\(warnings)")
            #expect(!warnings.contains { $0.message.contains("is a consumer property") || $0.message.contains("is a producer property") })
        }
    }

    @Test("a producer's connection failure reaches its log handler (FAIL, level 3), not standard error")
    func producerConnectionFailure() async throws {
        let port = try FreePort.next()  // nothing listens there
        var configuration = KafkaProducerConfiguration(bootstrapServers: ["127.0.0.1:\(port)"])
        configuration.deliveryTimeout = .seconds(2)
        let lines = Lines()
        let producer = try KafkaProducer(configuration: configuration, logHandler: lines.append)
        async let sent = try? producer.send(KafkaProducerRecord(topic: "t", value: Array("x".utf8)))
        #expect(await lines.waitFor(timeout: .seconds(30)) { $0.facility == "FAIL" && $0.level == 3 && $0.message.contains("Connection refused") })
        _ = await sent
        await producer.close()
    }
}

/// Log entries as a handler receives them, on librdkafka's poll threads.
final class Lines: Sendable {
    private let store = Mutex<[KafkaLogEntry]>([])
    private let arrived = ChangeSignal()

    var entries: [KafkaLogEntry] { store.withLock { $0 } }

    var append: @Sendable (KafkaLogEntry) -> Void {
        { entry in
            self.store.withLock { $0.append(entry) }
            self.arrived.notify()
        }
    }

    /// Whether an entry matching `match` arrived within `timeout` (woken by each entry).
    func waitFor(timeout: Duration, _ match: @escaping @Sendable (KafkaLogEntry) -> Bool) async -> Bool {
        await arrived.wait(until: .now + timeout) { entries.contains(where: match) }
    }
}

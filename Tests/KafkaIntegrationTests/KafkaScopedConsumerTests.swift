import Kafka
import TestSupport
import Testing

/// `KafkaConsumer.withConsumer`: the consumer of a question or a commit, closed before the call
/// returns or rethrows (`offsets`, a replay's plan).
@Suite("A scoped consumer (withConsumer): closed when its body returns or throws")
struct KafkaScopedConsumerTests {
    @Test("the consumer answers in the body, and is closed once withConsumer has returned")
    func closedAfterReturn() async throws {
        let broker = try await TestBroker.start(.mock)
        let topic = try await broker.makeTopic(partitions: 2)
        var lent: KafkaConsumer?
        let partitions = try await KafkaConsumer.withConsumer(configuration: .test(broker, group: nil)) { consumer in
            lent = consumer
            return try await consumer.partitions(of: topic)
        }
        #expect(partitions == [0, 1])
        try await Self.expectClosed(try #require(lent), asking: topic)
    }

    struct BodyFailure: Error, Equatable {}

    @Test("a body that throws: the consumer is closed, then its error comes out unchanged")
    func closedAfterThrow() async throws {
        let broker = try await TestBroker.start(.mock)
        let topic = try await broker.makeTopic(partitions: 1)
        var lent: KafkaConsumer?
        do {
            try await KafkaConsumer.withConsumer(configuration: .test(broker, group: nil)) { consumer in
                lent = consumer
                _ = try await consumer.partitions(of: topic)
                throw BodyFailure()
            }
            Issue.record("withConsumer returned")
        } catch let error as BodyFailure {
            #expect(error == BodyFailure())
            try await Self.expectClosed(try #require(lent), asking: topic)
        }
    }

    @Test("a consumer that cannot be created: its error, and the body never runs")
    func creationFails() async throws {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: ["127.0.0.1:1"])
        configuration.properties["no.such.property"] = "1"
        var ran = false
        do {
            try await KafkaConsumer.withConsumer(configuration: configuration) { _ in ran = true }
            Issue.record("withConsumer returned")
        } catch let error as KafkaError {
            #expect(error.code == .configuration, "\(error)")
        }
        #expect(!ran)
    }

    /// A closed consumer refuses questions and its messages have ended.
    static func expectClosed(_ consumer: KafkaConsumer, asking topic: String) async throws {
        let refused = await #expect(throws: KafkaError.self) { try await consumer.partitions(of: topic) }
        #expect(refused?.code == .closed)
        var messages = consumer.messages.makeAsyncIterator()
        #expect(try await messages.next() == nil)
        #expect(consumer.callsUnderWay == 0)
    }
}

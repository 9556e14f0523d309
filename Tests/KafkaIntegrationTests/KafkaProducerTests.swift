import Foundation
import Testing

@testable import Kafka

@Suite("Producer")
struct KafkaProducerTests {
    @Test("key, value and headers round-trip; send returns the acknowledged offset", arguments: BrokerKind.allCases)
    func roundTrip(kind: BrokerKind) async throws {
        let broker = try await TestBroker.start(kind)
        let topic = try await broker.makeTopic(partitions: 1)
        let producer = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: [broker.bootstrapServers]))
        var reports: [KafkaDeliveryReport] = []
        for i in 0..<3 {
            reports.append(
                try await producer.send(
                    KafkaProducerRecord(
                        topic: topic, partition: 0, key: Array("key-\(i)".utf8), value: Array("{\"n\":\(i)}".utf8),
                        headers: [KafkaHeader(name: "ce_type", string: "order.shipped"), KafkaHeader(name: "empty", value: nil)]
                    )))
        }
        #expect(reports.map(\.offset) == [0, 1, 2])
        #expect(reports.allSatisfy { $0.topic == topic && $0.partition == 0 })
        await producer.close()

        let consumer = try KafkaConsumer(configuration: .test(broker, group: nil))
        try consumer.assign([TopicPartitionOffset(topic: topic, partition: 0, offset: 0)])
        let messages = try await collect(3, from: consumer)
        #expect(messages.map { String(decoding: $0.key ?? [], as: UTF8.self) } == ["key-0", "key-1", "key-2"])
        #expect(messages.last.map { String(decoding: $0.value, as: UTF8.self) } == "{\"n\":2}")
        #expect(messages.first?.header("ce_type")?.stringValue == "order.shipped")
        #expect(messages.first?.header("empty") != nil)
        #expect(messages.first?.header("empty")?.value == nil)
        #expect(messages.first?.timestamp?.kind == .createTime)
        await consumer.close()
    }

    /// librdkafka refuses a record while its queue holds `queue.buffering.max.messages`
    /// (RD_KAFKA_RESP_ERR__QUEUE_FULL, rdkafka.h); each delivery report frees a place.
    @Test("sends beyond librdkafka's queue (of one) wait for room as records are delivered: all acknowledged, each stored once")
    func queueFull() async throws {
        let broker = try await TestBroker.start(.mock)
        let topic = try await broker.makeTopic(partitions: 1)
        var config = KafkaProducerConfiguration(bootstrapServers: [broker.bootstrapServers])
        config.properties["queue.buffering.max.messages"] = "1"
        // The wait is under test, not its limit: each record waits for the one before it to be
        // delivered, so on a starved machine each costs a slow round trip (40 took 26 s in a
        // loaded CI run, and over 120 s beside two other full runs): 12, and 5 minutes.
        config.queueFullTimeout = .seconds(300)
        let producer = try KafkaProducer(configuration: config)
        let reports = try await withThrowingTaskGroup(of: KafkaDeliveryReport.self) { group in
            for i in 0..<12 {
                group.addTask { try await producer.send(KafkaProducerRecord(topic: topic, partition: 0, value: Array("\(i)".utf8))) }
            }
            return try await group.reduce(into: [KafkaDeliveryReport]()) { $0.append($1) }
        }
        #expect(Set(reports.map(\.offset)) == Set(0..<12), "12 records, each stored once")
        await producer.close()
    }

    /// `send(_:onDelivery:)` keeps records in flight without a task each: every callback runs
    /// once, with the record's own offset or its failure; a refused record throws and never calls.
    @Test("send with a delivery callback: each callback once, with its record's offset; a failure as a failure; refused after close")
    func deliveryCallbacks() async throws {
        let broker = try await TestBroker.start(.mock)
        let topic = try await broker.makeTopic(partitions: 1)
        var config = KafkaProducerConfiguration(bootstrapServers: [broker.bootstrapServers])
        config.enableIdempotence = false
        let producer = try KafkaProducer(configuration: config)
        let (stream, continuation) = AsyncStream.makeStream(of: (Int, Result<KafkaDeliveryReport, KafkaError>).self)
        for i in 0..<50 {
            try producer.send(KafkaProducerRecord(topic: topic, partition: 0, key: Array("\(i)".utf8), value: Array("v\(i)".utf8))) {
                continuation.yield((i, $0))
            }
        }
        var results: [Int: Result<KafkaDeliveryReport, KafkaError>] = [:]
        for await (i, result) in stream {
            #expect(results.updateValue(result, forKey: i) == nil, "record \(i) called back twice")
            if results.count == 50 { break }
        }
        let offsets = results.mapValues { try? $0.get().offset }
        #expect(Set(offsets.values.compactMap { $0 }) == Set(0..<50), "50 records, each acknowledged once")
        // Offsets follow the order of the sends on one partition.
        #expect((0..<50).allSatisfy { offsets[$0] == Int64($0) }, "\(offsets.sorted { $0.key < $1.key }.prefix(5))")

        // A record that cannot be delivered comes back as a failure.
        var slow = config
        slow.deliveryTimeout = .seconds(1)
        let doomed = try KafkaProducer(configuration: slow)
        for id: Int32 in 1...3 { try broker.mock!.setBrokerDown(id) }
        let failure = await withCheckedContinuation { (c: CheckedContinuation<Result<KafkaDeliveryReport, KafkaError>, Never>) in
            do throws(KafkaError) {
                try doomed.send(KafkaProducerRecord(topic: topic, partition: 0, value: Array("x".utf8))) { c.resume(returning: $0) }
            } catch {
                c.resume(returning: .failure(error))
            }
        }
        #expect(throws: KafkaError.self) { try failure.get() }
        await doomed.close()
        await producer.close()
        #expect(throws: KafkaError.self) {
            try producer.send(KafkaProducerRecord(topic: topic, value: [])) { _ in Issue.record("a refused record called back") }
        }
    }

    @Test("a send that cannot be delivered fails with a typed error instead of hanging")
    func undeliverable() async throws {
        let broker = try await TestBroker.start(.mock)
        let topic = try await broker.makeTopic(partitions: 1)
        var config = KafkaProducerConfiguration(bootstrapServers: [broker.bootstrapServers])
        config.deliveryTimeout = .seconds(1)
        config.enableIdempotence = false
        let producer = try KafkaProducer(configuration: config)
        for id: Int32 in 1...3 { try broker.mock!.setBrokerDown(id) }
        await #expect(throws: KafkaError.self) {
            _ = try await producer.send(KafkaProducerRecord(topic: topic, partition: 0, value: Array("x".utf8)))
        }
        await producer.close()
        await #expect(throws: KafkaError.self) {
            _ = try await producer.send(KafkaProducerRecord(topic: topic, value: []))
        }
    }
}

@Suite("Configuration")
struct KafkaConfigurationTests {
    @Test("a bad librdkafka property is a configuration error naming the property")
    func badProperty() throws {
        var config = KafkaConsumerConfiguration(bootstrapServers: ["127.0.0.1:1"], groupID: "g")
        config.properties["no.such.property"] = "1"
        #expect {
            _ = try KafkaConsumer(configuration: config)
        } throws: { error in
            let e = error as! KafkaError
            return e.code == .configuration && e.message.contains("no.such.property")
        }
    }

    @Test("whether the library takes a property: newer ones are set only where taken")
    func knownProperties() throws {
        #expect(KafkaConsumer.librdkafkaAccepts(property: "session.timeout.ms", value: "6000"))
        #expect(!KafkaConsumer.librdkafkaAccepts(property: "session.timeout.ms", value: "soon"))
        #expect(!KafkaConsumer.librdkafkaAccepts(property: "no.such.property", value: "1"))
        // fetch.queue.backoff.ms came with librdkafka 2.1: Debian's 2.0.2 refuses it, 2.16 takes it.
        let parts = KafkaConsumer.librdkafkaVersion.split(separator: ".").compactMap { Int($0) }
        let atLeast21 = parts.count >= 2 && (parts[0], parts[1]) >= (2, 1)
        #expect(KafkaConsumer.librdkafkaAccepts(property: "fetch.queue.backoff.ms", value: "10") == atLeast21)
        var config = KafkaConsumerConfiguration(bootstrapServers: ["127.0.0.1:1"], groupID: "g")
        config.properties["fetch.queue.backoff.ms"] = "10"
        if atLeast21 {
            _ = try KafkaConsumer(configuration: config)
        } else {
            #expect(throws: KafkaError.self) { _ = try KafkaConsumer(configuration: config) }
        }
    }

    @Test("subscribe without a group is refused")
    func subscribeNeedsGroup() throws {
        let consumer = try KafkaConsumer(configuration: KafkaConsumerConfiguration(bootstrapServers: ["127.0.0.1:1"]))
        #expect(throws: KafkaError.self) { try consumer.subscribe(topics: ["t"]) }
    }

    @Test("passthrough properties cannot re-enable auto commit")
    func autoCommitStaysOff() throws {
        var config = KafkaConsumerConfiguration(bootstrapServers: ["127.0.0.1:1"], groupID: "g")
        config.properties["enable.auto.commit"] = "true"
        config.properties["security.protocol"] = "plaintext"
        let pairs = config.rdKafkaProperties
        #expect(pairs.last(where: { $0.key == "enable.auto.commit" })?.value == "false")
        #expect(pairs.contains { $0.key == "security.protocol" && $0.value == "plaintext" })
    }
}

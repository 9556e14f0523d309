import FCMEmulator
import Foundation
import Kafka
import Mapping
import TestSupport
import Testing

/// Events that name users, with `pushbridge run` as a separate process: the device registry
/// (a compacted topic of each user's devices) read into the worker's store before the first
/// event, kept current while it runs, a dead device dropped at once.
@Suite("Events to users through the device registry: pushbridge run (separate process, tansu)", .serialized)
struct RegistryEndToEndTests {
    static let mapping = """
        version: 1
        event: {id: /id}
        events:
          message.received:
            target: {user: {field: /to}}
            body: {key: new_message}
        """

    static func event(_ id: String, to user: String) -> String {
        #"{"type":"message.received","id":"\#(id)","to":"\#(user)"}"#
    }

    static func devices(_ list: [(kind: String, id: String)]) -> String {
        #"{"devices":["# + list.map { #"{"\#($0.kind)":"\#($0.id)","platform":"android"}"# }.joined(separator: ",") + "]}"
    }

    @Test(
        "each user's devices get the push; a user tombstoned or never registered is skipped and counted; a dead device is dropped at once; a registry update is followed while running"
    )
    func users() async throws {
        var faults = EmulatorFaults()
        faults.tokenPrefixes = ["dead-": "UNREGISTERED"]
        let e = try await EndToEnd(partitions: 2, faults: faults)
        try await e.createTopic("devices", partitions: 2)
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let registry: [(String, String?)] = [
            ("alice", Self.devices([("token", "a-phone"), ("fid", "a-tablet"), ("token", "dead-a-old")])),
            ("bob", Self.devices([("token", "b-phone")])),
            ("carol", Self.devices([("token", "c-phone")])),
            ("carol", nil),
        ]
        // The registry's own producer, as the backend's: the events' producer counts what the
        // worker must commit.
        let backend = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: [e.bootstrapServers]))
        for (user, value) in registry {
            _ = try await backend.send(KafkaProducerRecord(topic: "devices", key: Array(user.utf8), value: value.map { Array($0.utf8) } ?? []))
        }
        try await e.produceRaw([
            Self.event("1", to: "alice"), Self.event("2", to: "bob"), Self.event("3", to: "carol"), Self.event("4", to: "dave"),
        ])
        let store = e.directory.appendingPathComponent("registry.sqlite").path
        let worker = try await e.startWorker(group: "e2e-registry", sections: "registry: {topic: devices, path: \(store)}")
        #expect(try await e.waitUntilCommitted(group: "e2e-registry"), "\(worker.output.suffix(2000))")

        #expect(e.acceptedTokens["a-phone"] == 1 && e.acceptedTokens["b-phone"] == 1, "\(e.acceptedTokens)")
        #expect(e.emulator.messages.filter { $0.fid == "a-tablet" }.count == 1, "the FID is sent as fid")
        #expect(e.acceptedTokens["c-phone"] == nil, "carol was deleted before the event")
        #expect(try worker.metric("pushbridge_users_without_devices_total") == 2, "carol and dave")
        #expect(try worker.metric(#"pushbridge_events_total{result="skipped"}"#) == 2)
        let invalid = try await e.events.readAll(e.invalidationTopic, idle: .seconds(3))
        let record = try #require(invalid.first.flatMap { try? JSONParser.parse($0.value) })
        #expect(invalid.count == 1 && record["token"] == .string("dead-a-old") && record["project"] == .string("demo-project"))
        let ready = try worker.get("/readyz")
        #expect(ready.status == 200, "\(ready.body)")

        // Bob adds a tablet while the worker runs; the next event to him reaches both. Alice's
        // dead phone is not tried again: it left the worker's registry when FCM refused it.
        _ = try await backend.send(
            KafkaProducerRecord(
                topic: "devices", key: Array("bob".utf8), value: Array(Self.devices([("token", "b-phone"), ("token", "b-tablet")]).utf8)))
        _ = try await eventually(timeout: .seconds(60)) { try worker.metric("pushbridge_registry_records_total") >= 5 }
        #expect(try worker.metric("pushbridge_registry_records_total") == 5)
        try await e.produceRaw([Self.event("5", to: "bob"), Self.event("6", to: "alice")])
        #expect(try await e.waitUntilCommitted(group: "e2e-registry"), "\(worker.output.suffix(2000))")
        #expect(e.acceptedTokens["b-phone"] == 2 && e.acceptedTokens["b-tablet"] == 1 && e.acceptedTokens["a-phone"] == 2, "\(e.acceptedTokens)")
        #expect(e.emulator.attempts.filter { $0.token == "dead-a-old" }.count == 1)

        // Support: the worker's view of a user, and how far its store is behind the topic.
        let config = try e.config(group: "e2e-registry", httpPort: 0, sections: "registry: {topic: devices, path: \(store)}")
        let (status, output) = try await e.pushbridge(["registry", "--config", config, "--full", "alice", "bob", "carol"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("alice: 2 devices\n  token a-phone  platform=android app=-\n  fid a-tablet  platform=android app=-"), "\(output)")
        #expect(output.contains("bob: 2 devices") && output.contains("carol: no devices") && output.contains("lag: 0 records"), "\(output)")
        await expectCleanExit(worker)
        await backend.close()
        await e.stop()
    }

    @Test(
        "no event is taken while the registry is catching up (a partition without a leader: mock cluster); /readyz says so; SIGTERM then ends the worker cleanly"
    )
    func catchingUp() async throws {
        let e = try await EndToEnd(partitions: 1, broker: .mock)
        try await e.createTopic("devices", partitions: 2)
        let backend = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: [e.bootstrapServers]))
        _ = try await backend.send(
            KafkaProducerRecord(topic: "devices", partition: 0, key: Array("alice".utf8), value: Array(Self.devices([("token", "a-phone")]).utf8)))
        try e.mock?.setPartitionLeader(topic: "devices", partition: 1, brokerID: nil)  // nothing of it can be read
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        try await e.produceRaw([Self.event("1", to: "alice")])
        let store = e.directory.appendingPathComponent("registry.sqlite").path
        let worker = try await e.startWorker(group: "e2e-registry-wait", sections: "registry: {topic: devices, path: \(store)}")
        _ = try await eventually(timeout: .seconds(60)) { try worker.get("/readyz").body.contains("reading the device registry") }
        let ready = try worker.get("/readyz")
        #expect(ready.status == 503 && ready.body.contains("reading the device registry"), "\(ready)")
        try await Task.sleep(for: .seconds(2))  // time enough to have sent, had it taken the event
        #expect(e.emulator.messages.isEmpty, "the event waits for the registry")
        #expect(try await e.committed(group: "e2e-registry-wait").isEmpty)
        // A graceful stop ends the wait at once: the follower is cancelled, nothing is committed.
        // (Were it left running, the stop would wait out the shutdown deadline, 45 s here.)
        #expect(await worker.terminate(timeout: .seconds(20)) == 0, "\(worker.output.suffix(2000))")
        #expect(worker.output.contains("stopped"))
        await backend.close()
        await e.stop()
    }

    @Test("a mapping that targets users with no registry configured: the worker refuses to start, naming the mapping (exit 2)")
    func noRegistry() async throws {
        let e = try await EndToEnd(partitions: 1)
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let config = try e.config(group: "e2e-registry-none", httpPort: 0)
        let (status, output) = try await e.pushbridge(["run", "--config", config], timeout: .seconds(60))
        #expect(status == 2, "\(output)")
        #expect(
            output.contains(#"mappings.yaml:4: event "message.received" targets a user, and no device registry is configured: set registry.topic"#),
            "\(output)")
        await e.stop()
    }
}

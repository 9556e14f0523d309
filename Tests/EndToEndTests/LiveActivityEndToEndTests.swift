import Dates
import FCMEmulator
import Foundation
import JSON
import Kafka
import TestSupport
import Testing

/// Live Activities on tansu (docs/mapping.md, *Live Activities*): order events update and end
/// an activity whose tokens the events carry; the emulator's device model
/// (``LiveActivityBoard``) shows what the phone would.
@Suite("Live Activities end to end", .serialized)
struct LiveActivityEndToEndTests {
    static let mapping = """
        version: 1
        events:
          order.progress:
            target: {token: {field: /device_token}}
            activity:
              key: {field: /order_id}
              event: {field: /status, map: {picked_up: update, nearby: update, delivered: end, preparing: skip}}
              token: {field: /activity_token}
              content_state:
                status: {field: /status}
                progress: {field: /progress}
              dismissal_date: {after: 30m}
            occurred_at: {field: /occurred_at}
        """

    /// An `order.progress` event keyed by its order, `seconds` after a fixed recent instant.
    static func event(_ order: String, _ status: String, progress: Double, seconds: Int, activityToken: String, at base: Int64) -> KafkaProducerRecord
    {
        let time = RFC3339.format(milliseconds: (base + Int64(seconds)) * 1000)
        let value =
            #"{"type":"order.progress","order_id":"\#(order)","status":"\#(status)","progress":\#(progress),"device_token":"fcm-\#(order)","activity_token":"\#(activityToken)","occurred_at":"\#(time)"}"#
        return KafkaProducerRecord(topic: "events", key: Array(order.utf8), value: Array(value.utf8))
    }

    @Test("updates and an end reach the activity in order; skip sends nothing; a dead activity token is invalidated and the device is kept")
    func updateEndAndInvalidation() async throws {
        var faults = EmulatorFaults()
        faults.tokenPrefixes = ["la-dead": "UNREGISTERED"]
        let e = try await EndToEnd(faults: faults)
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let worker = try await e.startWorker(group: "e2e-activities")
        let base = Int64(Date().timeIntervalSince1970) - 60
        try await e.events.produceInOrder(records: [
            Self.event("o-1", "preparing", progress: 0, seconds: 0, activityToken: "la-1", at: base),
            Self.event("o-1", "picked_up", progress: 0.25, seconds: 1, activityToken: "la-1", at: base),
            Self.event("o-1", "nearby", progress: 0.75, seconds: 2, activityToken: "la-1", at: base),
            Self.event("o-1", "delivered", progress: 1, seconds: 3, activityToken: "la-1", at: base),
            Self.event("o-2", "picked_up", progress: 0.5, seconds: 1, activityToken: "la-dead-2", at: base),
        ])
        #expect(try await e.waitUntilCommitted(group: "e2e-activities"), "\(worker.output.suffix(2000))")
        let board = e.emulator.liveActivities
        let shown = try #require(board.activities["la-1"])
        let sent = e.emulator.messages.filter { $0.token == "fcm-o-1" }
        // The end always goes; an update waiting behind the one in flight may be replaced.
        #expect((2...3).contains(sent.count))
        #expect(shown.event == "end" && shown.timestamp == base + 3 && shown.applied == sent.count && shown.ignored == 0)
        #expect(shown.contentState == .object([("progress", .int(1)), ("status", .string("delivered"))]))
        #expect(board.activities["la-dead-2"] == nil)
        #expect(sent.allSatisfy { $0.deviceNotes.isEmpty }, "\(sent.flatMap(\.deviceNotes))")
        let records = try await e.read(e.invalidationTopic, count: 1)
        let record = try #require(records.first.flatMap { try? JSONParser.parse($0.value) })
        #expect(record["kind"] == .string("live_activity_token"))
        #expect(record["live_activity_token"] == .string("la-dead-2") && record["activity"] == .string("o-2"))
        #expect(record["token"] == .string("fcm-o-2"), "the device's token is named, not declared dead")
        #expect(records.first.map { String(decoding: $0.key ?? [], as: UTF8.self) } == "la-dead-2")
        await expectCleanExit(worker)
        await e.stop()
    }

    @Test("an update whose first send is refused (503, Retry-After 1 s) is acknowledged before the next update of its activity is sent")
    func orderUnderRetry() async throws {
        let e = try await EndToEnd(partitions: 1)
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let worker = try await e.startWorker(group: "e2e-activity-order")
        let base = Int64(Date().timeIntervalSince1970) - 60
        // Both in the same second: the device applies an equal timestamp, so only the order
        // of arrival keeps the newer state last.
        var faults = EmulatorFaults()
        faults.burst = .init(status: 503, count: 1, retryAfterSeconds: 1)
        e.emulator.setFaults(faults)
        try await e.events.produceInOrder(records: [
            Self.event("o-7", "picked_up", progress: 0.3, seconds: 0, activityToken: "la-7", at: base),
            Self.event("o-7", "nearby", progress: 0.6, seconds: 0, activityToken: "la-7", at: base),
        ])
        #expect(try await e.waitUntilCommitted(group: "e2e-activity-order"), "\(worker.output.suffix(2000))")
        let attempts = e.emulator.attempts.filter { $0.token == "fcm-o-7" }
        #expect(attempts.map(\.status) == [503, 200, 200], "\(attempts)")
        let accepted = e.emulator.messages.filter { $0.token == "fcm-o-7" }
        let progress = accepted.map { $0.message["apns"]?["payload"]?["aps"]?["content-state"]?["progress"] }
        #expect(progress == [.double(0.3), .double(0.6)])
        #expect(e.emulator.liveActivities.activities["la-7"]?.contentState?["progress"] == .double(0.6))
        await expectCleanExit(worker)
        await e.stop()
    }

    @Test("updates that pile up behind the one in flight are replaced by the newest; every offset is committed")
    func coalescing() async throws {
        var faults = EmulatorFaults()
        faults.latencyMilliseconds = 400
        let e = try await EndToEnd(partitions: 1, faults: faults)
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let worker = try await e.startWorker(group: "e2e-activity-coalesce")
        let base = Int64(Date().timeIntervalSince1970) - 60
        let updates = (1...40).map { i in
            Self.event("o-9", i % 2 == 0 ? "nearby" : "picked_up", progress: Double(i) / 40, seconds: i, activityToken: "la-9", at: base)
        }
        try await e.events.produce(records: updates)
        #expect(try await e.waitUntilCommitted(group: "e2e-activity-coalesce"), "\(worker.output.suffix(2000))")
        let sent = e.emulator.messages.filter { $0.token == "fcm-o-9" }
        let timestamps = sent.compactMap { m -> Int64? in
            if case .int(let t)? = m.message["apns"]?["payload"]?["aps"]?["timestamp"] { t } else { nil }
        }
        #expect(sent.count < 40 && sent.count >= 2, "\(sent.count) sends for 40 updates")
        #expect(timestamps == timestamps.sorted(), "sent in order: \(timestamps)")
        #expect(timestamps.last == base + 40)
        let board = try #require(e.emulator.liveActivities.activities["la-9"])
        #expect(board.ignored == 0 && board.timestamp == base + 40 && board.applied == sent.count)
        await expectCleanExit(worker)
        await e.stop()
    }

    static let startMapping = """
        version: 1
        events:
          order.created:
            target: {user: {field: /customer}}
            activity:
              key: {field: /order_id}
              event: start
              token: push_to_start
              attributes_type: DeliveryAttributes
              attributes: {order_id: {field: /order_id}}
              content_state: {status: confirmed, progress: 0}
              alert:
                title: {key: order_confirmed_title}
                body: {key: order_confirmed_body, args: [{field: /restaurant}]}
                sound: default
        """

    @Test(
        "a start goes to each of the user's iOS devices with a push-to-start token for its attributes type, from the registry; a dead one is invalidated and the device kept"
    )
    func pushToStartThroughRegistry() async throws {
        var faults = EmulatorFaults()
        faults.tokenPrefixes = ["p2s-dead": "UNREGISTERED"]
        let e = try await EndToEnd(partitions: 1, faults: faults)
        try await e.createTopic("devices", partitions: 1)
        try Self.startMapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let backend = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: [e.bootstrapServers]))
        let devices = [
            #"{"token":"ana-iphone","platform":"ios","push_to_start":{"DeliveryAttributes":"p2s-ana-1","RideAttributes":"p2s-ana-ride"}}"#,
            #"{"token":"ana-ipad","platform":"ios","push_to_start":{"DeliveryAttributes":"p2s-dead-ipad"}}"#,
            #"{"token":"ana-old-iphone","platform":"ios"}"#,
            #"{"token":"ana-pixel","platform":"android"}"#,
        ]
        _ = try await backend.send(
            KafkaProducerRecord(topic: "devices", key: Array("ana".utf8), value: Array(#"{"devices":[\#(devices.joined(separator: ","))]}"#.utf8)))
        try await e.produceRaw([
            #"{"type":"order.created","order_id":"o-5","customer":"ana","restaurant":"Luigi's"}"#,
            #"{"type":"order.created","order_id":"o-6","customer":"ben","restaurant":"Luigi's"}"#,
        ])
        let store = e.directory.appendingPathComponent("registry.sqlite").path
        let worker = try await e.startWorker(group: "e2e-p2s", sections: "registry: {topic: devices, path: \(store)}")
        #expect(try await e.waitUntilCommitted(group: "e2e-p2s"), "\(worker.output.suffix(2000))")
        let started = e.emulator.messages.filter { $0.message["apns"]?["live_activity_token"] != nil }
        #expect(started.map(\.token) == ["ana-iphone"], "only the device with a live push-to-start token for the type")
        let aps = try #require(started.first?.message["apns"]?["payload"]?["aps"])
        #expect(aps["event"] == .string("start") && aps["attributes-type"] == .string("DeliveryAttributes") && aps["input-push-token"] == .int(1))
        #expect(started.first?.message["apns"]?["live_activity_token"] == .string("p2s-ana-1"))
        #expect(started.allSatisfy { $0.deviceNotes.isEmpty }, "\(started.flatMap(\.deviceNotes))")
        #expect(try worker.metric("pushbridge_users_without_devices_total") == 1, "ben has no device")
        let invalid = try await e.events.readAll(e.invalidationTopic, idle: .seconds(3))
        let record = try #require(invalid.first.flatMap { try? JSONParser.parse($0.value) })
        #expect(invalid.count == 1)
        #expect(record["kind"] == .string("push_to_start_token") && record["push_to_start_token"] == .string("p2s-dead-ipad"))
        #expect(
            record["attributes_type"] == .string("DeliveryAttributes") && record["user"] == .string("ana") && record["token"] == .string("ana-ipad"))
        // The device stays in the worker's registry: its push-to-start token died, not the device.
        let config = try e.config(group: "e2e-p2s", httpPort: 0, sections: "registry: {topic: devices, path: \(store)}")
        let (status, output) = try await e.pushbridge(["registry", "--config", config, "--full", "ana"])
        #expect(status == 0 && output.contains("ana: 4 devices"), "\(output)")
        // Its dead push-to-start token left it at once; the other device's are kept.
        #expect(output.contains("token ana-ipad  platform=ios app=-\n"), "\(output)")
        #expect(output.contains("token ana-iphone  platform=ios app=- push_to_start=DeliveryAttributes,RideAttributes\n"), "\(output)")
        await expectCleanExit(worker)
        await backend.close()
        await e.stop()
    }

    static let registryMapping = """
        version: 1
        events:
          order.progress:
            activity:
              key: {field: /order_id}
              event: {field: /status, map: {picked_up: update, nearby: update, delivered: end}}
              token: registry
              content_state: {status: {field: /status}}
              alert: {title: {field: /status}}
        """

    @Test("update and end through the activity's registry entry, to each device following it; a dead token leaves the entry at once")
    func throughRegistry() async throws {
        var faults = EmulatorFaults()
        faults.tokenPrefixes = ["la-dead": "UNREGISTERED"]
        let e = try await EndToEnd(partitions: 1, faults: faults)
        try await e.createTopic("devices", partitions: 1)
        try Self.registryMapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let backend = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: [e.bootstrapServers]))
        let entry =
            #"{"devices":[{"fid":"ana-iphone","platform":"ios","live_activity_token":"la-ana"},{"token":"ana-ipad","platform":"ios","live_activity_token":"la-dead-ipad"}]}"#
        _ = try await backend.send(KafkaProducerRecord(topic: "devices", key: Array("activity:o-90".utf8), value: Array(entry.utf8)))
        let store = e.directory.appendingPathComponent("registry.sqlite").path
        let worker = try await e.startWorker(group: "e2e-la-registry", sections: "registry: {topic: devices, path: \(store)}")
        func event(_ status: String) -> KafkaProducerRecord {
            KafkaProducerRecord(
                topic: "events", key: Array("o-90".utf8), value: Array(#"{"type":"order.progress","order_id":"o-90","status":"\#(status)"}"#.utf8))
        }
        try await e.events.produceInOrder(records: [event("picked_up")])
        #expect(try await e.waitUntilCommitted(group: "e2e-la-registry"), "\(worker.output.suffix(2000))")
        let invalid = try await e.events.readAll(e.invalidationTopic, idle: .seconds(3))
        let record = try #require(invalid.first.flatMap { try? JSONParser.parse($0.value) })
        #expect(record["kind"] == .string("live_activity_token") && record["live_activity_token"] == .string("la-dead-ipad"))
        #expect(record["activity"] == .string("o-90") && record["token"] == .string("ana-ipad"))
        // The iPad left the activity's entry: the end goes to the iPhone alone.
        try await e.events.produceInOrder(records: [event("delivered")])
        #expect(try await e.waitUntilCommitted(group: "e2e-la-registry"), "\(worker.output.suffix(2000))")
        #expect(e.emulator.attempts.filter { $0.token == "ana-ipad" }.count == 1)
        let shown = try #require(e.emulator.liveActivities.activities["la-ana"])
        #expect(shown.event == "end" && shown.applied == 2, "\(shown)")
        #expect(e.emulator.messages.allSatisfy { $0.deviceNotes.isEmpty })
        await expectCleanExit(worker)
        await backend.close()
        await e.stop()
    }

    @Test("min_interval: after a push is answered the activity's next waits the interval, and the updates meanwhile collapse to the newest")
    func minInterval() async throws {
        let e = try await EndToEnd(partitions: 1)
        let mapping = Self.mapping.replacingOccurrences(
            of: "      dismissal_date: {after: 30m}", with: "      dismissal_date: {after: 30m}\n      min_interval: 2s")
        #expect(mapping.contains("min_interval: 2s"))
        try mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let worker = try await e.startWorker(group: "e2e-activity-interval")
        let base = Int64(Date().timeIntervalSince1970) - 60
        let updates = (1...12).map { i in
            Self.event("o-11", "picked_up", progress: Double(i) / 12, seconds: i, activityToken: "la-11", at: base)
        }
        try await e.events.produceInOrder(records: updates)
        #expect(try await e.waitUntilCommitted(group: "e2e-activity-interval"), "\(worker.output.suffix(2000))")
        let sent = e.emulator.messages.filter { $0.token == "fcm-o-11" }
        let times = sent.map(\.time)
        #expect(sent.count >= 2 && sent.count <= 6, "\(sent.count) sends for 12 updates")
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 >= 1.9 }, "\(times)")
        let shown = try #require(e.emulator.liveActivities.activities["la-11"])
        #expect(shown.timestamp == base + 12 && shown.ignored == 0)
        await expectCleanExit(worker)
        await e.stop()
    }
}

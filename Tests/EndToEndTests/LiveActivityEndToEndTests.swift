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
}

import FCM
import Foundation
import JSON
import Kafka
import Mapping
import Pipeline
import Synchronization
import Testing

/// `target: {user: …}` through ``EventProcessor``: the user's devices from a ``DeviceDirectory``,
/// each message with its device's app's project, dead devices dropped from the directory, users
/// without devices skipped or dead-lettered.
@Suite("Events to users: the processor with a device directory")
struct UserTargetTests {
    /// The registry's view, as ``DeviceDirectory`` documents it: a user's devices, none for an
    /// unknown user; a dropped device is gone at once.
    final class Directory: DeviceDirectory {
        let users: Mutex<[String: [UserDevice]]>
        let failing: Bool
        init(_ users: [String: [UserDevice]], failing: Bool = false) {
            self.users = Mutex(users)
            self.failing = failing
        }
        func devices(ofUser user: String) throws -> [UserDevice] {
            if failing { throw CocoaError(.fileReadCorruptFile) }
            return users.withLock { $0[user] ?? [] }
        }
        func drop(_ device: String, ofUser user: String) {
            users.withLock { $0[user]?.removeAll { $0.id == device } }
        }
        func dropPushToStart(_ token: String, ofUser user: String) {
            users.withLock { users in
                for i in users[user]?.indices ?? 0..<0 { users[user]![i].pushToStart = users[user]![i].pushToStart.filter { $0.value != token } }
            }
        }
    }

    /// Two projects (`consumer`, the default, and `driver`), as ``FCMProjects`` routes them; a
    /// token starting `dead-` is UNREGISTERED, as FCM answers for an uninstalled app.
    final class Sender: PushSending {
        let sent = Mutex<[(project: String?, target: String)]>([])
        func projectID(of project: String?) -> String? {
            switch project ?? "consumer" {
            case "consumer": "consumer-prod"
            case "driver": "driver-prod"
            default: nil
            }
        }
        func send(_ message: [UInt8], project: String?, to target: MessageTarget?, validateOnly: Bool) async -> FCMClient.SendResult {
            let value = target?.value ?? "?"
            if value.hasPrefix("dead-") {
                let error = FCMError(code: .unregistered, kind: .tokenDead, httpStatus: 404, message: "Requested entity was not found.")
                return FCMClient.SendResult(outcome: .failure(error), attempts: 1)
            }
            if value.hasPrefix("other-") {  // FCM's answer for a token of another project's app
                let error = FCMError(code: .senderIDMismatch, kind: .tokenDead, httpStatus: 403, message: "SenderId mismatch")
                return FCMClient.SendResult(outcome: .failure(error), attempts: 1)
            }
            sent.withLock { $0.append((project, value)) }
            return FCMClient.SendResult(outcome: .success("projects/p/messages/1"), attempts: 1)
        }
        var concurrencyLimit: Int { 10 }
        func setProjectShare(_ project: String, sendsPerSecond: Double?) {}
    }

    static let mapping = """
        version: 1
        events:
          message.received:
            target: {user: {field: /to}}
            body: {key: new_message}
          driver.arrived:
            target: {user: {field: /to}, app: driver, platform: [android, ios]}
            body: {key: driver_here}
        """

    static let alice: [UserDevice] = [
        UserDevice(kind: .token, id: "a-phone", platform: "android"),
        UserDevice(kind: .fid, id: "a-tablet", platform: "ios", app: "consumer"),
        UserDevice(kind: .token, id: "a-driver", platform: "android", app: "driver"),
        UserDevice(kind: .token, id: "a-web", platform: "web", app: "driver"),
        UserDevice(kind: .token, id: "dead-old-phone", platform: "ios", app: "driver"),
    ]

    static func processor(_ directory: Directory, _ sender: Sender, _ producer: FakeProducer, skipNoDevices: Bool = true) throws -> EventProcessor {
        var options = EventProcessor.Options(deadLetterTopic: "dead", tokenInvalidationTopic: "invalid")
        options.skipUsersWithoutDevices = skipNoDevices
        return EventProcessor(
            mappings: try MappingSet.load(files: [("m.yaml", mapping)]), sender: sender, producer: producer, directory: directory,
            options: options, metrics: PipelineMetrics(), logger: .init(label: "test"))
    }

    static func event(_ type: String, to user: String, offset: Int64 = 0) -> KafkaMessage {
        KafkaMessage(topic: "events", partition: 0, offset: offset, key: nil, value: Array(#"{"type":"\#(type)","to":"\#(user)"}"#.utf8))
    }

    @Test(
        "one message per device of the user the mapping's platforms reach, each with its device's app's project (else the event's); the target's filter applies"
    )
    func fanOut() async throws {
        let (directory, sender, producer) = (Directory(["alice": Self.alice]), Sender(), FakeProducer())
        let p = try Self.processor(directory, sender, producer)
        let all = await p.process(Self.event("message.received", to: "alice"))
        // Not a-web: the mapping sends to android and ios (its default platforms), and a browser
        // would show nothing of such a message.
        #expect(all.done && all.verdict.sent == 3)
        #expect(
            Set(sender.sent.withLock { $0 }.map { "\($0.project ?? "-")/\($0.target)" })
                == ["-/a-phone", "consumer/a-tablet", "driver/a-driver"])

        sender.sent.withLock { $0 = [] }
        let filtered = await p.process(Self.event("driver.arrived", to: "alice", offset: 1))
        #expect(filtered.done && filtered.verdict.sent == 1, "the driver app on android or ios only: the dead phone was dropped before")
        #expect(sender.sent.withLock { $0 }.map(\.target) == ["a-driver"])
    }

    @Test("a device FCM says is dead leaves the user's devices at once, and its invalidation record names its project")
    func deadDevice() async throws {
        let (directory, sender, producer) = (Directory(["alice": Self.alice]), Sender(), FakeProducer())
        let p = try Self.processor(directory, sender, producer)
        _ = await p.process(Self.event("message.received", to: "alice"))
        #expect(try directory.devices(ofUser: "alice").map(\.id) == ["a-phone", "a-tablet", "a-driver", "a-web"])
        let record = try #require(producer.written.first { $0.topic == "invalid" })
        let json = try JSONParser.parse(record.value)
        #expect(json["token"] == .string("dead-old-phone") && json["project"] == .string("driver-prod") && json["reason"] == .string("UNREGISTERED"))
    }

    @Test(
        "a device naming an app the config lacks is left out and counted, the user's others still get it; SENDER_ID_MISMATCH does not drop a device"
    )
    func badRegistryData() async throws {
        let devices = [
            UserDevice(kind: .token, id: "good", platform: "android"), UserDevice(kind: .token, id: "stray", platform: "android", app: "nope"),
            UserDevice(kind: .token, id: "other-app", platform: "ios", app: "driver"),
        ]
        let (directory, sender, producer) = (Directory(["zed": devices, "lost": [devices[1]]]), Sender(), FakeProducer())
        let p = try Self.processor(directory, sender, producer)
        let outcome = await p.process(Self.event("message.received", to: "zed"))
        #expect(sender.sent.withLock { $0 }.map(\.target) == ["good"])
        guard case .deadLetter(let reason) = outcome.verdict.disposition else {
            Issue.record("\(outcome.verdict.disposition)")
            return
        }
        #expect(reason.code == "fcm_sender_id_mismatch", "the mismatched device's event is dead-lettered, as for any target")
        #expect(try directory.devices(ofUser: "zed").map(\.id) == ["good", "stray", "other-app"], "a mismatch is not a dead device")
        let lost = await p.process(Self.event("message.received", to: "lost", offset: 1))
        #expect(lost.done && lost.verdict.noDevices, "no device left to send to: as a user without devices")
    }

    @Test("a user with no devices (or none the filter lets through): skipped and counted, or dead-lettered when configured")
    func noDevices() async throws {
        let directory = Directory(["bob": [UserDevice(kind: .token, id: "b-phone", platform: "android")]])
        let skipping = try Self.processor(directory, Sender(), FakeProducer())
        for (type, user) in [("message.received", "nobody"), ("driver.arrived", "bob")] {
            let outcome = await skipping.process(Self.event(type, to: user))
            #expect(
                outcome.done && outcome.verdict.noDevices && outcome.verdict.disposition == .skipped(reason: "user \(user) has no device to send to"))
        }
        let producer = FakeProducer()
        let strict = try Self.processor(directory, Sender(), producer, skipNoDevices: false)
        let outcome = await strict.process(Self.event("message.received", to: "nobody"))
        #expect(outcome.done)
        let dead = try #require(producer.written.first)
        #expect(dead.topic == "dead" && dead.headers.first { $0.name == "pushbridge-reason-code" }?.value == Array("no_devices".utf8))
    }

    @Test("a registry that cannot be read stops the worker: the event stays unfinished, nothing dead-lettered")
    func unreadable() async throws {
        let producer = FakeProducer()
        let p = try Self.processor(Directory([:], failing: true), Sender(), producer)
        let outcome = await p.process(Self.event("message.received", to: "alice"))
        #expect(!outcome.done)
        guard case .fatal(let why) = outcome.verdict.disposition else {
            Issue.record("\(outcome.verdict.disposition)")
            return
        }
        #expect(why.hasPrefix("the device registry cannot be read"))
        #expect(producer.written.isEmpty)
    }
}

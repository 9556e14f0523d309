import FCMEmulator
import Foundation
import Kafka
import Mapping
import TestSupport
import Testing

/// Several Firebase projects in one deployment (`fcm.projects`), with `pushbridge run` as a
/// separate process, tansu and the emulator, which keeps each project's quota apart and refuses
/// a project's sends with another project's credentials (as FCM does): a message sent with the
/// wrong project's client would fail, not pass unnoticed.
@Suite("Several Firebase projects: pushbridge run (separate process, tansu)", .serialized)
struct ProjectsEndToEndTests {
    static let mapping = """
        version: 1
        event: {id: /id}
        events:
          user.welcome:
            project: {field: /app, default: consumer}
            target: {token: {field: /token}}
            title: {key: welcome_title, args: [{field: /name}]}
        """

    static func event(_ token: String, app: String?) -> String {
        let field = app.map { #","app":"\#($0)""# } ?? ""
        return #"{"type":"user.welcome","id":"\#(token)","name":"N","token":"\#(token)"\#(field)}"#
    }

    @Test(
        "each event goes with its project's credentials; one project over its quota pauses alone while the other delivers; unknown projects dead-lettered; records and metrics name the project"
    )
    func twoProjects() async throws {
        var faults = EmulatorFaults()
        faults.quotas.project = .init(limit: 10, window: .seconds(30))  // per project, as FCM's
        faults.tokenPrefixes = ["dead-": "UNREGISTERED"]
        let e = try await EndToEnd(partitions: 2, faults: faults, projects: ["consumer-prod", "driver-prod"])
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let credentials = """
            projects:
              consumer: {service_account: sa-consumer-prod.json}
              driver: {service_account: sa-driver-prod.json}
            default_project: consumer
            """
        // Long enough for the consumer app's events to be delivered within it on a loaded machine
        // (a full local run once took over 25 s).
        let pause = 60.0
        let worker = try await e.startWorker(
            group: "e2e-projects", retry: "initial_backoff_ms: 20, max_backoff_ms: 500, quota_pause_ms: \(Int(pause * 1000))",
            credentials: credentials)

        // 15 for the driver app: over its 10 per 30 s, so the driver app's sends pause for 60 s.
        let driver = (0..<14).map { "driver-\($0)" } + ["dead-driver"]
        try await e.produceRaw(driver.map { Self.event($0, app: "driver") })
        let emulator = e.emulator
        try #require(await eventually(timeout: .seconds(90)) { emulator.attempts.contains { $0.status == 429 } })
        let refused = try #require(emulator.attempts.first { $0.status == 429 })
        #expect(refused.token?.hasPrefix("driver-") == true || refused.token == "dead-driver")
        // Then 8 for the consumer app (the default: no field), and one for an app not configured.
        let consumer = (0..<8).map { "consumer-\($0)" }
        try await e.produceRaw(consumer.map { Self.event($0, app: nil) } + [Self.event("lost", app: "nope")])
        try #require(await eventually(timeout: .seconds(90)) { consumer.allSatisfy { emulator.acceptedTokens[$0] != nil } })
        // Delivered while the driver app was paused: a pause shared by the projects would have
        // held them until the driver app's ended.
        let consumerTimes = emulator.attempts.filter { $0.token?.hasPrefix("consumer-") == true }.map(\.time)
        #expect(consumerTimes.allSatisfy { $0 < refused.time + pause - 5 }, "\(consumerTimes) vs the driver app's pause from \(refused.time)")
        #expect(driver.count { emulator.acceptedTokens[$0] != nil } <= 10, "the driver app stays within its quota meanwhile")

        #expect(try await e.waitUntilCommitted(group: "e2e-projects", timeout: .seconds(210)), "\(worker.output.suffix(2000))")
        let projectOf = Dictionary(emulator.messages.compactMap { m in m.token.map { ($0, m.project) } }, uniquingKeysWith: { a, _ in a })
        for token in driver where token != "dead-driver" {
            #expect(e.acceptedTokens[token] == 1 && projectOf[token] == "driver-prod", "\(token): \(projectOf[token] ?? "not sent")")
        }
        for token in consumer {
            #expect(e.acceptedTokens[token] == 1 && projectOf[token] == "consumer-prod", "\(token): \(projectOf[token] ?? "not sent")")
        }
        #expect(e.acceptedTokens["lost"] == nil)

        let dead = try await e.events.readAll(e.deadLetterTopic, idle: .seconds(3))
        #expect(dead.count == 1)
        #expect(dead.first?.header("pushbridge-reason-code")?.stringValue == "unknown_project")
        #expect(dead.first?.header("pushbridge-reason")?.stringValue == #"no FCM project named "nope" in fcm.projects"#)
        let invalid = try await e.events.readAll(e.invalidationTopic, idle: .seconds(3))
        let record = try #require(invalid.first.flatMap { try? JSONParser.parse($0.value) })
        #expect(invalid.count == 1 && record["token"] == .string("dead-driver") && record["project"] == .string("driver-prod"))

        #expect(try worker.metric(#"pushbridge_fcm_quota_pauses_total{project="driver-prod"}"#) >= 1)
        #expect(try worker.metric(#"pushbridge_fcm_quota_pauses_total{project="consumer-prod"}"#) == 0)
        #expect(try worker.metric(#"pushbridge_sends_total{result="ok",project="consumer-prod"}"#) == 8)
        #expect(try worker.metric(#"pushbridge_sends_total{result="ok",project="driver-prod"}"#) == 14)
        await expectCleanExit(worker)
        await e.stop()
    }

    @Test(
        "a project held back by its rate cap holds up no other: the consumer app's events read after 24 of the capped driver app's are delivered while the driver app's wait their turn"
    )
    func cappedProjectHoldsUpNoOther() async throws {
        let e = try await EndToEnd(partitions: 1, projects: ["consumer-prod", "driver-prod"])
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let credentials = """
            projects:
              consumer: {service_account: sa-consumer-prod.json}
              driver: {service_account: sa-driver-prod.json, max_sends_per_second: 1}
            default_project: consumer
            """
        // Four sends in flight per project, and four runners: the driver app's four slots are
        // taken by sends its cap holds back, and a runner that waited in place for one of them
        // would leave none for the consumer app's events.
        let worker = try await e.startWorker(group: "e2e-projects-capped", delivery: "max_sends_in_flight: 4", credentials: credentials)
        // Ready: an access token for each project. Before that, an event's send waits in a runner
        // for the token and then for a slot, and four runners waiting so for the driver app can
        // hold up the consumer app's events (a run without this wait, on a loaded machine: 17
        // of the driver app's went first).
        #expect(await eventually(timeout: .seconds(60)) { (try? worker.get("/readyz").status) == 200 }, "\(worker.output.suffix(2000))")
        let driver = (0..<24).map { "driver-\($0)" }
        let consumer = (0..<8).map { "consumer-\($0)" }
        // One partition: the consumer app's events are read after all of the driver app's.
        try await e.produceRaw(driver.map { Self.event($0, app: "driver") } + consumer.map { Self.event($0, app: nil) })
        let emulator = e.emulator
        try #require(await eventually(timeout: .seconds(90)) { consumer.allSatisfy { emulator.acceptedTokens[$0] != nil } })
        let accepted = emulator.attempts.filter { $0.status == 200 }
        let consumerTimes = accepted.filter { $0.token?.hasPrefix("consumer-") == true }.map(\.time)
        let lastConsumer = try #require(consumerTimes.max())
        let driverBefore = accepted.count { $0.token?.hasPrefix("driver-") == true && $0.time <= lastConsumer }
        // At 1 a second the driver app's 24 take about 24 s; the consumer app's went within the
        // first few of them alone, and within 9 s beside the whole suite on two cores (at 2 a
        // second that was 13 to 17 of the driver app's). Runners waiting for the driver app's
        // room would have let them go only once at most 4 of its events were left (20 or more).
        #expect(driverBefore <= 12, "\(driverBefore) of the driver app's events were delivered before the consumer app's last")
        // The rest of the driver app's wait, set aside, and the gauge says so.
        #expect(try worker.metric(#"pushbridge_fcm_waiting_for_room{project="driver-prod"}"#) >= 1)
        #expect(try worker.metric(#"pushbridge_fcm_waiting_for_room{project="consumer-prod"}"#) == 0)

        #expect(try await e.waitUntilCommitted(group: "e2e-projects-capped", timeout: .seconds(120)), "\(worker.output.suffix(2000))")
        for token in driver + consumer { #expect(e.acceptedTokens[token] == 1, "\(token) delivered once") }
        #expect(try worker.metric(#"pushbridge_fcm_waiting_for_room{project="driver-prod"}"#) == 0)
        await expectCleanExit(worker)
        await e.stop()
    }

    @Test("a mapping naming a project the config lacks stops the worker at start, naming the file and line (exit 2)")
    func unknownProjectAtStart() async throws {
        let e = try await EndToEnd(partitions: 1, projects: ["consumer-prod"])
        let mapping = Self.mapping.replacingOccurrences(of: "default: consumer", with: "default: rider")
        try mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let config = try e.config(
            group: "e2e-projects-bad", httpPort: 0, credentials: "projects: {consumer: {service_account: sa-consumer-prod.json}}")
        let (status, output) = try await e.pushbridge(["run", "--config", config], timeout: .seconds(60))
        #expect(status == 2, "\(output)")
        #expect(
            output.contains(#"mappings.yaml:4: event "user.welcome": project default "rider" is not one of fcm.projects (consumer)"#), "\(output)")
        await e.stop()
    }
}

import Foundation
import Mapping
import TestSupport
import Testing

@testable import Pipeline

/// librdkafka's own lines in `pushbridge run`'s log: JSON at their level, and none for a valid
/// config whose `kafka.properties` mixes consumer-only and producer-only properties.
@Suite("librdkafka's lines in the worker's JSON log (tansu, separate worker process)", .serialized)
struct KafkaLogsEndToEndTests {
    /// `fetch.wait.max.ms` is a consumer property, `batch.num.messages` and `acks` producer ones:
    /// each client is given only its own. `topic.metadata.refresh.fast.cnt` is deprecated, so
    /// both clients rightly warn about it: the line that shows where librdkafka's warnings go.
    /// The two warnings are alike (the worker's clients share one ``LogSummary``): one line.
    @Test("a consumer-only and a producer-only property warn nowhere; every line on stderr is JSON; a librdkafka warning is a warning")
    func jsonLinesOnly() async throws {
        let e = try await EndToEnd(partitions: 1)
        let worker = try await e.startWorker(
            group: "e2e-logs",
            kafkaProperties: [
                "fetch.wait.max.ms": "100", "batch.num.messages": "1000", "acks": "all", "topic.metadata.refresh.fast.cnt": "5",
            ])
        try await e.produce(20, prefix: "l")
        #expect(try await e.waitUntilCommitted(group: "e2e-logs"), "\(worker.output.suffix(2000))")
        await expectCleanExit(worker)

        let lines = worker.output.split(separator: "\n")
        let objects = lines.compactMap { line -> [String: String]? in
            guard case .object(let members)? = try? JSONParser.parse(Array(line.utf8)) else { return nil }
            return Dictionary(members.compactMap { m in if case .string(let s) = m.value { (m.key, s) } else { nil } }) { a, _ in a }
        }
        #expect(objects.count == lines.count, "lines that are not JSON: \(lines.filter { !$0.hasPrefix("{") }.prefix(5))")
        #expect(!worker.output.contains("is a consumer property") && !worker.output.contains("is a producer property"))
        let deprecations = objects.filter {
            $0["librdkafka"] == "CONFWARN" && $0["msg"]?.contains("topic.metadata.refresh.fast.cnt is deprecated") == true
        }
        #expect(deprecations.count == 1, "the consumer's and the producer's, alike: \(deprecations)")
        #expect(deprecations.allSatisfy { $0["level"] == "warning" && $0["label"] == "pushbridge" })
        await e.stop()
    }

    /// tansu killed and started again 8 s later, with a summary period of 2 s and librdkafka
    /// reconnecting at least every 500 ms: each failure that repeats (the refused connections,
    /// the commits) is one line when it starts, counts while it lasts, and one line when it ends.
    @Test("a broker outage in the log: one line when a failure starts, a count per period, one line when it ends")
    func brokerOutage() async throws {
        // Durable storage: with tansu's memory storage the restart lost the topic and the
        // group's offsets, and the producer's next record created the topic anew with tansu's
        // default 4 partitions, so what "committed" meant changed under the test (it failed
        // about one run in three).
        let e = try await EndToEnd(partitions: 1, broker: .durableTansu)
        let worker = try await e.startWorker(
            group: "e2e-outage-log", kafkaProperties: ["reconnect.backoff.max.ms": "500"],
            log: "level: info, format: json, summary_period_ms: 2000")
        try await e.produce(10, prefix: "before")
        #expect(try await e.waitUntilCommitted(group: "e2e-outage-log"), "\(worker.output.suffix(2000))")
        let before = worker.output.split(separator: "\n").count
        try await e.restartBroker(downtime: .seconds(8))
        try await e.produce(10, prefix: "after")
        #expect(try await e.waitUntilCommitted(group: "e2e-outage-log"), "\(worker.output.suffix(2000))")
        // Every incident ends within two periods (and a tick) of its last line.
        let deadline = ContinuousClock.now + .seconds(20)
        var incidents = Self.outage(in: worker.output, after: before)
        while ContinuousClock.now < deadline, incidents.contains(where: \.open) {
            try await Task.sleep(for: .milliseconds(250))
            incidents = Self.outage(in: worker.output, after: before)
        }
        let report = worker.output.split(separator: "\n").dropFirst(before).joined(separator: "\n")
        #expect(incidents.contains { $0.counts > 0 }, "some failure repeated for longer than a period: \(report)")
        // A kind whose lines come further apart than two periods (librdkafka's "N/M brokers
        // are down" comes about every 4 s) is rightly several incidents, each told in order.
        for incident in incidents {
            #expect(incident.misordered.isEmpty && !incident.open, "\(incident): \(report)")
        }
        // A connection refused every 500 ms or less is one incident, however long the outage.
        let connects = incidents.filter { $0.kind.contains("Connect to") }
        #expect(
            !connects.isEmpty && connects.allSatisfy { $0.starts == 1 && $0.counts > 0 && $0.ends == 1 },
            "refused connections: \(incidents)")
        // 8 s of a refused connection every 500 ms or less, for the consumer, its group
        // coordinator and the producer, and a failed commit every 200 ms: a few hundred lines
        // unsummarised.
        #expect(report.split(separator: "\n").count < 80, "\(report)")
        await expectCleanExit(worker)
        await e.stop()
    }

    /// One kind of failure, as the log told it: its incidents in order, each a first line,
    /// counts while it lasts and an end line (an incident of one line ends silently).
    struct Incident: CustomStringConvertible {
        var kind: String
        var starts = 0
        var counts = 0
        var ends = 0
        /// An incident started and counted whose end line has not come (yet).
        var open = false
        /// Lines out of order: a count or an end with no incident under way, or a start while
        /// one that counted has not ended.
        var misordered: [String] = []
        /// The last line was a start that has not counted yet (it may end silently).
        private var fresh = false
        var description: String {
            "\(kind): \(starts) start(s), \(counts) count(s), \(ends) end(s)\(open ? ", open" : "")"
                + (misordered.isEmpty ? "" : ", out of order: \(misordered)")
        }

        init(kind: String) { self.kind = kind }

        mutating func start() {
            if open { misordered.append("start #\(starts + 1) before the end of an incident that counted") }
            starts += 1
            (open, fresh) = (false, true)
        }

        mutating func count() {
            if !open && !fresh { misordered.append("count #\(counts + 1) with no incident under way") }
            counts += 1
            (open, fresh) = (true, false)
        }

        mutating func end() {
            if !open && !fresh { misordered.append("end #\(ends + 1) with no incident under way") }
            ends += 1
            (open, fresh) = (false, false)
        }
    }

    /// The worker's lines after the first `skip`, by kind, as the worker tells them apart.
    static func outage(in output: String, after skip: Int) -> [Incident] {
        var incidents: [String: Incident] = [:]
        var order: [String] = []
        for line in output.split(separator: "\n").dropFirst(skip) {
            guard case .object(let members)? = try? JSONParser.parse(Array(line.utf8)) else { continue }
            let fields = Dictionary(members.compactMap { m in if case .string(let s) = m.value { (m.key, s) } else { nil } }) { a, _ in a }
            guard var message = fields["msg"] else { continue }
            let ended = message.hasPrefix("ended: ")
            if ended { message.removeFirst("ended: ".count) }
            let kind = KafkaLogs.kind(of: message)
            if incidents[kind] == nil { order.append(kind) }
            var incident = incidents[kind] ?? Incident(kind: kind)
            if ended {
                incident.end()
            } else if fields["repeated"] != nil {
                incident.count()
            } else {
                incident.start()
            }
            incidents[kind] = incident
        }
        return order.compactMap { incidents[$0] }
    }
}

import Foundation
import Mapping
import TestSupport
import Testing

/// librdkafka's own lines in `pushbridge run`'s log: JSON at their level, and none for a valid
/// config whose `kafka.properties` mixes consumer-only and producer-only properties.
@Suite("librdkafka's lines in the worker's JSON log (tansu, separate worker process)", .serialized)
struct KafkaLogsEndToEndTests {
    /// `fetch.wait.max.ms` is a consumer property, `batch.num.messages` and `acks` producer ones:
    /// each client is given only its own. `topic.metadata.refresh.fast.cnt` is deprecated, so
    /// both clients rightly warn about it: the line that shows where librdkafka's warnings go.
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
        #expect(deprecations.count == 2, "the consumer's and the producer's: \(deprecations)")
        #expect(deprecations.allSatisfy { $0["level"] == "warning" && $0["label"] == "pushbridge" })
        await e.stop()
    }
}

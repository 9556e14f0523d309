import Foundation
import Kafka
import TestSupport
import Testing

/// `pushbridge offsets show|reset` as a separate process.
@Suite("pushbridge offsets (separate process, real broker)", .serialized)
struct OffsetsEndToEndTests {
    /// The whitespace-separated fields of each output line.
    func rows(_ output: String) -> [[String]] {
        output.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
    }

    @Test("show prints committed, high watermark and lag; reset moves the offsets (mock cluster: right watermarks)")
    func showAndReset() async throws {
        let e2e = try await EndToEnd(partitions: 1, broker: .mock)
        try await e2e.produce(20, prefix: "o")
        try await e2e.commit(group: "prod", [0: 15])
        let config = try e2e.config(group: "prod", httpPort: try FreePort.next())

        let show = try await e2e.pushbridge(["offsets", "show", "--config", config])
        #expect(show.status == 0, "\(show.output)")
        #expect(rows(show.output).contains(["TOPIC", "PARTITION", "COMMITTED", "HIGH", "LAG"]))
        #expect(rows(show.output).contains(["events", "0", "15", "20", "5"]), "\(show.output)")
        // A group that committed nothing: everything stored is lag.
        let fresh = try await e2e.pushbridge(["offsets", "show", "--brokers", e2e.bootstrapServers, "--group", "nobody", "--topic", "events"])
        #expect(rows(fresh.output).contains(["events", "0", "-", "20", "20"]), "\(fresh.output)")

        // The mock cluster cannot describe groups: without --force the reset is refused.
        let refused = try await e2e.pushbridge(["offsets", "reset", "--config", config, "--to-offset", "3"])
        #expect(refused.status == 2)
        #expect(refused.output.contains("cannot tell whether group prod has members"), "\(refused.output)")
        #expect(try await e2e.committed(group: "prod") == [0: 15])

        let dry = try await e2e.pushbridge(["offsets", "reset", "--config", config, "--to-earliest", "--dry-run"])
        #expect(dry.status == 0)
        #expect(rows(dry.output).contains(["events", "0", "15", "0"]), "\(dry.output)")
        #expect(dry.output.contains("dry run: nothing committed"))
        #expect(try await e2e.committed(group: "prod") == [0: 15])

        let reset = try await e2e.pushbridge(["offsets", "reset", "--config", config, "--to-offset", "3", "--force"])
        #expect(reset.status == 0, "\(reset.output)")
        #expect(try await e2e.committed(group: "prod") == [0: 3])

        let latest = try await e2e.pushbridge(["offsets", "reset", "--config", config, "--to-latest", "--force"])
        #expect(latest.status == 0, "\(latest.output)")
        #expect(try await e2e.committed(group: "prod") == [0: 20])

        let bad = try await e2e.pushbridge(["offsets", "reset", "--config", config, "--to-offset", "3", "--to-latest", "--force"])
        #expect(bad.status == 2)
        #expect(bad.output.contains("give only one of --to-offset, --to-time, --to-earliest, --to-latest"))
        await e2e.stop()
    }

    @Test("reset is refused while the group has a member, and works once it left (tansu)")
    func refusedWhileActive() async throws {
        let e2e = try await EndToEnd(partitions: 1)
        try await e2e.produce(10, prefix: "m")
        let config = try e2e.config(group: "prod", httpPort: try FreePort.next())

        var memberConfiguration = KafkaConsumerConfiguration(bootstrapServers: [e2e.bootstrapServers], groupID: "prod")
        memberConfiguration.sessionTimeout = .seconds(6)
        let member = try KafkaConsumer(configuration: memberConfiguration)
        try member.subscribe(topics: [e2e.topic])
        #expect(await eventually(timeout: .seconds(60)) { !member.assignment.isEmpty })
        // A worker commits as it goes (tansu lists a group only once it has offsets).
        try await member.commit([TopicPartitionOffset(TopicPartition(topic: e2e.topic, partition: 0), offset: 7)])

        let refused = try await e2e.pushbridge(["offsets", "reset", "--config", config, "--to-earliest"])
        #expect(refused.status == 2)
        #expect(refused.output.contains("group prod has 1 active member(s)"), "\(refused.output)")
        let show = try await e2e.pushbridge(["offsets", "show", "--config", config])
        #expect(show.output.contains("group prod: Stable, 1 member"), "\(show.output)")

        await member.close()
        let observer = try KafkaConsumer(configuration: KafkaConsumerConfiguration(bootstrapServers: [e2e.bootstrapServers]))
        #expect(try await eventually(timeout: .seconds(30)) { try await !observer.describeGroup("prod").isActive })
        await observer.close()

        // (An offset reset is clamped to the high watermark, which tansu reports wrongly.)
        let reset = try await e2e.pushbridge(["offsets", "reset", "--config", config, "--to-earliest"])
        #expect(reset.status == 0, "\(reset.output)")
        let after = try await e2e.committed(group: "prod")
        #expect(after == [0: 0], "\(reset.output)")
        await e2e.stop()
    }
}

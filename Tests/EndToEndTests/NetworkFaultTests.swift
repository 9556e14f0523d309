import Foundation
import ProcessHarness
import TestSupport
import Testing

/// Connections that die without a word: a worker, tansu and the FCM emulator in a network
/// namespace of the test's own (``FaultNetwork``), whose firewall blackholes, drops or refuses
/// chosen connections mid-stream. Each test asserts that delivery recovered long before the
/// kernel would have given up on the connection (15 retransmissions, about 15 minutes), that
/// nothing was lost and that nothing was dead-lettered; the stall it measured is printed as a
/// `name: value` figure (docs/reliability.md).
@Suite(.serialized, .enabled(if: NetworkNamespace.isAvailable, "needs root and iproute2 for network namespaces"))
struct NetworkFaultTests {
    /// Far below the kernel's ~15 minutes; the figures printed are what the defaults achieve.
    static let recoveryBound: Duration = .seconds(60)

    @Test func blackholedFCMConnectionsAreReplaced() async throws {
        let net = try await FaultNetwork()
        let worker = try await net.startWorker()
        let events = 3_750
        let producer = try await net.startProducing(events, prefix: "fcm", rate: 150)
        #expect(await eventually(timeout: .seconds(60)) { net.acceptedMessages().count >= 1_000 })
        let program = try #require(worker.process.programPID)
        let fcm = try await net.connections(of: program, to: net.emulatorPort)
        try #require(!fcm.isEmpty, "the worker holds no connection to the emulator")
        let injected = ContinuousClock.now
        let target = Double(events)  // a new topic: the offsets sum to the events
        async let timeline = net.commitTimeline(worker, timeout: .seconds(120)) { $0 >= target }
        try await net.blackhole(fcm)
        let tokens = try await net.finish(producer)
        let samples = await timeline
        let stall = longestStall(samples, from: injected, target: target)
        print("netfault_fcm_blackhole_stall_seconds: \(stall.seconds)")
        #expect(samples.last?.committed == target, "committed \(samples.last?.committed ?? 0) of \(target)")
        #expect(stall < Self.recoveryBound)
        let accepted = net.accepted()
        #expect(tokens.filter { accepted[$0] == nil }.isEmpty)
        #expect(try await net.metric(worker, "pushbridge_events_total{result=\"dead_lettered\"}") == 0)
        // Each dead connection is one warning naming its host and streams, and counted.
        let warnings = worker.output.split(separator: "\n").filter { $0.contains("closed as dead") }
        let counted = try await net.metric(worker, "pushbridge_dead_connections_total")
        #expect(!warnings.isEmpty && Double(warnings.count) == counted, "\(warnings)")
        #expect(warnings.allSatisfy { $0.contains("\"host\":\"127.0.0.1:\(net.emulatorPort)\"") && $0.contains("\"level\":\"warning\"") })
        await expectCleanExit(worker)
    }
}

extension NetworkFaultTests {
    @Test func blackholedBrokerConnectionsAreReplaced() async throws {
        let net = try await FaultNetwork()
        // The default session timeout (45 s) outlasts a dead connection; a test's usual 6 s would
        // lose the partitions first. 20 s: tansu's first join waits half of it.
        let worker = try await net.startWorker(sessionTimeout: .seconds(20))
        let events = 4_500
        let producer = try await net.startProducing(events, prefix: "kafka", rate: 150)
        #expect(await eventually(timeout: .seconds(60)) { net.acceptedMessages().count >= 1_000 })
        let program = try #require(worker.process.programPID)
        let kafka = try await net.connections(of: program, to: net.brokerPort)
        try #require(!kafka.isEmpty, "the worker holds no connection to the broker")
        let injected = ContinuousClock.now
        let target = Double(events)
        async let timeline = net.commitTimeline(worker, timeout: .seconds(150)) { $0 >= target }
        try await net.blackhole(kafka)
        let tokens = try await net.finish(producer)
        let samples = await timeline
        let stall = longestStall(samples, from: injected, target: target)
        print("netfault_kafka_blackhole_stall_seconds: \(stall.seconds)")
        print(samples.map { "\(($0.at - injected).seconds):\(Int($0.committed))" }.joined(separator: " "))
        #expect(samples.last?.committed == target, "committed \(samples.last?.committed ?? 0) of \(target)")
        #expect(stall < Self.recoveryBound)
        let accepted = net.accepted()
        #expect(tokens.filter { accepted[$0] == nil }.isEmpty)
        #expect(try await net.metric(worker, "pushbridge_events_total{result=\"dead_lettered\"}") == 0)
        print(worker.output.split(separator: "\n").filter { !$0.contains("\"info\"") }.prefix(40).joined(separator: "\n"))
        await expectCleanExit(worker)
    }
}

extension Duration {
    /// In seconds, to a tenth.
    var seconds: Double { ((Double(components.seconds) + Double(components.attoseconds) / 1e18) * 10).rounded() / 10 }
}

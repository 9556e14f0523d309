import Foundation
import ProcessHarness
import TestSupport
import Testing

/// Connections that die without a word: a worker, tansu and the FCM emulator in a network
/// namespace of the test's own (``FaultNetwork``), whose firewall blackholes, drops or refuses
/// chosen connections mid-stream while events come at a steady rate. Each test asserts that
/// delivery recovered long before the kernel would have given up on the connection (15
/// retransmissions, about 15 minutes), that nothing was lost and that nothing was
/// dead-lettered; the longest time committed offsets stood still is printed as a `name: value`
/// figure (docs/reliability.md#network-faults).
@Suite(.serialized, .enabled(if: NetworkNamespace.isAvailable, "needs root, iproute2 and iptables for network namespaces"))
struct NetworkFaultTests {
    /// Far below the kernel's ~15 minutes; the figures printed are what the defaults achieve.
    static let recoveryBound: Duration = .seconds(60)

    /// Produces `events` at `rate` a second to `worker`; once 1,000 are accepted, `inject`s the
    /// fault, then waits until every event is committed. Checks that nothing was lost or
    /// dead-lettered, prints the stall as `name` and returns it.
    @discardableResult
    static func stall(
        _ name: String, _ net: FaultNetwork, _ worker: WorkerProcess, events: Int = 4_500, rate: Double = 150,
        sourceLocation: SourceLocation = #_sourceLocation, inject: () async throws -> Void
    ) async throws -> Duration {
        let producer = try await net.startProducing(events, prefix: name, rate: rate)
        #expect(await eventually(timeout: .seconds(60)) { net.acceptedMessages().count >= 1_000 }, sourceLocation: sourceLocation)
        let injected = ContinuousClock.now
        let target = Double(events)  // a new topic: the offsets sum to the events
        async let timeline = net.commitTimeline(worker, timeout: .seconds(150)) { $0 >= target }
        try await inject()
        let tokens = try await net.finish(producer)
        let samples = await timeline
        let stall = longestStall(samples, from: injected, target: target)
        print("netfault_\(name)_stall_seconds: \(stall.seconds)")
        // On a failure, what the worker said besides info lines, to tell a lost answer from a stuck commit.
        let said = { worker.output.split(separator: "\n").filter { !$0.contains("\"info\"") }.suffix(40).joined(separator: "\n") }
        if samples.last?.committed != target {
            let sends = (try? await net.metric(worker, "pushbridge_sends_in_flight")) ?? -1
            let events = (try? await net.metric(worker, "pushbridge_events_in_flight")) ?? -1
            Issue.record(
                "committed \(samples.last?.committed ?? 0) of \(target); in flight: \(events) events, \(sends) sends\n\(timelineText(samples, from: injected))\n\(said())",
                sourceLocation: sourceLocation)
        }
        #expect(
            stall < recoveryBound,
            "\(timelineText(samples, from: injected))\n\(said())",
            sourceLocation: sourceLocation)
        let accepted = net.accepted()
        #expect(tokens.filter { accepted[$0] == nil }.isEmpty, "lost", sourceLocation: sourceLocation)
        #expect(try await net.metric(worker, "pushbridge_events_total{result=\"dead_lettered\"}") == 0, sourceLocation: sourceLocation)
        return stall
    }

    /// `seconds:committed` samples, for a failure's message.
    static func timelineText(_ samples: [(at: ContinuousClock.Instant, committed: Double)], from: ContinuousClock.Instant) -> String {
        samples.map { "\(($0.at - from).seconds):\(Int($0.committed))" }.joined(separator: " ")
    }

    /// The worker's established connections to `port` now.
    static func connections(_ net: FaultNetwork, of worker: WorkerProcess, to port: Int) async throws -> [TCPSocket] {
        let program = try #require(worker.process.programPID)
        let connections = try await net.connections(of: program, to: port)
        try #require(!connections.isEmpty, "the worker holds no connection to port \(port)")
        return connections
    }

    @Test("FCM connections blackholed mid-stream: closed as dead, their sends go again on new ones")
    func blackholedFCMConnections() async throws {
        let net = try await FaultNetwork()
        let worker = try await net.startWorker()
        try await Self.stall("fcm_blackhole", net, worker) {
            try await net.blackhole(Self.connections(net, of: worker, to: net.emulatorPort))
        }
        // Dead connections to one host are one incident (docs/operations.md, Logs): a warning
        // naming the host and streams when the first is closed, then counts (`repeated`) of
        // those closed since; every one is counted in the metric.
        let warnings = worker.output.split(separator: "\n").filter { $0.contains("closed as dead") }
        let counted = try await net.metric(worker, "pushbridge_dead_connections_total")
        let firsts = warnings.filter { !$0.contains("\"repeated\"") && !$0.contains("ended: ") }
        let repeated = warnings.compactMap { line in
            line.firstRange(of: "\"repeated\":\"").flatMap { Double(line[$0.upperBound...].prefix { $0.isNumber }) }
        }
        #expect(firsts.count == 1 && Double(firsts.count) + repeated.reduce(0, +) <= counted && counted >= 1, "\(counted): \(warnings)")
        #expect(warnings.allSatisfy { $0.contains("\"host\":\"127.0.0.1:\(net.emulatorPort)\"") && $0.contains("\"project\":\"default\"") })
        #expect(firsts.allSatisfy { $0.contains("\"level\":\"warning\"") })
        await expectCleanExit(worker)
    }

    @Test("broker connections blackholed mid-stream: fetches and commits go on new connections, and the worker keeps its partitions")
    func blackholedBrokerConnections() async throws {
        let net = try await FaultNetwork()
        // The default session timeout (45 s) outlasts a dead connection; a test's usual 6 s would
        // lose the partitions first. 20 s: tansu's first join waits half of it.
        let worker = try await net.startWorker(sessionTimeout: .seconds(20))
        try await Self.stall("kafka_blackhole", net, worker) {
            try await net.blackhole(Self.connections(net, of: worker, to: net.brokerPort))
        }
        #expect(!worker.output.contains("\"msg\":\"lost\""), "the worker lost its partitions")
        await expectCleanExit(worker)
    }
}

extension Duration {
    /// In seconds, to a tenth.
    var seconds: Double { ((Double(components.seconds) + Double(components.attoseconds) / 1e18) * 10).rounded() / 10 }
}

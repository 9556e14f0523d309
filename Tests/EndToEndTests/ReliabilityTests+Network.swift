import Foundation
import ProcessHarness
import TestSupport
import Testing

/// The reliability suite's network phase: three workers, tansu and the emulator in a network
/// namespace of their own (``FaultNetwork``), while a seeded schedule makes connections die
/// without a word, drop packets or lose FCM altogether; then the ledger.
extension ReliabilityTests {
    /// The faults of the network phase, one every 3–5 s.
    enum NetworkFault: CaseIterable {
        /// One worker's FCM connections blackholed, for good.
        case fcmBlackhole
        /// One worker's broker connections blackholed, for good.
        case brokerBlackhole
        /// 10% of every packet dropped, both ways, for 5 s.
        case loss
        /// FCM out of reach, new connections too, for 8 s.
        case fcmUnreachable
    }

    @Test(
        "network faults: connections blackholed mid-stream, packet loss and FCM out of reach, three workers: nothing lost, nothing dead-lettered",
        .enabled(if: NetworkNamespace.isAvailable, "needs root, iproute2 and iptables for network namespaces"))
    func networkFaults() async throws {
        let size = Size.current
        let started = ContinuousClock.now
        let net = try await FaultNetwork(partitions: 8)
        var rng = SplitMix64(seed: size.seed ^ 0x4E7)
        var workers: [WorkerProcess] = []
        for _ in 0..<Self.workers {
            workers.append(
                try await net.startWorker(
                    group: Self.group, sessionTimeout: .seconds(20), delivery: Self.delivery.split(separator: "\n").map(String.init)))
        }
        let events = min(size.events, 12_000)
        let faults = 8
        Self.progress("network: \(events) events, \(faults) faults, seed \(size.seed)", since: started)
        let producer = try await net.startProducing(events, prefix: "net", rate: Double(events) / 45)
        try await Task.sleep(for: .seconds(3))

        var injected: [String] = []
        for _ in 0..<faults {
            let worker = workers[Int(rng.next() % UInt64(workers.count))]
            let fault = NetworkFault.allCases[Int(rng.next() % UInt64(NetworkFault.allCases.count))]
            switch fault {
            case .fcmBlackhole, .brokerBlackhole:
                let port = fault == .fcmBlackhole ? net.emulatorPort : net.brokerPort
                if let program = worker.process.programPID {
                    try await net.blackhole(net.connections(of: program, to: port))
                }
            case .loss:
                try await net.dropRandomly(0.1)
                try await Task.sleep(for: .seconds(5))
                try await net.dropRandomly(0.1, false)
            case .fcmUnreachable:
                try await net.unreachable(net.emulatorPort)
                try await Task.sleep(for: .seconds(8))
                try await net.unreachable(net.emulatorPort, false)
            }
            injected.append("\(fault)")
            Self.progress("network fault: \(fault)", since: started)
            try await Task.sleep(for: .milliseconds(Int.random(in: 3_000...5_000, using: &rng)))
        }
        let tokens = try await net.finish(producer)
        Self.progress("faults over; waiting for every offset to be committed", since: started)
        let committed = await eventually(timeout: .seconds(300)) {
            var sum = 0.0
            for w in workers { sum += (try? await net.metric(w, "pushbridge_committed_offset")) ?? 0 }
            return sum >= Double(events)
        }
        #expect(committed, "every produced offset committed:\n\(workers.map { $0.output.suffix(800) }.joined(separator: "\n"))")
        var deadLettered = 0.0
        var deadConnections = 0.0
        for w in workers {
            deadLettered += try await net.metric(w, "pushbridge_events_total{result=\"dead_lettered\"}")
            deadConnections += try await net.metric(w, "pushbridge_dead_connections_total")
        }
        for w in workers { await expectCleanExit(w) }
        let settlement = Ledger(tokens: tokens).settle(accepted: net.accepted(), deadLetters: [])
        let handoffs = workers.reduce(0) { $0 + $1.output.components(separatedBy: #""msg":"lost""#).count - 1 }
        print(
            """
            reliability_network_events: \(events)
            reliability_network_faults: \(injected.joined(separator: ","))
            reliability_network_dead_connections_closed: \(Int(deadConnections))
            reliability_network_partition_handoffs: \(handoffs)
            reliability_network_lost: \(settlement.lost.count)
            reliability_network_duplicates: \(settlement.duplicates)
            reliability_network_dead_lettered: \(Int(deadLettered))
            reliability_network_wall_time_s: \(Int((ContinuousClock.now - started).components.seconds))
            """)
        #expect(settlement.lost.isEmpty, "lost: \(settlement.lost.prefix(20))")
        #expect(deadLettered == 0)
        // Each dead connection, each partition hand-off can resend what was in flight, no more.
        #expect(settlement.duplicates <= max(1, handoffs + Int(deadConnections)) * Self.window)
    }
}

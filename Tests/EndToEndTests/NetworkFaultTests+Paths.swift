import Foundation
import ProcessHarness
import TestSupport
import Testing

/// The other paths a worker depends on: the token endpoint, a lossy network, an egress proxy,
/// and FCM out of reach altogether.
extension NetworkFaultTests {
    @Test("the token endpoint's connection blackholed before a refresh: the refresh goes on a new connection, and sends never wait for a token")
    func blackholedTokenEndpoint() async throws {
        // Tokens live 330 s, so the first is refreshed 30 s after the worker's start (5 min
        // before expiry). Its token_uri names localhost, the sends 127.0.0.1: libcurl keeps a
        // connection of its own for each name, and the only one open before any send is the
        // token endpoint's, idle from then on.
        let net = try await FaultNetwork(emulatorArguments: ["--token-lifetime", "330"])
        let account = try net.serviceAccount(tokenURI: "https://localhost:\(net.emulatorPort)/token")
        let worker = try await net.startWorker(serviceAccount: account)
        #expect(await eventually(timeout: .seconds(30)) { (try? await net.metric(worker, "pushbridge_fcm_access_token_seconds_left")) ?? 0 > 0 })
        let token = try await Self.connections(net, of: worker, to: net.emulatorPort)
        try await Self.stall("token_blackhole", net, worker, events: 7_500) {
            try await net.blackhole(token)
            // The refresh falls due 30 s after the token was fetched. On the thread that holds
            // the dead connection it is sent there, closed as dead within the liveness timeout and
            // tried again on a new connection; on the other libcurl thread it opens one. Either
            // way the token has its whole lifetime back long before the request timeout.
            let left = { (try? await net.metric(worker, "pushbridge_fcm_access_token_seconds_left")) ?? 0 }
            #expect(await eventually(timeout: .seconds(60)) { await left() <= 300 }, "the refresh never fell due")
            let refreshed = await eventually(timeout: .seconds(20)) { await left() > 300 }
            let dead = try await net.metric(worker, "pushbridge_dead_connections_total{host=\"localhost:\(net.emulatorPort)\"}")
            #expect(refreshed, "the token was not refreshed within 20 s of falling due (dead connections: \(dead)): \(worker.output.suffix(1500))")
            #expect(dead <= 1)
        }
        await expectCleanExit(worker)
    }

    @Test("10% of all packets dropped both ways: slower, nothing lost")
    func lossyNetwork() async throws {
        let net = try await FaultNetwork()
        let worker = try await net.startWorker()
        try await Self.stall("loss_10_percent", net, worker) { try await net.dropRandomly(0.1) }
        try await net.heal()
        await expectCleanExit(worker)
    }

    @Test("an egress proxy whose tunnels go silent (its own connections to FCM blackholed): the worker closes its end and tunnels anew")
    func silentProxyTunnel() async throws {
        let net = try await FaultNetwork()
        let proxy = try await net.namespace.perform { [net] in try TinyProxy(allowing: [net.emulatorPort]) }
        let worker = try await net.startWorker(fcm: ["proxy: \(proxy.url)"])
        try await Self.stall("proxy_silent", net, worker) {
            // The proxy's connections to the emulator; the worker's to the proxy stay up.
            let upstream = try await net.connections(to: net.emulatorPort)
            try #require(!upstream.isEmpty, "nothing tunnelled through the proxy: \(proxy.log())")
            try await net.blackhole(upstream)
        }
        #expect(try await net.metric(worker, "pushbridge_dead_connections_total") >= 1)
        #expect(try proxy.connectRequests().count >= 2, "no new tunnel: \(proxy.log())")
        await expectCleanExit(worker)
    }

    @Test("FCM out of reach for 15 s (new connections too): /readyz says the worker waits on FCM, then every event goes out")
    func fcmUnreachable() async throws {
        let net = try await FaultNetwork()
        let worker = try await net.startWorker()
        try await Self.stall("fcm_unreachable_15s", net, worker) {
            try await net.unreachable(net.emulatorPort)
            let stalledLooksStalled = await eventually(timeout: .seconds(15)) {
                (try? await net.get(worker, "/readyz")).map { $0.status == 503 && $0.body.contains("waiting on FCM") } ?? false
            }
            #expect(stalledLooksStalled, "/readyz never said the worker was waiting on FCM")
            try await Task.sleep(for: .seconds(15))
            try await net.heal()
            #expect(await eventually(timeout: .seconds(60)) { (try? await net.get(worker, "/readyz"))?.status == 200 })
        }
        await expectCleanExit(worker)
    }
}

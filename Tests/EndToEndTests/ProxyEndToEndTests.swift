import FCMEmulator
import Foundation
import TestSupport
import Testing

/// `pushbridge run` behind a real egress proxy (tinyproxy), given to it the way most networks
/// do: `HTTPS_PROXY` in its environment.
@Suite("pushbridge run behind an egress proxy (the mock cluster, the emulator, tinyproxy)", .serialized)
struct ProxyEndToEndTests {
    @Test("with HTTPS_PROXY set, every event is delivered through the proxy, which the startup log names")
    func throughHTTPSProxy() async throws {
        let e = try await EndToEnd(broker: .mock)
        let proxy = try await TinyProxy.start(allowing: [e.emulator.port])
        let worker = try await e.startWorker(group: "e2e-proxy", environment: ["HTTPS_PROXY": proxy.url, "NO_PROXY": "example.com"])
        let tokens = try await e.produce(50, prefix: "px")
        #expect(try await e.waitUntilCommitted(group: "e2e-proxy"), "\(worker.output.suffix(2000))")
        #expect(try worker.metric("pushbridge_sends_total{result=\"ok\"}") == 50)
        await expectCleanExit(worker)
        #expect(e.acceptedTokens == Dictionary(uniqueKeysWithValues: tokens.map { ($0, 1) }))
        // The token exchange and the sends: tunnels to the emulator and nothing else.
        let connects = try proxy.connectRequests()
        #expect(!connects.isEmpty && connects.allSatisfy { $0 == "127.0.0.1:\(e.emulator.port)" }, "\(proxy.log())")
        let started = worker.output.split(separator: "\n").first { $0.contains(#""msg":"started""#) } ?? ""
        #expect(started.contains("http://127.0.0.1:\(proxy.port) (from HTTPS_PROXY), not for example.com"), "\(started)")
        await e.stop()
    }

    /// libcurl would read `HTTPS_PROXY` by itself; the worker's HTTP client tells it not to, so
    /// `fcm.proxy: off` holds even for a proxy that is down.
    @Test("fcm.proxy off (here PUSHBRIDGE_FCM_PROXY=off) ignores an HTTPS_PROXY that points nowhere")
    func proxyOff() async throws {
        let e = try await EndToEnd(broker: .mock)
        let nowhere = "http://127.0.0.1:\(try FreePort.next())"
        let worker = try await e.startWorker(group: "e2e-no-proxy", environment: ["HTTPS_PROXY": nowhere, "PUSHBRIDGE_FCM_PROXY": "off"])
        let tokens = try await e.produce(20, prefix: "direct")
        #expect(try await e.waitUntilCommitted(group: "e2e-no-proxy"), "\(worker.output.suffix(2000))")
        await expectCleanExit(worker)
        #expect(e.acceptedTokens == Dictionary(uniqueKeysWithValues: tokens.map { ($0, 1) }))
        #expect(worker.output.contains("none (fcm.proxy: off)"), "\(worker.output.prefix(2000))")
        await e.stop()
    }
}

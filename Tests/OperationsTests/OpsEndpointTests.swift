import CoreMetrics
import Foundation
import Logging
import Operations
import Synchronization
import TestSupport
import Testing

@Suite("/metrics, /healthz, /readyz over a real socket; log lines")
struct OpsEndpointTests {
    @Test("the endpoint serves Prometheus text, health and readiness with its reason")
    func endpoints() async throws {
        let metrics = MetricsSetup()
        let counter = metrics.factory.makeCounter(label: "pushbridge_events_consumed_total", dimensions: [("topic", "events")])
        counter.increment(by: 42)
        let timer = metrics.factory.makeTimer(label: "pushbridge_send_latency_seconds", dimensions: [])
        timer.recordNanoseconds(30_000_000)
        let ready = Mutex(false)
        let server = OpsHTTPServer(
            host: "127.0.0.1", port: 0, metrics: { metrics.exposition() },
            readiness: {
                ready.withLock { $0 } ? (true, "consuming 4 partitions") : (false, "no FCM access token yet")
            })
        try await server.start()
        let port = try #require(server.boundPort)
        let m = try HTTPGet.get(port: port, path: "/metrics")
        #expect(m.status == 200)
        #expect(m.body.contains(#"pushbridge_events_consumed_total{topic="events"} 42"#), "\(m.body)")
        #expect(m.body.contains(#"pushbridge_send_latency_seconds_bucket{le="0.05"} 1"#), "\(m.body)")
        #expect(m.body.contains(#"pushbridge_send_latency_seconds_bucket{le="0.025"} 0"#))
        #expect(try HTTPGet.get(port: port, path: "/healthz") == (200, "ok\n"))
        #expect(try HTTPGet.get(port: port, path: "/readyz") == (503, "no FCM access token yet\n"))
        ready.withLock { $0 = true }
        #expect(try HTTPGet.get(port: port, path: "/readyz") == (200, "consuming 4 partitions\n"))
        #expect(try HTTPGet.get(port: port, path: "/nope").status == 404)
        await server.stop()
        #expect(throws: (any Error).self) { try HTTPGet.get(port: port, path: "/healthz") }
    }

    @Test("JSON log lines carry metadata as keys, with device tokens cut to their last 6 characters")
    func jsonLogs() throws {
        let lines = Mutex<[String]>([])
        var logger = Logger(label: "pushbridge") { LineLogHandler(label: $0, format: .json, sink: { line in lines.withLock { $0.append(line) } }) }
        logger.logLevel = .info
        logger.warning(
            "device refused",
            metadata: [
                "token": "fcm-registration-token-abcdef", "device_token": "xyz", "fid": "cYz5ANl0QjePd9BlxiXjt8", "code": "UNREGISTERED",
            ])
        logger.debug("not shown")
        let logged = lines.withLock { $0 }
        #expect(logged.count == 1)
        let json = try JSONSerialization.jsonObject(with: Data(logged[0].utf8)) as? [String: String]
        #expect(json?["level"] == "warning" && json?["label"] == "pushbridge" && json?["msg"] == "device refused")
        #expect(json?["token"] == "…abcdef" && json?["device_token"] == "…" && json?["code"] == "UNREGISTERED")
        #expect(json?["fid"] == "…xiXjt8" && !logged[0].contains("cYz5ANl0"), "an FID is personal data too")
        #expect(json?["ts"]?.hasSuffix("Z") == true)
        #expect(!logged[0].contains("fcm-registration"))
    }

    @Test("text log lines redact the same way")
    func textLogs() {
        let lines = Mutex<[String]>([])
        let logger = Logger(label: "pushbridge") { LineLogHandler(label: $0, format: .text, sink: { line in lines.withLock { $0.append(line) } }) }
        logger.info("sent", metadata: ["token": "abcdefghijkl"])
        #expect(lines.withLock { $0 }.first?.hasSuffix("info pushbridge: sent token=…ghijkl") == true)
        #expect(Redaction.token("123456") == "…" && Redaction.token("1234567") == "…234567")
    }
}

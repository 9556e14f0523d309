import HTTP2
import ProcessHarness

/// `inFlight` tasks (default: `streams`) each send FCM-shaped POSTs back to back through one
/// ``HTTP2Client`` whose connections take `streams` streams each; more tasks than streams open
/// more connections. Also the process's peak RSS, for the memory a request in flight costs.
enum HTTP2Benchmark {
    static func run(url: String, caFile: String, requests: Int, streams: Int, inFlight: Int? = nil) async throws -> [(name: String, value: Double)] {
        var config = HTTP2Client.Configuration(caFile: caFile)
        config.maxConcurrentStreams = streams
        let tasks = inFlight ?? streams
        let client = try HTTP2Client(configuration: config)
        let body = Array(
            #"{"message":{"token":"bk3RNwTe3H0:CI2k_HHwgIpoDKCIZvvDMExUdFQ3P1","android":{"notification":{"title_loc_key":"welcome_title","title_loc_args":["Alice"]}}}}"#
                .utf8)
        let request = HTTPRequest(url: url, headers: ["content-type": "application/json", "authorization": "Bearer bench"], body: body)
        _ = try await client.send(request)  // connect and negotiate h2 outside the timing

        let perTask = max(1, requests / tasks)
        let start = ContinuousClock.now
        let latencies = try await withThrowingTaskGroup(of: [Duration].self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    var own: [Duration] = []
                    own.reserveCapacity(perTask)
                    for _ in 0..<perTask {
                        let t = ContinuousClock.now
                        let response = try await client.send(request)
                        guard response.status == 200 else { throw BenchError("status \(response.status)") }
                        own.append(ContinuousClock.now - t)
                    }
                    return own
                }
            }
            return try await group.reduce(into: [Duration]()) { $0 += $1 }.sorted()
        }
        let seconds = KafkaBenchmark.seconds(ContinuousClock.now - start)
        await client.shutdown()
        func ms(_ p: Double) -> Double { KafkaBenchmark.seconds(latencies[Int(Double(latencies.count - 1) * p)]) * 1000 }
        return [
            ("http2_requests_per_second", Double(latencies.count) / seconds),
            ("http2_latency_p50_ms", ms(0.5)),
            ("http2_latency_p99_ms", ms(0.99)),
            ("http2_peak_rss_mb", procStatusMegabytes("VmHWM:")),
        ]
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

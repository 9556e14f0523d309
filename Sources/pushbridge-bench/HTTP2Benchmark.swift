import HTTP2
import ProcessHarness
import Synchronization

/// `inFlight` tasks (default: `streams`) each send FCM-shaped POSTs back to back through one
/// ``HTTP2Client`` whose connections take `streams` streams each; more tasks than streams open
/// more connections. Also the process's peak RSS, for the memory a request in flight costs, and
/// its CPU per request (all threads, and libcurl's alone).
///
/// With `rate`, that many requests a second instead, whatever their answer time (open loop), as
/// a worker at partial load sends them: the CPU a request costs when answers do not batch.
enum HTTP2Benchmark {
    static func run(
        url: String, caFile: String, requests: Int, streams: Int, inFlight: Int? = nil, rate: Double? = nil, engine name: String = "libcurl"
    ) async throws -> [(name: String, value: Double)] {
        var config = HTTP2Client.Configuration(caFile: caFile)
        guard let engine = HTTP2Client.Engine(rawValue: name) else { throw BenchError("--engine: libcurl or nghttp2, not \(name)") }
        config.engine = engine
        config.maxConcurrentStreams = streams
        let tasks = inFlight ?? streams
        let client = try HTTP2Client(configuration: config)
        let body = Array(
            #"{"message":{"token":"bk3RNwTe3H0:CI2k_HHwgIpoDKCIZvvDMExUdFQ3P1","android":{"notification":{"title_loc_key":"welcome_title","title_loc_args":["Alice"]}}}}"#
                .utf8)
        let request = HTTPRequest(url: url, headers: ["content-type": "application/json", "authorization": "Bearer bench"], body: body)
        _ = try await client.send(request)  // connect and negotiate h2 outside the timing
        let cpuBefore = procCPUSeconds()
        let threadsBefore = procThreadCPUSeconds(pid: "self")

        let start = ContinuousClock.now
        let latencies: [Duration]
        if let rate {
            latencies = try await openLoop(client: client, request: request, requests: requests, rate: rate)
        } else {
            latencies = try await closedLoop(client: client, request: request, requests: requests, tasks: tasks)
        }
        let seconds = KafkaBenchmark.seconds(ContinuousClock.now - start)
        let cpu = procCPUSeconds() - cpuBefore
        // The client's own threads: libcurl's (pb.http2) or the nghttp2 engine's (pb.h2).
        let thread = engine == .libcurl ? "pb.http2" : "pb.h2"
        let clientCPU = procThreadCPUSeconds(pid: "self")[thread, default: 0] - threadsBefore[thread, default: 0]
        let connections = client.connectionsOpened
        await client.shutdown()
        func ms(_ p: Double) -> Double { KafkaBenchmark.seconds(latencies[Int(Double(latencies.count - 1) * p)]) * 1000 }
        // libcurl's figures keep their names; the nghttp2 engine's say so (http2_nghttp2_…).
        let prefix = engine == .libcurl ? "http2_" : "http2_\(engine.rawValue)_"
        return [
            ("requests_per_second", Double(latencies.count) / seconds),
            ("latency_p50_ms", ms(0.5)),
            ("latency_p99_ms", ms(0.99)),
            ("cpu_us_per_request", cpu * 1e6 / Double(latencies.count)),
            (engine == .libcurl ? "curl_thread_cpu_us_per_request" : "engine_thread_cpu_us_per_request", clientCPU * 1e6 / Double(latencies.count)),
            ("connections_opened", Double(connections)),
            ("peak_rss_mb", procStatusMegabytes("VmHWM:")),
        ].map { (prefix + $0.0, $0.1) }
    }

    /// `tasks` tasks each sending back to back.
    private static func closedLoop(client: HTTP2Client, request: HTTPRequest, requests: Int, tasks: Int) async throws -> [Duration] {
        let perTask = max(1, requests / tasks)
        return try await withThrowingTaskGroup(of: [Duration].self) { group in
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
    }

    /// `rate` requests a second begun without a task (``HTTP2Client/start(_:completion:)``), a
    /// batch every 5 ms, as a worker at partial load begins the sends of each fetch.
    private static func openLoop(client: HTTP2Client, request: HTTPRequest, requests: Int, rate: Double) async throws -> [Duration] {
        let answers = Mutex<(latencies: [Duration], failure: String?)>(([], nil))
        let (done, finish) = AsyncStream.makeStream(of: Void.self)
        let tick = Duration.milliseconds(5)
        let begin = ContinuousClock.now
        var sent = 0
        var next = begin
        while sent < requests {
            let due = min(requests, Int((KafkaBenchmark.seconds(next - begin) + 0.005) * rate))
            while sent < due {
                let t = ContinuousClock.now
                client.start(request) { result in
                    let elapsed = ContinuousClock.now - t
                    let count = answers.withLock { a in
                        switch result {
                        case .success(let response) where response.status == 200: break
                        case .success(let response): a.failure = a.failure ?? "status \(response.status)"
                        case .failure(let error): a.failure = a.failure ?? "\(error)"
                        }
                        a.latencies.append(elapsed)
                        return a.latencies.count
                    }
                    if count == requests { finish.yield() }
                }
                sent += 1
            }
            next += tick
            try await Task.sleep(until: next)
        }
        for await _ in done { break }
        let (latencies, failure) = answers.withLock { ($0.latencies, $0.failure) }
        if let failure { throw BenchError(failure) }
        return latencies.sorted()
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import Foundation
import ProcessHarness

/// tansu → `pushbridge run` with default settings → an FCM stand-in that answers each send after
/// 0, 20, 100 or 300 ms and allows 100 streams per connection (nginx, `nginx-fcm-latency.conf`).
///
/// For each answer time, two runs of a fresh worker:
/// - **saturated**: N events produced first; events/s from the first consumed to the last
///   finished, and steady (between the 20% and the 80% of them finished: without the ramp and
///   the tail, which take about an answer time each), the worker's CPU per event, connections
///   it opened (the stub's accepted count), its threads at most, its peak RSS; and over the same
///   interval the stub's CPU per event and how busy the machine was (the worker shares its cores
///   with the stub, tansu and the bench);
/// - **partial**: events produced at a fixed rate (2,000/s): CPU per event over the same
///   interval, p99 produce → FCM acknowledged, connections;
/// - **capped** (with `cap`): `cap × capSeconds` events produced first, a worker with
///   `fcm.max_sends_per_second: cap`; from the stub's log of when each send arrived: the rate FCM
///   saw, and the most sends in any 1 s and any 100 ms, as a percentage of the cap.
enum LatencySweepBenchmark {
    struct Options {
        var bootstrap: String
        var worker: String
        var directory: String
        var base: String
        var caFile: String
        var serviceAccount: String
        var events: Int
        /// Stub paths: `0`, `20`, … answer after that many ms (`/dN/`); `r0` is nginx's cheapest
        /// answer (`return 200`, the body not read), for comparison with figures from before.
        var delays: [String]
        var partialRate: Int
        var partialSeconds: Int
        /// The stub's pid file (nginx's master); its workers' CPU is reported per event.
        var stubPIDFile: String?
        /// The capped run's `fcm.max_sends_per_second` (none: no capped run) and length.
        var cap: Int?
        var capSeconds = 10
        /// Where the stub logs the arrivals of sends to `/c/dN/` (`nginx-fcm-latency.conf`).
        var arrivalLog: String { "\(directory)/capped-arrivals.log" }
    }

    static func run(_ o: Options) async throws -> [(name: String, value: Double)] {
        var figures: [(name: String, value: Double)] = []
        var zero: (whole: Double, steady: Double)?
        // The other answer times' rates, set against 0 ms's at the end: 0 ms may run after them
        // (`LATENCY_BENCH_DELAYS=300,0`, to alternate the order between rounds).
        var rates: [(name: String, whole: Double, steady: Double)] = []
        for delay in o.delays {
            let name = Int(delay) != nil ? "d\(delay)" : delay
            let saturated = try setup(o, delay: delay, run: "saturated")
            let accepted0 = try acceptedConnections(o)
            var result = try await throughput(saturated, events: o.events, stub: o.stubPIDFile)
            let opened = try acceptedConnections(o) - accepted0
            let rate = result.removeFirst().value
            let steady = result.removeFirst().value
            if delay == "0" { zero = (rate, steady) } else { rates.append((name, rate, steady)) }
            figures.append(("sweep_\(name)_events_per_second", rate))
            figures.append(("sweep_\(name)_steady_events_per_second", steady))
            figures += result.map { ("sweep_\(name)_\($0.name)", $0.value) }
            figures.append(("sweep_\(name)_connections_opened", opened))

            let partial = try setup(o, delay: delay, run: "partial")
            let before = try acceptedConnections(o)
            let p = try await partialLoad(partial, rate: o.partialRate, seconds: o.partialSeconds, stub: o.stubPIDFile)
            figures += p.map { ("sweep_\(name)_\(o.partialRate)_\($0.name)", $0.value) }
            figures.append(("sweep_\(name)_\(o.partialRate)_connections_opened", try acceptedConnections(o) - before))

            // The stub logs arrivals under /c/dN/ only (r0 has no such path).
            if let cap = o.cap, Int(delay) != nil {
                let capped = try setup(o, delay: delay, run: "capped", maxSendsPerSecond: cap)
                let c = try await cappedRate(capped, cap: cap, seconds: o.capSeconds, arrivals: o.arrivalLog)
                figures += c.map { ("sweep_\(name)_cap_\($0.name)", $0.value) }
            }
        }
        if let zero {
            for r in rates {
                figures.append(("sweep_\(r.name)_percent_of_d0", r.whole / zero.whole * 100))
                figures.append(("sweep_\(r.name)_steady_percent_of_d0", r.steady / zero.steady * 100))
            }
        }
        return figures
    }

    static func setup(_ o: Options, delay: String, run: String, maxSendsPerSecond: Int? = nil) throws -> EndToEndBenchmark.Setup {
        let path = Int(delay) != nil ? "d\(delay)" : delay
        return try EndToEndBenchmark.prepare(
            directory: o.directory, bootstrap: o.bootstrap, topic: "sweep-\(path)-\(run)", worker: o.worker,
            endpoint: "\(o.base)/\(maxSendsPerSecond == nil ? "" : "c/")\(path)", caFile: o.caFile, serviceAccount: o.serviceAccount,
            group: "sweep-\(path)-\(run)", maxSendsPerSecond: maxSendsPerSecond)
    }

    /// Capped: `cap × seconds` events waiting, a worker capped at `cap` sends/s. From the sends'
    /// arrivals at the stub: the rate from the first to the last, and the most in any 1 s and any
    /// 100 ms window, each as a percentage of the cap (the cap lets 20 ms worth start at once,
    /// `RateSchedule`, so a 100 ms window may hold up to 120%).
    static func cappedRate(_ s: EndToEndBenchmark.Setup, cap: Int, seconds: Int, arrivals: String) async throws -> [(name: String, value: Double)] {
        let events = cap * seconds
        _ = try await EndToEndBenchmark.produce(s, count: events, rate: nil)
        let logged = { (try? String(contentsOfFile: arrivals, encoding: .utf8))?.split(separator: "\n") ?? [] }
        let before = logged().count
        let worker = try WorkerProcess.start(s)
        defer { worker.stop() }
        _ = try await EndToEndBenchmark.drain(worker, events: events, timeout: .seconds(seconds * 3 + 120))
        // nginx writes a send's line as it answers it, so they are all in moments after the last answer.
        var lines = logged().dropFirst(before)
        let deadline = ContinuousClock.now + .seconds(5)
        while lines.count < events, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            lines = logged().dropFirst(before)
        }
        // "$msec $request_time": answered at, seconds since the first byte.
        let times = lines.compactMap { line -> Double? in
            let f = line.split(separator: " ")
            guard f.count == 2, let end = Double(f[0]), let took = Double(f[1]) else { return nil }
            return end - took
        }.sorted()
        guard times.count >= events, let first = times.first, let last = times.last, last > first else {
            throw BenchError("the stub logged \(times.count) of \(events) capped sends: \(worker.logTail())")
        }
        let rate = Double(times.count - 1) / (last - first)
        if ProcessInfo.processInfo.environment["SWEEP_TRACE"] == "1" {
            // SWEEP_TRACE=1: the sends that arrived in each 100 ms from the first.
            var counts = [Int](repeating: 0, count: Int((last - first) * 10) + 1)
            for t in times { counts[Int((t - first) * 10)] += 1 }
            FileHandle.standardError.write(Data("trace: capped arrivals per 100 ms: \(counts.map(String.init).joined(separator: " "))\n".utf8))
        }
        return [
            ("sends_per_second", rate),
            ("percent_of_cap", rate / Double(cap) * 100),
            ("max_1s_percent_of_cap", Double(mostIn(window: 1, times)) / Double(cap) * 100),
            ("max_100ms_percent_of_cap", Double(mostIn(window: 0.1, times)) / (Double(cap) / 10) * 100),
        ]
    }

    /// The most of the sorted `times` within any window of `window` seconds.
    static func mostIn(window: Double, _ times: [Double]) -> Int {
        var most = 0
        var start = 0
        for (i, t) in times.enumerated() {
            while t - times[start] >= window { start += 1 }
            most = max(most, i - start + 1)
        }
        return most
    }

    /// Saturated: events/s, then CPU per event, threads, peak RSS, the stub's CPU per event and the
    /// machine's busy share.
    static func throughput(_ s: EndToEndBenchmark.Setup, events: Int, stub: String?) async throws -> [(name: String, value: Double)] {
        _ = try await EndToEndBenchmark.produce(s, count: events, rate: nil)
        let worker = try WorkerProcess.start(s)
        defer { worker.stop() }
        var threads = 0.0
        var peakAnonymous = 0.0
        // SWEEP_TRACE=1: the worker's sends in flight, their limit and its connections, each second.
        let trace = ProcessInfo.processInfo.environment["SWEEP_TRACE"] == "1"
        let traceEvery = Duration.milliseconds(Int(ProcessInfo.processInfo.environment["SWEEP_TRACE_MS"] ?? "") ?? 1000)
        var nextTrace = ContinuousClock.now
        let traceStart = ContinuousClock.now
        var stubCPU0 = 0.0
        var threads0: [String: Double] = [:]
        var machine0 = (busy: 0.0, total: 0.0)
        // When 20% and 80% of the events had finished: the rate between them is the steady one,
        // without the ramp (the first answers take an answer time, sends in flight and
        // connections grow to what it calls for) and the tail (the last answers, an answer time
        // after the last sends).
        var steadyFrom: (at: ContinuousClock.Instant, done: Double)?
        var steadyTo: (at: ContinuousClock.Instant, done: Double)?
        let (elapsed, cpu) = try await EndToEndBenchmark.drain(
            worker, events: events, timeout: .seconds(900),
            started: {
                threads0 = worker.threadCPUSeconds()
                stubCPU0 = stubCPUSeconds(stub)
                machine0 = machineCPUTicks()
            },
            sample: { m in
                threads = max(threads, worker.threadCount())
                peakAnonymous = max(peakAnonymous, worker.anonymousRSSMegabytes())
                let done = WorkerProcess.sum("pushbridge_events_total", in: m)
                if steadyFrom == nil, done >= 0.2 * Double(events) { steadyFrom = (.now, done) }
                if steadyTo == nil, done >= 0.8 * Double(events) { steadyTo = (.now, done) }
                guard trace, ContinuousClock.now >= nextTrace else { return }
                nextTrace = .now + traceEvery
                let names = [
                    "pushbridge_events_total", "pushbridge_sends_in_flight", "pushbridge_fcm_sends_in_flight_limit", "pushbridge_fcm_connections",
                    "pushbridge_events_in_flight", "pushbridge_partitions_paused",
                ]
                let line = names.map { "\($0.dropFirst(11))=\(Int(WorkerProcess.sum($0, in: m)))" }.joined(separator: " ")
                FileHandle.standardError.write(
                    Data("trace: t_ms=\(Int((ContinuousClock.now - traceStart).milliseconds)) \(line) rss_mb=\(Int(worker.rssMegabytes()))\n".utf8))
            })
        let stubCPU = stubCPUSeconds(stub) - stubCPU0
        traceThreadCPU(worker, since: threads0, events: events, run: "saturated")
        let machine = machineCPUTicks()
        let steady = steadyFrom.flatMap { from in
            steadyTo.map { to in (to.done - from.done) / max(1e-9, KafkaBenchmark.seconds(to.at - from.at)) }
        }
        var figures = [
            ("events_per_second", Double(events) / elapsed),
            ("steady_events_per_second", steady ?? Double(events) / elapsed),
            ("cpu_us_per_event", cpu * 1e6 / Double(events)),
            ("threads", threads),
            ("peak_rss_mb", worker.peakRSSMegabytes()),
            // Sampled with each metrics read (about every 20 ms): the part of the peak that is the
            // worker's own (heap, stacks), not its executable's and libraries' pages.
            ("peak_anonymous_rss_mb", peakAnonymous),
            ("machine_busy_percent", (machine.busy - machine0.busy) / max(1, machine.total - machine0.total) * 100),
        ]
        if stub != nil { figures.append(("stub_cpu_us_per_event", stubCPU * 1e6 / Double(events))) }
        return figures
    }

    /// SWEEP_THREAD_CPU=1: the worker's CPU per event by thread name since `before`, on stderr
    /// (its libcurl thread, librdkafka's, the pool's: where partial load spends more).
    static func traceThreadCPU(_ worker: WorkerProcess, since before: [String: Double], events: Int, run: String) {
        guard ProcessInfo.processInfo.environment["SWEEP_THREAD_CPU"] == "1" else { return }
        let now = worker.threadCPUSeconds()
        let parts = now.map { ($0.key, ($0.value - (before[$0.key] ?? 0)) * 1e6 / Double(events)) }
            .filter { $0.1 >= 0.5 }.sorted { $0.1 > $1.1 }
            .map { "\($0.0)=\(String(format: "%.1f", $0.1))" }
        FileHandle.standardError.write(Data("threads (\(run), CPU µs/event): \(parts.joined(separator: " "))\n".utf8))
    }

    /// CPU seconds of the stub's worker processes (the children of the master in `pidFile`).
    static func stubCPUSeconds(_ pidFile: String?) -> Double {
        guard let pidFile, let text = try? String(contentsOfFile: pidFile, encoding: .utf8) else { return 0 }
        let master = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return procChildren(pid: master).map { procCPUSeconds(pid: $0) }.reduce(0, +)
    }

    /// A fixed rate: CPU per event while producing, p99 produce → acknowledged.
    static func partialLoad(_ s: EndToEndBenchmark.Setup, rate: Int, seconds: Int, stub: String?) async throws -> [(name: String, value: Double)] {
        let worker = try await WorkerProcess.startConsuming(s)
        defer { worker.stop() }
        let count = rate * seconds
        let cpu0 = worker.cpuSeconds()
        let threads0 = worker.threadCPUSeconds()
        let stubCPU0 = stubCPUSeconds(stub)
        let ends = try await EndToEndBenchmark.produce(s, count: count, rate: rate)
        let deadline = ContinuousClock.now + .seconds(120)
        while ((try? worker.metric("pushbridge_events_total")) ?? 0) < Double(count), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let cpu = worker.cpuSeconds() - cpu0
        let stubCPU = stubCPUSeconds(stub) - stubCPU0
        traceThreadCPU(worker, since: threads0, events: count, run: "partial")
        let buckets = worker.histogram("pushbridge_delivery_lag_seconds")
        guard let total = buckets.last?.count, total >= Double(count) else {
            // Where the rest are: read by the worker or not, in flight, paused.
            let m = (try? worker.get("/metrics").body) ?? ""
            let state = [
                "pushbridge_events_consumed_total", "pushbridge_events_in_flight", "pushbridge_sends_in_flight", "pushbridge_partitions_paused",
            ].map { "\($0)=\(Int(WorkerProcess.sum($0, in: m)))" }.joined(separator: " ")
            let committed = (try? await EndToEndBenchmark.committed(s, partitions: Array(ends.keys))) ?? [:]
            throw BenchError(
                "\(buckets.last?.count ?? 0) of \(count) events finished (\(state); the topic's ends \(ends.sorted { $0.key < $1.key }), "
                    + "committed \(committed.sorted { $0.key < $1.key })): \(worker.logTail())")
        }
        var figures = [
            ("cpu_us_per_event", cpu * 1e6 / Double(count)),
            ("p99_ms", EndToEndBenchmark.quantile(0.99, buckets) * 1000),
            ("threads", worker.threadCount()),
        ]
        if stub != nil { figures.append(("stub_cpu_us_per_event", stubCPU * 1e6 / Double(count))) }
        return figures
    }

    /// Connections the stub has accepted so far (nginx `stub_status`).
    static func acceptedConnections(_ o: Options) throws -> Double {
        // PipedCommand, not Foundation's Process, whose run() can crash this process (PipedCommand says why).
        let status = try PipedCommand.run("/usr/bin/curl", ["-s", "--cacert", o.caFile, "\(o.base)/nginx_status"])
        let text = String(decoding: status.output, as: UTF8.self)
        // "Active connections: 1 \n server accepts handled requests\n 12 12 340 \n…"
        let lines = text.split(separator: "\n")
        guard lines.count >= 3, let accepts = lines[2].split(separator: " ").first.flatMap({ Double($0) }) else {
            throw BenchError("cannot read the stub's status: \(text)")
        }
        return accepts
    }
}

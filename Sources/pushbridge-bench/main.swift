// pushbridge-bench: prints benchmark figures as `name: value` lines.
// Run through scripts/bench.sh, which builds in release mode and starts the servers.
import Foundation

let usage = """
    usage: pushbridge-bench kafka --bootstrap HOST:PORT --topic NAME [--messages N] [--value-size BYTES]
           pushbridge-bench http2 --url URL --ca FILE [--requests N] [--streams N] [--in-flight N] [--rate N] [--engine libcurl|nghttp2]
           pushbridge-bench mapping [--events N] [--rounds N] [--format json|avro|protobuf]
           pushbridge-bench dates [--lookups N] [--rounds N]
           pushbridge-bench flow-control [--events N] [--rounds N]
           pushbridge-bench rules [--events N] [--rounds N] [--case NAME]
           pushbridge-bench rekey --bootstrap HOST:PORT --topics SOURCE,BY_SUBJECT,CHANGELOG [--events N] [--users N] [--broker-pid PID]
           pushbridge-bench rules-store --dir DIR [--notifications N] [--batch N] [--queries N] [--cache-mb N]
           pushbridge-bench rules-restore --bootstrap HOST:PORT --topic CHANGELOG --dir DIR [--notifications N]
           pushbridge-bench timers --bootstrap HOST:PORT --topic TIMERS [--timers N] [--rate N] [--lead SECONDS] [--levels N] [--buckets N]
           pushbridge-bench timers-write --bootstrap HOST:PORT --topic TIMERS --timers N [--levels N] [--buckets N]
           pushbridge-bench timers-pending --bootstrap HOST:PORT --topic TIMERS --timers N [--levels N] [--buckets N]
                                [--settle SECONDS] [--idle SECONDS] [--broker-pid PID] [--consumer-properties KEY=VALUE,…]
           pushbridge-bench fcm --url BASE --ca FILE --service-account FILE [--sends N] [--concurrency N] [--rounds N] [--connections N]
           pushbridge-bench fcm-emulator [--sends N] [--concurrency N] [--rounds N]
           pushbridge-bench e2e --bootstrap HOST:PORT --topic NAME --worker PUSHBRIDGE --dir DIR [--outcomes TOPIC]
                                --endpoint URL --ca FILE --service-account FILE [--events N] [--tracing-ratio R] [--prefix NAME_]
           pushbridge-bench e2e-latency (the same options as e2e) [--rate N] [--seconds N]
           pushbridge-bench e2e-sweep --bootstrap HOST:PORT --worker PUSHBRIDGE --dir DIR --base URL --ca FILE
                                --service-account FILE [--events N] [--delays r0,0,20,100,300] [--partial-rate N] [--partial-seconds N]
                                [--stub-pid-file FILE] [--cap SENDS_PER_SECOND] [--cap-seconds N]
           pushbridge-bench peer --bootstrap HOST:PORT --worker PUSHBRIDGE --peer PEER_GO --dir DIR --base URL --ca FILE
                                --service-account FILE --status-port PORT --round N [--events N] [--delays 0,100] [--baseline PUSHBRIDGE]
           pushbridge-bench rules-engine --bootstrap HOST:PORT --worker PUSHBRIDGE --dir DIR --base URL --ca FILE
                                --service-account FILE --status-port PORT --round N [--events N]
           pushbridge-bench registry --dir DIR [--users N] [--devices-per-user N] [--cache-mb N] [--lookups N]
                                [--bootstrap HOST:PORT --kafka-users N]
    Prints `name: value` lines. scripts/bench.sh starts the servers and runs these.
    """

/// `--consumer-properties k=v,…`: librdkafka properties for the timer engine's consumer.
func consumerProperties() -> [String: String] {
    var properties: [String: String] = [:]
    for pair in option("--consumer-properties", "")!.split(separator: ",") {
        let (key, value) = (pair.prefix { $0 != "=" }, pair.drop { $0 != "=" }.dropFirst())
        properties[String(key)] = String(value)
    }
    return properties
}

func option(_ name: String, _ default: String? = nil) -> String? {
    let args = CommandLine.arguments
    if let i = args.firstIndex(of: name), i + 1 < args.count { return args[i + 1] }
    return `default`
}

func emit(_ figures: [(name: String, value: Double)]) {
    for f in figures { print("\(f.name): \(String(format: "%.1f", f.value))") }
}

/// The options `e2e` and `e2e-latency` share: where the broker, the worker and the FCM stub are.
func e2eSetup() throws -> EndToEndBenchmark.Setup {
    guard let bootstrap = option("--bootstrap"), let topic = option("--topic"), let worker = option("--worker"),
        let dir = option("--dir"), let endpoint = option("--endpoint"), let ca = option("--ca"),
        let account = option("--service-account")
    else {
        print(usage)
        exit(2)
    }
    return try EndToEndBenchmark.prepare(
        directory: dir, bootstrap: bootstrap, topic: topic, worker: worker, endpoint: endpoint, caFile: ca, serviceAccount: account,
        outcomes: option("--outcomes"), tracingRatio: option("--tracing-ratio").flatMap(Double.init))
}

let command = CommandLine.arguments.dropFirst().first ?? ""
do {
    switch command {
    case "kafka":
        guard let bootstrap = option("--bootstrap"), let topic = option("--topic") else {
            print(usage)
            exit(2)
        }
        emit(
            try await KafkaBenchmark.run(
                bootstrap: bootstrap, topic: topic,
                messages: Int(option("--messages", "200000")!)!, valueSize: Int(option("--value-size", "200")!)!))
    case "http2":
        guard let url = option("--url"), let ca = option("--ca") else {
            print(usage)
            exit(2)
        }
        emit(
            try await HTTP2Benchmark.run(
                url: url, caFile: ca,
                requests: Int(option("--requests", "100000")!)!, streams: Int(option("--streams", "100")!)!,
                inFlight: option("--in-flight").flatMap { Int($0) }, rate: option("--rate").flatMap { Double($0) },
                engine: option("--engine", "libcurl")!))
    case "mapping":
        emit(
            try MappingBenchmark.run(
                events: Int(option("--events", "200000")!)!, rounds: Int(option("--rounds", "5")!)!, format: option("--format", "json")!))
    case "flow-control":
        emit(FlowControlBenchmark.run(events: Int(option("--events", "1000000")!)!, rounds: Int(option("--rounds", "5")!)!))
    case "rules":
        emit(
            try RulesBenchmark.run(
                events: Int(option("--events", "100000")!)!, rounds: Int(option("--rounds", "5")!)!, only: option("--case")))
    case "rekey":
        let topics = option("--topics", "")!.split(separator: ",").map(String.init)
        guard let bootstrap = option("--bootstrap"), topics.count == 3 else {
            print(usage)
            exit(2)
        }
        emit(
            try await RekeyBenchmark.run(
                bootstrap: bootstrap, topics: .init(source: topics[0], bySubject: topics[1], changelog: topics[2]),
                events: Int(option("--events", "100000")!)!, users: Int(option("--users", "10000")!)!, brokerPID: option("--broker-pid")))
    case "timers":
        guard let bootstrap = option("--bootstrap"), let topic = option("--topic") else {
            print(usage)
            exit(2)
        }
        var o = TimersBenchmark.Options(
            bootstrap: bootstrap, topic: topic, timers: Int(option("--timers", "50000")!)!, rate: Double(option("--rate", "5000")!)!,
            lead: Double(option("--lead", "20")!)!, levels: Int(option("--levels", "8")!)!, buckets: Int(option("--buckets", "2")!)!)
        o.consumerProperties = consumerProperties()
        emit(try await TimersBenchmark.run(o))
    case "timers-write", "timers-pending":
        // Issue 56's memory with N timers pending: written by one process, held by the next.
        guard let bootstrap = option("--bootstrap"), let topic = option("--topic"), let timers = option("--timers").flatMap({ Int($0) }) else {
            print(usage)
            exit(2)
        }
        let properties = consumerProperties()
        let options = TimersPendingBenchmark.Options(
            bootstrap: bootstrap, topic: topic, timers: timers, levels: Int(option("--levels", "18")!)!, buckets: Int(option("--buckets", "2")!)!,
            settle: Double(option("--settle", "5")!)!, idle: Double(option("--idle", "10")!)!, brokerPID: option("--broker-pid"),
            consumerProperties: properties)
        emit(command == "timers-write" ? try await TimersPendingBenchmark.write(options) : try await TimersPendingBenchmark.hold(options))
    case "rules-restore":
        guard let bootstrap = option("--bootstrap"), let topic = option("--topic"), let dir = option("--dir") else {
            print(usage)
            exit(2)
        }
        emit(
            try await RestoreBenchmark.run(
                bootstrap: bootstrap, topic: topic, notifications: Int(option("--notifications", "100000")!)!, directory: dir))
    case "rules-store":
        guard let dir = option("--dir") else {
            print(usage)
            exit(2)
        }
        emit(
            try RulesStoreBenchmark.run(
                .init(
                    directory: dir, notifications: Int(option("--notifications", "500000")!)!, batch: Int(option("--batch", "500")!)!,
                    queries: Int(option("--queries", "20000")!)!, cacheMegabytes: Int(option("--cache-mb", "16")!)!)))
    case "dates":
        emit(try DatesBenchmark.run(lookups: Int(option("--lookups", "2000000")!)!, rounds: Int(option("--rounds", "5")!)!))
    case "fcm":
        guard let url = option("--url"), let ca = option("--ca"), let account = option("--service-account") else {
            print(usage)
            exit(2)
        }
        emit(
            try await FCMBenchmark.stub(
                baseURL: url, caFile: ca, serviceAccount: account, sends: Int(option("--sends", "50000")!)!,
                concurrency: Int(option("--concurrency", "500")!)!, rounds: Int(option("--rounds", "3")!)!,
                connections: Int(option("--connections", "1")!)!))
    case "fcm-emulator":
        emit(
            try await FCMBenchmark.emulator(
                sends: Int(option("--sends", "20000")!)!, concurrency: Int(option("--concurrency", "500")!)!, rounds: Int(option("--rounds", "3")!)!))
    case "e2e":
        // With --outcomes TOPIC the worker also writes outcome records: the same figures, named outcomes_…;
        // with --tracing-ratio R it traces (spans to the stub); --prefix names such a run's figures.
        let figures = try await EndToEndBenchmark.throughput(try e2eSetup(), events: Int(option("--events", "100000")!)!)
        let prefix = option("--prefix") ?? (option("--outcomes") == nil ? "" : "outcomes_")
        emit(figures.map { (prefix + $0.name, $0.value) })
    case "e2e-sweep":
        guard let bootstrap = option("--bootstrap"), let worker = option("--worker"), let dir = option("--dir"),
            let base = option("--base"), let ca = option("--ca"), let account = option("--service-account")
        else {
            print(usage)
            exit(2)
        }
        emit(
            try await LatencySweepBenchmark.run(
                .init(
                    bootstrap: bootstrap, worker: worker, directory: dir, base: base, caFile: ca, serviceAccount: account,
                    events: Int(option("--events", "60000")!)!,
                    delays: option("--delays", "0,20,100,300")!.split(separator: ",").map(String.init),
                    partialRate: Int(option("--partial-rate", "2000")!)!, partialSeconds: Int(option("--partial-seconds", "10")!)!,
                    stubPIDFile: option("--stub-pid-file"), cap: option("--cap").flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil },
                    capSeconds: Int(option("--cap-seconds", "10")!)!)))
    case "e2e-latency":
        emit(
            try await EndToEndBenchmark.latency(
                try e2eSetup(), rate: Int(option("--rate", "5000")!)!, seconds: Int(option("--seconds", "10")!)!))
    case "peer":
        guard let bootstrap = option("--bootstrap"), let worker = option("--worker"), let peer = option("--peer"),
            let dir = option("--dir"), let base = option("--base"), let ca = option("--ca"), let account = option("--service-account"),
            let statusPort = option("--status-port").flatMap({ Int($0) }), let round = option("--round").flatMap({ Int($0) })
        else {
            print(usage)
            exit(2)
        }
        emit(
            try await PeerBenchmark.run(
                .init(
                    bootstrap: bootstrap, worker: worker, baseline: option("--baseline"), peer: peer, directory: dir, base: base, caFile: ca,
                    serviceAccount: account,
                    statusPort: statusPort, events: Int(option("--events", "150000")!)!,
                    delays: option("--delays", "0,100")!.split(separator: ",").map(String.init), round: round)))
    case "rules-engine":
        guard let bootstrap = option("--bootstrap"), let worker = option("--worker"), let dir = option("--dir"), let base = option("--base"),
            let ca = option("--ca"), let account = option("--service-account"),
            let statusPort = option("--status-port").flatMap({ Int($0) }), let round = option("--round").flatMap({ Int($0) })
        else {
            print(usage)
            exit(2)
        }
        emit(
            try await RulesEngineBenchmark.run(
                .init(
                    bootstrap: bootstrap, worker: worker, directory: dir, base: base, caFile: ca, serviceAccount: account, statusPort: statusPort,
                    events: Int(option("--events", "100000")!)!, round: round)))
    case "registry":
        guard let dir = option("--dir") else {
            print(usage)
            exit(2)
        }
        emit(
            try await RegistryBenchmark.run(
                .init(
                    directory: dir, users: Int(option("--users", "5000000")!)!, devicesPerUser: Int(option("--devices-per-user", "2")!)!,
                    cacheMegabytes: Int(option("--cache-mb", "32")!)!, lookups: Int(option("--lookups", "400000")!)!,
                    bootstrap: option("--bootstrap"), kafkaUsers: Int(option("--kafka-users", "500000")!)!)))
    default:
        print(usage)
        exit(command.isEmpty ? 0 : 2)
    }
} catch {
    FileHandle.standardError.write(Data("pushbridge-bench: \(error)\n".utf8))
    exit(1)
}

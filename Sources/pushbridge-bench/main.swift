// pushbridge-bench: prints benchmark figures as `name: value` lines.
// Run through scripts/bench.sh, which builds in release mode and starts the servers.
import Foundation

let usage = """
    usage: pushbridge-bench kafka --bootstrap HOST:PORT --topic NAME [--messages N] [--value-size BYTES]
           pushbridge-bench http2 --url URL --ca FILE [--requests N] [--streams N]
           pushbridge-bench mapping [--events N] [--rounds N]
    Prints `name: value` lines. scripts/bench.sh starts the servers and runs these.
    """

func option(_ name: String, _ default: String? = nil) -> String? {
    let args = CommandLine.arguments
    if let i = args.firstIndex(of: name), i + 1 < args.count { return args[i + 1] }
    return `default`
}

func emit(_ figures: [(name: String, value: Double)]) {
    for f in figures { print("\(f.name): \(String(format: "%.1f", f.value))") }
}

let command = CommandLine.arguments.dropFirst().first ?? ""
do {
    switch command {
    case "kafka":
        guard let bootstrap = option("--bootstrap"), let topic = option("--topic") else { print(usage); exit(2) }
        emit(try await KafkaBenchmark.run(
            bootstrap: bootstrap, topic: topic,
            messages: Int(option("--messages", "200000")!)!, valueSize: Int(option("--value-size", "200")!)!))
    case "http2":
        guard let url = option("--url"), let ca = option("--ca") else { print(usage); exit(2) }
        emit(try await HTTP2Benchmark.run(
            url: url, caFile: ca,
            requests: Int(option("--requests", "100000")!)!, streams: Int(option("--streams", "100")!)!))
    case "mapping":
        emit(try MappingBenchmark.run(events: Int(option("--events", "200000")!)!, rounds: Int(option("--rounds", "5")!)!))
    default:
        print(usage)
        exit(command.isEmpty ? 0 : 2)
    }
} catch {
    FileHandle.standardError.write(Data("pushbridge-bench: \(error)\n".utf8))
    exit(1)
}

import Kafka
import Pipeline

/// The delivery engine's bookkeeping per event, in process: an event received and done on a
/// worker holding `partitions` partitions (500 events in flight, the default limits), each
/// followed by the flow-control check the engine makes. `touched`: the check the engine makes
/// (the partition the event touched); `full`: every partition looked at, as before 2026-11-29.
enum FlowControlBenchmark {
    static func run(events: Int, rounds: Int) -> [(name: String, value: Double)] {
        var figures: [(name: String, value: Double)] = []
        for partitions in [4, 64, 512] {
            for touched in [true, false] {
                let ns = median(rounds) { perEvent(events: events, partitions: partitions, touched: touched) }
                figures.append(("flow_control_\(touched ? "touched" : "full")_\(partitions)_partitions_ns_per_event", ns))
            }
        }
        return figures
    }

    private static func median(_ rounds: Int, _ body: () -> Double) -> Double {
        _ = body()  // warm-up
        let times = (0..<max(rounds, 1)).map { _ in body() }.sorted()
        return times[times.count / 2]
    }

    /// Nanoseconds per event: received, checked, and 500 events later done, checked.
    private static func perEvent(events: Int, partitions: Int, touched: Bool) -> Double {
        var table = PartitionTable()
        let all = (0..<partitions).map { TopicPartition(topic: "events", partition: Int32($0)) }
        for p in all { table.assign(p, committed: 0, metadata: nil) }
        var next = [Int64](repeating: 0, count: partitions)
        var ring: [(Int, Int64)] = Array(repeating: (0, 0), count: 500)
        var changes = 0
        let start = ContinuousClock.now
        for i in 0..<events {
            let k = i % partitions
            if i >= ring.count {
                let (old, offset) = ring[i % ring.count]
                table.done(all[old], offset: offset)
                changes += (touched ? table.flowChange(after: all[old]) : table.flowChange()).isEmpty ? 0 : 1
            }
            _ = table.receive(all[k], offset: next[k])
            ring[i % ring.count] = (k, next[k])
            next[k] += 1
            changes += (touched ? table.flowChange(after: all[k]) : table.flowChange()).isEmpty ? 0 : 1
        }
        let seconds = KafkaBenchmark.seconds(ContinuousClock.now - start)
        precondition(changes == 0, "500 in flight never reaches a limit")
        return seconds * 1e9 / Double(events)
    }
}

import Dates
import FCMEmulator
import Foundation
import Kafka
import TestSupport
import Testing

/// Deferred pushes in the chaos runs (docs/reliability.md, issue 56): each batch carries about
/// 1% of events whose `send_at` is 2–40 s after they are written. The workers write them to the
/// timer topic and their timer engines (the group `reliability.timers`) send them when due,
/// under the same kills and storms as everything else. The ledger counts them with the good
/// events (each accepted at least once, duplicates counted) and checks that none was sent
/// before its due time.
extension ReliabilityTests {
    static let laterMapping = """
          reliability.later:
            target: {token: {field: /token}}
            body: {key: later}
            send_at: {field: /at}
        """
    /// The timer topic's layout in the chaos runs: 8 levels (1 s to 128 s) × 3 buckets.
    static let timerLevels = 8
    static let timerBuckets = 3
    static var timersSection: String { "timers: {levels: \(timerLevels), buckets: \(timerBuckets)}" }

    /// Creates the timer topic (`pushbridge.<group>.timers`) before any worker starts.
    static func prepareTimers(_ e: EndToEnd) async throws {
        try await e.createTopic("pushbridge.\(group).timers", partitions: Int32(timerLevels * timerBuckets))
    }

    /// `count` deferred events of batch `b`: the records, and each token with its due time (ms).
    static func laterRecords(
        batch b: Int, count: Int, topic: String, using rng: inout SplitMix64
    ) -> (records: [KafkaProducerRecord], due: [String: Int64]) {
        var records: [KafkaProducerRecord] = []
        var due: [String: Int64] = [:]
        let now = RFC3339.nowMilliseconds()
        for k in 0..<count {
            let token = "later-\(b)-\(k)"
            let at = now + Int64.random(in: 2_000...40_000, using: &rng)
            let value = #"{"type":"reliability.later","id":"\#(token)","token":"\#(token)","at":"\#(RFC3339.format(milliseconds: at))"}"#
            records.append(KafkaProducerRecord(topic: topic, key: Array(token.utf8), value: Array(value.utf8)))
            due[token] = at
        }
        return (records, due)
    }

    /// Waits until every deferred push was accepted at least once, or `timeout` passed after the
    /// last due time: whether all were.
    static func waitUntilDeferredSent(_ e: EndToEnd, due: [String: Int64], timeout: Duration) async throws -> Bool {
        guard let last = due.values.max() else { return true }
        progress("waiting for \(due.count) deferred pushes (the last due at \(RFC3339.format(milliseconds: last)))", since: nil)
        let deadline = ContinuousClock.now + .milliseconds(max(0, last - RFC3339.nowMilliseconds())) + timeout
        while ContinuousClock.now < deadline {
            let accepted = e.acceptedTokens
            if due.keys.allSatisfy({ accepted[$0] != nil }) { return true }
            try await Task.sleep(for: .milliseconds(500))
        }
        return false
    }

    /// Prints the deferred pushes' figures and checks that none was accepted before its due
    /// time (by the emulator's receive time, which is within milliseconds of the workers' clock).
    static func reportDeferred(_ emulator: FCMEmulator, due: [String: Int64], name: String) {
        let started = emulator.startedEpochSeconds
        var early: [String] = []
        var lateness: [Int64] = []
        for m in emulator.messages where !m.validateOnly {
            guard let token = m.token, let at = due[token] else { continue }
            let accepted = Int64(((started + m.time) * 1000).rounded(.down))
            if accepted < at - 10 { early.append("\(token): \(at - accepted) ms early") }
            lateness.append(accepted - at)
        }
        lateness.sort()
        print(
            """
            \(name)_deferred: \(due.count)
            \(name)_deferred_early: \(early.count)
            \(name)_deferred_late_p50_ms: \(lateness.isEmpty ? 0 : lateness[lateness.count / 2])
            \(name)_deferred_late_max_ms: \(lateness.last ?? 0)
            """)
        #expect(early.isEmpty, "deferred pushes sent before their due time: \(early.prefix(10))")
    }
}

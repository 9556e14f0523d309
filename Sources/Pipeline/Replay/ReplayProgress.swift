/// A replay's counts, rate and ETA, and the lines that report them. Pure: the caller passes the
/// elapsed time, so it is tested without a clock.
public struct ReplayProgress: Sendable, Equatable {
    /// Offsets planned (an upper bound on the events: compaction leaves gaps).
    public var planned: Int64
    /// Events finished, whatever became of them.
    public private(set) var done: Int64 = 0
    /// Events whose every message FCM acknowledged (or validated, or rendered in a dry run).
    public private(set) var sent: Int64 = 0
    /// FCM messages among those events (an event may fan out to several).
    public private(set) var messages: Int64 = 0
    /// Not sent on purpose: an unmapped event type.
    public private(set) var skipped: Int64 = 0
    /// Not of a selected `--event-type`.
    public private(set) var filtered: Int64 = 0
    public private(set) var deadLettered: Int64 = 0
    /// Older than their mapping's `max_age`: not sent (skipped, or dead-lettered when the
    /// mapping says `too_old: dead-letter`); counted here, not under skipped or dead-lettered.
    public private(set) var tooOld: Int64 = 0
    /// Events of mappings with `cap` or `dedup` written to the by-subject topic, for the
    /// workers' rules stage to decide and send (docs/rules.md#caps-and-dedup).
    public private(set) var handedToRules: Int64 = 0
    /// Events whose push is due later, written to the timer topic (`--rearm-timers`): the
    /// workers' timer engines send them at their due time.
    public private(set) var deferred: Int64 = 0
    /// Token-invalidation records written.
    public private(set) var invalidated: Int64 = 0
    /// Not finished because the replay stopped first; a resume sends them.
    public private(set) var unfinished: Int64 = 0

    public init(planned: Int64) { self.planned = planned }

    public enum Outcome: Sendable, Equatable {
        case sent(messages: Int)
        case skipped
        case filtered
        case deadLettered
        case tooOld
        /// Written to the by-subject topic: the workers' rules stage sends it, or withholds it.
        case handedToRules
        /// Written to the timer topic (`--rearm-timers`): a worker's timer engine sends it when due.
        case deferred
        case unfinished
    }

    public mutating func record(_ outcome: Outcome, invalidations: Int = 0) {
        invalidated += Int64(invalidations)
        switch outcome {
        case .sent(let n):
            sent += 1
            messages += Int64(n)
        case .skipped: skipped += 1
        case .filtered: filtered += 1
        case .deadLettered: deadLettered += 1
        case .tooOld: tooOld += 1
        case .handedToRules: handedToRules += 1
        case .deferred: deferred += 1
        case .unfinished:
            unfinished += 1
            return
        }
        done += 1
    }

    /// Events per second so far.
    public func rate(elapsedSeconds: Double) -> Double {
        elapsedSeconds > 0 ? Double(done) / elapsedSeconds : 0
    }

    /// Seconds left at the current rate; nil before anything is done.
    public func etaSeconds(elapsedSeconds: Double) -> Double? {
        let r = rate(elapsedSeconds: elapsedSeconds)
        guard r > 0 else { return nil }
        return Double(max(0, planned - done)) / r
    }

    /// `replay: 12,000/50,000 (24%) · 3,100 events/s · ETA 0:12 · sent 11,990 · skipped 10 · …`
    public func line(elapsedSeconds: Double) -> String {
        let percent = planned > 0 ? min(100, done * 100 / planned) : 100
        let eta = etaSeconds(elapsedSeconds: elapsedSeconds).map(Self.clock) ?? "?"
        return "replay: \(Self.grouped(done))/\(Self.grouped(planned)) (\(percent)%) · "
            + "\(Self.grouped(Int64(rate(elapsedSeconds: elapsedSeconds).rounded()))) events/s · ETA \(eta) · \(counts)"
    }

    /// `sent 11,990 (12,400 messages) · skipped 10 · filtered 0 · dead-lettered 0 · invalidated 2`,
    /// with `too old N` after dead-lettered once an event was too old (most mappings have no
    /// `max_age`), `handed to the rules stage N` before it once an event was (`cap`, `dedup`), and
    /// `deferred N` once a push was written to the timer topic (`--rearm-timers`).
    public var counts: String {
        var parts = ["sent \(Self.grouped(sent)) (\(Self.grouped(messages)) messages)", "skipped \(Self.grouped(skipped))"]
        if handedToRules > 0 { parts.append("handed to the rules stage \(Self.grouped(handedToRules))") }
        if deferred > 0 { parts.append("deferred \(Self.grouped(deferred))") }
        parts += ["filtered \(Self.grouped(filtered))", "dead-lettered \(Self.grouped(deadLettered))"]
        if tooOld > 0 { parts.append("too old \(Self.grouped(tooOld))") }
        parts.append("invalidated \(Self.grouped(invalidated))")
        if unfinished > 0 { parts.append("unfinished \(Self.grouped(unfinished))") }
        return parts.joined(separator: " · ")
    }

    /// 1234567 → "1,234,567".
    public static func grouped(_ n: Int64) -> String {
        let digits = Array(String(n.magnitude))
        var out = ""
        for (i, d) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(d)
        }
        return n < 0 ? "-" + out : out
    }

    /// 75 → "1:15"; 3,725 → "1:02:05".
    public static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        let (h, m, sec) = (s / 3600, (s % 3600) / 60, s % 60)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return h > 0 ? "\(h):\(two(m)):\(two(sec))" : "\(m):\(two(sec))"
    }
}

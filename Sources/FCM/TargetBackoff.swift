/// Devices and topics that FCM throttled on their own (QUOTA_EXCEEDED for one device's or one
/// topic's message rate), and until when sends to each wait. Pure: instants in, instants out;
/// ``FCMClient`` keeps one under its lock.
///
/// Every send to a held target waits, not only the one that was refused, so a chatty device
/// does not keep hammering FCM while everyone else's sends go on. Strikes grow the backoff
/// exponentially; a success clears them.
struct TargetBackoff: Sendable {
    struct Entry: Sendable, Equatable {
        /// 429s in a row for this target.
        var strikes: Int
        var until: ContinuousClock.Instant
    }

    private(set) var entries: [MessageTarget: Entry] = [:]
    /// Above this many entries, expired ones are dropped when another is added.
    let pruneAbove: Int

    init(pruneAbove: Int = 10_000) {
        self.pruneAbove = pruneAbove
    }

    var isEmpty: Bool { entries.isEmpty }

    /// When sends to `target` may go again, if it is held past `now`.
    func heldUntil(_ target: MessageTarget, now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard let entry = entries[target], entry.until > now else { return nil }
        return entry.until
    }

    /// Counts a 429 for `target`; returns its strikes in a row, this one included.
    mutating func strike(_ target: MessageTarget) -> Int {
        let strikes = (entries[target]?.strikes ?? 0) + 1
        entries[target, default: Entry(strikes: 0, until: .now)].strikes = strikes
        return strikes
    }

    /// Holds sends to `target` until `until` (never shortens a hold already in place).
    mutating func hold(_ target: MessageTarget, until: ContinuousClock.Instant, now: ContinuousClock.Instant) {
        if entries[target] == nil, entries.count >= pruneAbove {
            entries = entries.filter { $0.value.until > now }
        }
        var entry = entries[target] ?? Entry(strikes: 1, until: until)
        entry.until = max(entry.until, until)
        entries[target] = entry
    }

    /// A send to `target` succeeded: its quota has room again.
    mutating func cleared(_ target: MessageTarget) {
        entries[target] = nil
    }
}

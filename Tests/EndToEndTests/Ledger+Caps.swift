import Kafka

/// The capped events of a reliability run (docs/reliability.md): what the cap and the
/// deduplication must have made of each capped subject's events. A cap decides exactly, kill -9
/// or not (docs/rules.md#caps-and-dedup, `RulesExactnessEndToEndTests`), so each subject must
/// end with exactly min(max, distinct events) distinct notifications accepted by FCM; the rest
/// are withheld, never lost, never dead-lettered.
struct CappedSubjects: Sendable {
    /// The cap's `max` in the mapping.
    var max: Int
    /// By device token (the record key and the cap's subject): the event IDs in the order they
    /// were written, an event written twice listed twice.
    var written: [String: [String]] = [:]
    /// In re-key mode, the event IDs stage 1 wrote to the by-subject topic, with their copies:
    /// every record written must be there (committed in the events topic means re-keyed).
    var rekeyed: [String: Int]?

    var records: Int { written.values.reduce(0) { $0 + $1.count } }

    struct Settlement {
        /// Distinct notifications FCM accepted, and how many the cap allows (Σ min(max, distinct)).
        var notifications = 0
        var expected = 0
        /// Distinct events the cap withheld: a subject's distinct events beyond its notifications.
        var cappedWithheld = 0
        /// Records of an event already written (same event ID) that made no notification of
        /// their own: the worker withholds the repeat as `duplicate` when the first was sent, as
        /// `cap` when the cap withheld the first.
        var dedupWithheld = 0
        /// Subjects with more distinct notifications than the cap allows, or a notification of
        /// an event never written for them. Must be empty.
        var exceeded: [String] = []
        /// Subjects with fewer than the cap allows (a notification withheld that should have
        /// gone), and events with fewer copies in the by-subject topic than were written (an
        /// event done in its source but never re-keyed, so never decided). Lost; must be empty.
        var short: [String] = []
        /// Acceptances of a notification beyond its first (a kill between FCM's answer and the
        /// outcome fact, a send whose answer was lost): duplicate deliveries.
        var duplicates = 0
        /// Capped events found in the dead-letter topic, with their reasons. Must be empty.
        var deadLettered: [String] = []
    }

    /// - Parameters:
    ///   - delivered: device token → event ID (the message's `data.event`) → acceptances.
    ///   - deadLetters: reason codes and reasons by record key.
    func settle(delivered: [String: [String: Int]], deadLetters: [String: [String]]) -> Settlement {
        var s = Settlement()
        for (token, events) in written.sorted(by: { $0.key < $1.key }) {
            let distinct = Set(events)
            let allowed = min(max, distinct.count)
            let got = delivered[token] ?? [:]
            s.expected += allowed
            s.notifications += got.count
            s.cappedWithheld += Swift.max(0, distinct.count - got.count)
            s.dedupWithheld += events.count - distinct.count
            s.duplicates += got.values.reduce(0) { $0 + Swift.max(0, $1 - 1) }
            let strangers = Set(got.keys).subtracting(distinct)
            if got.count > allowed || !strangers.isEmpty {
                s.exceeded.append("\(token): \(got.count) of \(distinct.count) sent, cap \(max): \(got.keys.sorted())")
            } else if got.count < allowed {
                s.short.append("\(token): \(got.count) of \(distinct.count) sent, cap \(max): \(got.keys.sorted())")
            }
            for (id, copies) in Dictionary(events.map { ($0, 1) }, uniquingKeysWith: +) where (rekeyed?[id] ?? copies) < copies {
                s.short.append("\(id): written \(copies) times, re-keyed \(rekeyed?[id] ?? 0)")
            }
            if let reasons = deadLetters[token] { s.deadLettered.append("\(token): \(reasons.joined(separator: "; "))") }
        }
        return s
    }
}

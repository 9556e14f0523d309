import Kafka

/// What must have become of every event a reliability run produced (docs/reliability.md): each
/// good event accepted by FCM (the emulator) for its token, each poison event in the dead-letter
/// topic with a right reason, each push a user's rule withholds neither, each capped subject
/// exactly the notifications its cap allows (``CappedSubjects``). Nothing missing; duplicates
/// counted.
struct Ledger: Sendable {
    /// Good events: the token, which is also the record key.
    var tokens: [String] = []
    /// Poison events by record key: the dead-letter reason codes that are right for each.
    var poison: [String: Set<String>] = [:]
    /// Events whose push the user's preferences withhold (a muted category): by token, which is
    /// also the record key. Done (their offsets committed) yet neither sent nor dead-lettered.
    var withheld: [String] = []
    /// Events of a capped event type (a cap, and some written twice), by subject.
    var capped: CappedSubjects?
    /// Events whose push is due later (`send_at`), by token (also in ``tokens``): the due time (ms).
    var deferred: [String: Int64] = [:]

    struct Settlement {
        /// Events neither accepted nor dead-lettered, and capped subjects with fewer notifications
        /// than their cap allows.
        var lost: [String]
        /// Extra acceptances of good events and of capped notifications, and extra dead-letter
        /// records of poison ones.
        var duplicates: Int
        var deadLettered: Int
        /// Poison events dead-lettered with a reason the mapping core would not give.
        var wrongReason: [String]
        /// Good events (and capped subjects' events) dead-lettered instead of delivered, each
        /// with the record's reason code and reason (`r13-2: fcm_retries_exhausted (gave up after …)`).
        var goodDeadLettered: [String]
        /// Withheld pushes, counted apart from lost ones: neither sent nor dead-lettered.
        var withheld: Int
        /// Pushes a rule should have withheld that FCM accepted, or that were dead-lettered.
        var wronglySent: [String]
        /// What the cap and the deduplication made of the capped events.
        var caps: CappedSubjects.Settlement?
    }

    var events: Int { tokens.count + poison.count + withheld.count + (capped?.records ?? 0) }

    /// - Parameter delivered: for the capped events, device token → event ID → acceptances.
    func settle(accepted: [String: Int], deadLetters: [KafkaMessage], delivered: [String: [String: Int]] = [:]) -> Settlement {
        var dead: [String: [String]] = [:]
        var reasons: [String: [String]] = [:]
        for m in deadLetters {
            let key = String(decoding: m.key ?? [], as: UTF8.self)
            let code = m.header("pushbridge-reason-code")?.stringValue ?? "?"
            dead[key, default: []].append(code)
            reasons[key, default: []].append("\(code) (\(m.header("pushbridge-reason")?.stringValue ?? "no reason"))")
        }
        let caps = capped?.settle(delivered: delivered, deadLetters: reasons)
        var lost = tokens.filter { accepted[$0] == nil && dead[$0] == nil }
        lost += poison.keys.filter { dead[$0] == nil }.sorted()
        lost += caps?.short ?? []
        let goodDeadLettered =
            tokens.filter { accepted[$0] == nil && dead[$0] != nil }
            .map { "\($0): \(reasons[$0, default: []].joined(separator: "; "))" } + (caps?.deadLettered ?? [])
        var duplicates = tokens.reduce(0) { $0 + max(0, (accepted[$1] ?? 0) - 1) }
        duplicates += poison.keys.reduce(0) { $0 + max(0, (dead[$1]?.count ?? 0) - 1) }
        duplicates += caps?.duplicates ?? 0
        let wrongReason = poison.compactMap { key, allowed -> String? in
            guard let codes = dead[key], !Set(codes).isSubset(of: allowed) else { return nil }
            return "\(key): \(codes.joined(separator: ",")) (expected one of \(allowed.sorted().joined(separator: ",")))"
        }
        let wronglySent = withheld.filter { accepted[$0] != nil || dead[$0] != nil }
            .map { "\($0): accepted \(accepted[$0] ?? 0), dead-lettered \(reasons[$0, default: []].joined(separator: "; "))" }
        return Settlement(
            lost: lost, duplicates: duplicates, deadLettered: poison.keys.filter { dead[$0] != nil }.count + goodDeadLettered.count,
            wrongReason: wrongReason, goodDeadLettered: goodDeadLettered,
            withheld: withheld.count { accepted[$0] == nil && dead[$0] == nil }, wronglySent: wronglySent, caps: caps)
    }
}

import Kafka

/// What must have become of every event a reliability run produced (docs/reliability.md): each
/// good event accepted by FCM (the emulator) for its token, each poison event in the dead-letter
/// topic with a right reason. Nothing missing; duplicates counted.
struct Ledger: Sendable {
    /// Good events: the token, which is also the record key.
    var tokens: [String] = []
    /// Poison events by record key: the dead-letter reason codes that are right for each.
    var poison: [String: Set<String>] = [:]

    struct Settlement {
        /// Events neither accepted nor dead-lettered.
        var lost: [String]
        /// Extra acceptances of good events, and extra dead-letter records of poison ones.
        var duplicates: Int
        var deadLettered: Int
        /// Poison events dead-lettered with a reason the mapping core would not give.
        var wrongReason: [String]
        /// Good events dead-lettered instead of delivered, each with the record's reason code
        /// and reason (`r13-2: fcm_retries_exhausted (gave up after …)`).
        var goodDeadLettered: [String]
    }

    var events: Int { tokens.count + poison.count }

    func settle(accepted: [String: Int], deadLetters: [KafkaMessage]) -> Settlement {
        var dead: [String: [String]] = [:]
        var reasons: [String: [String]] = [:]
        for m in deadLetters {
            let key = String(decoding: m.key ?? [], as: UTF8.self)
            let code = m.header("pushbridge-reason-code")?.stringValue ?? "?"
            dead[key, default: []].append(code)
            reasons[key, default: []].append("\(code) (\(m.header("pushbridge-reason")?.stringValue ?? "no reason"))")
        }
        var lost = tokens.filter { accepted[$0] == nil && dead[$0] == nil }
        lost += poison.keys.filter { dead[$0] == nil }.sorted()
        let goodDeadLettered = tokens.filter { accepted[$0] == nil && dead[$0] != nil }
            .map { "\($0): \(reasons[$0, default: []].joined(separator: "; "))" }
        var duplicates = tokens.reduce(0) { $0 + max(0, (accepted[$1] ?? 0) - 1) }
        duplicates += poison.keys.reduce(0) { $0 + max(0, (dead[$1]?.count ?? 0) - 1) }
        let wrongReason = poison.compactMap { key, allowed -> String? in
            guard let codes = dead[key], !Set(codes).isSubset(of: allowed) else { return nil }
            return "\(key): \(codes.joined(separator: ",")) (expected one of \(allowed.sorted().joined(separator: ",")))"
        }
        return Settlement(
            lost: lost, duplicates: duplicates, deadLettered: poison.keys.filter { dead[$0] != nil }.count + goodDeadLettered.count,
            wrongReason: wrongReason, goodDeadLettered: goodDeadLettered)
    }
}

import EventTracing
import FCM
import Kafka
import Mapping
import Rules
import Synchronization

// Events of a mapping with `cap` or `dedup` (docs/rules.md): decided and sent by the owner of
// their state partition (``StatefulRulesEngine``), which counts what FCM acknowledged across the
// consumer group. Direct mode: the source topic is keyed by subject, so a partition is a state
// partition, and each record is checked to be where its subject belongs.
extension EventProcessor {
    /// An event's notification, for its partition's owner.
    struct StatefulPlan: Sendable {
        var attempt: NotificationAttempt
        /// The subject whose state decides (the user; the record's key must be it).
        var subject: String
        var over: StatefulRules.Cap.Over
    }

    /// The plan of a rendered event whose mapping has `cap` or `dedup` (`mapping`).
    ///
    /// - Parameter notification: in place of the event's (a digest window's push).
    func statefulPlan(_ rendered: MappingSet.Rendered, _ mapping: StatefulMapping, notification: NotificationID? = nil) -> StatefulPlan {
        let attempt = StatefulPush.attempt(
            rendered, mapping: rendered.event.type, rules: mapping.rules, stateful: mapping.stateful, policy: rulesPolicy,
            notification: notification)
        return StatefulPlan(attempt: attempt, subject: StatefulPush.subject(of: rendered), over: mapping.stateful.cap?.over ?? .skip)
    }

    /// The notification goes through its partition's owner, which sends what it may; then the
    /// event is concluded as any other. Not done when the partition is no longer held here or
    /// another member claimed it: the next owner decides.
    func sendStateful(_ plan: StatefulPlan, _ prepared: Prepared, of message: KafkaMessage, engine: any StatefulRulesEngine) async -> Outcome {
        var facts = prepared.facts
        if let misrouted = Self.misrouted(message, subject: plan.subject, engine: engine) {
            metrics.rulesMisrouted(topic: message.topic)
            return traced(await conclude(message, EventVerdict(disposition: .deadLetter(misrouted)), facts), prepared.trace, message)
        }
        let results = Mutex<[(message: FCMMessage, result: FCMClient.SendResult)]>([])
        let sends = prepared.facts.sent
        let outcome: StatefulOutcome
        do {
            outcome = try await engine.push(plan.attempt, partition: message.partition) { targets, until in
                let chosen = sends.filter { targets.contains(StatefulPush.target($0.message.target)) }
                let answered = await self.sendAll(chosen, until: until, trace: prepared.trace)
                results.withLock { $0 += answered }
                return Dictionary(
                    answered.map { (StatefulPush.target($0.message.target), Self.answer($0.result)) }, uniquingKeysWith: { _, last in last })
            }
        } catch {
            return traced(Outcome(verdict: EventVerdict(disposition: .abandoned), done: false), prepared.trace, message)
        }
        let user = facts.user ?? plan.subject
        switch outcome {
        case .recorded:
            let sent = results.withLock { $0 }
            guard !sent.isEmpty else {
                // Released at its read-back: FCM acknowledged each of its pushes meanwhile.
                facts.rules.withheld.append((.duplicate, "FCM already acknowledged this push", user, nil, nil))
                return traced(await conclude(message, Self.withheld(.duplicate, facts), facts), prepared.trace, message)
            }
            return traced(await conclude(message, .sends(sent), facts, results: sent), prepared.trace, message)
        case .duplicate:
            facts.rules.withheld.append((.duplicate, "FCM already acknowledged this push within the mapping's dedup window", user, nil, nil))
            return traced(await conclude(message, Self.withheld(.duplicate, facts), facts), prepared.trace, message)
        case .capped(_, let counted):
            let reason = "the cap's \(counted) pushes within its window are reached"
            guard plan.over == .skip else {
                let deadLetter = DeadLetterReason(code: "capped", reason: reason)
                return traced(await conclude(message, EventVerdict(disposition: .deadLetter(deadLetter)), facts), prepared.trace, message)
            }
            facts.rules.withheld.append((.cap, reason, user, nil, nil))
            return traced(await conclude(message, Self.withheld(.cap, facts), facts), prepared.trace, message)
        case .settled:
            return traced(await conclude(message, EventVerdict(disposition: .skipped(reason: "no targets")), facts), prepared.trace, message)
        case .fenced:
            metrics.rulesFenced.increment()
            return traced(Outcome(verdict: EventVerdict(disposition: .abandoned), done: false), prepared.trace, message)
        }
    }

    /// Why `message` is not in its subject's state partition, if it is not: its key is not the
    /// subject, or its partition is not where the configured partitioner puts that key.
    static func misrouted(_ message: KafkaMessage, subject: String, engine: any StatefulRulesEngine) -> DeadLetterReason? {
        let key = Array(subject.utf8)
        guard message.key == key else {
            return DeadLetterReason(
                code: "not_keyed_by_subject",
                reason:
                    "the record's Kafka key is not its subject \"\(subject)\": rules.source.keyed_by says the topic is keyed by user, and a cap or dedup decided in another partition would not hold"
            )
        }
        guard let expected = engine.partition(of: key), expected == message.partition else {
            return DeadLetterReason(
                code: "not_keyed_by_subject",
                reason:
                    "the record is in partition \(message.partition), but the \(engine.partitioner.rawValue) partitioner (rules.source.partitioner) puts its key in \(engine.partition(of: key).map(String.init) ?? "?"): a cap or dedup decided here would not hold"
            )
        }
        return nil
    }

    /// A push withheld by a stateful rule: skipped, with that rule's code.
    static func withheld(_ rule: WithholdRule, _ facts: EventFacts) -> EventVerdict {
        var verdict = EventVerdict(disposition: .skipped(reason: facts.rules.withheld.last?.reason ?? rule.rawValue))
        verdict.skipCode = rule.rawValue
        return verdict
    }

    /// What the rules count of a send's result: acknowledged; refused by FCM's answer, so not
    /// delivered; or unknown (no answer, a 5xx, retries spent), so maybe delivered.
    static func answer(_ result: FCMClient.SendResult) -> PushAnswer {
        switch result.outcome {
        case .success: return .accepted
        case .failure(let error):
            guard let status = error.httpStatus, (400..<500).contains(status), error.kind == .tokenDead || error.kind == .permanent else {
                return .unknown
            }
            return .refused
        }
    }

    /// ``sendAll(_:trace:deadline:)`` with no attempt starting after `until` (ms since 1970,
    /// by the worker's clock), and none outliving it: a reservation's count can end then
    /// (``RulesPolicy/sendLimit``). The FCM client keeps the deadline, so a push needs no timer
    /// task of its own (one per push cost about 50 of the ~225 µs a capped push took,
    /// docs/benchmarks.md).
    func sendAll(
        _ sends: [(message: FCMMessage, projectID: String)], until: Int64, trace: EventTrace?
    ) async -> [(message: FCMMessage, result: FCMClient.SendResult)] {
        let left = until - options.clock.nowMilliseconds()
        return await sendAll(sends, trace: trace, deadline: .now + .milliseconds(max(0, left)))
    }
}

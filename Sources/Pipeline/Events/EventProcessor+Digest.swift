import Kafka
import Mapping
import Rules
import Synchronization

// Events of a mapping with `digest` (docs/mapping.md, *Digests*; issue 56 design §4): decided by
// the owner of their user's state partition, as capped events are. Each joins its key's window
// (the first opens it, and with `first: now` is sent at once), and is done once its member fact
// is in the changelog; at the window's end the owner closes it through ``closeDigest(_:_:partition:)``.
extension EventProcessor {
    struct DigestPlan: Sendable {
        var request: DigestRequest
        /// The event's own push, for `first: now`.
        var first: StatefulPlan
    }

    func digestPlan(_ rendered: MappingSet.Rendered, _ mapping: StatefulMapping, _ digest: Digest, record: EventRecord) -> DigestPlan {
        let first = statefulPlan(rendered, mapping)
        let user = rendered.user ?? first.subject
        let event = DigestEvent(
            topic: record.topic, partition: record.partition, offset: record.offset, timestamp: record.timestamp, key: Array(first.subject.utf8),
            value: record.value, headers: record.headers.map { DigestHeader(name: $0.name, value: $0.value) })
        let request = DigestRequest(
            key: digest.key(user: user, data: rendered.event.data), mapping: rendered.event.type, eventID: rendered.event.id,
            at: options.clock.nowMilliseconds(), window: Int64(digest.windowSeconds) * 1_000, actor: digest.actor(in: rendered.event.data),
            sendFirst: digest.first == .now, event: event)
        return DigestPlan(request: request, first: first)
    }

    /// Takes the event to its window; with `first: now`, one that opens a window is sent as a
    /// capped event is. Deferred until the window's end otherwise (its outcome record says when).
    func sendDigest(_ plan: DigestPlan, _ prepared: Prepared, of message: KafkaMessage, engine: any StatefulRulesEngine) async -> Outcome {
        var facts = prepared.facts
        if let misrouted = Self.misrouted(message, subject: plan.first.subject, engine: engine) {
            metrics.rulesMisrouted(topic: message.topic)
            return traced(await conclude(message, EventVerdict(disposition: .deadLetter(misrouted)), facts), prepared.trace, message)
        }
        let sentFirst = Mutex<Outcome?>(nil)
        let joined: DigestJoin?
        do {
            joined = try await engine.digest(plan.request, partition: message.partition) {
                let outcome = await self.sendStateful(plan.first, prepared, of: message, engine: engine)
                sentFirst.withLock { $0 = outcome }
                return outcome.done
            }
        } catch {
            return traced(Outcome(verdict: EventVerdict(disposition: .abandoned), done: false), prepared.trace, message)
        }
        switch joined {
        case nil, .sentFirst?:
            return sentFirst.withLock { $0 } ?? Outcome(verdict: EventVerdict(disposition: .abandoned), done: false)
        case .joined(let end)?:
            metrics.digestJoined(eventType: plan.request.mapping)
            return traced(await conclude(message, EventVerdict(disposition: .deferred(due: end)), facts), prepared.trace, message)
        case .duplicate?:
            facts.rules.withheld.append((.duplicate, "this event is in a digest window already", facts.user ?? plan.first.subject, nil, nil))
            return traced(await conclude(message, Self.withheld(.duplicate, facts), facts), prepared.trace, message)
        }
    }

    /// Sends a digest window's push at its end (the owner's close loop): its one counted event
    /// as the mapping sends it, or `many` from its last counted event with what it gathered;
    /// nothing when every member was sent at once. Judged as any push then: devices, mutes, quiet
    /// hours, `max_age`. Its notification is the window's, so a close redone after a crash is
    /// withheld as a duplicate. True once done.
    public func closeDigest(_ window: DigestBook.Window, _ closing: DigestBook.Closing, partition: Int32) async -> Bool {
        let member: DigestMember
        let rendering: MappingSet.DigestRendering
        switch closing {
        case .nothing: return true
        case .single(let only):
            (member, rendering) = (only, .single)
        case .many(let last, let count, let firstActor, let lastActor, let distinct):
            let summary = DigestSummary(count: count, firstActor: firstActor, lastActor: lastActor, distinctActors: distinct)
            (member, rendering) = (last, .many(summary))
        }
        let e = member.event
        let message = KafkaMessage(
            topic: e.topic, partition: partition, offset: e.offset, key: e.key, value: e.value,
            headers: e.headers.map { KafkaHeader(name: $0.name, value: $0.value) },
            timestamp: e.timestamp.map { KafkaTimestamp(milliseconds: $0, kind: .createTime) })
        // Its source's coordinates, as the event's own render had them (stage 2 reads them from the header).
        let record = eventRecord(message)
        let schema: WriterSchema?
        switch await schemas.writerSchema(of: record) {
        case .success(let s): schema = s
        case .failure: return false  // the registry is out of reach: tried again
        }
        let rendered = mappings.renderDigest(record, rendering, schema: schema, clock: options.clock, users: lookup)
        var facts = EventFacts()
        let plan = plan(rendered: rendered, record: record, &facts, digestClose: window.id)
        metrics.digestClosed(eventType: window.mapping, many: { if case .many = rendering { true } else { false } }())
        return await sendAndConclude(Prepared(plan: plan, facts: facts, trace: nil), of: message).done
    }
}
